/* losses.c - see losses.h. */
#include "model/losses.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define AT(f) offsetof(struct pf_counters, f)

static const char *const advice_text[LOSS_ADVICE_N] = {
	[LOSS_ADVICE_MAP_FULL] = "the BPF map of stacks was full, so samples "
		"are missing from the graph: capture for less time, sample at "
		"a lower -F, or flush more often (--flush)",
	[LOSS_ADVICE_STACKID] = "some stacks could not be read (stack-id "
		"errors): their samples count under [unknown]; a larger stack "
		"map or fewer processes sampled (-p PID) helps",
	[LOSS_ADVICE_LOST] = "bpftrace lost events that name new processes: "
		"some frames of short-lived processes show as [unknown]; more "
		"perf-buffer pages (BPFTRACE_PERF_RB_PAGES) helps",
	[LOSS_ADVICE_SIDEBAND] = "the kernel's side-band ring overflowed: "
		"short-lived processes' maps may be missing, their frames "
		"[unknown]; a larger ring (STACKFOLD_SIDEBAND_PAGES=512, 128 "
		"by default) helps",
	[LOSS_ADVICE_CUT] = "bpftrace ended early (killed or failed): the "
		"samples since its last flush are missing; see its message "
		"above",
	[LOSS_ADVICE_TWICE] = "bpftrace printed a map twice: those samples "
		"are counted twice in the graph",
	[LOSS_ADVICE_SKIPPED] = "lines that are not bpftrace output nor "
		"folded stacks were skipped (the input was cut short or mixed "
		"with other text)",
};

