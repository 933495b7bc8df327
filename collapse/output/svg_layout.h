/*
 * svg_layout.h - the flame graph's layout, private to the SVG writer: the
 * frames to draw (depth, start and width in samples, self counts), from a
 * fold, from folded lines as they are read (struct svg_stream, out.h) or
 * from a frame tree (svg_tree.h); frames narrower than the minimum width
 * dropped.  out_svg.c draws them.  Nothing prints.
 */
#ifndef STACKFOLD_OUTPUT_SVG_LAYOUT_H
#define STACKFOLD_OUTPUT_SVG_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/out.h"
#include "output/svg_elide.h"

/* The drawing's geometry (px), which the minimum width depends on. */
#define XPAD 10		/* left and right margin, px */
#define FRAME_H 16	/* row pitch; rects are 15 tall */
#define FONT_SIZE 12
#define FONT_WIDTH 0.59	/* average glyph width / font size */
#define YPAD_TITLE 36
#define YPAD_SUB 24
#define YPAD_BOTTOM 34
#define DEFAULT_WIDTH 1200
#define DEFAULT_MIN_PCT 0.1

/* A frame on the current path. */
struct open_frame {
	const char *name;
	uint32_t len;
	uint32_t end;		/* offset just past the name in the line */
	uint64_t start, start2;	/* samples before it (after, before) */
	uint64_t self;		/* samples of lines ending here (after) */
	int64_t self_delta;	/* after - before of lines ending here */
};

/* A frame that will be drawn. */
struct vframe {
	const char *name;
	uint32_t len, depth;
	uint64_t start, count, count2, self;
	int64_t self_delta;
	uint32_t ex;		/* svg_elide list: left-out descendants */
};

struct layout {
	struct svg_elide el;	/* what the left-out frames hold, for the
				 * search (svg_elide.h) */
	bool el_on;		/* el initialised */
	const struct fold *fold;
	uint32_t *order;	/* line order (flame chart); NULL: the fold's */
	double min_count;	/* narrower frames are dropped */
	struct open_frame *open;
	size_t nopen, open_cap;
	struct vframe *v;
	size_t nv, v_cap;
	uint64_t time, time2, max_delta;
	uint32_t max_depth;
	const char *prev;	/* previous line */
	uint32_t prev_len;
	/* streaming (svg_stream): open frames' names point into pbuf, the
	 * copy of the previous line; kept frames' names are interned */
	bool stream;
	double min_frac;	/* keep count >= min_frac x samples so far */
	char *pbuf;
	size_t pcap;
	struct strtab names;
	size_t nv_compact;	/* filter v again when nv reaches this */
	size_t uniq;		/* distinct lines */
	size_t left_out;	/* frames dropped: narrower than the minimum */
};

struct svg_stream {
	struct layout l;
	char *sbuf;		/* a line made safe (fold_safe_stack) */
	size_t scap;
	bool done;		/* closed by out_svg_write() */
	bool any_order;		/* --flamechart: lines in time order, only
				 * adjacent ones merged (flamegraph.pl's) */
};

/* Lay out l->fold (l->min_count set): 0 or -ENOMEM.  flamechart: lines in
 * time order, only adjacent ones merged. */
int svg_layout_build(struct layout *l, bool flamechart);
void svg_layout_release(struct layout *l);
/* svg_tree_walk()'s callback, ctx a struct layout: each frame kept. */
struct svg_tree_frame;
int svg_layout_tree_frame(void *ctx, const struct svg_tree_frame *f);
/* Close a stream's open frames and keep those at least min wide: 0,
 * -ENOMEM, or -EINVAL when it was closed already. */
int svg_stream_finish(struct svg_stream *st, double min);

#endif
