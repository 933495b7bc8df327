/*
 * write.h - outputs written from one input (out.h's struct out_input):
 * each format to its path, "-" being stdout, a file through an atomic
 * temporary file and rename (output/atomic.h); every one, also after one
 * failed (a closed stdout must not cost the files).
 *
 * The front-ends call it after ingest, with the view of the report
 * (ingest/report.h's report_view()).  Returns 0, or the first failure's
 * negative errno with err naming its path (and how many more failed).
 * Nothing prints.
 */
#ifndef SF_WRITE_H
#define SF_WRITE_H

#include "output/out.h"

struct out_dest {
	const struct out_format *fmt;
	const char *path;	/* "-": stdout */
};

int out_write(const struct out_dest *outs, unsigned nouts,
	      const struct out_input *in, const struct out_opts *oo,
	      struct sf_err *err);

#endif