const struct loss_kind loss_table[LOSS_N] = {
	[LOSS_LOST_EVENTS] = { "lost_events", "event", "events",
		"bpftrace lost %s events", true, false, LOSS_IF_NO_LOSSES,
		AT(lost_events),
		.advice = LOSS_ADVICE_LOST, .meta = "lost", .stored = 4 },
	[LOSS_MAP_DROPPED] = { "map_dropped", "map-full drop", "map-full drops",
		"%s samples dropped by a full map", true, false,
		LOSS_IF_NO_DROPS, AT(map_dropped),
		.advice = LOSS_ADVICE_MAP_FULL, .stored = 1 },
	[LOSS_STACKID_ERRORS] = { "stackid_errors", "stack-id error",
		"stack-id errors", "%s stack-id errors (stacks missing)", true,
		false, LOSS_IF_NO_LOSSES, AT(stackid_errors),
		.advice = LOSS_ADVICE_STACKID, .meta = "stackid_errors",
		.stored = 3 },
	[LOSS_UNPARSABLE_LINES] = { "unparsable_lines", "unparsable line",
		"unparsable lines", "%s unparsable lines", true, false,
		LOSS_KNOWN, AT(unparsable_lines),
		.advice = LOSS_ADVICE_SKIPPED, .stored = 7 },
	[LOSS_INCOMPLETE_RECORDS] = { "incomplete_records",
		"incomplete record", "incomplete records",
		"%s incomplete records", true, false, LOSS_KNOWN,
		AT(incomplete_records),
		.advice = LOSS_ADVICE_SKIPPED, .stored = 8 },
	/* drawn, as module+offset or [unknown] */
	[LOSS_UNSYMBOLIZED_FRAMES] = { "unsymbolized_frames",
		"unsymbolized frame sample", "unsymbolized frame samples",
		"%s unsymbolized frame samples", false, false, LOSS_KNOWN,
		AT(unsymbolized_frames) },
	/* drawn, but cut short */
	[LOSS_TRUNCATED_STACKS] = { "truncated_stacks", "truncated stack",
		"truncated stacks", "%s samples with a stack at the depth limit "
		"(root marked [truncated])", false, false, LOSS_IF_NO_LOSSES,
		AT(truncated_stacks) },
	/* drawn, but counted twice (a map printed twice) */
	[LOSS_OVER_TOTAL] = { "over_total", "samples past bpftrace's count",
		"samples past bpftrace's count", "%s samples more than bpftrace "
		"counted (a map printed twice? they are counted twice)", true,
		false, LOSS_IF_NO_DROPS, AT(over_total),
		.advice = LOSS_ADVICE_TWICE, .stored = 2 },
	/* drawn, but its frames [unknown] */
	[LOSS_MAPS_UNSAVED] = { "maps_unsaved",
		"process exited before its memory map could be saved",
		"processes exited before their memory map could be saved",
		NULL, false, true, LOSS_KNOWN, AT(maps_unsaved),
		.stored = 9 },
	/* drawn, but its frames unnamed: past the probe's exec cap one
	 * key holds several programs */
	[LOSS_EXEC_CAPPED] = { "exec_capped",
		"process past 126 execs since its fork (frames unnamed)",
		"processes past 126 execs since their fork (frames unnamed)",
		"%s image%s past 126 execs since the fork (frames unnamed: "
		"one key holds several programs)", false, true, LOSS_KNOWN,
		AT(exec_capped) },
	/* drawn, but as one [overflow] stack: past the memory budget */
	[LOSS_MEM_OVERFLOW] = { "mem_overflow",
		"sample past the memory budget", "samples past the memory budget",
		"%s samples past the memory budget (--max-memory), counted in "
		"one [overflow] stack", false, true, LOSS_KNOWN,
		AT(mem_overflow) },
	/* bpftrace's own "map full" text: samples lost, how many unknown */
	[LOSS_MAP_FULL_WARNINGS] = { "map_full_warnings", "map-full warning",
		"map-full warnings", "bpftrace warned %s times that a map was "
		"full (samples lost, count unknown)", true, true, LOSS_KNOWN,
		AT(map_full_warnings),
		.advice = LOSS_ADVICE_MAP_FULL, .stored = 5 },
	/* bpftrace ended early: the samples since its last flush, unknown */
	[LOSS_CAPTURES_CUT] = { "captures_cut", "capture cut short",
		"captures cut short", "%s capture%s cut short (bpftrace ended "
		"early: samples since its last flush lost, count unknown)",
		true, true, LOSS_KNOWN, AT(captures_cut),
		.advice = LOSS_ADVICE_CUT, .stored = 6 },
	/* read, and left out on purpose: the same samples as the stacks' */
	[LOSS_NONSTACK_IGNORED] = { "nonstack_not_added",
		"count of a map without stacks not added",
		"counts of maps without stacks not added", NULL, false, true,
		LOSS_KNOWN, AT(nonstack_ignored) },
	/* --call-graph dwarf: a sample whose records did not all come */
	[LOSS_DWARF_PARTIAL] = { "partial_samples", "partial sample",
		"partial samples", "%s samples partial (records lost: dropped)",
		true, true, LOSS_KNOWN, AT(dwarf_partial) },
	[LOSS_DWARF_BAD_LINES] = { "malformed_stack_records",
		"malformed stack record", "malformed stack records",
		"%s malformed stack records", true, true, LOSS_KNOWN,
		AT(dwarf_bad_lines) },
	/* drawn, the stack copy shorter than the stack */
	[LOSS_DWARF_TRUNCATED] = { "copy_truncated_stacks",
		"stack longer than its copy", "stacks longer than their copy",
		"%s samples had more stack than was copied (root marked "
		"[truncated]; raise --stack-size)", false, true, LOSS_KNOWN,
		AT(dwarf_truncated) },
	/* drawn, the unwinder stopped early */
	[LOSS_DWARF_UNWIND_ERRORS] = { "unwind_errors", "unwind error",
		"unwind errors", "%s stacks not unwound to their end (root "
		"marked [unwind-error])", false, true, LOSS_KNOWN,
		AT(dwarf_unwind_errors) },
	[LOSS_DWARF_BADREGS] = { "no_user_regs", "sample without user registers",
		"samples without user registers", "%s samples without user "
		"registers (the capture's check failed)", false, true,
		LOSS_KNOWN, AT(dwarf_badregs) },
	/* --python: drawn as [python:unknown], never a name guessed */
	[LOSS_PY_UNKNOWN] = { "python_unknown_frames",
		"Python frame sample not named", "Python frame samples not named",
		"%s Python frame samples not named ([python:unknown]: the "
		"process gone, or what the offsets point at not a code object)",
		false, true, LOSS_KNOWN,
		AT(py_unknown_frames) },
	/* --python: the walk's bound */
	[LOSS_PY_CUT] = { "python_cut_stacks", "Python stack cut",
		"Python stacks cut", "%s samples with more than 16 Python "
		"frames (the root ones left out)", false, true, LOSS_KNOWN,
		AT(py_cut_stacks) },
	/* stackfold record's side band (perfside.h): maps it may lack */
	[LOSS_SIDEBAND_LOST] = { "sideband_lost", "side-band record lost",
		"side-band records lost", "%s side-band records lost (the "
		"kernel's ring was full: short-lived processes' maps may be "
		"missing)", true, true, LOSS_KNOWN, AT(side_lost),
		.advice = LOSS_ADVICE_SIDEBAND, .meta = "sideband_lost" },
};

uint64_t loss_value(const struct pf_counters *c, enum loss_id id)
{
	return *(const uint64_t *)((const char *)c + loss_table[id].off);
}

