/*
 * report.h - the post-processing pipeline shared by `stackfold [FILE...]`
 * and `stackfold record`: lines in (bpftrace text, raw capture or folded
 * text, detected per input), a profile out, then the requested outputs
 * written atomically.
 *
 * Nothing here prints or exits; per-input problems are returned in
 * struct report_input_stats for main to word.
 */
#ifndef SF_REPORT_H
#define SF_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/bt_parse.h"
#include "model/fold.h"
#include "output/out.h"
#include "model/profile.h"
#include "symbolizer.h"

/* The words for -EOVERFLOW from report_line(), report_end_input() and the
 * write: counts past 2^63 only come from corrupt or hand-made input. */
#define REPORT_OVERFLOW_MSG "sample counts add up past 2^63 (corrupt input?)"

/* The first line of stackfold's folded output when it knows the capture:
 * "# stackfold: hz=99 duration_ns=... lost_events=3 ... cmdline=profile%20-d%205"
 * KEY=VALUE words with blanks and '%' in values as %20 and %25, so that no
 * line ends in " DIGITS" (flamegraph.pl and difffolded.pl read only lines
 * that do, and ignore this one). */
#define PROVENANCE "# stackfold: "
#define PROVENANCE_LEN 13

enum report_fmt { REPORT_UNKNOWN, REPORT_BPFTRACE, REPORT_FOLDED };

struct report_input_stats {
	enum report_fmt fmt;
	uint64_t lines, unparsable;
	size_t first_bad_line;	/* 0 when none */
	uint64_t incomplete;	/* truncated final record */
	size_t first_incomplete_line;	/* where it began */
	uint64_t samples;	/* read from this input */
	uint64_t stack_records;	/* map entries whose key has a stack */
	uint64_t folded_lines;	/* folded lines with a count */
	uint64_t two_counts;	/* ... whose stack ends in " DIGITS" too */
	uint64_t stack_maps;	/* maps with stacks, stackfold's own left out */
	uint64_t nonstack_ignored;	/* entries of stack-less maps (@[comm])
					 * not counted as samples because the
					 * input also has stack maps */
	uint64_t undecided;	/* lines before the format was known that
				 * are neither (printf text): unparsable */
	size_t first_undecided;	/* 0 when none */
	/* its "#meta" rate and times (0: none; the last line of each wins),
	 * joined with the other inputs' by report_end_input() */
	uint64_t hz, start_ns, duration_ns;
	uint64_t hz_differs;	/* its rate, where an earlier input's differs
				 * (the profile keeps the first): 0 when not */
	uint64_t meta_strs;	/* "#meta" text values taken (REPORT_META_MAX) */
};

/* Opaque: its members are ingest's (ingest/report_priv.h); front-ends
 * use the calls below. */
struct report;
struct pyframes;

/* A report's settings, fixed when it is made; a NULL opts is all zero. */
struct report_opts {
	const struct sym_opts *so;	/* the session's (NULL: defaults; not
					 * kept past report_new()) */
	bool lazy_snapshot;	/* snapshot live pids on first raw address
				 * (bpftrace piped straight in) */
	bool fold_direct;	/* folded text goes straight to a fold (when
				 * no output needs a profile: not pprof) */
	bool offsets;		/* --offsets: bpftrace's SYM+OFF frames stay
				 * apart per offset (resolver.h) */
	bool keep_refreshed;	/* for report_next_refreshed() */
	bool live_snapshots;	/* the caller saves the maps itself and
				 * counts them (record, continuous): the
				 * "#pid" lines it feeds are not counted */
	bool python_live;	/* the processes run (stackfold record):
				 * their Python frames can be named */
	unsigned perfscript_flags;	/* `perf script` input's root frame:
					 * FOLD_PID, FOLD_TID (--pid, --tid) */
	uint64_t max_stacks;	/* report_line() fails with -E2BIG past this
				 * many unique stacks (0: no bound) */
};

/* A new report, or NULL (out of memory). */
struct report *report_new(const struct report_opts *o);
/* Like report_new(), with a session the caller owns and keeps across
 * reports (stackfold continuous: one report per window, one session for
 * all, so ELF indexes and kallsyms load once; o->so is not used).
 * report_free() leaves it alone.  NULL: out of memory. */
struct report *report_new_session(struct sym_session *s,
				  const struct report_opts *o);
void report_free(struct report *r);	/* NULL: nothing */
/* The session, created on first use (NULL on failure, err filled). */
struct sym_session *report_session(struct report *r, struct sf_err *err);
/* The records' Python frames named by py (ingest/pyframes.h), which the
 * caller keeps and frees after the report: its cache lasts longer than
 * one report (stackfold continuous's windows).  A "#python" line read
 * later leaves it in place. */
void report_use_python(struct report *r, struct pyframes *py);
/* A flush of the capture has been read: the Python code objects read for
 * it are forgotten, so that the next flush's frames are named from what
 * the processes hold then (a code object freed since, and another made
 * at its address, is not given the old name).  No Python: nothing. */
void report_python_flushed(struct report *r);
/* With opts keep_refreshed, each refresh of a snapshot taken while
 * records are named is remembered (resolver_set_refresh()).  The oldest
 * refresh not asked for yet: true and its pid and image, or
 * false when none is left.  stackfold record asks after each line it
 * feeds, to save the fresh map into its raw capture. */
bool report_next_refreshed(struct report *r, int *pid, uint32_t *image);

/* A new input; name (a file name, borrowed until the next input; NULL for
 * a stream such as bpftrace's output) is what warnings about its lines
 * name. */
void report_begin_input(struct report *r, const char *name);
/* One line of the current input, without NUL bytes (a NUL would cut a
 * name: the readers, linereader.h and child.h's pipebuf, make them '?',
 * as the folded output writes control bytes).  0 or a negative errno
 * (-ENOMEM). */
