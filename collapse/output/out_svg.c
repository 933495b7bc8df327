/*
 * out_svg.c - the interactive SVG flame graph writer (-f svg).
 *
 * Layout is one pass over the fold's sorted lines, merging each line with
 * the frames it shares with the previous one (FlameGraph's flow()): only
 * the open path (one entry per depth) and the frames that end up visible
 * are kept, so memory follows what is drawn, not the input.  The fold's
 * order (fold_cmp) keeps all the lines through a frame adjacent.  The same
 * pass runs while a folded file is read (struct svg_stream, out.h): then
 * no line is kept at all.  A frame closes
 * when a line no longer passes through it; it is kept when at least
 * minwidth wide, else dropped, its samples staying in its parent's width.
 * Frames close in post-order; written out in reverse they come in
 * pre-order (each parent before its subtree, siblings right to left), which
 * the embedded script relies on to rebuild the tree.
 *
 * Defaults: width 1200 px, minwidth 0.1% of the total (about 1.2 px at
 * 1200 px; flamegraph.pl keeps frames down to 0.1 px, 12 times smaller,
 * which are neither visible nor hoverable; a minwidth of 0 means this
 * default, "0px" keeps every frame), hot palette keyed by name.
 */
#include "output/out.h"
#include "output/losses.h"
#include "output/svg_color.h"
#include "output/svg_js.h"
#include "output/svg_text.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XPAD 10		/* left and right margin, px */
#define FRAME_H 16	/* row pitch; rects are 15 tall */
#define FONT_SIZE 12
#define FONT_WIDTH 0.59	/* average glyph width / font size */
#define YPAD_TITLE 36
#define YPAD_SUB 24
#define YPAD_BOTTOM 34
#define DEFAULT_WIDTH 1200
#define DEFAULT_MIN_PCT 0.1

/* cp argument of add_line(): the common prefix is not known yet */
#define CP_UNKNOWN UINT32_MAX

/* A frame on the current path. */
struct open_frame {
	const char *name;
	uint32_t len;
	uint32_t end;		/* offset just past the name in the line */
	uint64_t start, start2;	/* samples before it (after, before) */
	uint64_t self;		/* samples of lines ending here (after) */
	int64_t self_delta;	/* after - before of lines ending here */
};

/* A frame that will be drawn. */
struct vframe {
	const char *name;
	uint32_t len, depth;
	uint64_t start, count, count2, self;
	int64_t self_delta;
};

struct layout {
	const struct fold *fold;
	uint32_t *order;	/* line order (flame chart); NULL: the fold's */
	double min_count;	/* narrower frames are dropped */
	struct open_frame *open;
	size_t nopen, open_cap;
	struct vframe *v;
	size_t nv, v_cap;
	uint64_t time, time2, max_delta;
	uint32_t max_depth;
	const char *prev;	/* previous line */
	uint32_t prev_len;
	/* streaming (svg_stream): open frames' names point into pbuf, the
	 * copy of the previous line; kept frames' names are interned */
	bool stream;
	double min_frac;	/* keep count >= min_frac x samples so far */
	char *pbuf;
	size_t pcap;
	struct strtab names;
	size_t nv_compact;	/* filter v again when nv reaches this */
	size_t uniq;		/* distinct lines */
};

