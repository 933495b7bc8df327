/*
 * bt_parse.h - streaming parser for bpftrace's text map output, in every
 * form one-liners print, and for stackfold's own raw capture (the same
 * text plus `#` directive lines carrying metadata and memory maps).
 *
 * Accepted map entries (any map name, several maps per input):
 *   @[kstack]: N, @[ustack, kstack]: N, @[ustack(perf)]: N,
 *   keys mixing scalars (pid, tid, comm, ...) and stacks,
 *   frames as `sym+off`, `sym+0xoff`, `0xADDR` (BPFTRACE_NO_USER_SYMBOLS),
 *   `ADDR` (raw mode, bpftrace >= 0.18), `ADDR sym+off (module)` (perf mode).
 *   Scalar-keyed counts (@[comm]: N) become one-frame stacks.
 *   The first integer of a key is the pid.  Above 2^32-1 (stackfold's
 *   capture: pid + image * 2^32, see bt/profile.bt) its high half is the
 *   image, which program of the pid's life the sample ran (0: not told);
 *   a real pid is below 2^22.
 * Other recognised lines: `Attaching N probes...`, `Lost N events`,
 * `failed to look up stack id`, warnings, histograms, keyless scalars (not
 * samples: ignored, except stackfold's own @stackfold_total counter).
 * Anything else is counted as unparsable, with its first line number kept.
 *
 * Directive lines (raw capture, capture/protocol.h):   #meta KEY VALUE...
 *                                   #maps PID       ... #endmaps
 *                                   #pid PID COMM   (first sample of PID)
 *                                   #python V...    (Python frame offsets)
 * (PID there may carry an image too, as in keys.)
 *
 * Memory: a record's text is buffered only while it is open; nothing grows
 * with the number of records.  The parser never prints or exits.
 */
#ifndef SF_BT_PARSE_H
#define SF_BT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "capture/protocol.h"
#include "ingest/bt_lines.h"

enum bt_frame_kind {
	BT_FRAME_ADDR,		/* raw address only */
	BT_FRAME_NAME,		/* symbol name (offset stripped) */
};

struct bt_frame {
	uint8_t kind;
	bool kernel;		/* part of a kernel stack */
	bool has_addr;
	bool at_start;		/* named "SYM+0": as a return address, the
				 * name is the next function's, not the
				 * caller's (a noreturn call ending a
				 * function), bpftrace not looking up
				 * address - 1 */
	bool has_offset;	/* named SYM+OFF: offset is OFF */
	uint64_t offset;
	uint64_t addr;
	const char *name;	/* not NUL-terminated */
	size_t name_len;
	const char *module;	/* perf mode "(module)", may be NULL */
	size_t module_len;
};

/* One map entry.  frames[] is root first; pointers are valid only during
 * the callback. */
struct bt_record {
	const char *map;	/* map name, e.g. "@" or "@stackfold" */
	size_t map_len;
	bool has_pid, has_tid;
	uint32_t pid, tid;
	uint32_t image;		/* 0 when not told */
	const char *comm;	/* NULL when the key has no string part */
	size_t comm_len;
	struct bt_frame *frames;
	size_t nframes;
	size_t nuser, nkernel;	/* frames per side; user frames come first */
	bool had_stack;		/* key had at least one stack part */
	bool empty_only;	/* ... only empty ones ("@m[]: N", "@m[a, ]: N"),
				 * which is also how a string key that is
				 * empty prints: a stack if map m has stacks */
	bool maybe_truncated;	/* a stack part has exactly BT_STACK_LIMIT_*
				 * frames: its root frames may be missing */
	uint64_t count;
	size_t line;		/* line number of the record's first line */
	/* the key's integers after pid and tid, in order (at most
	 * BT_INTS_MAX; bt/profile-python.bt's Python frames) */
	const uint64_t *ints;
	size_t nints;
};

#define BT_INTS_MAX 80

/* Stack depth limits: kernel.perf_event_max_stack's default (bpftrace's
 * default ustack/kstack depth) and bpftrace's maximum. */
#define BT_STACK_LIMIT_DEFAULT 127
#define BT_STACK_LIMIT_MAX 1024

struct bt_callbacks {
	void *ctx;
	/* A complete record; return <0 to stop parsing with that error. */
	int (*record)(void *ctx, const struct bt_record *r);
	/* #maps block (text of the maps lines; line: the input line number
	 * of the first) and #pid, #meta directives. */
	int (*maps)(void *ctx, uint32_t pid, uint32_t image, const char *text,
		    size_t len, size_t line);
	int (*first_sample)(void *ctx, uint32_t pid, uint32_t image,
			    const char *comm, size_t comm_len);
	int (*meta)(void *ctx, const char *key, size_t klen, const char *val,
		    size_t vlen);
	/* "#python ..." (capture/protocol.h), the whole line; may be NULL */
	int (*python)(void *ctx, const char *line, size_t len);
};

struct bt_counters {
	uint64_t lost_events, stackid_errors, unparsable_lines,
		incomplete_records, map_full_warnings;
	uint64_t total_reported;	/* @stackfold_total, when present */
	uint64_t total_dropped;	/* each total line against the samples its
				 * map printed since the last: fewer (the
				 * map was full) ... */
	uint64_t total_over;	/* ... or more (printed twice) */
	bool has_total;
	size_t first_bad_line;	/* 0 when none */
	size_t first_incomplete_line;	/* where the first incomplete record
					 * began; 0 when none */
	size_t records;
};

struct bt_parser;

/* Count samples of own map OWN (protocol_own_map()) that reached the
 * caller without the parser (a record cache's hit); OWN -1 is ignored.
 * The samples of stackfold's own maps are held against their total lines
 * (@stackfold_total_a ...) in the counters' total_dropped and total_over. */
void bt_parser_add_own(struct bt_parser *bp, int own, uint64_t count);
/* Stack-id errors a reader without text found (capture/mapsrc.h), counted
 * as the "failed to look up stack id" lines are. */
void bt_parser_add_stackid_errors(struct bt_parser *bp, uint64_t n);

struct bt_parser *bt_parser_new(const struct bt_callbacks *cb);
void bt_parser_free(struct bt_parser *bp);	/* NULL is fine */
/* Feed one line (without its newline; a trailing \r is ignored).
 * Returns 0 or the negative value a callback returned / -ENOMEM. */
int bt_parser_line(struct bt_parser *bp, const char *line, size_t len);
/* A line of bpftrace's about lost samples ("Lost N events", "failed to look
 * up stack id", "map full"), which may come in the middle of a record:
 * counted (true), the record left as it was.  bt_parser_line() does this
 * first; a caller that looks at lines before the parser asks here. */
bool bt_parser_side_line(struct bt_parser *bp, const char *line, size_t len);
/* The line number of the line fed last (the next one is line + 1): for a
 * caller that does not feed every line (a record cache, blank lines
 * skipped before parsing began), so that line numbers stay the input's. */
void bt_parser_set_line(struct bt_parser *bp, size_t line);
/* Between records (no record or #maps block open)? */
bool bt_parser_idle(const struct bt_parser *bp);
/* End of input: a record still open is counted as incomplete. */
int bt_parser_finish(struct bt_parser *bp);
const struct bt_counters *bt_parser_counters(const struct bt_parser *bp);

#endif
