/* svg_order.c - see svg_order.h.
 *
 * A pass over adjacent lines finds where frame-wise order disagrees in a
 * way that splits a frame ("a;f" exists, and "a;f0" sorts between it and
 * "a;f;g"); each such disagreement lies inside the block of lines sharing the bytes up to the
 * frame where it happens (a contiguous range in sorted order; such blocks
 * nest or are disjoint).  Each outermost block is fixed top-down, one
 * frame level at a time: the lines are cut into runs with the same frame
 * name at that level, the runs are stably sorted by name (equal names
 * become adjacent), and each group of equal names is handled one level
 * deeper.  That touches each byte of a block about once. */
#include "svg_order.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

struct run {
	uint32_t lo, hi;	/* range in the order array */
	uint32_t nlen;
	const char *name;
	uint32_t seq;		/* position before sorting: stability */
};

struct job {
	uint32_t lo, hi, k;	/* lines [lo, hi) share bytes [0, k) */
};

struct fixer {
	const struct fold_line *lines;
	uint32_t *order, *tmp;
	struct run *runs;
	size_t nruns, runs_cap;
	struct job *jobs;
	size_t njobs, jobs_cap;
};

static const struct fold_line *line_at(const struct fixer *x, uint32_t i)
{
	return &x->lines[x->order[i]];
}

/* End of the frame starting at k in line l. */
static uint32_t frame_end(const struct fold_line *l, uint32_t k)
{
	const char *e = k < l->len ? memchr(l->stack + k, ';', l->len - k)
				   : NULL;
	return e ? (uint32_t)(e - l->stack) : l->len;
}

static int name_cmp(const char *a, uint32_t an, const char *b, uint32_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	return c ? c : (an > bn) - (an < bn);
}

static int run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	int c = name_cmp(x->name, x->nlen, y->name, y->nlen);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int push_job(struct fixer *x, uint32_t lo, uint32_t hi, uint32_t k)
{
	if (sf_grow((void **)&x->jobs, &x->jobs_cap, x->njobs + 1,
		    sizeof(*x->jobs)))
		return -ENOMEM;
	x->jobs[x->njobs++] = (struct job){ lo, hi, k };
	return 0;
}

/* Cut [lo, hi) into runs of equal frame name at k; true when sorted. */
static int cut_runs(struct fixer *x, const struct job *j, bool *sorted)
{
	x->nruns = 0;
	*sorted = true;
	for (uint32_t i = j->lo; i < j->hi;) {
		const struct fold_line *l = line_at(x, i);
		uint32_t e = frame_end(l, j->k), nlen = e - j->k;
		const char *name = l->stack + j->k;
		uint32_t h = i + 1;
		while (h < j->hi) {
			const struct fold_line *m = line_at(x, h);
			if (m->len < e || (m->len > e && m->stack[e] != ';') ||
			    memcmp(m->stack + j->k, name, nlen))
				break;
			h++;
		}
		if (sf_grow((void **)&x->runs, &x->runs_cap, x->nruns + 1,
			    sizeof(*x->runs)))
			return -ENOMEM;
		struct run *prev = x->nruns ? &x->runs[x->nruns - 1] : NULL;
		if (prev && name_cmp(prev->name, prev->nlen, name, nlen) >= 0)
			*sorted = false;
		x->runs[x->nruns] = (struct run){ i, h, nlen, name,
						  (uint32_t)x->nruns };
		x->nruns++;
		i = h;
	}
	return 0;
}

static void apply_runs(struct fixer *x, const struct job *j)
{
	qsort(x->runs, x->nruns, sizeof(*x->runs), run_cmp);
	uint32_t w = j->lo;
	for (size_t r = 0; r < x->nruns; r++) {
		uint32_t n = x->runs[r].hi - x->runs[r].lo;
		memcpy(x->tmp + w, x->order + x->runs[r].lo, n * sizeof(*x->tmp));
		x->runs[r].hi = w + n;
		x->runs[r].lo = w;
		w += n;
	}
	memcpy(x->order + j->lo, x->tmp + j->lo,
	       (j->hi - j->lo) * sizeof(*x->order));
}

/* Queue each group of equal names one level down, minus the line that
 * ends at that frame (it sorts first). */
static int queue_groups(struct fixer *x, const struct job *j)
{
	for (size_t r = 0; r < x->nruns;) {
		size_t s = r;
		while (r + 1 < x->nruns &&
		       !name_cmp(x->runs[r + 1].name, x->runs[r + 1].nlen,
				 x->runs[s].name, x->runs[s].nlen))
			r++;
		uint32_t lo = x->runs[s].lo, hi = x->runs[r].hi;
		uint32_t k = j->k + x->runs[s].nlen + 1;
		while (lo < hi && line_at(x, lo)->len < k)
			lo++;
		if (hi - lo > 1 && push_job(x, lo, hi, k))
			return -ENOMEM;
		r++;
	}
	return 0;
}