static int close_frame(struct layout *l, size_t depth)
{
	const struct open_frame *o = &l->open[depth];
	uint64_t count = l->time - o->start;
	double min = l->stream ? l->min_frac * (double)l->time : l->min_count;
	if (depth && (!count || (double)count < min))
		return 0;
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
		.self_delta = o->self_delta,
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
static int layout_build(struct layout *l, bool flamechart)
{
	int ret = 0;
	if (flamechart && !in_seq_order(l->fold))
		ret = seq_order(l);
	return ret ? ret : layout_pass(l);
}

static void layout_release(struct layout *l)
{
	free(l->order);
	free(l->open);
	free(l->v);
	free(l->pbuf);
	if (l->stream)
		strtab_release(&l->names);
}

/* ---- streaming ---- */

struct svg_stream {
	struct layout l;
	char *sbuf;		/* a line made safe (fold_safe_stack) */
	size_t scap;
	bool done;		/* closed by out_svg_write() */
	bool any_order;		/* --flamechart: lines in time order, only
				 * adjacent ones merged (flamegraph.pl's) */
};

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
	layout_release(&st->l);
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
static void filter_frames(struct layout *l, double min)
{
	size_t w = 0;
	l->max_depth = 0;
	for (size_t i = 0; i < l->nv; i++) {
		const struct vframe *v = &l->v[i];
		if (v->depth && (double)v->count < min)
			continue;
		if (v->depth > l->max_depth)
			l->max_depth = v->depth;
		l->v[w++] = *v;
	}
	l->nv = w;
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
		filter_frames(l, l->min_frac * (double)l->time);
		l->nv_compact = l->nv * 2 > 1024 ? l->nv * 2 : 1024;
	}
	return ret;
}

/* ---- from a frame tree ---- */

/* svg_tree_walk() callback: the frames come in the order close_frame()
 * would keep them. */
