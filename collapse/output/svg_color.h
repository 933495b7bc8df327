/*
 * svg_color.h - frame colours of the SVG flame graph.
 *
 * A palette maps a frame to an RGB colour from three numbers in [0, 1)
 * taken from a 64-bit seed; the writer seeds with a hash of the function
 * name (the same function gets the same colour in every graph) or, with
 * --no-hash, with a hash of the frame's position.
 */
#ifndef SF_SVG_COLOR_H
#define SF_SVG_COLOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum svg_palette {
	SVG_PAL_HOT,
	SVG_PAL_MEM,
	SVG_PAL_IO,
	SVG_PAL_RED,
	SVG_PAL_GREEN,
	SVG_PAL_BLUE,
	SVG_PAL_YELLOW,
	SVG_PAL_PURPLE,
	SVG_PAL_AQUA,
	SVG_PAL_ORANGE,
	SVG_PAL_LANG,	/* kernel / JIT / user / inlined by frame suffix */
	/* flamegraph.pl's multi-palettes: a base palette chosen per frame by
	 * its name, with flamegraph.pl's rules */
	SVG_PAL_JAVA,
	SVG_PAL_JS,
	SVG_PAL_PERL,
	SVG_PAL_WAKEUP,
	SVG_PAL_CHAIN,
};

struct svg_rgb {
	uint8_t r, g, b;
};

/* Palette by --colors name (NULL or "" = hot); -1 when unknown. */
int svg_palette_find(const char *name);
/* Comma-separated list of the names, for error messages. */
const char *svg_palette_names(void);
/* Background gradient (top, bottom) as "#rrggbb" strings: bg (--bgcolors:
 * yellow, blue, green, grey, or one flat "#rrggbb"), or when NULL the
 * palette's (flamegraph.pl's choice: mem green, io blue, chain grey, else
 * yellow). */
void svg_palette_background(int pal, const char *bg, const char **top,
			    const char **bottom);
/* Is s a --bgcolors value? */
bool svg_bgcolors_ok(const char *s);
/* The palette a multi-palette (java, js, perl, wakeup, chain) uses for
 * the frame name (with its _[k]-style suffix); pal itself otherwise. */
int svg_palette_for(int pal, const char *name, size_t len);
/* Colour of a frame; name is the full frame text (with its _[k]-style
 * suffix, which the lang palette reads). */
struct svg_rgb svg_color(int pal, const char *name, size_t len,
			 uint64_t seed);
/* Differential colour: white for no change, towards red for growth and
 * towards blue for shrinkage, saturating at |delta| == max (> 0). */
struct svg_rgb svg_diff_color(int64_t delta, uint64_t max);

/* Frame suffix kinds as fold.h writes them. */
enum svg_suffix { SVG_SFX_NONE, SVG_SFX_K, SVG_SFX_J, SVG_SFX_I, SVG_SFX_W };
/* The annotation at the end of a frame name, if any (4 bytes long). */
enum svg_suffix svg_suffix_of(const char *name, size_t len);

#endif
