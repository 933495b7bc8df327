/*
 * cmd_common.h - pieces shared by the report and record front-ends: the
 * input loop, the closing summary on stderr, and writing the outputs.
 * These print (they are front-end code), and return exit statuses.
 */
#ifndef SF_CMD_COMMON_H
#define SF_CMD_COMMON_H

#include "cmd/cli.h"
#include "ingest/report.h"
#include "output/write.h"

/* Read one input (path, or "-" for stdin) into r.  Prints per-input
 * warnings (unparsable lines with the first line number, incomplete
 * records).  Returns 0 or an exit status, or CMD_REREAD (nothing printed)
 * when r's sink (report_sink()) met lines out of order: read the input again without it. */
#define CMD_REREAD (-1)
int cmd_read_input(struct report *r, const char *path, volatile int *stop);
/* Print queued symbolizer warnings and the closing summary (unless quiet). */
void cmd_summary(struct report *r, const struct cli *c, const char *what);
/* Past report_max_stacks(r) (report_line()'s -E2BIG) in input name (NULL: the
 * capture): says so in one line; returns EXIT_LIMIT. */
int cmd_max_stacks(const struct report *r, const char *name);

/* --minwidth not given: flamegraph.pl's default, 0.1 px, set in o, for an
 * SVG of folded text only (a drop-in for flamegraph.pl draws the frames
 * it draws); an SVG of a capture keeps 0.1% of the samples, whose
 * narrower frames can be neither seen nor hovered. */
#define FOLDED_MINWIDTH_PX 0.1
void cmd_folded_minwidth(struct out_opts *o);

/* The report handed to output: its view (report_view()) written to each
 * of outs (out_write()).  0 or a negative errno with err said; prints
 * nothing. */
int cmd_write_to(struct report *r, const struct out_dest *outs,
		 unsigned nouts, const struct out_opts *oo,
		 const struct fold *fold, struct sf_err *err);
/* Write every requested output; prints the error.  0, EXIT_IO, or
 * EXIT_BADINPUT (counts past 2^63). */
int cmd_write(struct report *r, const struct cli *c, const struct fold *fold);

#endif
