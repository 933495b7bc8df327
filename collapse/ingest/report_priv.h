/*
 * report_priv.h - struct report's members, private to ingest/ (report.c,
 * report_access.c, report_view.c, pprof_in.c) and to white-box tests
 * (tests/fuzz/).  Front-ends use report.h's calls only.
 */
#ifndef SF_REPORT_PRIV_H
#define SF_REPORT_PRIV_H

#include "pyoffsets.h"
#include "ingest/dwarfin.h"
#include "ingest/reccache.h"
#include "ingest/report.h"
#include "ingest/resolver.h"

/* An entry of a map without stacks, or with empty ones only, kept until
 * the end of the input (merged with the same key's). */
struct report_deferred {
	uint32_t pid, tid, image;
	bool has_pid, has_tid;
	bool empty_only;	/* bt_record.empty_only */
	uint32_t comm;		/* string id in prof.strs, 0 = none */
	uint32_t map;		/* string id of the map's name */
	uint64_t count;
};

struct report {
	struct profile prof;
	struct sym_session *sym;	/* owned unless sym_borrowed; NULL until
					 * first needed */
	bool sym_borrowed;	/* report_init_session(): the caller's */
	struct sym_opts sym_opts;
	bool lazy_snapshot;
	bool refresh_maps;	/* resolver_set_refresh(): live captures with
				 * their own session (not the continuous mode,
				 * which refreshes on its own schedule) */
	bool keep_refreshed;	/* report_opts' */
	bool offsets;		/* resolver_set_offsets(): report_opts' */
	bool fold_direct;	/* folded text goes straight to `direct`
				 * (report_opts') */
	/* --diff: the before input's report, whose losses the outputs also
	 * carry (report_set_diff_before(); not owned) */
	const struct report *diff_before;
	struct resolver *res;
	struct bt_parser *bt;
	struct report_input_stats in;
	const char *in_name;	/* report_begin_input()'s, or NULL */
	uint64_t samples_before;
	struct reccache rc;	/* repeated entries skip parsing */
	struct fold direct;	/* folded-text input goes straight here: it
				 * has only names, so no profile is needed */
	struct out_sink sink;	/* the caller's, through report_sink():
				 * folded-text lines go there instead of
				 * into `direct`; its ctx is freed by the
				 * caller after report_free() */
	uint32_t folded_inputs, bt_inputs;	/* inputs read, by format */
	uint32_t inputs;	/* inputs read, every format */
	/* samples of mostly-[unknown] stacks a caller's SVG sink (out_sink)
	 * drew shortened (output/svg_squash.h): the caller's count */
	uint64_t sink_mostly_unknown;
	/* `perf script` input's root frame: FOLD_PID, FOLD_TID (the caller's
	 * --pid, --tid; ingest/perfscript.h) */
	unsigned perfscript_flags;
	uint64_t handed_total;	/* direct's total and lines when report_fold() */
	size_t handed_n;	/* handed it over (for the summary) */
	uint32_t last_sample;	/* sample of the last parsed record */
	bool last_truncated;	/* ... and whether its stack hit the limit */
	bool last_python;	/* ... and whether it had Python frames (named
				 * from live memory: never a cache hit) */
	bool python;		/* a "#python" line came: py_off holds it */
	bool python_live;	/* report_opts' (record): the processes run,
				 * their Python frames can be named */
	uint64_t py_off[PY_OFF_COUNT];
	struct pyframes *py_shared;	/* report_use_python()'s, borrowed */
	int last_own;		/* ... and its map (protocol_own_map()) */
	/* folded-looking lines without ';' before the format is known
	 * (decide() in report.c): each its line number, a uint64_t, then
	 * "LINE\n" */
	char *held;
	size_t nheld, heldcap;
	uint64_t held_lines;
	size_t first_held;	/* its line number */
	struct report_deferred *deferred;
	size_t ndeferred, deferred_cap;
	struct u64map deferred_idx;	/* key hash -> index + 1 */
	struct u64map stack_maps;	/* map names (string ids) with a
					 * stack that has frames: a set */
	/* Processes whose memory map was not saved (prof.counters.
	 * maps_unsaved).  stackfold record writes a process's "#maps" block
	 * before its "#pid" line when it saved the map, and none when the
	 * process had exited; so in a raw capture, a "#pid" line of a
	 * process and image with no map loaded yet is such a process,
	 * counted once, as the capture counted it. */
	bool live_snapshots;	/* report_opts': the caller saves the maps
				 * and counts them (record, continuous): the
				 * "#pid" lines it feeds are not counted */
	bool capture;		/* the current input is a raw capture */
	struct u64map unsaved;	/* pid fields counted (protocol_pid_field): a set */
	struct sf_err err;	/* last callback error */
	uint64_t max_stacks;	/* report_line() fails with -E2BIG past this
				 * many unique stacks (0: no bound) */
	struct dwarfin dw;	/* --call-graph dwarf records; dw.rec NULL
				 * until the first */
};

/* In place, for report_new() and white-box tests: 0 or -ENOMEM (r is to
 * be released either way), and report_release() (r zeroed after). */
int report_init(struct report *r, const struct report_opts *o);
int report_init_session(struct report *r, struct sym_session *s,
			const struct report_opts *o);
void report_release(struct report *r);

#endif
