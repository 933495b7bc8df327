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
 * which are neither visible nor hoverable, and the front-end asks for that
 * for folded input; a minwidth of 0 means this default, "0px" keeps every
 * frame), hot palette keyed by name.  The subtitle says how many frames
 * were left out.
 */
#include "output/out.h"
#include "output/svg_layout.h"
#include "model/losses.h"
#include "output/svg_color.h"
#include "output/svg_elide.h"
#include "output/svg_squash.h"
#include "output/svg_palmap.h"
#include "output/svg_js.h"
#include "output/svg_text.h"
#include "output/svg_title.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- output ---- */

struct svg_geom {
	unsigned width, height;
	unsigned fh;		/* frame pitch (--height) */
	double fs, fw;		/* font size, glyph width / size */
	bool random, negate;
	const struct svg_elide *el;
	struct elide_out *eo;
	struct svg_palmap *cp;	/* --cp: NULL when not asked */
	uint64_t rseed;		/* --random */
	const char *nametype;
	double px_per_count;
	int ybase, ystep;	/* y of depth 0, and per level */
	int pal;
	bool diff, hash, has_sub;
	uint64_t total, total2, max_delta;
	const char *countname;
	size_t left_out;	/* frames narrower than --minwidth */
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
		return svg_diff_color(g->negate ? -v->self_delta : v->self_delta,
				      g->max_delta);
	uint64_t seed = g->random ? g->rseed ^ (((uint64_t)v->depth << 40) + idx) :
			g->hash ? sf_hash_bytes(v->name, dlen, 0)
				: ((uint64_t)v->depth << 40) ^ idx;
	struct svg_rgb c = svg_color(g->pal, v->name, v->len, sf_hash_u64(seed));
	return g->cp ? svg_palmap_color(g->cp, v->name, dlen, c) : c;
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

/* The left-out frames' groups as written: chains numbered in the order
 * the frames first use them (a chain's parent before it), names likewise,
 * a frame's groups in the order of their names, so the bytes follow from
 * the groups alone, whichever way the layout was built. */
struct elide_out {
	uint32_t *node_idx;	/* node id -> index + 1, 0: not yet written */
	uint32_t *order;	/* index -> node id */
	uint32_t *name;		/* index -> its name's id in names */
	size_t n;
	struct strtab names;	/* as shown (no _[k]), first-use order */
};

/* A group's names, top-down, joined by \x01: what its order follows. */
static char *chain_key(const struct svg_elide *el, uint32_t node)
{
	size_t n = 1;
	for (uint32_t i = node; i; i = el->nodes[i].parent)
		n += strlen(strtab_get(&el->names, el->nodes[i].name)) + 1;
	char *k = malloc(n), *p = k;
	if (!k)
		return NULL;
	for (uint32_t i = node; i; i = el->nodes[i].parent) {
		const char *s = strtab_get(&el->names, el->nodes[i].name);
		size_t l = strlen(s);
		memcpy(p, s, l);
		p += l;
		*p++ = '\x01';
	}
	*p = 0;
	return k;
}

struct keyed_ent {
	char *key;
	const struct se_ent *e;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct keyed_ent *)a)->key,
		      ((const struct keyed_ent *)b)->key);
}

/* A chain's index as written, numbering it (its parents first, and its
 * names) on first use; UINT32_MAX out of memory. */
static uint32_t node_index(const struct svg_geom *g, uint32_t node)
{
	struct elide_out *eo = g->eo;
	const struct svg_elide *el = g->el;
	if (eo->node_idx[node])
		return eo->node_idx[node] - 1;
	uint32_t parent = el->nodes[node].parent;
	if (parent && node_index(g, parent) == UINT32_MAX)
		return UINT32_MAX;
	const char *s = strtab_get(&el->names, el->nodes[node].name);
	int64_t id = strtab_intern(&eo->names, s, display_len(s, strlen(s)));
	if (id < 0)
		return UINT32_MAX;
	eo->name[eo->n] = (uint32_t)id;
	eo->order[eo->n] = node;
	eo->node_idx[node] = (uint32_t)++eo->n;
	return (uint32_t)eo->n - 1;
}

