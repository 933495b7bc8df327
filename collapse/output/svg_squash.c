/* svg_squash.c - see svg_squash.h. */
#include "output/svg_squash.h"
#include "model/fold.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define UNKNOWN "[unknown]"
#define UNKNOWN_LEN 9

static bool is_unknown(const char *s, size_t n)
{
	return n == UNKNOWN_LEN && !memcmp(s, UNKNOWN, UNKNOWN_LEN);
}

/* The squashed stack being written: frame j of the runs-collapsed stack
 * goes out unless it is in the cut middle [2, 2 + cut), which is one
 * "[mostly unknown]×M" frame (M: the original frames it stands for). */
struct sq {
	char **buf;
	size_t *cap, len;
	size_t j, cut;
	size_t hidden;		/* original frames in the middle */
	size_t put;		/* frames written (an empty first frame is
				 * one: its ';' still follows) */
};

/* Append ";" (unless first) and n bytes of s. */
static int put(struct sq *q, const char *s, size_t n)
{
	if (sf_grow((void **)q->buf, q->cap, q->len + n + 2, 1))
		return -ENOMEM;
	if (q->put++)
		(*q->buf)[q->len++] = ';';
	memcpy(*q->buf + q->len, s, n);
	q->len += n;
	(*q->buf)[q->len] = 0;
	return 0;
}

static int put_count(struct sq *q, const char *name, size_t n)
{
	char f[48];
	int k = snprintf(f, sizeof(f), "%s\u00d7%zu", name, n);
	return put(q, f, (size_t)k);
}

/* Frame j: s (n bytes), standing for orig original frames; a run of
 * [unknown] frames (orig > 1) as "[unknown]×orig". */
static int frame(struct sq *q, const char *s, size_t n, size_t orig)
{
	size_t j = q->j++;
	if (q->cut && j >= 2 && j < 2 + q->cut) {
		q->hidden += orig;
		return j + 1 == 2 + q->cut ?
			put_count(q, "[mostly unknown]", q->hidden) : 0;
	}
	return orig > 1 ? put_count(q, UNKNOWN, orig) : put(q, s, n);
}

int svg_squash(const char *stack, size_t len, char **buf, size_t *cap,
	       const char **out, size_t *outlen, bool *mostly)
{
	const char *end = stack + len;
	size_t frames = 0, unknown = 0, drawn = 0, run = 0;
	*out = stack, *outlen = len, *mostly = false;
	if (!memmem(stack, len, UNKNOWN, UNKNOWN_LEN))
		return 0;	/* (most stacks: one search) */
	for (const char *p = stack; p <= end;) {
		size_t n;
		const char *e = fold_next_frame(p, end, &n);
		bool u = is_unknown(p, n);
		frames++, unknown += u;
		run = u ? run + 1 : 0;
		drawn += run <= 1;
		p = e + 1;
	}
	*mostly = unknown >= SVG_SQUASH_MOSTLY && 2 * unknown > frames;
	struct sq q = { .buf = buf, .cap = cap };
	if (*mostly && drawn > SVG_SQUASH_DEPTH)	/* keep 2 + the last 13 */
		q.cut = drawn - 2 - (SVG_SQUASH_DEPTH - 3);
	if (drawn == frames && !q.cut)
		return 0;
	run = 0;
	for (const char *p = stack; p <= end;) {
		size_t n;
		const char *e = fold_next_frame(p, end, &n);
		if (is_unknown(p, n)) {
			run++;
		} else {
			if (run && frame(&q, UNKNOWN, UNKNOWN_LEN, run))
				return -ENOMEM;
			run = 0;
			if (frame(&q, p, n, 1))
				return -ENOMEM;
		}
		p = e + 1;
	}
	if (run && frame(&q, UNKNOWN, UNKNOWN_LEN, run))
		return -ENOMEM;
	*out = *buf, *outlen = q.len;
	return 1;
}
