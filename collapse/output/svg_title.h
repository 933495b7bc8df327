/*
 * svg_title.h - the SVG flame graph's title and default subtitle.
 * Nothing here allocates, prints or fails.
 */
#ifndef SF_SVG_TITLE_H
#define SF_SVG_TITLE_H

#include <stddef.h>
#include <stdint.h>

#include "output/out.h"

/* Samples drawn, whichever way the graph was built (stream, tree, fold). */
uint64_t svg_input_total(const struct out_input *in);
/* "CMDLINE, 20.0 s at 999 Hz, 39876 samples; lost: 12 events, ..." from
 * what the profile knows, and how many frames were left_out, fitted to
 * width px at font size fs and font width fw, into buf[cap]; "" when it
 * knows nothing. */
void svg_default_subtitle(char *buf, size_t cap, const struct out_input *in,
			  const struct out_opts *o, size_t left_out,
			  unsigned width, double fs, double fw);
/* Append "N frames under 0.1% left out" (what --minwidth dropped) to the
 * text in buf[cap], after "; " when it is not empty; nothing when n is 0. */
void svg_sub_left_out(char *buf, size_t cap, const struct out_opts *o,
		      size_t n);
/* --title, else what the graph is (flame graph, icicle graph, chart). */
const char *svg_default_title(const struct out_opts *o);

#endif
