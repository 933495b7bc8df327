/* cmd_report.c - `stackfold [report] [OPTIONS] [FILE...]`: post-process
 * bpftrace output or folded stacks into the requested outputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "cmd/cli.h"
#include "cmd/cmd_common.h"
#include "cmds.h"
#include "output/svg_sink.h"
#include "capture/stopsig.h"

static int read_all(struct report *r, char **inputs, int n)
{
	static char *dash[] = { "-" };
	if (n == 0) {
		inputs = dash;
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		int st = cmd_read_input(r, inputs[i], NULL);
		if (st)
			return st;
	}
	return 0;
}

static int no_samples(char **inputs, int n)
{
	fprintf(stderr, "stackfold: no samples found in %s\n",
		n == 0 ? "<stdin>" : n == 1 ? inputs[0] : "the inputs");
	return EXIT_BADINPUT;
}

/* Folded text can skip the profile unless an output needs one
 * (OUT_PROFILE: pprof, which keeps kernel frames on a kernel mapping). */
static bool want_direct(const struct cli *c)
{
	/* -U, -K and -d act on the _[k] marks of folded input too: through
	 * a profile, the same for every output */
	if (c->oo.fold_flags & (FOLD_USER_ONLY | FOLD_KERNEL_ONLY | FOLD_DELIMIT))
		return false;
	if (c->npids)	/* the filter works on the profile's samples */
		return false;
	for (unsigned i = 0; i < c->nformats; i++)
		if (c->formats[i]->flags & OUT_PROFILE)
			return false;
	return true;
}

/* How an svg alone from one folded input is built without a fold: */
enum svg_way {
	SVG_FOLD,	/* not that case: through a fold */
	SVG_STREAM,	/* a regular file (also as stdin: `< x.folded`): laid
			 * out while it is read (struct svg_stream), memory
			 * bounded by the frames drawn; read again into a
			 * tree if out of the fold's order */
	SVG_TREE,	/* a pipe, or that file again: a frame tree, memory
			 * bounded by the unique frames */
};

/* *stdin_at: where a regular stdin starts, to read it again; -1 when the
 * input is not stdin. */
static enum svg_way svg_way(const struct cli *c, off_t *stdin_at)
{
	struct stat st;
	*stdin_at = -1;
	if (c->nformats != 1 || !(c->formats[0]->flags & OUT_STREAM) ||
	    c->ninputs > 1 || c->npids || c->oo.reverse)
		return SVG_FOLD;
	if (c->oo.flamechart)	/* input order, never read again */
		return SVG_STREAM;
	if (c->ninputs == 0 || !strcmp(c->inputs[0], "-")) {
		if (fstat(STDIN_FILENO, &st) || !S_ISREG(st.st_mode))
			return SVG_TREE;
		*stdin_at = lseek(STDIN_FILENO, 0, SEEK_CUR);
		return *stdin_at < 0 ? SVG_TREE : SVG_STREAM;
	}
	return !stat(c->inputs[0], &st) && S_ISREG(st.st_mode) ? SVG_STREAM
							       : SVG_TREE;
}

/* The report's settings from the command line. */
static struct report_opts report_opts_of(const struct cli *c, bool lazy)
{
	return (struct report_opts){
		.so = &c->so, .lazy_snapshot = lazy,
		.fold_direct = want_direct(c),
		.offsets = c->oo.fold_flags & FOLD_OFFSETS,
		.perfscript_flags = c->oo.fold_flags & (FOLD_PID | FOLD_TID),
		.max_stacks = c->max_stacks,
	};
}

static int report_start(struct report **rp, struct cli *c, enum svg_way way,
			struct svg_sink *d)
{
	struct report_opts ro = report_opts_of(c, true);
	struct report *r = *rp = report_new(&ro);
	if (!r) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	}
	*d = (struct svg_sink){ 0 };
	if (way == SVG_STREAM) {
		/* it takes folded lines only: flamegraph.pl's default width */
		struct out_opts oo = c->oo;
		cmd_folded_minwidth(&oo);
		(void)svg_sink_attach(d, report_sink(r), &oo,
				      report_sink_mostly_unknown(r));	/* -ENOMEM: a fold */
	} else if (way == SVG_TREE)
		(void)svg_sink_attach(d, report_sink(r), NULL,
				      report_sink_mostly_unknown(r));
	return 0;
}

