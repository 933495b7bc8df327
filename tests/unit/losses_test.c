/*
 * losses_test.c - checks of collapse/model/losses.c (the table of loss
 * counters every output and message words them by), run by
 * tests/t11-units.sh.  Prints one "ok NAME" or "FAIL NAME: why" per check
 * and exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/losses.h"

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
	failed |= !ok;
}

/* Each counter set to its own value, so that a wrong offset reads
 * another's. */
static void fill(struct pf_counters *c)
{
	memset(c, 0, sizeof(*c));
	c->lost_events = 101;
	c->map_dropped = 102;
	c->stackid_errors = 103;
	c->unparsable_lines = 104;
	c->incomplete_records = 105;
	c->unsymbolized_frames = 106;
	c->truncated_stacks = 107;
	c->over_total = 108;
	c->maps_unsaved = 109;
	c->exec_capped = 110;
	c->mem_overflow = 111;
	c->map_full_warnings = 112;
	c->captures_cut = 113;
	c->nonstack_ignored = 114;
	c->dwarf_partial = 115;
	c->dwarf_bad_lines = 116;
	c->dwarf_truncated = 117;
	c->dwarf_unwind_errors = 118;
	c->dwarf_badregs = 119;
	c->py_unknown_frames = 120;
	c->py_cut_stacks = 121;
	c->side_lost = 122;
}

static void table_complete(void)
{
	static const char *const keys[LOSS_N] = {
		"lost_events", "map_dropped", "stackid_errors",
		"unparsable_lines", "incomplete_records", "unsymbolized_frames",
		"truncated_stacks", "over_total", "maps_unsaved",
		"exec_capped", "mem_overflow", "map_full_warnings", "captures_cut", "nonstack_not_added",
		"partial_samples", "malformed_stack_records",
		"copy_truncated_stacks", "unwind_errors", "no_user_regs",
		"python_unknown_frames", "python_cut_stacks", "sideband_lost",
	};
	const char *bad = NULL;
	for (int i = 0; i < LOSS_N; i++) {
		const struct loss_kind *k = &loss_table[i];
		if (!bad && (!k->key || strcmp(k->key, keys[i]) || !k->one ||
			     !k->many || !*k->one || !*k->many))
			bad = keys[i];
	}
	check(!bad, "every counter has its key (pprof's order), singular, plural",
	      bad ? bad : "");
}

static void values(void)
{
	struct pf_counters c;
	fill(&c);
	const char *bad = NULL;
	for (int i = 0; i < LOSS_N; i++)
		if (!bad && loss_value(&c, (enum loss_id)i) != 101u + (unsigned)i)
			bad = loss_table[i].key;
	check(!bad, "loss_value reads each counter's own field", bad ? bad : "");
}

static void words(void)
{
	check(!strcmp(loss_word(LOSS_LOST_EVENTS, 1), "event") &&
	      !strcmp(loss_word(LOSS_LOST_EVENTS, 0), "events") &&
	      !strcmp(loss_word(LOSS_LOST_EVENTS, 2), "events"),
	      "loss_word gives the singular for 1 only", loss_word(LOSS_LOST_EVENTS, 1));
	check(!strcmp(loss_word(LOSS_MAPS_UNSAVED, 1),
		      "process exited before its memory map could be saved") &&
	      !strcmp(loss_word(LOSS_MAPS_UNSAVED, 3),
		      "processes exited before their memory map could be saved"),
	      "loss_word agrees maps_unsaved's whole phrase in number",
	      loss_word(LOSS_MAPS_UNSAVED, 3));
}

static void unknowns(void)
{
	struct pf_counters c = { 0 };
	int none = 0;
	for (int i = 0; i < LOSS_N; i++)
		none += loss_unknown(&c, (enum loss_id)i);
	check(!none, "nothing unknown when the input tells all", "a counter unknown");
	/* per counter: unknown without a sample total, unknown in folded text */
	static const char drops[LOSS_N] = {
		[LOSS_MAP_DROPPED] = 1, [LOSS_OVER_TOTAL] = 1,
	};
	static const char folded[LOSS_N] = {
		[LOSS_LOST_EVENTS] = 1, [LOSS_MAP_DROPPED] = 1,
		[LOSS_STACKID_ERRORS] = 1, [LOSS_TRUNCATED_STACKS] = 1,
		[LOSS_OVER_TOTAL] = 1,
	};
	const char *bad = NULL;
	for (int i = 0; i < LOSS_N; i++) {
		c = (struct pf_counters){ .drops_unknown = true };
		if (!bad && loss_unknown(&c, (enum loss_id)i) != drops[i])
			bad = loss_table[i].key;
	}
	check(!bad, "no sample total, drops and over_total alone unknown",
	      bad ? bad : "");
	bad = NULL;
	for (int i = 0; i < LOSS_N; i++) {
		c = (struct pf_counters){ .losses_unknown = true };
		if (!bad && loss_unknown(&c, (enum loss_id)i) != folded[i])
			bad = loss_table[i].key;
	}
	check(!bad, "folded text, capture losses unknown, its own lines known",
	      bad ? bad : "");
}