int report_line(struct report *r, const char *line, size_t len);
/* A record read without text (capture/mapsrc.h), handed over as the
 * parser would have: added to the profile, its count held against its own
 * map's next total line (which the caller still feeds as a line).  The
 * input becomes bpftrace text if it was not told yet; -EINVAL for folded
 * text.  0 or a negative errno (-ENOMEM). */
int report_record(struct report *r, const struct bt_record *rec);
/* Stack-id errors such a reader found, counted as bpftrace's lines about
 * them are (after a report_record() call, or ignored). */
void report_stackid_errors(struct report *r, uint64_t n);
/* A line too long to read (linereader.h's LINEREADER_MAX_LINE): counted as an
 * unparsable line, and it ends a record it falls in.  As report_line()
 * given PROTOCOL_OVERLONG (capture/protocol.h), which a capture writes in
 * its place into a raw capture, so that a replay counts it too. */
int report_overlong_line(struct report *r);
/* Between two records of bpftrace text (or before any input): a block
 * written into the same stream now cannot split one. */
bool report_between_records(const struct report *r);
/* Count pid's image among the processes whose memory map was not saved,
 * once (a process marked again after each flush is still one; out of
 * memory, it may be counted twice).  Not when the session has a snapshot
 * of that image (a process that exited after an earlier one was taken is
 * still named), nor for pid 0, not a process. */
void report_map_unsaved(struct report *r, uint32_t pid, uint32_t image);
/* End of the current input; fills *st.  0, or a negative errno: -ENOMEM,
 * -EOVERFLOW, or -EAGAIN as from report_line() (held one-frame folded
 * lines, added now, that an SVG stream cannot take: read it again). */
int report_end_input(struct report *r, struct report_input_stats *st);

/* The report as the writers read it (output/write.h's out_write()):
 * handed to output, which ingest does not drive.  in points into r (and
 * into own, the profile's fold when no fold was given); valid until r
 * changes or report_view_release(). */
struct report_view {
	struct out_input in;
	struct fold own;
};
/* From what the sink took (an svg alone), else from fold when not NULL
 * (the differential view), else from the profile's fold built with
 * fold_flags.  0, or -EOVERFLOW / -ENOMEM with err said; v is to be
 * released either way. */
int report_view(struct report *r, unsigned fold_flags, const struct fold *fold,
		struct report_view *v, struct sf_err *err);
void report_view_release(struct report_view *v);	/* fine twice */

/* Samples read from every input (profile and folded text). */
uint64_t report_samples(const struct report *r);
/* Unique stacks read so far (profile stacks plus folded lines). */
size_t report_unique_stacks(const struct report *r);
/* The folded view of everything read: the profile's (built with flags)
 * merged with the folded-text input.  out is initialised here; release it
 * with fold_release().  0 or -ENOMEM. */
int report_fold(struct report *r, unsigned flags, struct fold *out);

/* Results, for the front-ends (they read no member of struct report).
 * The profile read so far and its counters: valid until r changes. */
const struct profile *report_profile(const struct report *r);
const struct pf_counters *report_counters(const struct report *r);
/* Lines of the current (or last) input read so far. */
uint64_t report_input_lines(const struct report *r);
/* The current (or last) input is a raw capture. */
bool report_is_capture(const struct report *r);
/* report_opts' max_stacks, and whether the unique stacks went past it. */
uint64_t report_max_stacks(const struct report *r);
bool report_past_max_stacks(const struct report *r);
/* report_opts' perfscript_flags, for the caller's perf script reader. */
unsigned report_perfscript_flags(const struct report *r);
/* The session if one was made or given, else NULL (none is made). */
struct sym_session *report_session_made(const struct report *r);

/* Counts a front-end adds.  --pid: the profile keeps those pids' samples
 * only, the others counted in counters.other_pids. */
void report_keep_pids(struct report *r, const int *pids, unsigned n);
/* -F: the rate, unless the input had its own. */
void report_default_hz(struct report *r, uint64_t hz);
/* Samples lost to a full memory bound (counters.mem_overflow), and a line
 * the caller could not parse (counters.unparsable_lines). */
void report_count_mem_overflow(struct report *r, uint64_t n);
void report_count_unparsable(struct report *r);

/* The sink folded-text lines go to instead of a fold, for the caller to
 * attach (output/svg_sink.h's svg_sink_attach()) before the first input,
 * with the counter of samples it drew shortened (output/svg_squash.h);
 * the caller frees the sink's ctx after report_free(). */
struct out_sink *report_sink(struct report *r);
uint64_t *report_sink_mostly_unknown(struct report *r);
bool report_has_sink(const struct report *r);
/* An input the sink cannot take (a pprof profile): lines go to the fold
 * from now on; the sink's owner still frees it. */
void report_detach_sink(struct report *r);
/* --diff: before is the before input's report, whose losses the outputs
 * also carry (borrowed: it outlives r's writes). */
void report_set_diff_before(struct report *r, const struct report *before);
/* Every input read was folded text (and every input of the before
 * report, if set). */
bool report_all_folded(const struct report *r);

/* Samples taken but not in the profile (a full BPF map).  Stack-id
 * errors lose a sample's stack, not the sample; "Lost N events" loses
 * bpftrace printf output (first-sample notices), not map counts. */
uint64_t report_dropped(const struct report *r);
/* r's losses and marks, as loss_summary() (model/losses.h) words them.
 * True when a sample was or may have been lost (the unsaved maps of
 * maps_unsaved are left to the caller). */
bool report_losses(const struct report *r, char *buf, size_t size);

#endif
