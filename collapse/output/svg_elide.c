/* svg_elide.c - see svg_elide.h. */
#include "output/svg_elide.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int svg_elide_init(struct svg_elide *e)
{
	memset(e, 0, sizeof(*e));
	return strtab_init(&e->names) ? -ENOMEM : 0;
}

void svg_pending_release(struct se_pending *p)
{
	free(p->head);
	p->head = NULL;
	p->cap = 0;
}

void svg_elide_release(struct svg_elide *e)
{
	strtab_release(&e->names);
	free(e->nodes);
	free(e->idx);
	free(e->pool);
	svg_pending_release(&e->pend);
	memset(e, 0, sizeof(*e));
}

static uint32_t *slot(struct se_pending *p, uint32_t depth)
{
	if (depth >= p->cap) {
		size_t old = p->cap;
		if (sf_grow((void **)&p->head, &p->cap, (size_t)depth + 1,
			    sizeof(*p->head)))
			return NULL;
		memset(p->head + old, 0, (p->cap - old) * sizeof(*p->head));
	}
	return &p->head[depth];
}

/* Whether `add` more bytes stay within the budget: checked before an array
 * grows (doubling), so the budget bounds what is allocated. */
static bool fits(const struct svg_elide *e, size_t add)
{
	return e->bytes + add <= SVG_ELIDE_BUDGET;
}

/* Over budget: drop everything; the lists the frames hold are ignored. */
static void overflow(struct svg_elide *e)
{
	free(e->pool);
	e->pool = NULL;
	e->n = e->cap = 0;
	e->free_list = 0;
	free(e->nodes);
	e->nodes = NULL;
	e->nnodes = e->nodes_cap = 0;
	free(e->idx);
	e->idx = NULL;
	e->idx_cap = 0;
	svg_pending_release(&e->pend);
	e->full = true;
}

static int push(struct svg_elide *e, uint32_t *head, uint32_t node, uint64_t count)
{
	if (e->full)
		return 0;
	uint32_t i = e->free_list;
	if (i) {
		e->free_list = e->pool[i].next;
	} else {
		size_t had = e->cap;
		if (e->n + 2 > e->cap && !fits(e, (had ? had : 16) * sizeof(*e->pool)))
			return -E2BIG;
		if (sf_grow((void **)&e->pool, &e->cap, e->n + 2, sizeof(*e->pool)))
			return -ENOMEM;
		e->bytes += (e->cap - had) * sizeof(*e->pool);
		if (!e->n)
			e->n = 1;
		i = (uint32_t)e->n++;
	}
	e->pool[i] = (struct se_ent){ .node = node, .next = *head, .count = count };
	*head = i;
	return 0;
}

static void free_list(struct svg_elide *e, uint32_t list)
{
	while (list) {
		uint32_t next = e->pool[list].next;
		e->pool[list].next = e->free_list;
		e->free_list = list;
		list = next;
	}
}

/* An index slot: a node id (below 2^24: the budget bounds the nodes to
 * fewer) and, in the top 8 bits, 8 bits of the key's hash, so that a probe
 * reads the node only when those match. */
#define IDX_ID(x) ((x) & 0xffffffu)

static uint64_t key_hash(uint32_t parent, uint32_t name)
{
	return sf_hash_u64((uint64_t)parent << 32 | name);
}

static size_t idx_pos(const struct svg_elide *e, uint32_t parent,
		      uint32_t name, uint64_t h)
{
	uint32_t tag = (uint32_t)(h >> 56) << 24;
	size_t j = h & (e->idx_cap - 1);
	for (uint32_t x; (x = e->idx[j]); j = (j + 1) & (e->idx_cap - 1))
		if ((x & 0xff000000u) == tag && e->nodes[IDX_ID(x)].parent == parent &&
		    e->nodes[IDX_ID(x)].name == name)
			break;
	return j;
}

static uint32_t idx_slot(uint32_t id, uint64_t h)
{
	return (uint32_t)(h >> 56) << 24 | id;
}

/* The index at twice the size. */
static int idx_grow(struct svg_elide *e)
{
	size_t cap = e->idx_cap ? e->idx_cap * 2 : 1024;
	uint32_t *old = e->idx;
	size_t old_cap = e->idx_cap;
	e->idx = calloc(cap, sizeof(*e->idx));
	if (!e->idx) {
		e->idx = old;
		return -ENOMEM;
	}
	e->idx_cap = cap;
	for (size_t k = 0; k < old_cap; k++) {
		if (!old[k])
			continue;
		const struct se_node *nd = &e->nodes[IDX_ID(old[k])];
		uint64_t h = key_hash(nd->parent, nd->name);
		size_t j = h & (cap - 1);
		while (e->idx[j])
			j = (j + 1) & (cap - 1);
		e->idx[j] = old[k];
	}
	free(old);
	e->bytes += (cap - old_cap) * sizeof(*e->idx);
	return 0;
}

/* name's id in names, or -ENOMEM */
static int64_t name_id(struct svg_elide *e, const char *name, size_t len)
{
	size_t had = e->names.n;
	int64_t nid = strtab_intern(&e->names, name, len);
	if (nid >= 0 && e->names.n != had)
		e->bytes += len + 1 + 16;
	return nid;
}

/* The chain (parent, name id), interned.  The node id, -ENOMEM, or
 * -E2BIG when the index or the nodes would grow past the budget. */