static int tree_frame(void *ctx, const struct svg_tree_frame *f)
{
	struct layout *l = ctx;
	if (sf_grow((void **)&l->v, &l->v_cap, l->nv + 1, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->nv++] = (struct vframe){
		.name = f->name, .len = f->len, .depth = f->depth,
		.start = f->start, .count = f->count, .self = f->self,
		.self_delta = (int64_t)f->self,
	};
	if (f->depth > l->max_depth)
		l->max_depth = f->depth;
	if (f->self > l->max_delta)
		l->max_delta = f->self;
	return 0;
}

/* Close every open frame and keep those at least min wide. */
static int stream_finish(struct svg_stream *st, double min)
{
	struct layout *l = &st->l;
	int ret = 0;
	if (st->done)
		return -EINVAL;
	st->done = true;
	for (size_t d = l->nopen; !ret && d-- > 0;)
		ret = close_frame(l, d);
	if (!ret)
		filter_frames(l, min);
	return ret;
}

/* ---- output ---- */

struct svg_geom {
	unsigned width, height;
	double px_per_count;
	int ybase, ystep;	/* y of depth 0, and per level */
	int pal;
	bool diff, hash, has_sub;
	uint64_t total, total2, max_delta;
	const char *countname;
};

static size_t display_len(const char *name, size_t len)
{
	return svg_suffix_of(name, len) != SVG_SFX_NONE ? len - 4 : len;
}

/* tenths of a pixel */
static int64_t xpos10(const struct svg_geom *g, uint64_t count)
{
	return llround((XPAD + (double)count * g->px_per_count) * 10.0);
}

static void put_rgb(struct svg_buf *b, struct svg_rgb c)
{
	static const char hex[] = "0123456789abcdef";
	char s[7] = { '#', hex[c.r >> 4], hex[c.r & 15], hex[c.g >> 4],
		      hex[c.g & 15], hex[c.b >> 4], hex[c.b & 15] };
	svg_put(b, s, sizeof(s));
}

static struct svg_rgb frame_color(const struct svg_geom *g,
				  const struct vframe *v, size_t dlen,
				  size_t idx)
{
	if (g->diff)
		return svg_diff_color(v->self_delta, g->max_delta);
	uint64_t seed = g->hash ? sf_hash_bytes(v->name, dlen, 0)
				: ((uint64_t)v->depth << 40) ^ idx;
	return svg_color(g->pal, v->name, v->len, sf_hash_u64(seed));
}

/* hundredths of a percent of total */
static int64_t pct100(double part, uint64_t total)
{
	return total ? llround(part * 10000.0 / (double)total) : 0;
}

/* A title's name is cut at a million characters: escaped (at most 6 bytes
 * each) it stays under libxml2's 10,000,000-byte limit on a text node, so
 * xmllint and browsers read the file without their "huge" option. */
#define TITLE_MAX_CHARS 1000000

static void put_title(struct svg_buf *b, const struct svg_geom *g,
		      const struct vframe *v, size_t dlen)
{
	svg_put(b, "<title>", 7);
	svg_put_xml(b, v->name, dlen, TITLE_MAX_CHARS);
	svg_put(b, " (", 2);
	svg_put_u64_commas(b, v->count);
	svg_putc(b, ' ');
	svg_put_xml(b, g->countname, strlen(g->countname), SIZE_MAX);
	svg_put(b, ", ", 2);
	svg_put_fixed(b, pct100((double)v->count, g->total), 2);
	svg_putc(b, '%');
	if (g->diff) {
		/* the change of its own samples (lines ending here), as a share
		 * of the after total: what its colour shows, as in
		 * flamegraph.pl */
		double d = (double)v->self_delta;
		int64_t c = pct100(d, g->total);
		svg_put(b, "; ", 2);
		if (d > 0)
			svg_putc(b, '+');
		else if (d < 0 && c == 0)	/* blue, and says it shrank */
			svg_putc(b, '-');
		svg_put_fixed(b, c, 2);
		svg_putc(b, '%');
	}
	svg_put(b, ")</title>", 9);
}

/*
 * What the script needs beyond x and width, which are rounded to 0.1 px
 * (a zoom by 10,000 would magnify that into frames of one size drawn at
 * twice the width of others), for each frame, in samples:
 *   data-s  its start from its parent's start, written only when the
 *           script cannot derive it: the script puts a frame's end at the
 *           start of the sibling written just before it (frames are written
 *           in pre-order, right to left), or at its parent's end, so only
 *           a frame followed by a gap (a narrower sibling left out, or
 *           parent's self samples to its right, never in practice) has it;
 *   data-e  samples in children left out (narrower than the minimum), so
 *           a search can say how much it may have missed.
 */
struct frame_aux {
	uint64_t rel, elided;
	bool has_rel;
};

/* aux[i] for l->v[i].  0 or -ENOMEM. */
static int frames_aux(const struct layout *l, struct frame_aux *aux)
{
	size_t nd = (size_t)l->max_depth + 2;
	uint64_t *kids = calloc(nd, sizeof(*kids));
	size_t *last = malloc(nd * sizeof(*last)), *when = calloc(nd, sizeof(*when));
	if (!kids || !last || !when) {
		free(kids);
		free(last);
		free(when);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->nv; i++) {	/* post-order: children first */
		const struct vframe *v = &l->v[i];
		uint64_t drawn = kids[v->depth + 1] + v->self;
		kids[v->depth + 1] = 0;
		kids[v->depth] += v->count;
		aux[i].elided = v->count > drawn ? v->count - drawn : 0;
	}
	for (size_t k = 1, i = l->nv; i-- > 0; k++) {	/* as written */
		const struct vframe *v = &l->v[i];
		if (v->depth) {
			const struct vframe *p = &l->v[last[v->depth - 1]];
			bool sib = when[v->depth] > when[v->depth - 1];
			uint64_t end = sib ? l->v[last[v->depth]].start
					   : p->start + p->count;
			aux[i].has_rel = v->start + v->count != end;
			aux[i].rel = v->start - p->start;
		}
		last[v->depth] = i;
		when[v->depth] = k;
	}
	free(kids);
	free(last);
	free(when);
	return 0;
}

static void put_frame(struct svg_buf *b, const struct svg_geom *g,
		      const struct vframe *v, size_t idx,
		      const struct frame_aux *aux)
{
	size_t dlen = display_len(v->name, v->len);
	int64_t x1 = xpos10(g, v->start), x2 = xpos10(g, v->start + v->count);
	int y = g->ybase + (int)v->depth * g->ystep;
	svg_put(b, "<g", 2);
	if (aux->has_rel) {
		svg_put(b, " data-s=\"", 9);
		svg_put_u64(b, aux->rel);
		svg_putc(b, '"');
	}
	if (aux->elided) {
		svg_put(b, " data-e=\"", 9);
		svg_put_u64(b, aux->elided);
		svg_putc(b, '"');
	}
	svg_putc(b, '>');
	put_title(b, g, v, dlen);
	svg_put(b, "<rect x=\"", 9);
	svg_put_fixed(b, x1, 1);
	svg_put(b, "\" y=\"", 5);
	svg_put_fixed(b, y, 0);
	svg_put(b, "\" width=\"", 9);
	svg_put_fixed(b, x2 - x1, 1);
	svg_put(b, "\" height=\"15\" fill=\"", 20);
	put_rgb(b, frame_color(g, v, dlen, idx));
	svg_put(b, "\"/>", 3);
	/* the same fit rule as label() in the script */
	double chars = floor((double)(x2 - x1) / 10.0 / (FONT_SIZE * FONT_WIDTH));
	if (chars >= 3) {
		svg_put(b, "<text x=\"", 9);
		svg_put_fixed(b, x1 + 30, 1);
		svg_put(b, "\" y=\"", 5);
		svg_put_fixed(b, (int64_t)y * 10 + 105, 1);
		svg_put(b, "\">", 2);
		svg_put_xml(b, v->name, dlen, (size_t)chars);
		svg_put(b, "</text>", 7);
	}
	svg_put(b, "</g>\n", 5);
}

static void put_text(struct svg_buf *b, const char *attrs, const char *s)
{
	svg_put(b, "<text ", 6);
	svg_puts(b, attrs);
	svg_putc(b, '>');
	svg_put_xml(b, s, strlen(s), SIZE_MAX);
	svg_put(b, "</text>\n", 8);
}

static void put_attr_num(struct svg_buf *b, const char *name, int64_t v)
{
	svg_putc(b, ' ');
	svg_puts(b, name);
	svg_put(b, "=\"", 2);
	svg_put_fixed(b, v, 0);
	svg_putc(b, '"');
}

static void put_head(struct svg_buf *b, const struct svg_geom *g)
{
	const char *top, *bottom;
	svg_palette_background(g->pal, &top, &bottom);
	svg_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		    "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\"");
	put_attr_num(b, "width", g->width);
	put_attr_num(b, "height", g->height);
	svg_puts(b, " viewBox=\"0 0 ");
	svg_put_u64(b, g->width);
	svg_putc(b, ' ');
	svg_put_u64(b, g->height);
	svg_puts(b, "\">\n<!-- flame graph written by stackfold -->\n"
		    "<style type=\"text/css\"><![CDATA[\n");
	svg_puts(b, svg_css);
	svg_puts(b, "]]></style>\n<defs><linearGradient id=\"background\" "
		    "y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\"><stop stop-color=\"");
	svg_puts(b, top);
	svg_puts(b, "\" offset=\"5%\"/><stop stop-color=\"");
	svg_puts(b, bottom);
	svg_puts(b, "\" offset=\"95%\"/></linearGradient></defs>\n"
		    "<rect x=\"0\" y=\"0\"");
	put_attr_num(b, "width", g->width);
	put_attr_num(b, "height", g->height);
	svg_puts(b, " fill=\"url(#background)\"/>\n");
}