static int fix_block(struct fixer *x, uint32_t lo, uint32_t hi, uint32_t k)
{
	int ret = push_job(x, lo, hi, k);
	while (!ret && x->njobs) {
		struct job j = x->jobs[--x->njobs];
		bool sorted;
		ret = cut_runs(x, &j, &sorted);
		if (ret)
			break;
		if (!sorted)
			apply_runs(x, &j);
		ret = queue_groups(x, &j);
	}
	return ret;
}

/* Start of the frame holding byte cp of s. */
static uint32_t frame_start(const char *s, uint32_t cp)
{
	while (cp && s[cp - 1] != ';')
		cp--;
	return cp;
}

/* Is s[0..len) one of the lines?  (They are sorted bytewise.) */
static bool is_line(const struct fold *f, const char *s, uint32_t len)
{
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct fold_line *l = &f->lines[mid];
		int c = memcmp(l->stack, s, l->len < len ? l->len : len);
		if (!c)
			c = (l->len > len) - (l->len < len);
		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool has_prefix(const struct fold_line *l, const char *p, uint32_t k)
{
	return l->len >= k && !memcmp(l->stack, p, k);
}

/* Lines in [lo, hi) may have moved: their neighbours are unknown. */
static void forget_cp(uint32_t *cp, size_t n, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = lo; i <= hi && i < n; i++)
		cp[i] = SVG_CP_UNKNOWN;
}

static int fix_and_forget(struct fixer *x, const struct job *b,
			  uint32_t *cps, size_t n)
{
	forget_cp(cps, n, b->lo, b->hi);
	return fix_block(x, b->lo, b->hi, b->k);
}

void svg_order_release(struct svg_order *o)
{
	free(o->order);
	free(o->cp);
	o->order = o->cp = NULL;
}

/* Does the line pair (i - 1, i), sharing cp bytes, split a frame?  Then
 * *k is where that frame starts. */
static bool splits_frame(const struct fold *f, size_t i, uint32_t cp,
			 uint32_t *k)
{
	const struct fold_line *a = &f->lines[i - 1], *b = &f->lines[i];
	if (svg_fkey(a->stack, a->len, cp) <= svg_fkey(b->stack, b->len, cp))
		return false;
	/* b's frame F sorts after a's "F0": F is split only when the line
	 * ending at F exists (it sorts before "F0"); else the order just
	 * differs and the graph is the same */
	if (!is_line(f, b->stack, cp))
		return false;
	*k = frame_start(b->stack, cp);
	return true;
}

/* Grow [lo, hi) to every line sharing s[0..k). */
static struct job block_around(const struct fold *f, uint32_t lo, uint32_t hi,
			       const char *s, uint32_t k)
{
	while (lo > 0 && has_prefix(&f->lines[lo - 1], s, k))
		lo--;
	while (hi < f->n && has_prefix(&f->lines[hi], s, k))
		hi++;
	return (struct job){ lo, hi, k };
}

static int fixer_start(struct fixer *x, size_t n)
{
	x->order = malloc(n * sizeof(*x->order));
	x->tmp = malloc(n * sizeof(*x->tmp));
	if (!x->order || !x->tmp)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		x->order[j] = (uint32_t)j;
	return 0;
}

int svg_order_build(struct svg_order *o, const struct fold *f)
{
	o->order = NULL;
	o->cp = malloc((f->n ? f->n : 1) * sizeof(*o->cp));
	if (!o->cp)
		return -ENOMEM;
	o->cp[0] = 0;
	struct fixer x = { .lines = f->lines };
	struct job cur = { 0, 0, 0 };	/* the block found last, unfixed */
	int ret = 0;
	for (size_t i = 1; !ret && i < f->n; i++) {
		const struct fold_line *a = &f->lines[i - 1], *b = &f->lines[i];
		if (i + 4 < f->n)	/* lines sit anywhere in memory */
			__builtin_prefetch(f->lines[i + 4].stack);
		uint32_t cp = svg_common_prefix(a->stack, b->stack,
						a->len < b->len ? a->len : b->len);
		o->cp[i] = cp;
		uint32_t k;
		if (!splits_frame(f, i, cp, &k))
			continue;
		bool inside = x.order && i < cur.hi;
		if (inside && k >= cur.k)
			continue;	/* within the block already found */
		if (!x.order)
			ret = fixer_start(&x, f->n);
		else if (!inside)	/* blocks nest or are disjoint */
			ret = fix_and_forget(&x, &cur, o->cp, f->n);
		cur = inside ? block_around(f, cur.lo, cur.hi, b->stack, k)
			     : block_around(f, (uint32_t)i - 1, (uint32_t)i + 1,
					    b->stack, k);
	}
	if (!ret && x.order)
		ret = fix_and_forget(&x, &cur, o->cp, f->n);
	free(x.tmp);
	free(x.runs);
	free(x.jobs);
	o->order = x.order;
	if (ret)
		svg_order_release(o);
	return ret;
}
