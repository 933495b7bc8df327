/*
 * out.h - output writers.  One file per format, each exporting one
 * function listed in the table in out.c.
 *
 * A writer writes the whole output to `out` and returns 0, or a negative
 * errno with err filled (-EIO for a write error, which the caller also sees
 * through ferror()).  Writers never print to stderr and never exit.
 */
#ifndef SF_OUT_H
#define SF_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fold.h"
#include "profile.h"
#include "util.h"

struct out_opts {
	unsigned fold_flags;	/* enum fold_flags used to build the fold */
	/* top */
	unsigned top_n;		/* rows, 0 = default (25) */
	/* svg */
	const char *title, *subtitle, *countname, *colors;
	unsigned width;		/* pixels, 0 = 1200 */
	double minwidth;	/* percent of total (0.1 default), or pixels
				 * when minwidth_px */
	bool minwidth_px;
	bool inverted, flamechart, no_hash;
	/* pprof */
	bool pprof_no_gzip;
};

/* Input the writers may read: the profile (may be NULL when the input was
 * a plain folded file and the writer needs only the fold) and its fold. */
struct out_input {
	const struct profile *prof;
	const struct fold *fold;
};

typedef int (*out_fn)(FILE *out, const struct out_input *in,
		      const struct out_opts *opts, struct sf_err *err);

int out_folded_write(FILE *out, const struct out_input *in,
		     const struct out_opts *opts, struct sf_err *err);
int out_top_write(FILE *out, const struct out_input *in,
		  const struct out_opts *opts, struct sf_err *err);
int out_svg_write(FILE *out, const struct out_input *in,
		  const struct out_opts *opts, struct sf_err *err);
int out_pprof_write(FILE *out, const struct out_input *in,
		    const struct out_opts *opts, struct sf_err *err);

struct out_format {
	const char *name;	/* -f NAME */
	const char *suffix;	/* PREFIX + suffix with -o in record mode */
	out_fn write;
	bool binary;
};
/* Table lookup by name; NULL when unknown. */
const struct out_format *out_format_find(const char *name);
extern const struct out_format out_formats[];
extern const unsigned out_nformats;

#endif
