/*
 * svg_sink.h - an SVG sink (out.h's struct out_sink): folded-text lines
 * squashed as the flame graph draws them (output/svg_squash.h), then laid
 * out as they come (an svg stream) or gathered in a frame tree
 * (output/svg_tree.h), instead of into a fold.  The one adapter
 * stackfold's front-end and the fuzz target share, so both draw the same.
 *
 * svg_sink_attach(): 0, or -ENOMEM (*sink left alone: the reader keeps
 * its own fold, the caller goes on without the sink).  The caller owns
 * *d and calls svg_sink_release() once the reader no longer feeds the
 * sink (after report_free() of a report).  Nothing prints.
 */
#ifndef SF_SVG_SINK_H
#define SF_SVG_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "output/out.h"

struct svg_sink {
	struct svg_stream *stream;
	struct svg_tree *tree;
	uint64_t *mostly_unknown;	/* the caller's: samples of stacks
					 * drawn shortened, added to */
	char *sq;		/* a line squashed */
	size_t sqcap;
};

/* Make d the sink *sink: a stream laid out with *stream_opts (lines in
 * the fold's order), or a tree when stream_opts is NULL (any order).
 * Samples of mostly-[unknown] stacks are added to *mostly_unknown. */
int svg_sink_attach(struct svg_sink *d, struct out_sink *sink,
		    const struct out_opts *stream_opts,
		    uint64_t *mostly_unknown);
void svg_sink_release(struct svg_sink *d);	/* zeroed: fine twice */

#endif