/* data-x="CHAIN:SAMPLES,..." in the order of the chains' names */
static void put_groups(struct svg_buf *b, const struct svg_geom *g,
		       uint32_t list)
{
	size_t n = 0, k = 0;
	for (uint32_t i = list; i; i = g->el->pool[i].next)
		n++;
	struct keyed_ent *e = calloc(n, sizeof(*e));
	if (!e)
		return;	/* the search is then short of these */
	for (uint32_t i = list; i; i = g->el->pool[i].next, k++) {
		e[k].e = &g->el->pool[i];
		e[k].key = chain_key(g->el, g->el->pool[i].node);
		if (!e[k].key)
			n = k;
	}
	qsort(e, n, sizeof(*e), by_key);
	svg_put(b, " data-x=\"", 9);
	for (k = 0; k < n; k++) {
		uint32_t idx = node_index(g, e[k].e->node);
		if (idx == UINT32_MAX)
			break;
		if (k)
			svg_putc(b, ',');
		svg_put_u64(b, idx);
		svg_putc(b, ':');
		svg_put_u64(b, e[k].e->count);
	}
	svg_putc(b, '"');
	for (k = 0; k < n; k++)
		free(e[k].key);
	free(e);
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
	if (v->ex && g->eo)	/* what its left-out descendants hold */
		put_groups(b, g, v->ex);
	else if (!g->eo && aux->elided) {	/* over budget: their total */
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
	svg_put(b, "\" height=\"", 10);
	svg_put_u64(b, g->fh - 1);
	svg_put(b, "\" fill=\"", 8);
	put_rgb(b, frame_color(g, v, dlen, idx));
	svg_put(b, "\"/>", 3);
	/* the same fit rule as label() in the script */
	double chars = floor((double)(x2 - x1) / 10.0 / (g->fs * g->fw));
	if (chars >= 3) {
		svg_put(b, "<text x=\"", 9);
		svg_put_fixed(b, x1 + 30, 1);
		svg_put(b, "\" y=\"", 5);
		/* flamegraph.pl's: 3 px below the frame's middle */
		svg_put_fixed(b, (int64_t)y * 10 + ((int64_t)g->fh - 1) * 5 + 30, 1);
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

/* s without the bytes that could end its CSS rule or CDATA section */
static void put_css_word(struct svg_buf *b, const char *s)
{
	for (; *s; s++)
		if (!strchr("{};<>]\\", *s))
			svg_putc(b, *s);
}

/* --notes as an XML comment, which may not hold "--" */
static void put_notes(struct svg_buf *b, const char *s)
{
	svg_puts(b, "<!-- ");
	for (const char *p = s; *p; p++) {
		svg_putc(b, *p);
		if (*p == '-' && (p[1] == '-' || !p[1]))
			svg_putc(b, ' ');
	}
	svg_puts(b, " -->\n");
}

static void put_head(struct svg_buf *b, const struct svg_geom *g,
		     const struct out_opts *o)
{
	const char *top, *bottom;
	svg_palette_background(g->pal, o->bgcolors, &top, &bottom);
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
	if (o->fonttype || o->fontsize) {	/* flamegraph.pl's --font* */
		char sz[128];
		svg_puts(b, "text { font-family: ");
		put_css_word(b, o->fonttype ? o->fonttype : "Verdana");
		snprintf(sz, sizeof(sz), ", sans-serif; font-size: %gpx; }\n"
			 "#title { font-size: %gpx; }\n", g->fs, g->fs + 5);
		svg_puts(b, sz);
	}
	svg_puts(b, "]]></style>\n");
	if (o->notes)
		put_notes(b, o->notes);
	svg_puts(b, "<defs><linearGradient id=\"background\" "
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
	char attrs[160];
	int ty = (int)lround(2 * g->fs), by = (int)g->height - (int)lround(g->fs + 5);
	snprintf(attrs, sizeof(attrs), "id=\"title\" x=\"%u\" y=\"%d\"",
		 g->width / 2, ty);
	put_text(b, attrs, title);
	if (g->has_sub) {
		snprintf(attrs, sizeof(attrs),
			 "id=\"subtitle\" x=\"%u\" y=\"%d\"", g->width / 2, 2 * ty);
		put_text(b, attrs, subtitle);
	}
	snprintf(attrs, sizeof(attrs), "id=\"details\" x=\"%d\" y=\"%d\"",
		 XPAD, by);
	put_text(b, attrs, " ");
	snprintf(attrs, sizeof(attrs),
		 "id=\"unzoom\" class=\"btn hide\" x=\"10\" y=\"%d\"", ty);
	put_text(b, attrs, "Reset Zoom");
	snprintf(attrs, sizeof(attrs),
		 "id=\"search\" class=\"btn\" x=\"%u\" y=\"%d\"",
		 g->width - XPAD - 30, ty);
	put_text(b, attrs, "Search");
	snprintf(attrs, sizeof(attrs),
		 "id=\"unsearch\" class=\"btn hide\" x=\"%u\" y=\"%d\"",
		 g->width - XPAD - 85, ty);
	put_text(b, attrs, "Reset Search");
	snprintf(attrs, sizeof(attrs), "id=\"ic\" class=\"btn\" x=\"%u\" y=\"%d\"",
		 g->width - XPAD, ty);
	put_text(b, attrs, "ic");
	snprintf(attrs, sizeof(attrs), "id=\"matched\" x=\"%u\" y=\"%d\"",
		 g->width - XPAD, by);
	put_text(b, attrs, " ");
}

/* --colors lang: what each colour means, in a row under the titles */
static void put_legend(struct svg_buf *b, const struct svg_geom *g)
{
	static const struct { const char *sample, *label; } items[] = {
		{ "f", "user code" }, { "f_[k]", "kernel" }, { "f_[j]", "JIT" },
		{ "f_[i]", "inlined" }, { "[unknown]", "no symbol" },
		{ "f_[w]", "waker" },
	};
	int y = (int)lround(3 * g->fs + (g->has_sub ? 2 * g->fs : 0));
	char attrs[160];
	svg_puts(b, "<g id=\"legend\">\n");
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		int x = XPAD + (int)i * 130;
		struct svg_rgb c = svg_color(SVG_PAL_LANG, items[i].sample,
					     strlen(items[i].sample), 0x8000);
		snprintf(attrs, sizeof(attrs), "<rect x=\"%d\" y=\"%d\" width=\"12\" "
			 "height=\"12\" fill=\"", x, y);
		svg_puts(b, attrs);
		put_rgb(b, c);
		svg_puts(b, "\"/>");
		snprintf(attrs, sizeof(attrs), "x=\"%d\" y=\"%d\"", x + 16, y + 11);
		put_text(b, attrs, items[i].label);
	}
	svg_puts(b, "</g>\n");
}

static void put_script(struct svg_buf *b, const struct svg_geom *g)
{
	svg_puts(b, "<script type=\"text/ecmascript\"><![CDATA[\nvar FG = {W: ");
	svg_put_u64(b, g->width);
	svg_puts(b, ", pad: " "10" ", base: ");
	svg_put_fixed(b, g->ybase, 0);
	svg_puts(b, ", step: ");
	svg_put_fixed(b, g->ystep, 0);
	char num[96];
	snprintf(num, sizeof(num), ", ty: %g, fs: %g, fw: %g, total: ",
		 (g->fh - 1) / 2.0 + 3, g->fs, g->fw);
	svg_puts(b, num);
	svg_put_u64(b, g->total);
	svg_puts(b, ", cn: \"");
	svg_put_js_string(b, g->countname, strlen(g->countname));
	svg_puts(b, "\", nt: \"");
	svg_put_js_string(b, g->nametype, strlen(g->nametype));
	svg_puts(b, "\", H: ");
	svg_put_u64(b, g->height);
	svg_puts(b, ", bo: ");
	svg_put_u64(b, (uint64_t)lround(g->fs + 5));
	/* the left-out frames' names, and the name sets data-x refers to */
	const struct elide_out *eo = g->eo;
	svg_puts(b, ",\nen: [");
	for (size_t i = 1; eo && i < eo->names.n; i++) {
		const char *n = strtab_get(&eo->names, (uint32_t)i);
		svg_puts(b, i > 1 ? ",\"" : "\"");
		svg_put_js_string(b, n, strlen(n));
		svg_putc(b, '"');
	}
	/* each chain: its name's index, after -(D + 1) when its parent
	 * chain is not the one just before it: D back, 0 for none (most
	 * chains extend the one before, numbered just before them) */
	svg_puts(b, "],\nes: [");
	for (size_t i = 0; eo && i < eo->n; i++) {
		uint32_t par = g->el->nodes[eo->order[i]].parent;
		uint64_t d = par ? i - (eo->node_idx[par] - 1) : 0;
		if (i)
			svg_putc(b, ',');
		if (d != 1) {
			svg_putc(b, '-');
			svg_put_u64(b, d + 1);
			svg_putc(b, ',');
		}
		svg_put_u64(b, eo->name[i] - 1);
	}
	svg_puts(b, "]};\n");
	svg_puts(b, svg_js);
	svg_puts(b, "]]></script>\n");
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
	g->total = svg_input_total(in);
	g->total2 = in->fold ? in->fold->total2 : 0;
	g->px_per_count = g->total ? (g->width - 2.0 * XPAD) / (double)g->total
				   : 0;
	g->diff = in->fold && in->fold->has_second;
	g->hash = !o->no_hash;
	g->has_sub = has_sub;
	g->countname = o->countname ? o->countname : "samples";
	g->nametype = o->nametype ? o->nametype : "Function:";
	g->fh = o->frame_height ? o->frame_height : FRAME_H;
	g->fs = o->fontsize > 0 ? o->fontsize : FONT_SIZE;
	g->fw = o->fontwidth > 0 ? o->fontwidth : FONT_WIDTH;
	g->random = o->random;
	g->negate = o->negate;
	if (g->random)	/* flamegraph.pl --random: a new colour each run */
		g->rseed = sf_hash_u64((uint64_t)time(NULL) ^
				       ((uint64_t)getpid() << 32));
	return 0;
}

static void geom_rows(struct svg_geom *g, const struct layout *l, bool inv)
{
	unsigned top = (unsigned)lround(3 * g->fs + (g->has_sub ? 2 * g->fs : 0) +
					(g->pal == SVG_PAL_LANG ? 2 * g->fs : 0));
	unsigned bottom = (unsigned)lround(2 * g->fs + 10);
	g->height = (l->max_depth + 1) * g->fh + top + bottom;
	g->ybase = inv ? (int)top : (int)(g->height - bottom - g->fh + 1);
	g->ystep = inv ? (int)g->fh : -(int)g->fh;
	/* full colour at the largest change, or at a tenth of the samples
	 * when every change is smaller: a share that moved 2 points is pale,
	 * not the deep colour of the largest change of a near-equal pair */
	g->max_delta = l->max_delta > g->total / 10 ? l->max_delta : g->total / 10;
	if (!g->max_delta)
		g->max_delta = 1;
}

static int write_svg(FILE *out, const struct svg_geom *g,
		     const struct layout *l, const struct out_opts *o,
		     const char *title, const char *subtitle)
{
	struct svg_buf *b = malloc(sizeof(*b));
	struct frame_aux *aux = calloc(l->nv ? l->nv : 1, sizeof(*aux));
	if (!b || !aux || frames_aux(l, aux)) {
		free(b);
		free(aux);
		return -ENOMEM;
	}
	struct elide_out eo = { 0 };
	size_t ns = g->el && !g->el->full ? g->el->nnodes + 1 : 0;
	if (ns && (strtab_init(&eo.names) ||
		   !(eo.node_idx = calloc(ns, sizeof(*eo.node_idx))) ||
		   !(eo.order = calloc(ns, sizeof(*eo.order))) ||
		   !(eo.name = calloc(ns, sizeof(*eo.name))))) {
		free(eo.node_idx);
		free(eo.order);
		free(b);
		free(aux);
		strtab_release(&eo.names);
		return -ENOMEM;
	}
	struct svg_geom gg = *g;
	gg.eo = ns ? &eo : NULL;
	g = &gg;
	svg_buf_init(b, out);
	put_head(b, g, o);
	put_controls(b, g, title, subtitle);
	if (g->pal == SVG_PAL_LANG)
		put_legend(b, g);
	svg_puts(b, "<g id=\"frames\">\n");
	for (size_t i = l->nv; g->total && i-- > 0;)
		put_frame(b, g, &l->v[i], l->nv - 1 - i, &aux[i]);
	svg_puts(b, "</g>\n");
	if (o->subtitle && g->left_out) {	/* (else the subtitle says it) */
		char c[160];
		c[0] = 0;
		svg_sub_left_out(c, sizeof(c), o, g->left_out);
		svg_puts(b, "<!-- ");
		svg_puts(b, c);
		svg_puts(b, " -->\n");
	}
	if (g->el && g->el->full)	/* the search falls back: say so */
		svg_puts(b, "<!-- search: the frames narrower than the minimum width "
			    "are too many to list here (their record passed "
			    SVG_ELIDE_BUDGET_TEXT "), so a search that may match "
			    "them says up to how much -->\n");
	put_script(b, g);
	svg_puts(b, "</svg>\n");
	int ret = svg_buf_flush(b);
	free(b);
	free(aux);
	if (ns) {
		free(eo.node_idx);
		free(eo.order);
		free(eo.name);
		strtab_release(&eo.names);
	}
	return ret;
}

/* flamegraph.pl --reverse: each stack leaf first.  0 or -ENOMEM (a
 * count past 2^63 cannot come from a fold that held it). */
static int reverse_fold(struct fold *rev, const struct fold *f)
{
	char *buf = NULL;
	size_t cap = 0;
	int ret = fold_init(rev);
	for (size_t i = 0; !ret && i < f->n; i++) {
		const struct fold_line *l = &f->lines[i];
		if (l->len + 1 > cap) {
			cap = (size_t)l->len + 1;
			char *nb = realloc(buf, cap);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
		}
		size_t o = 0;
		const char *end = l->stack + l->len;
		for (const char *e = end; e > l->stack;) {
			const char *b = e;
			while (b > l->stack && b[-1] != ';')
				b--;
			if (o)
				buf[o++] = ';';
			memcpy(buf + o, b, (size_t)(e - b));
			o += (size_t)(e - b);
			e = b > l->stack ? b - 1 : b;
		}
		ret = fold_add(rev, buf, o, l->count, l->count2);
	}
	free(buf);
	if (!ret)
		ret = fold_finish(rev);
	return ret;
}

/* The fold with its stacks squashed (svg_squash.h) into *sq when one
 * changes (*changed), their mostly-unknown samples added to st (may be
 * NULL).  0 or -ENOMEM. */
static int squash_fold(struct fold *sq, const struct fold *f,
		       struct out_svg_stats *st, bool *changed)
{
	char *buf = NULL;
	size_t cap = 0;
	const char *s;
	size_t n;
	bool mostly;
	int ret = 0;
	*changed = false;
	for (size_t i = 0; !ret && i < f->n; i++) {
		const struct fold_line *l = &f->lines[i];
		ret = svg_squash(l->stack, l->len, &buf, &cap, &s, &n, &mostly);
		*changed |= ret == 1;
		if (mostly && st)
			sf_sat_addto(&st->mostly_unknown, l->count);
	}
	if (ret < 0 || !*changed) {
		free(buf);
		return ret < 0 ? ret : 0;
	}
	ret = fold_init(sq);
	for (size_t i = 0; !ret && i < f->n; i++) {
		const struct fold_line *l = &f->lines[i];
		ret = svg_squash(l->stack, l->len, &buf, &cap, &s, &n, &mostly);
		if (ret >= 0)
			ret = fold_add(sq, s, n, l->count, l->count2);
	}
	free(buf);
	return ret ? ret : fold_finish(sq);
}

static int svg_write(FILE *out, const struct out_input *in,
		     const struct out_opts *opts, struct sf_err *err);

int out_svg_write(FILE *out, const struct out_input *in,
		  const struct out_opts *opts, struct sf_err *err)
{
	if (!in->fold)
		return svg_write(out, in, opts, err);
	struct fold sq, rev;
	bool squashed = false, reversed = false;
	struct out_input r = *in;
	int ret = squash_fold(&sq, in->fold, opts->svg_stats, &squashed);
	if (!ret && squashed)
		r.fold = &sq;
	if (!ret && opts->reverse) {
		reversed = true;
		ret = reverse_fold(&rev, r.fold);
		r.fold = &rev;
	}
	if (!ret)
		ret = svg_write(out, &r, opts, err);
	else
		sf_err_set(err, ENOMEM, "svg: out of memory");
	if (squashed)
		fold_release(&sq);
	if (reversed)
		fold_release(&rev);
	return ret;
}

static int svg_write(FILE *out, const struct out_input *in,
		     const struct out_opts *opts, struct sf_err *err)
{
	char sub[2048];
	const char *subtitle = opts->subtitle;
	struct svg_geom g;
	int ret = geom_init(&g, in, opts, false, err);
	if (ret)
		return ret;
	struct layout own = { .fold = in->fold }, *l = &own;
	double min = min_count(opts, g.total, g.px_per_count);
	if (!in->svg) {
		if (svg_elide_init(&own.el))
			ret = -ENOMEM;
		own.el_on = !ret;
	}
	if (ret) {
		;
	} else if (in->svg) {
		l = &in->svg->l;
		ret = svg_stream_finish(in->svg, min);
	} else if (in->tree) {
		own.min_count = min;
		ret = svg_tree_walk(in->tree, 0, svg_layout_tree_frame, &own);
	} else {
		own.min_count = min;
		ret = svg_layout_build(&own, opts->flamechart);
	}
	struct svg_palmap cp;
	if (!ret && opts->palette_map) {
		ret = svg_palmap_load(&cp, opts->palette_map, err);
		g.cp = &cp;
	}
	if (!ret && !subtitle) {	/* after the layout: what it left out */
		svg_default_subtitle(sub, sizeof(sub), in, opts, l->left_out,
				 opts->width ? opts->width : DEFAULT_WIDTH,
				 opts->fontsize > 0 ? opts->fontsize : FONT_SIZE,
				 opts->fontwidth > 0 ? opts->fontwidth : FONT_WIDTH);
		subtitle = sub;
	}
	if (!ret) {
		g.has_sub = subtitle[0] != 0;
		g.left_out = l->left_out;
		g.el = &l->el;
		geom_rows(&g, l, opts->inverted);
		ret = write_svg(out, &g, l, opts, svg_default_title(opts), subtitle);
		if (!ret && g.cp)
			ret = svg_palmap_save(&cp, opts->palette_map, err);
		if (ret == -EIO)
			sf_err_set(err, EIO, "write svg: %s", strerror(EIO));
	}
	if (ret == -ENOMEM)
		sf_err_set(err, ENOMEM, "svg: out of memory");
	if (ret == -EINVAL)
		sf_err_set(err, EINVAL, "svg: the stream was written already");
	if (g.cp)
		svg_palmap_release(&cp);
	svg_layout_release(&own);
	return ret;
}
