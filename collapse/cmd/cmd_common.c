/* cmd_common.c - see cmd_common.h. */
#include "cmd/cmd_common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "capture/linereader.h"
#include "output/losses.h"

int cmd_max_stacks(const struct report *r, const char *name)
{
	fprintf(stderr, "stackfold: %s:%" PRIu64 ": more than %" PRIu64
		" unique stacks (--max-stacks): stopped, nothing written\n",
		name ? name : "<bpftrace>", r->in.lines, r->max_stacks);
	return EXIT_LIMIT;
}

int cmd_read_input(struct report *r, const char *path, volatile int *stop)
{
	bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "<stdin>" : path;
	int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "stackfold: cannot open '%s': %s\n", path,
			strerror(errno));
		return EXIT_BADINPUT;
	}
	struct linereader lr;
	const char *line;
	size_t len;
	int ret = linereader_init(&lr, fd);
	report_begin_input(r, name);
	while (!ret && (ret = linereader_next(&lr, &line, &len, stop)) > 0)
		ret = ret == 1 ? report_line(r, line, len) : report_overlong_line(r);
	linereader_release(&lr);
	if (!is_stdin)
		close(fd);
	if (ret == -EAGAIN && r->svg)
		return CMD_REREAD;
	struct report_input_stats st;
	bool ended = !ret;
	if (ended)	/* entries kept until the end are added now */
		ret = report_end_input(r, &st);
	if (!ret && r->max_stacks && report_unique_stacks(r) > r->max_stacks)
		ret = -E2BIG;
	if (ret == -E2BIG)
		return cmd_max_stacks(r, name);
	if (ret == -EAGAIN && r->svg)
		return CMD_REREAD;
	if (ret == -EOVERFLOW && ended) {	/* entries kept until the end */
		fprintf(stderr, "stackfold: %s: " REPORT_OVERFLOW_MSG "\n", name);
		return EXIT_BADINPUT;
	}
	if (ret == -EOVERFLOW) {
		fprintf(stderr, "stackfold: %s:%" PRIu64 ": " REPORT_OVERFLOW_MSG
			"\n", name, r->in.lines);
		return EXIT_BADINPUT;
	}
	if (ret < 0 && ended) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	}
	if (ret < 0) {
		fprintf(stderr, "stackfold: read '%s': %s\n", name, strerror(-ret));
		return ret == -ENOMEM ? EXIT_IO : EXIT_BADINPUT;
	}
	if (st.hz_differs) {
		fprintf(stderr, "stackfold: %s: sampled at %" PRIu64 " Hz, an "
			"earlier input at %" PRIu64 " Hz: samples of different "
			"rates cannot be added into one profile\n", name,
			st.hz_differs, r->prof.meta.hz);
		return EXIT_BADINPUT;
	}
	if (st.unparsable)
		fprintf(stderr, "stackfold: %s:%zu: ignored %" PRIu64
			" %s (first at line %zu)\n", name, st.first_bad_line,
			st.unparsable, loss_word(LOSS_UNPARSABLE_LINES,
						 st.unparsable),
			st.first_bad_line);
	if (st.two_counts && st.two_counts == st.folded_lines)
		fprintf(stderr, "stackfold: %s: every line has two counts: "
			"differential folded text? Read with the last count, "
			"the other as part of the leaf's name; for a "
			"differential flame graph use --diff BEFORE AFTER\n",
			name);
	if (st.stack_maps > 1)	/* @s[ustack, kstack] and @k[kstack]... */
		fprintf(stderr, "stackfold: %s: %" PRIu64 " stack maps added "
			"together: a sample in more than one counts once in each "
			"(as with stackcollapse-bpftrace.pl)\n", name, st.stack_maps);
	if (st.nonstack_ignored)
		fprintf(stderr, "stackfold: %s: %" PRIu64 " counts in maps without "
			"stacks not added (the input has stack maps)\n", name,
			st.nonstack_ignored);
	if (st.incomplete)
		fprintf(stderr, "stackfold: %s:%zu: ignored %" PRIu64
			" %s (first at line %zu; truncated input?)\n", name,
			st.first_incomplete_line, st.incomplete,
			loss_word(LOSS_INCOMPLETE_RECORDS, st.incomplete),
			st.first_incomplete_line);
	return 0;
}

void cmd_summary(struct report *r, const struct cli *c, const char *what)
{
	if (r->sym) {
		const char *w;
		while ((w = sym_session_next_warning(r->sym)))
			fprintf(stderr, "stackfold: warning: %s\n", w);
		struct sym_stats ss;
		sym_session_stats(r->sym, &ss);
		if (ss.files_refused || ss.bounds_refused)
			fprintf(stderr, "stackfold: %" PRIu64 " file%s not read "
				"(not regular files, or not in an allowed place) "
				"and %" PRIu64 " refused past a size bound: see "
				"the warnings above and docs/security.md\n",
				ss.files_refused, ss.files_refused == 1 ? "" : "s",
				ss.bounds_refused);
	}
	const struct pf_counters *k = &r->prof.counters;
	char losses[1024];
	bool lost = report_losses(r, losses, sizeof(losses));
	/* -q: the summary only when samples were or may have been lost,
	 * which is never kept quiet */
	if (c->quiet && !lost && !k->maps_unsaved)
		return;
	/* --countname: the values are not always samples (off-CPU ns) */
	/* a flame chart merges a stack with its neighbour only: one that
	 * comes back is counted again, so its stacks are not "unique" */
	fprintf(stderr, "stackfold: %s: %" PRIu64 " %s, %zu %sstacks%s",
		what, report_samples(r), c->oo.countname ? c->oo.countname : "samples",
		report_unique_stacks(r), c->oo.flamechart ? "" : "unique ", losses);
	fputc('\n', stderr);
	if (k->maps_unsaved)
		fprintf(stderr, "stackfold: %" PRIu64 " %s (frames shown as "
			"[unknown])\n", k->maps_unsaved,
			loss_word(LOSS_MAPS_UNSAVED, k->maps_unsaved));
}

int cmd_write(struct report *r, const struct cli *c, const struct fold *fold)
{
	struct report_output outs[CLI_MAX_OUTPUTS];
	static char paths[CLI_MAX_OUTPUTS][4096];
	struct sf_err err = { "" };
	if (!r->prof.meta.hz)	/* -F: the input's own rate wins */
		r->prof.meta.hz = c->hz;
	cli_outputs(c, outs, paths);
	int ret = report_write(r, outs, c->nformats, &c->oo, fold, &err);
	if (ret < 0) {
		fprintf(stderr, "stackfold: %s\n", err.msg);
		return ret == -EOVERFLOW ? EXIT_BADINPUT : EXIT_IO;
	}
	return EXIT_OK;
}
