/* svg_tree.c - the frame tree of folded stacks; see svg_tree.h. */
#include "output/svg_tree.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/fold.h"
#include "base/util.h"

#define NONE UINT32_MAX

struct node {
	uint32_t name;		/* id in names */
	uint32_t parent;	/* a lower id: parents come first */
	uint32_t child, next;	/* first child, next sibling; NONE */
	uint64_t count, self;	/* samples through it (summed up once, by
				 * svg_tree_walk), ending in it */
};

/* An index entry holds its key: a probe reads one cache line, not the
 * node too.  id 0 (the root, never a child) marks an empty slot. */
struct slot {
	uint32_t parent, name, id;
};

/* A frame of the previous line: its node, and where its name ends. */
struct step {
	uint32_t node, end;
};

struct svg_tree {
	struct node *nodes;	/* [0] is the root */
	size_t n, cap;
	struct strtab names;
	struct slot *slots;	/* (parent, name) -> node; NULL while every
				 * line came in order */
	size_t nslots;
	/* the previous line: its bytes, and per frame its
	 * node and where it ends */
	char *prev;
	size_t prev_len, prev_cap;
	struct step *path;
	size_t depth, path_cap;
	bool started;
	bool fold_ok, byte_ok;	/* no line so far came before the previous
				 * one in fold order; in bytewise order */
	char *sbuf;		/* a stack made safe (fold_safe_stack) */
	size_t scap;
	uint64_t total;
	size_t stacks;
};

struct svg_tree *svg_tree_new(void)
{
	struct svg_tree *t = calloc(1, sizeof(*t));
	if (!t || strtab_init(&t->names) ||
	    sf_grow((void **)&t->nodes, &t->cap, 1, sizeof(*t->nodes))) {
		svg_tree_free(t);
		return NULL;
	}
	t->nodes[0] = (struct node){ .parent = NONE, .child = NONE,
				     .next = NONE };
	t->n = 1;
	t->fold_ok = t->byte_ok = true;
	return t;
}

void svg_tree_free(struct svg_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	strtab_release(&t->names);
	free(t->slots);
	free(t->prev);
	free(t->path);
	free(t->sbuf);
	free(t);
}

uint64_t svg_tree_total(const struct svg_tree *t)
{
	return t->total;
}

size_t svg_tree_stacks(const struct svg_tree *t)
{
	return t->stacks;
}

/* ---- the (parent, name) index ---- */

static size_t slot_of(const struct svg_tree *t, uint32_t parent,
		      uint32_t name)
{
	return sf_hash_u64((uint64_t)parent << 32 | name) & (t->nslots - 1);
}

static void index_put(struct svg_tree *t, uint32_t id)
{
	const struct node *x = &t->nodes[id];
	size_t i = slot_of(t, x->parent, x->name);
	while (t->slots[i].id)
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = (struct slot){ x->parent, x->name, id };
}

/* A zeroed table; from 2 MiB on, on transparent huge pages: probes land
 * anywhere in it, and on this kind of VM a TLB miss per probe doubled the
 * time of an unsorted 230,000-line file. */
static struct slot *slots_alloc(size_t n)
{
	size_t bytes = n * sizeof(struct slot);
	if (bytes < SF_HUGE_PAGE)
		return calloc(n, sizeof(struct slot));
	struct slot *v = sf_alloc_huge(bytes);
	if (v)
		memset(v, 0, bytes);
	return v;
}

/* (Re)build the index at most half full. */
static int index_grow(struct svg_tree *t)
{
	size_t ns = 1024;
	while (ns < t->n * 4)
		ns *= 2;
	struct slot *v = slots_alloc(ns);
	if (!v)
		return -ENOMEM;
	free(t->slots);
	t->slots = v;
	t->nslots = ns;
	for (size_t id = 1; id < t->n; id++)
		index_put(t, (uint32_t)id);
	return 0;
}

static uint32_t index_find(const struct svg_tree *t, uint32_t parent,
			   uint32_t name)
{
	for (size_t i = slot_of(t, parent, name); t->slots[i].id;
	     i = (i + 1) & (t->nslots - 1))
		if (t->slots[i].parent == parent && t->slots[i].name == name)
			return t->slots[i].id;
	return NONE;
}

/* ---- adding lines ---- */