static void put_controls(struct svg_buf *b, const struct svg_geom *g,
			 const char *title, const char *subtitle)
{
	char attrs[128];
	snprintf(attrs, sizeof(attrs), "id=\"title\" x=\"%u\" y=\"24\"",
		 g->width / 2);
	put_text(b, attrs, title);
	if (g->has_sub) {
		snprintf(attrs, sizeof(attrs),
			 "id=\"subtitle\" x=\"%u\" y=\"48\"", g->width / 2);
		put_text(b, attrs, subtitle);
	}
	snprintf(attrs, sizeof(attrs), "id=\"details\" x=\"%d\" y=\"%u\"",
		 XPAD, g->height - 17);
	put_text(b, attrs, " ");
	put_text(b, "id=\"unzoom\" class=\"btn hide\" x=\"10\" y=\"24\"",
		 "Reset Zoom");
	snprintf(attrs, sizeof(attrs),
		 "id=\"search\" class=\"btn\" x=\"%u\" y=\"24\"",
		 g->width - XPAD - 30);
	put_text(b, attrs, "Search");
	snprintf(attrs, sizeof(attrs), "id=\"ic\" class=\"btn\" x=\"%u\" y=\"24\"",
		 g->width - XPAD);
	put_text(b, attrs, "ic");
	snprintf(attrs, sizeof(attrs), "id=\"matched\" x=\"%u\" y=\"%u\"",
		 g->width - XPAD, g->height - 17);
	put_text(b, attrs, " ");
}

