/*
 * fold.h - the folded view of a profile: FlameGraph's `a;b;c COUNT` lines.
 *
 * fold_build() expands every sample into display frames, root first:
 *   [comm or comm-pid];user frames...;kernel frames..._[k]
 * each location contributing its line chain outermost first, inline frames
 * suffixed "_[i]" (as FlameGraph does), JIT frames "_[j]", unsymbolized
 * locations their fallback text (module+0xOFF, [unknown]).  Equal stacks are
 * merged and the lines sorted frame-wise (fold_cmp), so the same profile
 * gives the same bytes.  ';' inside a frame name is replaced by ':' and newlines, NULs and
 * other control bytes by '?', so every line re-parses to the same frames.
 *
 * Writers that render stacks (folded, top, svg) read a struct fold; pprof
 * reads the profile itself.
 */
#ifndef SF_FOLD_H
#define SF_FOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "model/profile.h"

enum fold_flags {
	FOLD_PID = 1 << 0,	/* first frame "comm-PID" instead of "comm" */
	FOLD_NO_COMM = 1 << 1,	/* no process frame at all */
	FOLD_TID = 1 << 2,	/* add a "comm-TID" thread frame */
	FOLD_LINES = 1 << 3,	/* append ":file:line" to frames with lines */
	FOLD_OFFSETS = 1 << 4,	/* "+0x1f" after a function's name: the
				 * location's offset in it (pf_location) */
	FOLD_USER_ONLY = 1 << 5,	/* drop kernel frames */
	FOLD_KERNEL_ONLY = 1 << 6,	/* drop user frames */
	FOLD_DELIMIT = 1 << 7,	/* "-" frame between user and kernel */
};

/* Whether -U/-K (FOLD_USER_ONLY, FOLD_KERNEL_ONLY in flags) keep l:
 * -U drops kernel frames, -K user and JIT ones (marks stay).  Every
 * output applies it, the folded text and pprof alike. */
bool fold_loc_wanted(const struct pf_location *l, unsigned flags);

/* Length of the common prefix of a and b (n = the shorter length). */
static inline uint32_t fold_common_prefix(const char *a, const char *b,
					  uint32_t n)
{
	uint32_t i = 0;
	while (i + 8 <= n) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + (uint32_t)(__builtin_ctzll(x ^ y) / 8);
#else
			return i + (uint32_t)(__builtin_clzll(x ^ y) / 8);
#endif
		}
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* Rank of byte i of a line of n bytes in the frame-wise order: the end of
 * the line first, then ';', then every other byte. */
static inline int fold_rank(const char *s, uint32_t n, uint32_t i)
{
	return i >= n ? -1 : s[i] == ';' ? 0 : (unsigned char)s[i] + 1;
}

/*
 * The order of folded lines: frame by frame, names bytewise, a name or a
 * line that ends first sorting first; that is bytewise order with the end
 * and ';' below every byte.  All the lines through a frame are then
 * adjacent, which the flame graph's one-pass layout needs; plain bytewise
 * order (FlameGraph's `sort`) puts "a;f.cold" and "a;f0" between "a;f" and
 * "a;f;g", splitting f in two.  <0, 0 or >0, like memcmp; fold_cmp_at()
 * also gives the length of the common prefix.
 */
static inline int fold_cmp_at(const char *a, uint32_t an, const char *b,
			      uint32_t bn, uint32_t *cp)
{
	*cp = fold_common_prefix(a, b, an < bn ? an : bn);
	int x = fold_rank(a, an, *cp), y = fold_rank(b, bn, *cp);
	return (x > y) - (x < y);
}

static inline int fold_cmp(const char *a, uint32_t an, const char *b,
			   uint32_t bn)
{
	uint32_t cp;
	return fold_cmp_at(a, an, b, bn, &cp);
}

struct fold_line {
	const char *stack;	/* "a;b;c", NUL-terminated, owned by fold */
	uint32_t len;
	uint64_t count;
	uint64_t count2;	/* second column (differential), else 0 */
	uint64_t seq;		/* first-seen order of the stack in the input,
				 * for --flamechart */
};

struct fold {
	struct fold_line *lines;	/* sorted by stack (fold_cmp), unique */
	size_t n, cap;
	uint64_t total;		/* sum of count */
	uint64_t total2;
	bool has_second;	/* lines carry count2 (differential) */
	/* private */
	struct strtab strs;
	bool in_order;		/* every line so far came in sorted order */
	uint32_t last_id;	/* string id of the last line, while in_order */
};

/* Build from a profile: fold_init(), fold_add_profile(), fold_finish().
 * 0, -ENOMEM, or -EOVERFLOW (a stack's count past INT64_MAX). */
int fold_build(struct fold *f, const struct profile *p, unsigned flags);
/* fold_add() every sample of p, to a fold not yet finished: fold_add()
 * after fold_finish() is not allowed (it compacts and sorts the lines that
 * fold_add() finds stacks in by string id).  As fold_build(). */
int fold_add_profile(struct fold *f, const struct profile *p, unsigned flags);
/* Init an empty fold that fold_add() fills, then fold_finish() sorts and
 * merges (used for folded-text inputs and the differential join). */
int fold_init(struct fold *f);
/* Add count (and count2, the differential's second) to stack.  0, -ENOMEM,
 * or -EOVERFLOW when a stack's or the whole's count passes INT64_MAX
 * (pprof's int64). */
int fold_add(struct fold *f, const char *stack, size_t len, uint64_t count,
	     uint64_t count2);
int fold_finish(struct fold *f);
/* Unique stacks in f, also before fold_finish() (which drops the slots
 * fold_add() left empty). */
size_t fold_stacks(const struct fold *f);
/* fold_add() of a folded-text stack, each frame made safe by the same rule
 * fold_build() applies (control bytes and NUL to '?', an empty frame to
 * "[empty]", an empty stack to "[no stack]"), so folded text read straight
 * into a fold prints the same as through a profile.  As fold_add(). */
int fold_add_frames(struct fold *f, const char *stack, size_t len,
		    uint64_t count);
/* That rule alone: *out is the stack itself when nothing needs rewriting,
 * else its rewrite in *buf (of *cap bytes, grown as needed; the caller
 * frees it).  0 or -ENOMEM. */
int fold_safe_stack(const char *stack, size_t len, char **buf, size_t *cap,
		    const char **out, size_t *outlen);
void fold_release(struct fold *f);

/* Differential: lines of `before` and `after` joined by stack, count =
 * after's, count2 = before's (difffolded.pl's columns reversed: widths
 * come from after). */
int fold_diff(struct fold *out, const struct fold *before,
	      const struct fold *after);

/* difffolded.pl -n on a fold_diff() result: each before count scaled to
 * the after total (count2 * total / total2, truncated as difffolded.pl
 * does), so captures of different lengths compare shares; total2 keeps
 * the before input's own total. */
void fold_diff_normalize(struct fold *d);

/* Iterate the ';'-separated frames of a stack. */
static inline const char *fold_next_frame(const char *s, const char *end,
					  size_t *len)
{
	const char *e = (const char *)memchr(s, ';', (size_t)(end - s));
	if (!e)
		e = end;
	*len = (size_t)(e - s);
	return e;
}

#endif