/* --diff BEFORE AFTER: fold both, join them, render the after profile. */
static int report_diff(struct cli *c)
{
	struct report *before = NULL, *after = NULL;
	struct fold fb = { 0 }, fa = { 0 }, fd = { 0 };
	int st = EXIT_IO;
	struct report_opts ro = report_opts_of(c, false);
	if (!(before = report_new(&ro)) || !(after = report_new(&ro))) {
		fprintf(stderr, "stackfold: out of memory\n");
		goto out;
	}
	st = read_all(before, (char **)&c->diff_before, 1);
	if (!st)
		st = read_all(after, (char **)&c->diff_after, 1);
	if (st)
		goto out;
	if (c->npids) {
		report_keep_pids(before, c->pids, c->npids);
		report_keep_pids(after, c->pids, c->npids);
	}
	if (!report_samples(before) && !report_samples(after)) {
		st = no_samples(c->inputs, 2);
		goto out;
	}
	if (!report_samples(after)) {	/* the widths: nothing to draw */
		st = no_samples((char **)&c->diff_after, 1);
		goto out;
	}
	st = EXIT_IO;
	int ret = report_fold(before, c->oo.fold_flags, &fb);
	if (!ret)
		ret = report_fold(after, c->oo.fold_flags, &fa);
	if (!ret)
		ret = fold_diff(&fd, &fb, &fa);
	if (!ret && !c->oo.diff_counts)	/* shares, not counts */
		fold_diff_normalize(&fd);
	if (ret == -EOVERFLOW) {
		fprintf(stderr, "stackfold: " REPORT_OVERFLOW_MSG "\n");
		st = EXIT_BADINPUT;
		goto out;
	} else if (ret) {
		fprintf(stderr, "stackfold: out of memory\n");
		goto out;
	}
	report_set_diff_before(after, before);
	st = cmd_write(after, c, &fd);
	/* both inputs' losses (the SVG's subtitle has them too) */
	cmd_summary(before, c, "before");
	cmd_summary(after, c, "after");
out:
	fold_release(&fb);
	fold_release(&fa);
	fold_release(&fd);
	report_free(before);
	report_free(after);
	return st;
}

/* Reading stdin, a pipe: `bpftrace ... | stackfold`, where a Ctrl-C
 * reaches both, and bpftrace prints its maps into the pipe on it. */
static bool reads_pipe(const struct cli *c)
{
	struct stat st;
	bool in = c->ninputs == 0;
	for (int i = 0; i < c->ninputs; i++)
		in |= strcmp(c->inputs[i], "-") == 0;
	return in && fstat(STDIN_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
}

int cmd_report(int argc, char **argv)
{
	struct cli c;
	struct report *r = NULL;
	struct svg_sink d = { 0 };
	int st = cli_parse(&c, false, argc, argv);
	if (st >= 0)
		return st;
	stopsig_install_filter(atomic_unlink_open, reads_pipe(&c));
	if (c.diff_before)
		return report_diff(&c);
	off_t stdin_at;
	st = report_start(&r, &c, svg_way(&c, &stdin_at), &d);
	if (st) {
		svg_sink_release(&d);
		return st;
	}
	st = read_all(r, c.inputs, c.ninputs);
	if (st == CMD_REREAD) {
		report_free(r);
		r = NULL;
		svg_sink_release(&d);
		if (stdin_at >= 0 && lseek(STDIN_FILENO, stdin_at, SEEK_SET) < 0) {
			fprintf(stderr, "stackfold: cannot read <stdin> again: %s\n",
				strerror(errno));
			return EXIT_BADINPUT;
		}
		st = report_start(&r, &c, SVG_TREE, &d);
		if (st) {
			svg_sink_release(&d);
			return st;
		}
		st = read_all(r, c.inputs, c.ninputs);
	}
	if (!st && !report_samples(r)) {
		cmd_summary(r, &c, "read");
		st = no_samples(c.inputs, c.ninputs);
	} else if (!st) {
		st = cmd_write(r, &c, NULL);
		cmd_summary(r, &c, "read");
	}
	report_free(r);
	svg_sink_release(&d);
	return st;
}
