/*
 * svg_palmap.h - flamegraph.pl's --cp "consistent palette": a file of
 * "NAME->rgb(R,G,B)" lines (palette.map in the current directory).  A
 * frame named there keeps that colour; a new name gets its palette colour
 * and is added; the file is written back, sorted by name, atomically.
 * Nothing here prints.
 */
#ifndef SF_SVG_PALMAP_H
#define SF_SVG_PALMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "output/svg_color.h"

struct svg_palmap {
	struct strtab names;
	struct svg_rgb *rgb;	/* by name id */
	size_t cap;
	bool changed;
};

/* Read path (a missing file is an empty map).  0, -ENOMEM, or a negative
 * errno with err filled (unreadable). */
int svg_palmap_load(struct svg_palmap *m, const char *path, struct sf_err *err);
/* The colour of name: the map's, or c (added).  Out of memory: c. */
struct svg_rgb svg_palmap_color(struct svg_palmap *m, const char *name,
				size_t len, struct svg_rgb c);
/* Write the map back when it changed.  0 or a negative errno, err filled. */
int svg_palmap_save(struct svg_palmap *m, const char *path, struct sf_err *err);
void svg_palmap_release(struct svg_palmap *m);

#endif
