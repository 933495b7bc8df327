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
#include "model/losses.h"
#include "ingest/pprof_in.h"
#include "ingest/perfscript.h"

/* Bytes no profile text holds: an ELF file, or binary data (NULs, or
 * other control bytes than tab, CR, LF, ESC and form feed, in more than
 * 10% of the first block, and 8 at least: a NUL in a name of a short
 * text is read as `?`). */
static bool not_text(const unsigned char *h, size_t n)
{
	if (n >= 4 && !memcmp(h, "\x7f" "ELF", 4))
		return true;
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += h[i] == 0 || (h[i] < 0x20 && !strchr("\t\n\r\x1b\f", h[i])) ||
		       h[i] == 0x7f;
	return bad >= 8 && bad * 10 > n;
}

static int hz_differs(const struct report *r, const char *name,
		      const struct report_input_stats *st)
{
	if (!st->hz_differs)
		return 0;
	fprintf(stderr, "stackfold: %s: sampled at %" PRIu64 " Hz, an "
		"earlier input at %" PRIu64 " Hz: samples of different "
		"rates cannot be added into one profile\n", name,
		st->hz_differs, report_profile(r)->meta.hz);
	return EXIT_BADINPUT;
}

int cmd_max_stacks(const struct report *r, const char *name)
{
	fprintf(stderr, "stackfold: %s:%" PRIu64 ": more than %" PRIu64
		" unique stacks (--max-stacks): stopped, nothing written\n",
		name ? name : "<bpftrace>", report_input_lines(r),
		report_max_stacks(r));
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
	const unsigned char *head;
	size_t hn = 0;
	if (!ret)
		ret = linereader_peek(&lr, 4096, &head, &hn);
	/* gzip, or a binary protobuf (text starts with '\n' too) */
	if (!ret && pprof_sniff(head, hn) &&
	    ((hn >= 2 && head[0] == 0x1f && head[1] == 0x8b) || not_text(head, hn))) {
		struct sf_err err = { "" };
		/* a profile, not folded lines: the svg is drawn from its fold
		 * (a sink is set for one input only: it took nothing; its
		 * owner frees it) */
		report_detach_sink(r);
		ret = pprof_read(r, head, hn, fd, &err);
		linereader_release(&lr);
		if (!is_stdin)
			close(fd);
		if (ret) {
			fprintf(stderr, "stackfold: %s: %s\n", name, err.msg);
			return ret == -ENOMEM ? EXIT_IO : EXIT_BADINPUT;
		}
		struct report_input_stats st;
		if (report_end_input(r, &st) == -ENOMEM) {
			fprintf(stderr, "stackfold: out of memory\n");
			return EXIT_IO;
		}
		return hz_differs(r, name, &st);
	}
	if (!ret && perfscript_is_perf_data(head, hn)) {
		linereader_release(&lr);
		if (!is_stdin)
			close(fd);
		fprintf(stderr, "stackfold: %s: a perf.data file (perf record's "
			"binary): give its text instead, as to stackcollapse-perf.pl: "
			"perf script -i %s | stackfold -f svg > flame.svg\n", name,
			is_stdin ? "perf.data" : path);
		return EXIT_BADINPUT;
	}
	bool perf = !ret && perfscript_sniff(head, hn);
	struct perfscript ps;
	perfscript_init(&ps, report_perfscript_flags(r));
	if (!ret && not_text(head, hn)) {
		linereader_release(&lr);
		if (!is_stdin)
			close(fd);
		fprintf(stderr, "stackfold: %s: not a profile: expected bpftrace "
			"output, a stackfold raw capture, folded stacks ('a;b;c "
			"COUNT' lines) or pprof (.pb.gz, .pb)\n", name);
		return EXIT_BADINPUT;
	}
	while (!ret && (ret = linereader_next(&lr, &line, &len, stop)) > 0) {
		if (ret != 1)
			ret = report_overlong_line(r);
		else if (!perf)
			ret = report_line(r, line, len);
		else if ((ret = perfscript_line(&ps, line, len, &line, &len)) == 1)
			ret = report_line(r, line, len);	/* a sample's */
	}
	if (perf && !ret && perfscript_end(&ps, &line, &len) == 1)
		ret = report_line(r, line, len);
	perfscript_release(&ps);
	linereader_release(&lr);
	if (!is_stdin)
		close(fd);
	if (ret == -EAGAIN && report_has_sink(r))
		return CMD_REREAD;
	struct report_input_stats st;
	bool ended = !ret;
	if (ended)	/* entries kept until the end are added now */
		ret = report_end_input(r, &st);
	if (!ret && report_past_max_stacks(r))
		ret = -E2BIG;
	if (ret == -E2BIG)
		return cmd_max_stacks(r, name);
	if (ret == -EAGAIN && report_has_sink(r))
		return CMD_REREAD;
	if (ret == -EOVERFLOW && ended) {	/* entries kept until the end */
		fprintf(stderr, "stackfold: %s: " REPORT_OVERFLOW_MSG "\n", name);
		return EXIT_BADINPUT;
	}
	if (ret == -EOVERFLOW) {
		fprintf(stderr, "stackfold: %s:%" PRIu64 ": " REPORT_OVERFLOW_MSG
			"\n", name, report_input_lines(r));
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
	if (hz_differs(r, name, &st))
		return EXIT_BADINPUT;
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

/* What each loss means for the graph, and what to do about it: one line
 * each, after the summary's counts (the loss table's advice). */
static void advise(const struct pf_counters *k)
{
	const char *lines[LOSS_ADVICE_N];
	size_t n = loss_advice(k, lines, LOSS_ADVICE_N);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "stackfold: %s\n", lines[i]);
}

/* The share of samples whose copy the size bound cut, and the
 * --stack-size to try, when that share is at least one in ten: a capture
 * mostly [truncated] (big frames: sqlite3's) says how to unwind it. */
#define STACK_SIZE_MAX 65528
static void stack_size_hint(const struct pf_counters *k)
{
	if (!k->dwarf_samples || !k->dwarf_cut ||
	    k->dwarf_cut * 10 < k->dwarf_samples)
		return;
	unsigned pct = (unsigned)(100 * k->dwarf_cut / k->dwarf_samples);
	uint64_t at = k->dwarf_cut_bytes, next = at * 2;
	if (next > STACK_SIZE_MAX)
		next = STACK_SIZE_MAX;
	if (at >= STACK_SIZE_MAX)
		fprintf(stderr, "stackfold: %u%% of samples truncated at %" PRIu64
			" bytes, the largest --stack-size\n", pct, at);
	else
		fprintf(stderr, "stackfold: %u%% of samples truncated at %" PRIu64
			" bytes: try --stack-size %" PRIu64 "\n", pct, at, next);
}

/* Samples whose stacks were all empty ("@[, , demo]: 193") are drawn
 * as their process alone, a wide box with nothing above it: said once,
 * -v or not (-q: not), with the likely reasons. */
static void empty_stacks(const struct pf_counters *k, uint64_t samples)
{
	if (!k->empty_stacks)
		return;
	fprintf(stderr, "stackfold: %" PRIu64 " of %" PRIu64 " samples had "
		"empty stacks (drawn as the process name alone, or [no stack]): likely a "
		"process that exited before bpftrace printed its stacks, "
		"samples with no stack to walk (in the kernel with no kstack "
		"in the key, or at an exec), or a key without ustack\n",
		k->empty_stacks, samples);
}

void cmd_summary(struct report *r, const struct cli *c, const char *what)
{
	struct sym_session *sym = report_session_made(r);
	if (sym) {
		const char *w;
		while ((w = sym_session_next_warning(sym)))
			fprintf(stderr, "stackfold: warning: %s\n", w);
		struct sym_stats ss;
		sym_session_stats(sym, &ss);
		if (ss.files_refused || ss.bounds_refused)
			fprintf(stderr, "stackfold: %" PRIu64 " file%s not read "
				"(not regular files, or not in an allowed place) "
				"and %" PRIu64 " refused past a size bound: see "
				"the warnings above and docs/security.md\n",
				ss.files_refused, ss.files_refused == 1 ? "" : "s",
				ss.bounds_refused);
	}
	const struct pf_counters *k = report_counters(r);
	char losses[1024];
	bool lost = report_losses(r, losses, sizeof(losses));
	/* a filter (report) is quiet unless -v, as flamegraph.pl is; a
	 * capture (record) says what it recorded, as perf record does,
	 * unless -q; either says when samples were or may have been lost */
	if (!c->quiet)
		empty_stacks(k, report_samples(r));
	if ((c->record ? c->quiet : !c->verbose) && !lost && !k->maps_unsaved) {
		if (!c->quiet)
			stack_size_hint(k);
		return;
	}
	/* a report of a raw capture: its losses were said when it was
	 * recorded, and the SVG's subtitle and pprof's comment carry them;
	 * said again with -v only (lines unreadable now are said) */
	if (!c->record && !c->verbose && report_is_capture(r) &&
	    !k->unparsable_lines && !k->incomplete_records) {
		if (!c->quiet)
			stack_size_hint(k);
		return;
	}
	/* --countname: the values are not always samples (off-CPU ns) */
	/* a flame chart merges a stack with its neighbour only: one that
	 * comes back is counted again, so its stacks are not "unique" */
	fprintf(stderr, "stackfold: %s: %" PRIu64 " %s, %zu %sstacks%s",
		what, report_samples(r), c->oo.countname ? c->oo.countname : "samples",
		report_unique_stacks(r), c->oo.flamechart ? "" : "unique ", losses);
	if (k->other_pids)
		fprintf(stderr, "; %" PRIu64 " samples of other processes left "
			"out (--pid)", k->other_pids);
	fputc('\n', stderr);
	if (k->maps_unsaved)
		fprintf(stderr, "stackfold: %" PRIu64 " %s (frames shown as "
			"[unknown])\n", k->maps_unsaved,
			loss_word(LOSS_MAPS_UNSAVED, k->maps_unsaved));
	if (c->verbose && k->dwarf_samples)
		fprintf(stderr, "stackfold: unwinding: %" PRIu64 " files' CFI "
			"rows from the cache, %" PRIu64 " files read for CFI\n",
			k->dwarf_cfi_cached, k->dwarf_cfi_files);
	if (lost)
		advise(k);
	if (!c->quiet)
		stack_size_hint(k);
}

void cmd_folded_minwidth(struct out_opts *o)
{
	if (o->minwidth == 0 && !o->minwidth_px) {	/* (unset) */
		o->minwidth = FOLDED_MINWIDTH_PX;
		o->minwidth_px = true;
	}
}

/* The SVG drew stacks of mostly [unknown] frames shortened
 * (output/svg_squash.h): said once, with the likely cause and the cure. */
static void mostly_unknown(uint64_t n, uint64_t samples)
{
	fprintf(stderr, "stackfold: %" PRIu64 " of %" PRIu64 " samples (%.1f%%) "
		"had stacks of mostly [unknown] frames, drawn shortened in the "
		"SVG: frame-pointer walks through code built without frame "
		"pointers; --call-graph dwarf (scripts/profile) unwinds it\n",
		n, samples, samples ? 100.0 * (double)n / (double)samples : 0.0);
}

int cmd_write_to(struct report *r, const struct out_dest *outs,
		 unsigned nouts, const struct out_opts *oo,
		 const struct fold *fold, struct sf_err *err)
{
	struct report_view v;
	int ret = report_view(r, oo->fold_flags, fold, &v, err);
	if (!ret)
		ret = out_write(outs, nouts, &v.in, oo, err);
	report_view_release(&v);
	return ret;
}

int cmd_write(struct report *r, const struct cli *c, const struct fold *fold)
{
	struct out_dest outs[CLI_MAX_OUTPUTS];
	static char paths[CLI_MAX_OUTPUTS][4096];
	struct sf_err err = { "" };
	if (c->npids && !fold) {
		report_keep_pids(r, c->pids, c->npids);
		if (!report_samples(r)) {
			fprintf(stderr, "stackfold: no samples of --pid %d%s (%" PRIu64
				" samples of other processes)\n", c->pids[0],
				c->npids > 1 ? " and the others" : "",
				report_counters(r)->other_pids);
			return EXIT_BADINPUT;
		}
	}
	report_default_hz(r, c->hz);	/* -F: the input's own rate wins */
	cli_outputs(c, outs, paths);
	/* as gzip: binary or page-long output is not shown on a terminal
	 * unless asked for with -o - */
	for (unsigned i = 0; !c->output && i < c->nformats; i++) {
		const struct out_format *f = outs[i].fmt;
		if ((f->flags & (OUT_BINARY | OUT_PAGES)) &&
		    isatty(STDOUT_FILENO)) {
			fprintf(stderr, "stackfold: not writing %s to a terminal: "
				"-o FILE, or -o - to force it, or a pipe\n",
				f->name);
			return EXIT_USAGE;
		}
	}
	struct out_opts oo = c->oo;
	struct out_svg_stats sst = { *report_sink_mostly_unknown(r) };
	if (report_all_folded(r))
		cmd_folded_minwidth(&oo);
	oo.svg_stats = &sst;
	int ret = cmd_write_to(r, outs, c->nformats, &oo, fold, &err);
	if (ret < 0) {
		fprintf(stderr, "stackfold: %s\n", err.msg);
		return ret == -EOVERFLOW ? EXIT_BADINPUT : EXIT_IO;
	}
	if (sst.mostly_unknown && !c->quiet)
		mostly_unknown(sst.mostly_unknown, report_samples(r));
	return EXIT_OK;
}
