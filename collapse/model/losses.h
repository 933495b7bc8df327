/*
 * losses.h - the one table of struct pf_counters' loss counters: each
 * counter's key (pprof's comment, "key=N", and its name wherever it is
 * stored: a window store's column, the scripts' list), its noun in the
 * singular and the plural ("N one", "N many": the SVG subtitle, stderr),
 * its phrase in the run's summary line, whether it is a loss (samples
 * lost or miscounted: never kept quiet by -q), the advice said when it is
 * not 0, the raw capture's "#meta" key that carries it, and its place
 * among the counters a window store keeps.  Everything that names a
 * counter takes the name from here: a new counter is one row.  Which
 * counters a place shows, and in which order, is that place's choice;
 * the words are the table's.  Static data only: nothing to free, no
 * errors.
 */
#ifndef STACKFOLD_MODEL_LOSSES_H
#define STACKFOLD_MODEL_LOSSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* In pprof's comment order. */
enum loss_id {
	LOSS_LOST_EVENTS,
	LOSS_MAP_DROPPED,
	LOSS_STACKID_ERRORS,
	LOSS_UNPARSABLE_LINES,
	LOSS_INCOMPLETE_RECORDS,
	LOSS_UNSYMBOLIZED_FRAMES,
	LOSS_TRUNCATED_STACKS,
	LOSS_OVER_TOTAL,
	LOSS_MAPS_UNSAVED,
	LOSS_EXEC_CAPPED,
	LOSS_MEM_OVERFLOW,
	LOSS_MAP_FULL_WARNINGS,
	LOSS_CAPTURES_CUT,
	LOSS_NONSTACK_IGNORED,
	LOSS_DWARF_PARTIAL,
	LOSS_DWARF_BAD_LINES,
	LOSS_DWARF_TRUNCATED,
	LOSS_DWARF_UNWIND_ERRORS,
	LOSS_DWARF_BADREGS,
	LOSS_PY_UNKNOWN,
	LOSS_PY_CUT,
	LOSS_SIDEBAND_LOST,
	LOSS_N
};

/* When an input cannot tell a counter, so that pprof writes "unknown". */
enum loss_unknown {
	LOSS_KNOWN,		/* always measured */
	LOSS_IF_NO_LOSSES,	/* unknown when losses_unknown (folded text) */
	LOSS_IF_NO_DROPS,	/* unknown when losses_unknown or drops_unknown */
};

/* What a counter not 0 means for the graph and what to do about it: one
 * line each, in this order; counters of one advice share its line. */
enum loss_advice {
	LOSS_ADVICE_NONE,
	LOSS_ADVICE_MAP_FULL,
	LOSS_ADVICE_STACKID,
	LOSS_ADVICE_LOST,
	LOSS_ADVICE_SIDEBAND,
	LOSS_ADVICE_CUT,
	LOSS_ADVICE_TWICE,
	LOSS_ADVICE_SKIPPED,
	LOSS_ADVICE_N
};

/* The counters a window store keeps (loss_kind.stored): the window's
 * loss columns, in this number.  A store's columns never change order:
 * a new one takes the next place. */
#define LOSS_NSTORED 9

struct loss_kind {
	const char *key;	/* pprof comment key */
	const char *one, *many;	/* the counted thing's noun */
	/* the summary line's phrase, a printf format given the count (a
	 * string) and "s" or "" by the count's plural; NULL: not in it */
	const char *said;
	bool loss;		/* samples lost or miscounted */
	bool rare;		/* pprof writes it only when not 0 */
	enum loss_unknown unknown;
	size_t off;		/* its uint64_t in struct pf_counters */
	enum loss_advice advice;
	/* the raw capture's "#meta KEY N" that adds N to it, or NULL */
	const char *meta;
	/* its place among a window store's loss columns, from 1
	 * (LOSS_NSTORED at most); 0: not stored */
	unsigned char stored;
};

extern const struct loss_kind loss_table[LOSS_N];

/* The counter's value in c. */
uint64_t loss_value(const struct pf_counters *c, enum loss_id id);
/* The counter's noun for v: loss_table[id].one when v is 1, else many. */
const char *loss_word(enum loss_id id, uint64_t v);
/* True when pprof cannot tell counter id for the input c came from. */
bool loss_unknown(const struct pf_counters *c, enum loss_id id);
/* True when any counter with the loss flag is not 0 in c. */
bool loss_any(const struct pf_counters *c);
/* c's losses and marks, as "; N samples dropped by a full map (P%); ..."
 * into buf (cut to size, always terminated; "" when none): the phrases
 * (said) of full maps, samples past bpftrace's count, stack-id errors,
 * lost events, map-full warnings, captures cut short, unparsable lines
 * and incomplete records (together), unsymbolized frames and stacks at
 * the depth limit.  Returns loss_any(c). */
bool loss_summary(const struct pf_counters *c, char *buf, size_t size);
/* The advice lines for c's counters not 0, in enum loss_advice's order,
 * each once, into lines[] (at most max; the table's static text, without
 * a trailing newline).  Returns how many. */
size_t loss_advice(const struct pf_counters *c, const char **lines,
		   size_t max);
/* The counter at place i (from 0, below LOSS_NSTORED) of a window
 * store's loss columns; LOSS_N when i is past them. */
enum loss_id loss_stored(unsigned i);
/* The counter a raw capture's "#meta KEY" (k, klen bytes) adds to, or
 * LOSS_N when KEY carries none. */
enum loss_id loss_by_meta(const char *k, size_t klen);
/* The counter named key (klen bytes), or LOSS_N. */
enum loss_id loss_by_key(const char *k, size_t klen);
/* Counter id's uint64_t in c. */
uint64_t *loss_ptr(struct pf_counters *c, enum loss_id id);

#endif