static int64_t chain(struct svg_elide *e, uint32_t parent, int64_t nid)
{
	if (nid < 0)
		return -ENOMEM;
	if ((e->nnodes + 2) * 4 > e->idx_cap * 3) {	/* at most 3/4 full */
		if (!fits(e, (e->idx_cap ? e->idx_cap : 1024) * sizeof(*e->idx)))
			return -E2BIG;
		if (idx_grow(e))
			return -ENOMEM;
	}
	uint64_t h = key_hash(parent, (uint32_t)nid);
	size_t j = idx_pos(e, parent, (uint32_t)nid, h);
	if (e->idx[j])
		return IDX_ID(e->idx[j]);
	size_t cap = e->nodes_cap;
	if (e->nnodes + 2 > cap && !fits(e, (cap ? cap : 16) * sizeof(*e->nodes)))
		return -E2BIG;
	if (sf_grow((void **)&e->nodes, &e->nodes_cap, e->nnodes + 2,
		    sizeof(*e->nodes)))
		return -ENOMEM;
	e->bytes += (e->nodes_cap - cap) * sizeof(*e->nodes);
	if (!e->nnodes)
		e->nnodes = 1;
	uint32_t id = (uint32_t)e->nnodes++;
	e->nodes[id] = (struct se_node){ parent, (uint32_t)nid };
	e->idx[j] = idx_slot(id, h);
	return id;
}

int svg_elide_keep(struct svg_elide *e, struct se_pending *p, uint32_t depth,
		   uint32_t *list)
{
	*list = 0;
	if (e->full)
		return 0;
	uint32_t *h = slot(p, depth + 1);
	if (!h)
		return -ENOMEM;
	*list = svg_elide_compact(e, *h);
	*h = 0;
	return 0;
}

static int pass_up(struct svg_elide *e, uint32_t *to, uint32_t list,
		   int64_t nid)
{
	for (uint32_t i = list; i; i = e->pool[i].next) {
		int64_t s = chain(e, e->pool[i].node, nid);
		int ret = s < 0 ? (int)s : push(e, to, (uint32_t)s, e->pool[i].count);
		if (ret)
			return ret;
	}
	return 0;
}

int svg_elide_drop(struct svg_elide *e, struct se_pending *p, uint32_t depth,
		   const char *name, size_t len, uint64_t self, uint32_t taken)
{
	if (e->full)
		return 0;
	if (!slot(p, depth + 1) || !slot(p, depth))
		return -ENOMEM;
	uint32_t *kids = &p->head[depth + 1];
	uint32_t mine = 0;
	int64_t nid = *kids || taken || self ? name_id(e, name, len) : 0;
	int ret = pass_up(e, &mine, *kids, nid);
	if (!ret)
		ret = pass_up(e, &mine, taken, nid);
	free_list(e, p->head[depth + 1]);
	p->head[depth + 1] = 0;
	free_list(e, taken);
	if (!ret && self) {
		int64_t s = chain(e, 0, nid);
		ret = s < 0 ? (int)s : push(e, &mine, (uint32_t)s, self);
	}
	if (ret == -E2BIG) {	/* over budget: nothing kept from now on */
		if (p != &e->pend)
			svg_pending_release(p);
		overflow(e);
		return 0;
	}
	mine = svg_elide_compact(e, mine);
	/* append to the parent's pending groups */
	uint32_t *tail = &p->head[depth];
	while (*tail)
		tail = &e->pool[*tail].next;
	*tail = mine;
	return ret;
}

int svg_elide_merge(struct svg_elide *e, struct se_pending *to,
		    struct se_pending *from)
{
	if (e->full)
		return 0;
	for (size_t d = 0; d < from->cap; d++) {
		if (!from->head[d])
			continue;
		uint32_t *h = slot(to, (uint32_t)d);
		if (!h)
			return -ENOMEM;
		uint32_t *tail = h;
		while (*tail)
			tail = &e->pool[*tail].next;
		*tail = from->head[d];
		from->head[d] = 0;
		*h = svg_elide_compact(e, *h);
	}
	return 0;
}

static int by_node(const void *a, const void *b, void *arg)
{
	const struct se_ent *pool = arg;
	uint32_t x = pool[*(const uint32_t *)a].node, y = pool[*(const uint32_t *)b].node;
	return (x > y) - (x < y);
}

uint32_t svg_elide_compact(struct svg_elide *e, uint32_t list)
{
	size_t n = 0;
	for (uint32_t i = list; i; i = e->pool[i].next)
		n++;
	if (n < 2)
		return list;
	uint32_t *ix = malloc(n * sizeof(*ix));
	if (!ix)
		return list;	/* duplicates stay: still right, larger */
	n = 0;
	for (uint32_t i = list; i; i = e->pool[i].next)
		ix[n++] = i;
	qsort_r(ix, n, sizeof(*ix), by_node, e->pool);
	uint32_t head = 0, last = 0;
	/* rebuild: keep the first of each run, add the rest's counts */
	for (size_t k = 0; k < n; k++) {
		uint32_t i = ix[k];
		if (last && e->pool[last].node == e->pool[i].node) {
			e->pool[last].count += e->pool[i].count;
			e->pool[i].next = e->free_list;
			e->free_list = i;
			continue;
		}
		e->pool[i].next = 0;
		if (last)
			e->pool[last].next = i;
		else
			head = i;
		last = i;
	}
	free(ix);
	return head;
}