static void put_script(struct svg_buf *b, const struct svg_geom *g)
{
	svg_puts(b, "<script type=\"text/ecmascript\"><![CDATA[\nvar FG = {W: ");
	svg_put_u64(b, g->width);
	svg_puts(b, ", pad: " "10" ", base: ");
	svg_put_fixed(b, g->ybase, 0);
	svg_puts(b, ", step: ");
	svg_put_fixed(b, g->ystep, 0);
	svg_puts(b, ", ty: 10.5, fs: 12, fw: 0.59, total: ");
	svg_put_u64(b, g->total);
	svg_puts(b, ", cn: \"");
	svg_put_js_string(b, g->countname, strlen(g->countname));
	svg_puts(b, "\", nt: \"Function:\"};\n");
	svg_puts(b, svg_js);
	svg_puts(b, "]]></script>\n");
}

/* ---- titles ---- */

/* Samples drawn, whichever way the graph was built. */
static uint64_t input_total(const struct out_input *in)
{
	if (in->svg)
		return svg_stream_total(in->svg);
	return in->tree ? svg_tree_total(in->tree) : in->fold->total;
}

/* Append SEP (when buf is not empty) and "V WHAT". */
static void sub_add(char *buf, size_t cap, const char *sep, const char *what,
		    uint64_t v)
{
	size_t n = strlen(buf);
	if (n + 1 < cap)
		snprintf(buf + n, cap - n, "%s%" PRIu64 " %s", n ? sep : "", v,
			 what);
}

static void sub_meta(char *buf, size_t cap, const struct profile *p,
		     uint64_t samples);
static void sub_losses(char *buf, size_t cap, const struct pf_counters *c,
		       const char *who);

/* Does byte c start a character (not a UTF-8 continuation byte)? */
static bool u8_start(char c)
{
	return ((unsigned char)c & 0xc0) != 0x80;
}

/* Characters in s, counting UTF-8 sequences as one. */
static size_t u8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += u8_start(*s);
	return n;
}

/* "CMDLINE, " before rest, the command line cut ("..") to what the
 * subtitle's width leaves of its chars, at a character's start; left out
 * where fewer than 8 would show.  The counts and losses always show:
 * centred and unclipped, a long command line pushed them off the graph
 * (and a 1 KiB one off the buffer). */
static void sub_cmdline(char *buf, size_t cap, const char *cmd,
			const char *rest, size_t chars)
{
	size_t used = u8_chars(rest) + 2, room = chars > used ? chars - used : 0;
	if (room < 8) {
		snprintf(buf, cap, "%s", rest);
		return;
	}
	size_t len = 0, k = 0;
	for (; cmd[len] && k < room; len++)
		k += u8_start(cmd[len]);
	while (cmd[len] && !u8_start(cmd[len]))
		len++;	/* the rest of the last character */
	bool cut = cmd[len] != 0;
	if (cut)	/* room for "..": k falls only at a character's first
			 * byte, so len stops at one */
		while (len && k > room - 2)
			k -= u8_start(cmd[--len]);
	snprintf(buf, cap, "%.*s%s, %s", (int)len, cmd, cut ? ".." : "", rest);
}

/* "CMDLINE, 20.0 s at 999 Hz, 39876 samples; lost: 12 events, ..." from
 * what the profile knows, fitted to width px; "" when it knows nothing. */
