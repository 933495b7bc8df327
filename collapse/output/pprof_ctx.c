/* pprof_ctx.c - see pprof_ctx.h. */
#include "output/pprof_ctx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Zeroed n * size bytes that live as long as the writer's context: one
 * arena (a profile's arrays are written once and freed together; from
 * fresh 4 KiB pages, faulting them in was half of the writer's time). */
void *pp_calloc(struct pp_ctx *c, size_t n, size_t size)
{
	return sf_arena_zalloc(&c->ar, n ? n : 1, size);
}

/* ---- strings ---------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (strict: no overlongs, no
 * surrogates, <= U+10FFFF), or 0 when the byte at s starts none. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned c = s[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Intern s[0..len) into the output table, repairing bad UTF-8. */
static int64_t pp_intern(struct pp_ctx *c, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0, k;

	while (i < len && (k = utf8_seq(u + i, len - i)))
		i += k;
	if (i == len)
		return strtab_intern(&c->st, s, len);
	if (sf_grow((void **)&c->tmp, &c->tmpcap, len * 3 + 1, 1))
		return -ENOMEM;
	memcpy(c->tmp, s, i);
	o = i;
	while (i < len) {
		k = utf8_seq(u + i, len - i);
		if (k) {
			memcpy(c->tmp + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(c->tmp + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	return strtab_intern(&c->st, c->tmp, o);
}

int64_t pp_cstr(struct pp_ctx *c, const char *s)
{
	return pp_intern(c, s, strlen(s));
}

/* Output index of profile string id, interned on first use. */
int64_t pp_pstr(struct pp_ctx *c, uint32_t id)
{
	if (id == 0 || c->strmap[id])
		return c->strmap[id];
	int64_t o = pp_intern(c, profile_str(c->p, id),
			      strtab_len(&c->p->strs, id));
	if (o > 0)
		c->strmap[id] = (uint32_t)o;
	return o;
}

/* ---- pass 1: what the samples use, in first-use order ---------------- */

/* A frame known only by its fallback text: a mark, or a user address with
 * no mapping (its process was gone before its maps were saved).  Nothing
 * can ever symbolize such an address, so all of them with the same text
 * share one location named by that text, as in the folded output. */
bool pp_loc_is_synthetic(const struct pf_location *l)
{
	return l->nlines == 0 && l->unknown_name &&
	       (l->kind == PF_LOC_MARK ||
		(!l->mapping && (!l->address || l->kind != PF_LOC_KERNEL)));
}

bool pp_loc_on_kernel_map(const struct pf_location *l)
{
	return l->mapping == 0 && l->kind == PF_LOC_KERNEL &&
	       !pp_loc_is_synthetic(l);
}

int pp_index_init(struct pp_ctx *c, struct pp_index *x, size_t entries)
{
	size_t n = 16;
	while (n < 2 * entries)
		n *= 2;
	x->slots = pp_calloc(c, n, sizeof(*x->slots));
	x->mask = n - 1;
	return x->slots ? 0 : -ENOMEM;
}

/* The mapping a location is written with: a profile mapping id, PP_NO_MAP
 * for the synthetic kernel mapping, 0 for none. */
static uint32_t loc_pmap(const struct pp_ctx *c, const struct pf_location *l)
{
	if (l->mapping)
		return l->mapping;
	return pp_loc_on_kernel_map(l) ? c->kpm : 0;
}

/* Slot of the addressless symbolized output location with l's mapping and
 * line chain, or of the empty slot where it goes. */
static uint32_t *loc_slot(struct pp_ctx *c, const struct pf_location *l)
{
	const struct pf_line *ln = c->p->lines + l->line_start;
	uint32_t pm = loc_pmap(c, l);
	uint64_t h = sf_hash_bytes(ln, l->nlines * sizeof(*ln), pm);
	size_t i = h & c->lidx.mask;

	for (; c->lidx.slots[i]; i = (i + 1) & c->lidx.mask) {
		const struct pf_location *o =
			&c->p->locations[c->locs[c->lidx.slots[i] - 1]];
		if (loc_pmap(c, o) == pm && o->nlines == l->nlines &&
		    !memcmp(c->p->lines + o->line_start, ln,
			    l->nlines * sizeof(*ln)))
			break;
	}
	return &c->lidx.slots[i];
}

static int use_fn(struct pp_ctx *c, uint32_t fn, uint32_t name)
{
	uint32_t *slot = fn ? &c->fnmap[fn] : &c->synfn[name];

	if (*slot)
		return 0;
	if (sf_grow((void **)&c->fns, &c->fns_cap, c->nfns + 1,
		    sizeof(*c->fns)))
		return -ENOMEM;
	c->fns[c->nfns++] = (struct pp_fn){ .fn = fn, .name = name };
	*slot = (uint32_t)c->nfns;
	return 0;
}

static void use_map(struct pp_ctx *c, uint32_t m)
{
	if (c->mapmap[m])
		return;
	c->maps[c->nmaps++] = m;
	c->mapmap[m] = 1;	/* seen; real ids assigned by pp_order_maps() */
}

static int use_loc(struct pp_ctx *c, uint32_t id)
{
	const struct profile *p = c->p;
	const struct pf_location *l = &p->locations[id];

	if (c->locmap[id])
		return 0;
	if (pp_loc_is_synthetic(l) && c->synloc[l->unknown_name]) {
		c->locmap[id] = c->synloc[l->unknown_name];
		return 0;
	}
	uint32_t *slot = l->nlines && !l->address ? loc_slot(c, l) : NULL;
	if (slot && *slot) {
		c->locmap[id] = *slot;
		return 0;
	}
	c->locs[c->nlocs++] = id;
	c->locmap[id] = (uint32_t)c->nlocs;
	if (slot)
		*slot = (uint32_t)c->nlocs;
	if (l->mapping)
		use_map(c, l->mapping);
	else if (pp_loc_on_kernel_map(l) && c->kpm != PP_NO_MAP)
		use_map(c, c->kpm);
	else if (pp_loc_on_kernel_map(l) && !c->kmap_used) {
		c->kmap_used = true;
		c->maps[c->nmaps++] = PP_NO_MAP;
	}
	/* the kernel's mapping, ours or the profile's: functions only if
	 * kallsyms (or the input) named some of its frames */
	uint32_t pm = loc_pmap(c, l);
	if (pm == c->kpm) {
		c->kmap_has_functions |= l->nlines > 0;
		c->kmap_addr |= l->address != 0 && c->kpm == PP_NO_MAP;
	}
	bool on_map = pm && pm != PP_NO_MAP;
	if (on_map && l->nlines && !l->address)
		c->mapsym0[pm] = true;
	if (on_map && !l->nlines && l->address)
		c->mapunres[pm] = true;
	if (pp_loc_is_synthetic(l)) {
		c->synloc[l->unknown_name] = (uint32_t)c->nlocs;
		c->nlines++;
		return use_fn(c, 0, l->unknown_name);
	}
	for (uint32_t i = 0; i < l->nlines; i++) {
		int rc = use_fn(c, p->lines[l->line_start + i].function, 0);
		if (rc)
			return rc;
	}
	c->nlines += l->nlines;
	return 0;
}

/* The "comm" label: the process's name where its map was saved, else the
 * sampled thread's comm (one-liner input). */
uint32_t pp_comm_label(const struct pf_sample *s)
{
	return s->process ? s->process : s->comm;
}

/* Does the basename of mapping m's file start with the sample's comm (a
 * comm is the executable's name cut to 15 bytes)? */
static bool map_matches_comm(const struct pp_ctx *c, uint32_t m,
			     const struct pf_sample *s)
{
	const struct pf_mapping *pm = &c->p->mappings[m];
	if (!pp_comm_label(s) || !pm->filename || pm->is_kernel)
		return false;
	const char *f = profile_str(c->p, pm->filename);
	const char *b = strrchr(f, '/');
	const char *comm = profile_str(c->p, pp_comm_label(s));
	b = b ? b + 1 : f;
	return strncmp(b, comm, strlen(comm)) == 0;
}

/* Weigh the mappings a sample touches, once per sample. */
static void weigh_sample(struct pp_ctx *c, uint32_t sid)
{
	const struct profile *p = c->p;
	const struct pf_sample *s = &p->samples[sid];
	const uint32_t *st = profile_stack(p, s);

	for (uint32_t i = 0; i < s->depth; i++) {
		uint32_t m = p->locations[st[i]].mapping;
		if (!m || c->maplast[m] == sid)
			continue;
		c->maplast[m] = sid;
		c->mapweight[m] += s->count;
		if (!c->mapguess[m] && map_matches_comm(c, m, s))
			c->mapguess[m] = true;
	}
}

static int use_nostack(struct pp_ctx *c)
{
	if (sf_grow((void **)&c->fns, &c->fns_cap, c->nfns + 1,
		    sizeof(*c->fns)))
		return -ENOMEM;
	c->fns[c->nfns++] = (struct pp_fn){ .fn = 0, .name = 0 };
	c->nostack_fn = (uint32_t)c->nfns;
	c->locs[c->nlocs++] = PP_NO_STACK_LOC;
	c->nostack_loc = (uint32_t)c->nlocs;
	c->nlines++;
	return 0;
}

static bool same_labels(const struct pf_sample *a, const struct pf_sample *b)
{
	return a->pid == b->pid && a->tid == b->tid &&
	       pp_comm_label(a) == pp_comm_label(b) &&
	       a->thread_name == b->thread_name;
}

/* Add profile sample sid, whose output stack is ostack[off..], as a new
 * output sample or into an equal earlier one. */
static void merge_sample(struct pp_ctx *c, uint32_t sid, size_t off)
{
	const struct pf_sample *s = &c->p->samples[sid];
	uint32_t depth = (uint32_t)(c->ostack_len - off);
	const uint32_t *st = c->ostack + off;
	uint64_t h = sf_hash_u64((uint64_t)s->pid << 32 | s->tid) ^
		     sf_hash_u64((uint64_t)pp_comm_label(s) << 32 | s->thread_name);
	size_t i = sf_hash_bytes(st, depth * sizeof(*st), h) & c->sidx.mask;

	for (; c->sidx.slots[i]; i = (i + 1) & c->sidx.mask) {
		struct pp_sample *o = &c->osm[c->sidx.slots[i] - 1];
		if (o->depth == depth &&
		    same_labels(&c->p->samples[o->sid], s) &&
		    !memcmp(c->ostack + o->off, st, depth * sizeof(*st))) {
			o->count = sf_sat_add(o->count, s->count);
			c->ostack_len = off;
			return;
		}
	}
	c->osm[c->nsamples++] = (struct pp_sample){
		.sid = sid, .off = (uint32_t)off, .depth = depth,
		.count = s->count };
	c->sidx.slots[i] = (uint32_t)c->nsamples;
	c->nlabels += !!s->pid + !!s->tid + !!pp_comm_label(s) + !!s->thread_name;
}

/* The output stack of one profile sample, appended to ostack. */
static int sample_stack(struct pp_ctx *c, const struct pf_sample *s)
{
	const uint32_t *st = profile_stack(c->p, s);
	size_t start = c->ostack_len;
	int rc;

	if (sf_grow((void **)&c->ostack, &c->ostack_cap,
		    c->ostack_len + s->depth + 1, sizeof(*c->ostack)))
		return -ENOMEM;
	for (uint32_t i = 0; i < s->depth; i++) {
		if (!fold_loc_wanted(&c->p->locations[st[i]], c->fold_flags))
			continue;
		if ((rc = use_loc(c, st[i])))
			return rc;
		c->ostack[c->ostack_len++] = c->locmap[st[i]];
	}
	if (c->ostack_len == start) {	/* empty, or emptied by -U/-K */
		if (!c->nostack_loc && (rc = use_nostack(c)))
			return rc;
		c->ostack[c->ostack_len++] = c->nostack_loc;
	}
	return 0;
}

/* Samples ordered by labels (comm, pid, tid, thread), then stack root
 * first, so a thread's samples sit together and stacks sharing callers
 * follow each other: the sample section gzips ~15% smaller than in
 * first-seen order, and the order still depends on the profile only. */
static int sample_cmp(const void *a, const void *b, void *arg)
{
	const struct pp_ctx *c = arg;
	const struct pp_sample *x = a, *y = b;
	const struct pf_sample *sx = &c->p->samples[x->sid];
	const struct pf_sample *sy = &c->p->samples[y->sid];
	uint64_t kx[4] = { pp_comm_label(sx), sx->pid, sx->tid, sx->thread_name };
	uint64_t ky[4] = { pp_comm_label(sy), sy->pid, sy->tid, sy->thread_name };

	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	for (uint32_t i = 1; i <= x->depth && i <= y->depth; i++) {
		uint32_t lx = c->ostack[x->off + x->depth - i];
		uint32_t ly = c->ostack[y->off + y->depth - i];
		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

int pp_collect(struct pp_ctx *c)
{
	const struct profile *p = c->p;
	int rc;

	for (uint32_t sid = 1; sid < p->nsamples; sid++) {
		size_t off = c->ostack_len;
		if (!p->samples[sid].count)
			continue;
		if ((rc = sample_stack(c, &p->samples[sid])))
			return rc;
		merge_sample(c, sid, off);
		weigh_sample(c, sid);
	}
	return 0;
}

/* Index in maps[] of the main binary: the most-sampled mapping flagged
 * is_main, else the most-sampled one named like a sampled comm, else the
 * first used; -1 when none.  Ties go to the first used. */
static long pick_main(const struct pp_ctx *c)
{
	long best = -1;

	for (int pass = 0; pass < 2 && best < 0; pass++) {
		uint64_t bw = 0;
		for (size_t i = 0; i < c->nmaps; i++) {
			uint32_t m = c->maps[i];
			if (m == PP_NO_MAP)
				continue;
			bool ok = pass == 0 ? c->p->mappings[m].is_main
					    : c->mapguess[m];
			if (ok && (best < 0 || c->mapweight[m] > bw)) {
				best = (long)i;
				bw = c->mapweight[m];
			}
		}
	}
	return best;
}

static const char *map_name(const struct pp_ctx *c, uint32_t m)
{
	const struct pf_mapping *pm;

	if (m == PP_NO_MAP)
		return PP_KERNEL_NAME;
	pm = &c->p->mappings[m];
	if (!pm->filename && pm->is_kernel)
		return PP_KERNEL_NAME;
	return profile_str(c->p, pm->filename);
}

/* Mappings by file name, build-id, then range: one library's mappings in
 * many processes sit together, which gzips better. */
static int map_cmp(const void *a, const void *b, void *arg)
{
	const struct pp_ctx *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = strcmp(map_name(c, x), map_name(c, y));
	const struct pf_mapping *mx, *my;

	if (r || x == y)
		return r;
	if (x == PP_NO_MAP || y == PP_NO_MAP)
		return x == PP_NO_MAP ? -1 : 1;
	mx = &c->p->mappings[x];
	my = &c->p->mappings[y];
	if ((r = strcmp(profile_str(c->p, mx->build_id),
			profile_str(c->p, my->build_id))))
		return r;
	if (mx->start != my->start)
		return mx->start < my->start ? -1 : 1;
	if (mx->limit != my->limit)
		return mx->limit < my->limit ? -1 : 1;
	if (mx->offset != my->offset)
		return mx->offset < my->offset ? -1 : 1;
	return x < y ? -1 : 1;
}

/* Put the main binary first, the others in map_cmp() order, and assign
 * output mapping ids. */
void pp_order_maps(struct pp_ctx *c)
{
	long mi = pick_main(c);

	if (mi > 0) {
		uint32_t m = c->maps[mi];
		memmove(c->maps + 1, c->maps, (size_t)mi * sizeof(*c->maps));
		c->maps[0] = m;
	}
	if (c->nmaps > 2)
		qsort_r(c->maps + 1, c->nmaps - 1, sizeof(*c->maps), map_cmp, c);
	for (size_t i = 0; i < c->nmaps; i++) {
		if (c->maps[i] == PP_NO_MAP)
			c->kout = (uint32_t)(i + 1);
		else
			c->mapmap[c->maps[i]] = (uint32_t)(i + 1);
	}
	if (c->kpm != PP_NO_MAP)
		c->kout = c->mapmap[c->kpm];
}

/* The address written for l: none for a synthetic frame; for a return
 * address the call's last byte, which is what was looked up, so that a
 * reader that symbolizes by address names the call site, and a leaf at
 * the instruction after the call is not the same address. */
uint64_t pp_loc_address(const struct pf_location *l)
{
	if (pp_loc_is_synthetic(l))
		return 0;
	return l->address - (l->is_return && l->address);
}

/* Output mapping id and address of output location i (0-based). */
static void loc_key(const struct pp_ctx *c, size_t i, uint64_t k[2])
{
	const struct pf_location *l;

	k[0] = k[1] = 0;
	if (c->locs[i] == PP_NO_STACK_LOC)
		return;
	l = &c->p->locations[c->locs[i]];
	k[0] = l->mapping ? c->mapmap[l->mapping]
			  : pp_loc_on_kernel_map(l) ? c->kout : 0;
	k[1] = pp_loc_address(l);
}

/* Output function id of line k of output location i (0-based). */
static uint32_t *loc_fn(struct pp_ctx *c, size_t i, uint32_t k)
{
	const struct pf_location *l;

	if (c->locs[i] == PP_NO_STACK_LOC)
		return &c->nostack_fn;
	l = &c->p->locations[c->locs[i]];
	if (pp_loc_is_synthetic(l))
		return &c->synfn[l->unknown_name];
	return &c->fnmap[c->p->lines[l->line_start + k].function];
}

static uint32_t loc_nfns(const struct pp_ctx *c, size_t i)
{
	const struct pf_location *l;

	if (c->locs[i] == PP_NO_STACK_LOC)
		return 1;
	l = &c->p->locations[c->locs[i]];
	return pp_loc_is_synthetic(l) ? 1 : l->nlines;
}

/* Renumber functions in first-use order of the (ordered) locations: the
 * functions of one file, near each other by address, get neighbouring ids
 * and their names neighbouring strings (the table is filled in that order),
 * which gzips better. */
static int order_fns(struct pp_ctx *c)
{
	uint32_t *newid = pp_calloc(c, c->nfns + 1, sizeof(*newid));
	struct pp_fn *fns = pp_calloc(c, c->nfns, sizeof(*fns));
	uint32_t n = 0;

	if (!newid || !fns)
		return -ENOMEM;
	for (size_t i = 0; i < c->nlocs; i++)
		for (uint32_t k = 0; k < loc_nfns(c, i); k++) {
			uint32_t old = *loc_fn(c, i, k);
			if (!newid[old]) {
				newid[old] = ++n;
				fns[n - 1] = c->fns[old - 1];
			}
		}
	for (size_t i = 0; i < c->nlocs; i++)	/* each slot once: mark */
		for (uint32_t k = 0; k < loc_nfns(c, i); k++) {
			uint32_t *f = loc_fn(c, i, k);
			if (*f && *f <= c->nfns)
				*f = newid[*f] | 0x80000000u;
		}
	for (size_t i = 0; i < c->nlocs; i++)
		for (uint32_t k = 0; k < loc_nfns(c, i); k++)
			*loc_fn(c, i, k) &= ~0x80000000u;
	if (n)
		memcpy(c->fns, fns, (size_t)n * sizeof(*fns));
	c->nfns = n;
	return 0;
}

/* A location's sort key: output mapping id, address, first-use index. */
struct pp_lockey {
	uint64_t map, addr;
	uint32_t idx;
};

static int lockey_cmp(const void *a, const void *b)
{
	const struct pp_lockey *x = a, *y = b;

	if (x->map != y->map)
		return x->map < y->map ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Renumber locations in (mapping, address) order - a mapping's locations
 * then sit together with their addresses ascending, so the location
 * section gzips ~25% smaller than in first-use order - then sort the
 * samples by the new ids. */
int pp_order_locs(struct pp_ctx *c)
{
	struct pp_lockey *ord = pp_calloc(c, c->nlocs, sizeof(*ord));
	uint32_t *newid = pp_calloc(c, c->nlocs + 1, sizeof(*newid));
	uint32_t *locs = pp_calloc(c, c->nlocs, sizeof(*locs));

	if (!ord || !newid || !locs)
		return -ENOMEM;
	for (size_t i = 0; i < c->nlocs; i++) {
		uint64_t k[2];
		loc_key(c, i, k);
		ord[i] = (struct pp_lockey){ .map = k[0], .addr = k[1],
					     .idx = (uint32_t)i };
	}
	qsort(ord, c->nlocs, sizeof(*ord), lockey_cmp);
	for (size_t i = 0; i < c->nlocs; i++) {
		newid[ord[i].idx + 1] = (uint32_t)(i + 1);
		locs[i] = c->locs[ord[i].idx];
	}
	memcpy(c->locs, locs, c->nlocs * sizeof(*locs));
	for (size_t i = 0; i < c->ostack_len; i++)
		c->ostack[i] = newid[c->ostack[i]];
	qsort_r(c->osm, c->nsamples, sizeof(*c->osm), sample_cmp, c);
	return order_fns(c);
}

/* ---- set-up ------------------------------------------------------------ */

int pp_ctx_init(struct pp_ctx *c, const struct profile *p)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	if (strtab_init(&c->st))
		return -ENOMEM;
	c->strmap = pp_calloc(c, p->strs.n, sizeof(*c->strmap));
	c->synfn = pp_calloc(c, p->strs.n, sizeof(*c->synfn));
	c->synloc = pp_calloc(c, p->strs.n, sizeof(*c->synloc));
	c->locmap = pp_calloc(c, p->nlocations, sizeof(*c->locmap));
	c->locs = pp_calloc(c, p->nlocations + 1, sizeof(*c->locs));
	c->fnmap = pp_calloc(c, p->nfunctions, sizeof(*c->fnmap));
	c->mapmap = pp_calloc(c, p->nmappings, sizeof(*c->mapmap));
	c->mapsym0 = pp_calloc(c, p->nmappings, sizeof(*c->mapsym0));
	c->mapunres = pp_calloc(c, p->nmappings, sizeof(*c->mapunres));
	c->mapweight = pp_calloc(c, p->nmappings, sizeof(*c->mapweight));
	c->maplast = pp_calloc(c, p->nmappings, sizeof(*c->maplast));
	c->mapguess = pp_calloc(c, p->nmappings, sizeof(*c->mapguess));
	c->maps = pp_calloc(c, p->nmappings + 1, sizeof(*c->maps));
	c->osm = pp_calloc(c, p->nsamples, sizeof(*c->osm));
	if (!c->osm || pp_index_init(c, &c->lidx, p->nlocations + 1) ||
	    pp_index_init(c, &c->sidx, p->nsamples))
		return -ENOMEM;
	c->kpm = PP_NO_MAP;
	for (uint32_t m = (uint32_t)p->nmappings; m-- > 1;)
		if (p->mappings[m].is_kernel)
			c->kpm = m;
	if (!c->strmap || !c->synfn || !c->synloc || !c->locmap || !c->locs ||
	    !c->fnmap || !c->mapmap || !c->mapsym0 || !c->mapunres || !c->mapweight ||
	    !c->maplast || !c->mapguess || !c->maps)
		return -ENOMEM;
	return 0;
}

void pp_ctx_release(struct pp_ctx *c)
{
	strtab_release(&c->st);
	free(c->fns);
	free(c->tmp);
	free(c->ostack);
	sf_arena_release(&c->ar);
}
