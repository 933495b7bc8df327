/*
 * reccache.h - fast path for repeated bpftrace map entries.
 *
 * A long capture prints the same stacks again and again (every flush, every
 * CPU).  The record cache collects a map entry's lines as raw bytes and,
 * when the exact same text (all but the count) was seen before, hands back
 * the sample it produced then, so the entry is neither parsed nor
 * symbolized again.  Anything it does not recognise as a plain, complete
 * entry is handed back line by line for the full parser (bt_parse.h), which
 * stays the one authority on the format.
 *
 * Memory: the text of each unique entry, never the input size.  Nothing
 * here prints or exits.
 */
#ifndef SF_RECCACHE_H
#define SF_RECCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct reccache {
	char *buf;		/* current entry: its lines, each + '\n' */
	size_t len, cap;
	bool open;		/* collecting an entry */
	size_t klen;		/* key length of the entry just completed */
	struct strtab keys;	/* entry text (without count) -> key id */
	struct reccache_entry {
		uint32_t sample;	/* sample id (0: not cacheable) */
		uint32_t flags;		/* the caller's, given to learn */
	} *ent;			/* key id -> what the entry produced */
	size_t ent_cap;
};

enum reccache_result {
	RC_CONSUMED,		/* line kept; entry not complete yet */
	RC_HIT,			/* complete entry seen before: *hit, *count */
	RC_MISS,		/* complete new entry: replay it (reccache_lines),
				 * then reccache_learn() its sample */
	RC_PASS,		/* not part of an entry: give the line to the
				 * parser as it is */
	RC_REPLAY,		/* entry broken by this line: replay the buffered
				 * lines, then give this line to the parser */
};

int reccache_init(struct reccache *rc);	/* 0 or -ENOMEM */
void reccache_release(struct reccache *rc);
/* Feed one line (without '\n').  Returns an enum reccache_result, or
 * -ENOMEM.  On RC_HIT, *hit (what reccache_learn stored) and *count are
 * set.  An entry whose count is past INT64_MAX is never a hit: the parser
 * rules on it. */
int reccache_line(struct reccache *rc, const char *line, size_t len,
		  struct reccache_entry *hit, uint64_t *count);
/* The buffered entry's lines, for replay: call fn for each (the buffer
 * is kept for reccache_learn).  Returns the first non-zero fn result. */
int reccache_replay(struct reccache *rc,
		    int (*fn)(void *ctx, const char *line, size_t len),
		    void *ctx);
/* Remember that the entry just replayed (RC_MISS) produced sample, with
 * the caller's flags for it (sample 0: do not cache it; an entry already
 * cached keeps what it had).  Must follow reccache_replay of an RC_MISS. */
int reccache_learn(struct reccache *rc, uint32_t sample, uint32_t flags);
/* How many lines are buffered (what a replay would feed). */
size_t reccache_lines(const struct reccache *rc);
/* Forget the buffered lines (after an RC_REPLAY replay). */
void reccache_discard(struct reccache *rc);
/* True while an entry is open (at end of input: a truncated entry, to be
 * replayed so the parser can count it). */
static inline bool reccache_entry_open(const struct reccache *rc)
{
	return rc->open;
}

#endif