static void default_subtitle(char *buf, size_t cap,
			     const struct out_input *in, unsigned width)
{
	const struct profile *p = in->prof;
	uint64_t total = input_total(in);
	buf[0] = 0;
	if (in->fold && in->fold->has_second) {
		snprintf(buf, cap,
			 "Differential: widths from after (%" PRIu64
			 "), colour by change against before (%" PRIu64
			 "): red grew, blue shrank",
			 in->fold->total, in->fold->total2);
		if (in->counters)
			sub_losses(buf, cap, in->counters, "after ");
		if (in->counters_before)
			sub_losses(buf, cap, in->counters_before, "before ");
		return;
	}
	/* the sample count is the fold's: what the graph really shows, also
	 * for folded-text input, which has no profile */
	char rest[1024];
	rest[0] = 0;
	if (p)
		sub_meta(rest, sizeof(rest), p, total);
	else
		sub_add(rest, sizeof(rest), "", total == 1 ? "sample" : "samples", total);
	const struct pf_counters *k = p ? &p->counters : in->counters;
	if (k)
		sub_losses(rest, sizeof(rest), k, "");
	size_t chars = (size_t)((width - 2.0 * XPAD) / (FONT_SIZE * FONT_WIDTH));
	if (p && p->meta.cmdline)
		sub_cmdline(buf, cap, profile_str(p, p->meta.cmdline), rest, chars);
	else
		snprintf(buf, cap, "%s", rest);
}

/* "20.0 s at 999 Hz, 39876 samples" (the command line goes before it,
 * cut to fit: sub_cmdline()) */
static void sub_meta(char *buf, size_t cap, const struct profile *p,
		     uint64_t samples)
{
	if (p->meta.duration_nanos) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, "%s%.1f s", n ? ", " : "",
			 (double)p->meta.duration_nanos / 1e9);
	}
	if (p->meta.hz)
		sub_add(buf, cap, p->meta.duration_nanos ? " at " : ", ", "Hz",
			p->meta.hz);
	sub_add(buf, cap, ", ", samples == 1 ? "sample" : "samples", samples);
}

/* "; lost: 12 events, 3 map-full drops; 2 truncated stacks", each part
 * after "; " led by who ("after ": "; after lost: 12 events") */
static void sub_losses(char *buf, size_t cap, const struct pf_counters *c,
		       const char *who)
{
	char first[32], semi[32];
	snprintf(first, sizeof(first), "; %slost: ", who);
	snprintf(semi, sizeof(semi), "; %s", who);
	const char *sep = first;
	/* samples lost, after "lost: ", then the marks, each after "; " */
	static const enum loss_id lost[] = {
		LOSS_LOST_EVENTS, LOSS_MAP_DROPPED, LOSS_MAP_FULL_WARNINGS,
		LOSS_CAPTURES_CUT, LOSS_STACKID_ERRORS, LOSS_INCOMPLETE_RECORDS,
		LOSS_UNPARSABLE_LINES,
	};
	static const enum loss_id marks[] = {
		LOSS_OVER_TOTAL, LOSS_TRUNCATED_STACKS, LOSS_NONSTACK_IGNORED,
		LOSS_MAPS_UNSAVED,
	};
	for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
		uint64_t v = loss_value(c, lost[i]);
		if (!v)
			continue;
		sub_add(buf, cap, sep, loss_word(lost[i], v), v);
		sep = ", ";
	}
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		uint64_t v = loss_value(c, marks[i]);
		if (v)
			sub_add(buf, cap, semi, loss_word(marks[i], v), v);
	}
}

static const char *default_title(const struct out_opts *o)
{
	if (o->title)
		return o->title;
	if (o->flamechart)
		return "Flame Chart";
	return o->inverted ? "Icicle Graph" : "Flame Graph";
}

/* ---- entry ---- */

static double min_count(const struct out_opts *o, uint64_t total,
			double px_per_count)
{
	if (o->minwidth_px)
		return o->minwidth > 0 ? o->minwidth / px_per_count : 0;
	/* 0 is "unset" (zeroed opts): the default; --minwidth 0px keeps all */
	double pct = o->minwidth > 0 ? o->minwidth : DEFAULT_MIN_PCT;
	return (double)total * pct / 100.0;
}