uint64_t *loss_ptr(struct pf_counters *c, enum loss_id id)
{
	return (uint64_t *)((char *)c + loss_table[id].off);
}

size_t loss_advice(const struct pf_counters *c, const char **lines,
		   size_t max)
{
	size_t n = 0;
	for (int a = LOSS_ADVICE_NONE + 1; a < LOSS_ADVICE_N && n < max; a++) {
		bool said = false;
		for (int i = 0; i < LOSS_N && !said; i++)
			said = loss_table[i].advice == (enum loss_advice)a &&
			       loss_value(c, (enum loss_id)i);
		if (said)
			lines[n++] = advice_text[a];
	}
	return n;
}

enum loss_id loss_stored(unsigned i)
{
	for (int k = 0; k < LOSS_N; k++)
		if (loss_table[k].stored == i + 1)
			return (enum loss_id)k;
	return LOSS_N;
}

/* s (len bytes) is the string w */
static bool is(const char *s, size_t len, const char *w)
{
	return w && strlen(w) == len && !memcmp(s, w, len);
}

enum loss_id loss_by_meta(const char *k, size_t klen)
{
	for (int i = 0; i < LOSS_N; i++)
		if (is(k, klen, loss_table[i].meta))
			return (enum loss_id)i;
	return LOSS_N;
}

enum loss_id loss_by_key(const char *k, size_t klen)
{
	for (int i = 0; i < LOSS_N; i++)
		if (is(k, klen, loss_table[i].key))
			return (enum loss_id)i;
	return LOSS_N;
}

const char *loss_word(enum loss_id id, uint64_t v)
{
	return v == 1 ? loss_table[id].one : loss_table[id].many;
}

bool loss_unknown(const struct pf_counters *c, enum loss_id id)
{
	switch (loss_table[id].unknown) {
	case LOSS_IF_NO_DROPS:
		return c->losses_unknown || c->drops_unknown;
	case LOSS_IF_NO_LOSSES:
		return c->losses_unknown;
	default:
		return false;
	}
}

bool loss_any(const struct pf_counters *c)
{
	for (int i = 0; i < LOSS_N; i++)
		if (loss_table[i].loss && loss_value(c, (enum loss_id)i))
			return true;
	return false;
}

/* snprintf appended at *n, cut at size */
static void put(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = *n < size ? vsnprintf(buf + *n, size - *n, fmt, ap) : 0;
	va_end(ap);
	*n += k > 0 ? (size_t)k : 0;
}

/* lead, then counter id's phrase for v */
static void say(char *buf, size_t size, size_t *n, const char *lead,
		enum loss_id id, uint64_t v)
{
	char num[24];
	snprintf(num, sizeof(num), "%" PRIu64, v);
	put(buf, size, n, "%s", lead);
	put(buf, size, n, loss_table[id].said, num, v == 1 ? "" : "s");
}

bool loss_summary(const struct pf_counters *c, char *buf, size_t size)
{
	static const enum loss_id order[] = {
		LOSS_MAP_DROPPED, LOSS_OVER_TOTAL, LOSS_STACKID_ERRORS,
		LOSS_LOST_EVENTS, LOSS_SIDEBAND_LOST, LOSS_MAP_FULL_WARNINGS,
		LOSS_EXEC_CAPPED,
		LOSS_MEM_OVERFLOW,
		LOSS_CAPTURES_CUT,
		LOSS_UNPARSABLE_LINES, LOSS_DWARF_PARTIAL, LOSS_DWARF_BAD_LINES,
		LOSS_UNSYMBOLIZED_FRAMES, LOSS_PY_UNKNOWN, LOSS_TRUNCATED_STACKS,
		LOSS_PY_CUT, LOSS_DWARF_TRUNCATED, LOSS_DWARF_UNWIND_ERRORS,
		LOSS_DWARF_BADREGS,
	};
	size_t n = 0;
	if (size)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		enum loss_id id = order[i];
		uint64_t v = loss_value(c, id);
		if (id == LOSS_UNPARSABLE_LINES) {	/* with incomplete records */
			uint64_t inc = c->incomplete_records;
			if (!v && !inc)
				continue;
			say(buf, size, &n, "; ", id, v);
			say(buf, size, &n, ", ", LOSS_INCOMPLETE_RECORDS, inc);
			continue;
		}
		if (!v)
			continue;
		say(buf, size, &n, "; ", id, v);
		if (id == LOSS_MAP_DROPPED)
			put(buf, size, &n, " (%.2f%%)", 100.0 * (double)v /
			    (double)(c->samples + v));
	}
	return loss_any(c);
}
