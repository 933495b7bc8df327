/* svg_layout.c - see svg_layout.h. */
#include "output/svg_layout.h"
#include "output/svg_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* cp argument of add_line(): the common prefix is not known yet */
#define CP_UNKNOWN UINT32_MAX

static int close_frame(struct layout *l, size_t depth)
{
	const struct open_frame *o = &l->open[depth];
	uint64_t count = l->time - o->start;
	double min = l->stream ? l->min_frac * (double)l->time : l->min_count;
	if (depth && (!count || (double)count < min)) {
		if (!count)
			return 0;
		l->left_out++;
		return svg_elide_drop(&l->el, &l->el.pend, (uint32_t)depth,
				      o->name, o->len, o->self, 0);
	}
	uint32_t ex;
	if (svg_elide_keep(&l->el, &l->el.pend, (uint32_t)depth, &ex))
		return -ENOMEM;
	const char *name = o->name;
	if (l->stream && depth) {	/* pbuf changes with the next line */
		int64_t id = strtab_intern(&l->names, o->name, o->len);
		if (id < 0)
			return -ENOMEM;
		name = strtab_get(&l->names, (uint32_t)id);
	}
	if (sf_grow((void **)&l->v, &l->v_cap, l->nv + 1, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->nv++] = (struct vframe){
		.name = name, .len = o->len, .depth = (uint32_t)depth,
		.start = o->start, .count = count,
		.count2 = l->time2 - o->start2, .self = o->self,
		.self_delta = o->self_delta, .ex = ex,
	};
	if (depth > l->max_depth)
		l->max_depth = (uint32_t)depth;
	return 0;
}

static int open_frame(struct layout *l, const char *s, uint32_t off,
		      uint32_t end)
{
	if (sf_grow((void **)&l->open, &l->open_cap, l->nopen + 1,
		    sizeof(*l->open)))
		return -ENOMEM;
	l->open[l->nopen++] = (struct open_frame){
		.name = s + off, .len = end - off, .end = end,
		.start = l->time, .start2 = l->time2,
	};
	return 0;
}

/* Number of leading frames s shares with the previous line (the open
 * path, root excluded). */
static size_t common_frames(struct layout *l, const char *s, uint32_t len,
			    uint32_t cp)
{
	if (!l->prev)
		return 0;
	if (cp == CP_UNKNOWN) {
		uint32_t n = len < l->prev_len ? len : l->prev_len;
		cp = fold_common_prefix(s, l->prev, n);
	}
	size_t i = 1;
	while (i < l->nopen && (l->open[i].end < cp ||
				(l->open[i].end == cp &&
				 (cp == len || s[cp] == ';'))))
		i++;
	return i - 1;
}

/* Close the open frames line s does not pass through; *same: how many it
 * keeps (root excluded). */
static int close_to(struct layout *l, const char *s, uint32_t len,
		    uint32_t cp, size_t *same)
{
	*same = common_frames(l, s, len, cp);
	for (size_t d = l->nopen - 1; d > *same; d--) {
		int ret = close_frame(l, d);
		if (ret)
			return ret;
	}
	l->nopen = *same + 1;
	return 0;
}

/* Open the frames of s past the first `same`, and count the line. */
static int open_rest(struct layout *l, const char *s, uint32_t len,
		     size_t same, uint64_t count, uint64_t count2)
{
	uint32_t off = same ? l->open[same].end + 1 : 0;
	while (len && off <= len) {
		const char *e = memchr(s + off, ';', len - off);
		uint32_t end = e ? (uint32_t)(e - s) : len;
		int ret = open_frame(l, s, off, end);
		if (ret)
			return ret;
		off = end + 1;
	}
	int64_t d = (int64_t)(count - count2);
	l->open[l->nopen - 1].self_delta += d;
	l->open[l->nopen - 1].self += count;
	uint64_t mag = d < 0 ? (uint64_t)(-(d + 1)) + 1 : (uint64_t)d;
	if (mag > l->max_delta)
		l->max_delta = mag;
	l->time += count;
	l->time2 += count2;
	l->prev = s;
	l->prev_len = len;
	return 0;
}

static int add_line(struct layout *l, const struct fold_line *fl, uint32_t cp)
{
	size_t same;
	int ret = close_to(l, fl->stack, fl->len, cp, &same);
	return ret ? ret : open_rest(l, fl->stack, fl->len, same, fl->count,
				     fl->count2);
}

/* One pass over the lines in l->ord order. */
static int layout_pass(struct layout *l)
{
	const struct fold *f = l->fold;
	l->nv = 0;
	l->left_out = 0;
	l->nopen = 0;
	l->time = l->time2 = l->max_delta = 0;
	l->max_depth = 0;
	l->prev = NULL;
	int ret = open_frame(l, "all", 0, 3);
	const uint32_t *ord = l->order;
	for (size_t i = 0; !ret && i < f->n; i++) {
		if (i + 4 < f->n)	/* lines sit anywhere in memory */
			__builtin_prefetch(f->lines[ord ? ord[i + 4] : i + 4].stack);
		ret = add_line(l, &f->lines[ord ? ord[i] : i], CP_UNKNOWN);
	}
	if (ret)
		return ret;
	for (size_t d = l->nopen; !ret && d-- > 0;)
		ret = close_frame(l, d);
	return ret;
}

static int cmp_seq(const void *a, const void *b, void *arg)
{
	const struct fold_line *x = (const struct fold_line *)arg +
				    *(const uint32_t *)a;
	const struct fold_line *y = (const struct fold_line *)arg +
				    *(const uint32_t *)b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int seq_order(struct layout *l)
{
	const struct fold *f = l->fold;
	if (f->n > UINT32_MAX)
		return -ENOMEM;
	uint32_t *o = malloc((f->n ? f->n : 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, f->n, sizeof(*o), cmp_seq, f->lines);
	l->order = o;
	return 0;
}

static bool in_seq_order(const struct fold *f)
{
	for (size_t i = 1; i < f->n; i++)
		if (f->lines[i].seq < f->lines[i - 1].seq)
			return false;
	return true;
}

/* Flame chart: time order, frames merged only with the line before.
 * Flame graph: the fold's order, frame-wise (fold_cmp), where all the lines
 * through a frame are adjacent. */
int svg_layout_build(struct layout *l, bool flamechart)
{
	int ret = 0;
	if (flamechart && !in_seq_order(l->fold))
		ret = seq_order(l);
	return ret ? ret : layout_pass(l);
}

void svg_layout_release(struct layout *l)
{
	if (l->el_on)
		svg_elide_release(&l->el);
	free(l->order);
	free(l->open);
	free(l->v);
	free(l->pbuf);
	if (l->stream)
		strtab_release(&l->names);
}

/* ---- streaming ---- */


static double min_frac(const struct out_opts *o)
{
	double w = (o->width ? o->width : DEFAULT_WIDTH) - 2.0 * XPAD;
	double f;
	if (o->minwidth_px)
		f = o->minwidth > 0 && w > 0 ? o->minwidth / w : 0;
	else
		f = (o->minwidth > 0 ? o->minwidth : DEFAULT_MIN_PCT) / 100.0;
	return f * 0.999;	/* below the final threshold despite rounding */
}

struct svg_stream *svg_stream_new(const struct out_opts *o)
{
	struct svg_stream *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->l.stream = true;
	st->any_order = o->flamechart;
	st->l.min_frac = min_frac(o);
	st->l.nv_compact = 1024;
	if (svg_elide_init(&st->l.el)) {
		free(st);
		return NULL;
	}
	st->l.el_on = true;
	if (strtab_init(&st->l.names) || open_frame(&st->l, "all", 0, 3)) {
		svg_stream_free(st);
		return NULL;
	}
	return st;
}

void svg_stream_free(struct svg_stream *st)
{
	if (!st)
		return;
	svg_layout_release(&st->l);
	free(st->sbuf);
	free(st);
}

uint64_t svg_stream_total(const struct svg_stream *st)
{
	return st->l.time;
}

size_t svg_stream_stacks(const struct svg_stream *st)
{
	return st->l.uniq;
}

/* Drop the frames kept so far that are narrower than min (never root). */
static int filter_frames(struct layout *l, double min)
{
	struct se_pending p2 = { 0 };
	size_t w = 0;
	int ret = 0;
	l->max_depth = 0;
	for (size_t i = 0; !ret && i < l->nv; i++) {
		struct vframe *v = &l->v[i];
		if (v->depth && (double)v->count < min) {
			/* what it held goes to its parent (svg_elide.h) */
			l->left_out++;
			ret = svg_elide_drop(&l->el, &p2, v->depth, v->name,
					     v->len, v->self, v->ex);
			continue;
		}
		uint32_t more;
		ret = svg_elide_keep(&l->el, &p2, v->depth, &more);
		if (more) {	/* v's list, then its dropped children's */
			uint32_t *t = &v->ex;
			while (*t)
				t = &l->el.pool[*t].next;
			*t = more;
			v->ex = svg_elide_compact(&l->el, v->ex);
		}
		if (v->depth > l->max_depth)
			l->max_depth = v->depth;
		l->v[w++] = *v;
	}
	l->nv = w;
	/* for frames still open (a stream's compaction) */
	if (!ret)
		ret = svg_elide_merge(&l->el, &l->el.pend, &p2);
	svg_pending_release(&p2);
	return ret;
}

/* Copy s into pbuf, moving the open frames' names along if it grows. */
static int keep_line(struct layout *l, const char *s, uint32_t n)
{
	if (n + 1 > l->pcap) {
		size_t cap = l->pcap ? l->pcap : 4096;
		while (cap < (size_t)n + 1)
			cap *= 2;
		char *nb = malloc(cap);
		if (!nb)
			return -ENOMEM;
		for (size_t d = 1; d < l->nopen; d++)
			l->open[d].name = nb + l->open[d].end - l->open[d].len;
		free(l->pbuf);
		l->pbuf = nb;
		l->pcap = cap;
	}
	memcpy(l->pbuf, s, n);
	return 0;
}

int svg_stream_line(struct svg_stream *st, const char *stack, size_t len,
		    uint64_t count)
{
	struct layout *l = &st->l;
	const char *s;
	size_t n;
	if (fold_safe_stack(stack, len, &st->sbuf, &st->scap, &s, &n))
		return -ENOMEM;
	if (n >= UINT32_MAX)
		return -EDOM;	/* the fold path reports it */
	uint32_t cp = 0;
	if (l->prev) {
		int c = fold_cmp_at(s, (uint32_t)n, l->prev, l->prev_len, &cp);
		if (c < 0 && !st->any_order)	/* before the previous line */
			return -EDOM;
		l->uniq += c != 0;
	} else {
		l->uniq = 1;
	}
	size_t same;
	int ret = close_to(l, s, (uint32_t)n, cp, &same);
	if (!ret)
		ret = keep_line(l, s, (uint32_t)n);
	if (!ret)
		ret = open_rest(l, l->pbuf, (uint32_t)n, same, count, 0);
	if (!ret && l->nv >= l->nv_compact) {
		ret = filter_frames(l, l->min_frac * (double)l->time);
		l->nv_compact = l->nv * 2 > 1024 ? l->nv * 2 : 1024;
	}
	return ret;
}

/* ---- from a frame tree ---- */

/* svg_tree_walk() callback: the frames come in the order close_frame()
 * would keep them. */
int svg_layout_tree_frame(void *ctx, const struct svg_tree_frame *f)
{
	struct layout *l = ctx;
	/* every frame comes (the walk's min is 0): those narrower than
	 * l->min_count go to the search's record of them */
	if (f->depth && (double)f->count < l->min_count) {
		l->left_out++;
		return svg_elide_drop(&l->el, &l->el.pend, f->depth, f->name,
				      f->len, f->self, 0);
	}
	uint32_t ex;
	if (svg_elide_keep(&l->el, &l->el.pend, f->depth, &ex) ||
	    sf_grow((void **)&l->v, &l->v_cap, l->nv + 1, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->nv++] = (struct vframe){
		.name = f->name, .len = f->len, .depth = f->depth,
		.start = f->start, .count = f->count, .self = f->self,
		.self_delta = (int64_t)f->self, .ex = ex,
	};
	if (f->depth > l->max_depth)
		l->max_depth = f->depth;
	if (f->self > l->max_delta)
		l->max_delta = f->self;
	return 0;
}

/* Close every open frame and keep those at least min wide. */
int svg_stream_finish(struct svg_stream *st, double min)
{
	struct layout *l = &st->l;
	int ret = 0;
	if (st->done)
		return -EINVAL;
	st->done = true;
	for (size_t d = l->nopen; !ret && d-- > 0;)
		ret = close_frame(l, d);
	if (!ret)
		ret = filter_frames(l, min);
	return ret;
}