static int geom_init(struct svg_geom *g, const struct out_input *in,
		     const struct out_opts *o, bool has_sub,
		     struct sf_err *err)
{
	memset(g, 0, sizeof(*g));
	g->pal = svg_palette_find(o->colors);
	if (g->pal < 0)
		return sf_err_set(err, EINVAL,
				  "unknown colour palette '%s' (known: %s)",
				  o->colors, svg_palette_names());
	g->width = o->width ? o->width : DEFAULT_WIDTH;
	if (g->width < 4 * XPAD || g->width > 1000000)
		return sf_err_set(err, EINVAL, "svg width %u out of range",
				  g->width);
	g->total = input_total(in);
	g->total2 = in->fold ? in->fold->total2 : 0;
	g->px_per_count = g->total ? (g->width - 2.0 * XPAD) / (double)g->total
				   : 0;
	g->diff = in->fold && in->fold->has_second;
	g->hash = !o->no_hash;
	g->has_sub = has_sub;
	g->countname = o->countname ? o->countname : "samples";
	return 0;
}

static void geom_rows(struct svg_geom *g, const struct layout *l, bool inv)
{
	unsigned top = YPAD_TITLE + (g->has_sub ? YPAD_SUB : 0);
	g->height = (l->max_depth + 1) * FRAME_H + top + YPAD_BOTTOM;
	g->ybase = inv ? (int)top : (int)(g->height - YPAD_BOTTOM - FRAME_H + 1);
	g->ystep = inv ? FRAME_H : -FRAME_H;
	g->max_delta = l->max_delta ? l->max_delta : 1;
}

static int write_svg(FILE *out, const struct svg_geom *g,
		     const struct layout *l, const char *title,
		     const char *subtitle)
{
	struct svg_buf *b = malloc(sizeof(*b));
	struct frame_aux *aux = calloc(l->nv ? l->nv : 1, sizeof(*aux));
	if (!b || !aux || frames_aux(l, aux)) {
		free(b);
		free(aux);
		return -ENOMEM;
	}
	svg_buf_init(b, out);
	put_head(b, g);
	put_controls(b, g, title, subtitle);
	svg_puts(b, "<g id=\"frames\">\n");
	for (size_t i = l->nv; g->total && i-- > 0;)
		put_frame(b, g, &l->v[i], l->nv - 1 - i, &aux[i]);
	svg_puts(b, "</g>\n");
	put_script(b, g);
	svg_puts(b, "</svg>\n");
	int ret = svg_buf_flush(b);
	free(b);
	free(aux);
	return ret;
}

int out_svg_write(FILE *out, const struct out_input *in,
		  const struct out_opts *opts, struct sf_err *err)
{
	char sub[2048];
	const char *subtitle = opts->subtitle;
	if (!subtitle) {
		default_subtitle(sub, sizeof(sub), in,
				 opts->width ? opts->width : DEFAULT_WIDTH);
		subtitle = sub;
	}
	struct svg_geom g;
	int ret = geom_init(&g, in, opts, subtitle[0] != 0, err);
	if (ret)
		return ret;
	struct layout own = { .fold = in->fold }, *l = &own;
	double min = min_count(opts, g.total, g.px_per_count);
	if (in->svg) {
		l = &in->svg->l;
		ret = stream_finish(in->svg, min);
	} else if (in->tree) {
		ret = svg_tree_walk(in->tree, min, tree_frame, &own);
	} else {
		own.min_count = min;
		ret = layout_build(&own, opts->flamechart);
	}
	if (!ret) {
		geom_rows(&g, l, opts->inverted);
		ret = write_svg(out, &g, l, default_title(opts), subtitle);
		if (ret == -EIO)
			sf_err_set(err, EIO, "write svg: %s", strerror(EIO));
	}
	if (ret == -ENOMEM)
		sf_err_set(err, ENOMEM, "svg: out of memory");
	if (ret == -EINVAL)
		sf_err_set(err, EINVAL, "svg: the stream was written already");
	layout_release(&own);
	return ret;
}