static void any(void)
{
	static const enum loss_id lossy[] = {
		LOSS_LOST_EVENTS, LOSS_MAP_DROPPED, LOSS_STACKID_ERRORS,
		LOSS_UNPARSABLE_LINES, LOSS_INCOMPLETE_RECORDS, LOSS_OVER_TOTAL,
		LOSS_MAP_FULL_WARNINGS, LOSS_CAPTURES_CUT, LOSS_DWARF_PARTIAL,
		LOSS_DWARF_BAD_LINES, LOSS_SIDEBAND_LOST,
	};
	struct pf_counters c;
	const char *bad = NULL;
	for (int i = 0; i < LOSS_N; i++) {
		bool want = false;
		for (size_t j = 0; j < sizeof(lossy) / sizeof(lossy[0]); j++)
			want |= lossy[j] == (enum loss_id)i;
		memset(&c, 0, sizeof(c));
		*(uint64_t *)((char *)&c + loss_table[i].off) = 1;
		if (!bad && (loss_any(&c) != want || loss_table[i].loss != want))
			bad = loss_table[i].key;
	}
	memset(&c, 0, sizeof(c));
	check(!bad && !loss_any(&c),
	      "loss_any is the counters that lose or miscount samples, alone",
	      bad ? bad : "all zero is a loss");
}

static void summary(void)
{
	struct pf_counters c = { 0 };
	char buf[1024];
	check(!loss_summary(&c, buf, sizeof(buf)) && !buf[0],
	      "summary, empty when nothing to say", buf);
	c.samples = 300;
	c.map_dropped = 100;
	c.captures_cut = 1;
	c.incomplete_records = 2;
	c.truncated_stacks = 4;
	bool lost = loss_summary(&c, buf, sizeof(buf));
	const char *want = "; 100 samples dropped by a full map (25.00%)"
		"; 1 capture cut short (bpftrace ended early: samples since its "
		"last flush lost, count unknown)"
		"; 0 unparsable lines, 2 incomplete records"
		"; 4 samples with a stack at the depth limit (root marked "
		"[truncated])";
	check(lost && !strcmp(buf, want), "summary, phrases in order", buf);
	c = (struct pf_counters){ .unsymbolized_frames = 5, .captures_cut = 2 };
	lost = loss_summary(&c, buf, sizeof(buf));
	check(lost && strstr(buf, "; 2 captures cut short (") &&
	      strstr(buf, "; 5 unsymbolized frame samples"),
	      "summary, plural agrees", buf);
	c = (struct pf_counters){ .unsymbolized_frames = 5 };
	check(!loss_summary(&c, buf, sizeof(buf)) && buf[0],
	      "summary, marks said, not a loss", buf);
	c = (struct pf_counters){ .dwarf_truncated = 3, .dwarf_unwind_errors = 2 };
	check(!loss_summary(&c, buf, sizeof(buf)) &&
	      !strcmp(buf, "; 3 samples had more stack than was copied (root "
		      "marked [truncated]; raise --stack-size); 2 stacks not "
		      "unwound to their end (root marked [unwind-error])"),
	      "summary, dwarf marks said in order, not a loss", buf);
	c = (struct pf_counters){ .lost_events = 2, .side_lost = 7 };
	check(loss_summary(&c, buf, sizeof(buf)) &&
	      !strcmp(buf, "; bpftrace lost 2 events; 7 side-band records lost "
		      "(the kernel's ring was full: short-lived processes' "
		      "maps may be missing)"),
	      "summary, side-band records lost: a loss, after lost events", buf);
	const char *adv[LOSS_ADVICE_N];
	c = (struct pf_counters){ .side_lost = 1 };
	check(loss_advice(&c, adv, LOSS_ADVICE_N) == 1 &&
	      strstr(adv[0], "STACKFOLD_SIDEBAND_PAGES"),
	      "advice, side-band records lost: a larger ring",
	      loss_advice(&c, adv, LOSS_ADVICE_N) ? adv[0] : "none");
	c = (struct pf_counters){ .dwarf_partial = 1 };
	check(loss_summary(&c, buf, sizeof(buf)) &&
	      !strcmp(buf, "; 1 samples partial (records lost: dropped)"),
	      "summary, partial dwarf samples are a loss", buf);
	fill(&c);
	char small[16];
	memset(small, 'x', sizeof(small));
	loss_summary(&c, small, sizeof(small));
	check(memchr(small, 0, sizeof(small)) && !strncmp(small, "; 102 samples",
							   13),
	      "summary, cut to the buffer, terminated", "overran or unterminated");
	check(loss_summary(&c, NULL, 0), "summary, size 0 writes nothing", "");
}

int main(void)
{
	table_complete();
	values();
	words();
	unknowns();
	any();
	summary();
	return failed;
}