static int64_t new_node(struct svg_tree *t, uint32_t parent, uint32_t name)
{
	if (t->n >= NONE - 1)
		return -E2BIG;
	if (sf_grow((void **)&t->nodes, &t->cap, t->n + 1, sizeof(*t->nodes)))
		return -ENOMEM;
	uint32_t id = (uint32_t)t->n++;
	struct node *p = &t->nodes[parent];
	t->nodes[id] = (struct node){ .name = name, .parent = parent,
				      .child = NONE, .next = p->child };
	p->child = id;
	if (t->slots && t->n * 2 > t->nslots) {
		if (index_grow(t))	/* puts every node, id too */
			return -ENOMEM;
	} else if (t->slots) {
		index_put(t, id);
	}
	return id;
}

/* How the child of a node is found: */
enum find {
	FIND_NEW,	/* it is new (no lookup) */
	FIND_SCAN,	/* among the parent's children (few: sort(1) order) */
	FIND_INDEX,	/* through the (parent, name) index */
};

static uint32_t child_scan(const struct svg_tree *t, uint32_t parent,
			   uint32_t name)
{
	for (uint32_t c = t->nodes[parent].child; c != NONE; c = t->nodes[c].next)
		if (t->nodes[c].name == name)
			return c;
	return NONE;
}

/* The child of parent named s[0..len), made if new; *how becomes
 * FIND_NEW once a node is made, as a new node has no children. */
static int64_t child(struct svg_tree *t, uint32_t parent, const char *s,
		     size_t len, enum find *how)
{
	int64_t name = strtab_intern(&t->names, s, len);
	if (name < 0)
		return -ENOMEM;
	uint32_t id = *how == FIND_SCAN ? child_scan(t, parent, (uint32_t)name)
		    : *how == FIND_INDEX ? index_find(t, parent, (uint32_t)name)
		    : NONE;
	if (id != NONE)
		return id;
	*how = FIND_NEW;
	return new_node(t, parent, (uint32_t)name);
}

/* Byte i of a line of n bytes, -1 past its end: plain bytewise order. */
static int byte_rank(const char *s, size_t n, size_t i)
{
	return i < n ? (unsigned char)s[i] : -1;
}

/* How many leading frames s shares with the previous line; *before: s
 * comes before it in fold order; *unsorted: in bytewise order. */
static size_t shared_frames(const struct svg_tree *t, const char *s,
			    size_t len, bool *before, bool *unsorted)
{
	uint32_t cp;
	*before = fold_cmp_at(s, (uint32_t)len, t->prev, (uint32_t)t->prev_len,
			      &cp) < 0;
	*unsorted = byte_rank(s, len, cp) < byte_rank(t->prev, t->prev_len, cp);
	size_t same = 0;
	while (same < t->depth &&
	       (t->path[same].end < cp ||
		(t->path[same].end == cp && (cp == len || s[cp] == ';'))))
		same++;
	return same;
}

static int remember(struct svg_tree *t, const char *s, size_t len,
		    size_t depth)
{
	if (sf_grow((void **)&t->prev, &t->prev_cap, len + 1, 1))
		return -ENOMEM;
	memcpy(t->prev, s, len);
	t->prev_len = len;
	t->depth = depth;
	return 0;
}

static int path_set(struct svg_tree *t, size_t i, uint32_t id, uint32_t end)
{
	if (sf_grow((void **)&t->path, &t->path_cap, i + 1, sizeof(*t->path)))
		return -ENOMEM;
	t->path[i] = (struct step){ id, end };
	return 0;
}

static int add_safe(struct svg_tree *t, const char *s, size_t len,
		    uint64_t count)
{
	/* The frames shared with the previous line are its nodes.  Past them,
	 * while all lines so far came in fold order, or all in sort(1)'s
	 * (FlameGraph's), a line after the previous one in fold order starts
	 * new nodes; in sort(1) order a line before it ("a;f;g" after
	 * "a;f.cold") comes back to a recent sibling, found among the
	 * parent's children.  Once the lines are in neither order, the index
	 * is built and every line uses it. */
	size_t same = 0;
	enum find how = t->slots ? FIND_INDEX : FIND_NEW;
	if (t->started) {
		bool before, unsorted;
		same = shared_frames(t, s, len, &before, &unsorted);
		t->fold_ok = t->fold_ok && !before;
		t->byte_ok = t->byte_ok && !unsorted;
		if (!t->slots && !t->fold_ok && !t->byte_ok) {
			if (index_grow(t))
				return -ENOMEM;
			how = FIND_INDEX;
		} else if (!t->slots && before) {
			how = FIND_SCAN;
		}
	}
	t->started = true;
	t->total += count;
	uint32_t at = same ? t->path[same - 1].node : 0;
	size_t depth = same;
	size_t off = same ? t->path[same - 1].end + 1 : 0;
	while (off <= len) {
		const char *e = memchr(s + off, ';', len - off);
		size_t end = e ? (size_t)(e - s) : len;
		int64_t id = child(t, at, s + off, end - off, &how);
		if (id < 0)
			return (int)id;
		at = (uint32_t)id;
		if (path_set(t, depth, at, (uint32_t)end))
			return -ENOMEM;
		depth++;
		off = end + 1;
	}
	if (!t->nodes[at].self)
		t->stacks++;
	t->nodes[at].self += count;
	return remember(t, s, len, depth);
}

