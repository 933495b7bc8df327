/*
 * report_svg.h - the report's SVG sink (struct report_sink): folded-text
 * lines squashed as the flame graph draws them (output/svg_squash.h),
 * then laid out as they come (an svg stream) or gathered in a frame tree
 * (output/svg_tree.h), instead of into the report's fold.  The one adapter
 * stackfold's front-end and the fuzz target share, so both draw the same.
 *
 * report_svg_attach(): 0, or -ENOMEM (the report keeps its own fold: the
 * caller goes on without the sink).  The caller owns *d and calls
 * report_svg_release() after report_release() of the report.
 */
#ifndef SF_REPORT_SVG_H
#define SF_REPORT_SVG_H

#include "ingest/report.h"

struct report_svg {
	struct svg_stream *stream;
	struct svg_tree *tree;
	struct report *r;	/* its sink_mostly_unknown counts the stacks
				 * drawn shortened */
	char *sq;		/* a line squashed */
	size_t sqcap;
};

/* Make d r's sink: a stream laid out with *stream_opts (lines in the
 * fold's order), or a tree when stream_opts is NULL (any order). */
int report_svg_attach(struct report_svg *d, struct report *r,
		      const struct out_opts *stream_opts);
void report_svg_release(struct report_svg *d);	/* zeroed: fine twice */

#endif