int svg_tree_add(struct svg_tree *t, const char *stack, size_t len,
		 uint64_t count)
{
	const char *s;
	size_t n;
	if (fold_safe_stack(stack, len, &t->sbuf, &t->scap, &s, &n))
		return -ENOMEM;
	return add_safe(t, s, n, count);
}

/* ---- the walk ---- */

struct wframe {
	uint32_t node, depth;
	size_t lo, hi, i;	/* its children, sorted, in kids[lo, hi) */
	uint64_t start, next;	/* its start; its next child's */
};

static int name_cmp(const void *a, const void *b, void *arg)
{
	const struct svg_tree *t = arg;
	const struct node *x = &t->nodes[*(const uint32_t *)a];
	const struct node *y = &t->nodes[*(const uint32_t *)b];
	uint32_t xl = strtab_len(&t->names, x->name);
	uint32_t yl = strtab_len(&t->names, y->name);
	int c = memcmp(strtab_get(&t->names, x->name),
		       strtab_get(&t->names, y->name), xl < yl ? xl : yl);
	return c ? c : (xl > yl) - (xl < yl);
}

struct walk {
	const struct svg_tree *t;
	struct wframe *st;
	size_t n, cap;
	uint32_t *kids;
	size_t nkids, kids_cap;
};

static int enter(struct walk *w, uint32_t id, uint32_t depth, uint64_t start)
{
	const struct svg_tree *t = w->t;
	if (sf_grow((void **)&w->st, &w->cap, w->n + 1, sizeof(*w->st)))
		return -ENOMEM;
	size_t lo = w->nkids;
	for (uint32_t c = t->nodes[id].child; c != NONE; c = t->nodes[c].next) {
		if (sf_grow((void **)&w->kids, &w->kids_cap, w->nkids + 1,
			    sizeof(*w->kids)))
			return -ENOMEM;
		w->kids[w->nkids++] = c;
	}
	qsort_r(w->kids + lo, w->nkids - lo, sizeof(*w->kids), name_cmp,
		(void *)t);
	w->st[w->n++] = (struct wframe){
		.node = id, .depth = depth, .lo = lo, .hi = w->nkids, .i = lo,
		.start = start, .next = start + t->nodes[id].self,
	};
	return 0;
}

static int leave(struct walk *w, svg_tree_fn fn, void *ctx)
{
	const struct wframe *f = &w->st[--w->n];
	const struct node *x = &w->t->nodes[f->node];
	struct svg_tree_frame out = {
		.name = f->depth ? strtab_get(&w->t->names, x->name) : "all",
		.len = f->depth ? strtab_len(&w->t->names, x->name) : 3,
		.depth = f->depth, .start = f->start, .count = x->count,
		.self = x->self,
	};
	w->nkids = f->lo;
	return fn(ctx, &out);
}

/* Samples through each node: its own plus its children's, children
 * (higher ids) first. */
static void sum_counts(struct svg_tree *t)
{
	struct node *v = t->nodes;
	for (size_t i = 0; i < t->n; i++)
		v[i].count = v[i].self;
	for (size_t i = t->n; i-- > 1;)
		v[v[i].parent].count += v[i].count;
}

int svg_tree_walk(struct svg_tree *t, double min_count, svg_tree_fn fn,
		  void *ctx)
{
	struct walk w = { .t = t };
	sum_counts(t);
	int ret = enter(&w, 0, 0, 0);
	while (!ret && w.n) {
		struct wframe *f = &w.st[w.n - 1];
		if (f->i == f->hi) {
			ret = leave(&w, fn, ctx);
			continue;
		}
		uint32_t c = w.kids[f->i++];
		uint64_t start = f->next, n = t->nodes[c].count;
		f->next += n;
		if (n && (double)n >= min_count)
			ret = enter(&w, c, f->depth + 1, start);
	}
	free(w.st);
	free(w.kids);
	return ret;
}
