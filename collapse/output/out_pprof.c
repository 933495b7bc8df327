/*
 * out_pprof.c - the pprof writer: struct profile -> gzipped profile.proto
 * (perftools.profiles.Profile, schema in collapse/output/profile.proto).
 *
 * Why protobuf-c: the encoding is done by a maintained library generated
 * from the schema (protoc-c), not by hand-rolled varint code, so field
 * numbers, wire types and packing of repeated scalars come from one place
 * and stay right.  zlib does the gzip framing.
 *
 * What is written (pprof's CPU-profile convention):
 *   sample_type = [samples/count, cpu/nanoseconds], period_type =
 *   cpu/nanoseconds, period = 1e9/hz (hz 99 when unknown), value[1] =
 *   count * period; with --countname NAME (the counts are not samples:
 *   bt/offcpu.bt's nanoseconds), sample_type = period_type = [NAME/UNIT],
 *   period 1, value[0] = count (pp_unit()); time_nanos, duration_nanos
 *   from the capture metadata;
 *   one Mapping per mapping that samples use (the executable first), one
 *   Location per location used, one Function per function used; labels
 *   pid, tid (num) and comm (the process's name where its map was saved,
 *   else the thread's), thread_name (str) when known; two comments:
 *   the loss counters and the capture metadata.
 * Ids are dense and depend on the profile only: mappings with the
 * executable first, then by file name, build-id and range; locations in
 * (mapping, address) order; functions in first-use order of those
 * locations; samples sorted by labels then stack root first; strings in
 * first-use order of the message.  So the same profile gives the same
 * bytes; the gzip header carries mtime 0 and a fixed OS byte.  The orders
 * are chosen for size: together they make a 30 s system-wide profile
 * ~16% smaller than first-use order (bench/pprof.sh).
 * Strings that are not valid UTF-8 get each bad byte replaced by U+FFFD:
 * proto3 `string` fields must be UTF-8 or strict readers (protoc, the C++
 * and Python runtimes) refuse the whole profile.
 *
 * Locations (one per unique address, with its mapping and the address as
 * the process saw it, Line entries innermost first when DWARF gives them):
 *  - with an address (pf_location.address != 0): one per profile location,
 *    written with its address, its own mapping and its line chain (none
 *    when unsymbolized: an honest unknown pprof can symbolize later from
 *    the build-id).  Every mapping keeps its range and file offset; a
 *    library in many processes is many mappings, as in /proc/PID/maps
 *    (profile_mapping() already interns mappings equal in file, build-id,
 *    range and offset, so nothing is merged here);
 *  - without an address (folded input, pre-symbolized bpftrace text): one
 *    per (mapping, line chain), address 0;
 *  - known only by its fallback text (synthetic marks, user addresses
 *    whose process had no saved mapping): one per text, a Function named
 *    by it, so the frame is not lost;
 *  - kernel frames with no mapping: the profile's kernel mapping, or a
 *    synthetic "[kernel.kallsyms]" one (range 0/0, or the kernel half of
 *    the address space when its locations carry addresses);
 *  - an empty stack: one "[no stack]" frame, because pprof's readers drop
 *    samples without locations.
 * Mapping flags (has_functions ...) are the symbolizer's; see
 * build_mapping() for the one case the writer sets has_functions itself.
 * Profile samples that become equal (same labels, same output stack) are
 * merged, their counts added.
 */
#include "output/out.h"
#include "output/losses.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/profile.pb-c.h"

#define PP_DEFAULT_HZ 99
#define PP_KERNEL_NAME "[kernel.kallsyms]"
#define PP_NO_MAP UINT32_MAX	/* maps[] entry: the synthetic kernel mapping */
#define PP_KERNEL_START 0xffff800000000000ULL	/* its range when it carries
						 * addresses (resolve.c's) */
/* pprof's readers drop samples without locations (go tool pprof loses
 * them from every total), so an empty stack gets this one frame. */
#define PP_NO_STACK "[no stack]"
#define PP_NO_STACK_LOC 0	/* locs[] entry: the [no stack] location */

/* An output sample: profile samples with the same labels and the same
 * output stack, merged. */
struct pp_sample {
	uint32_t sid;		/* first profile sample (labels) */
	uint32_t off, depth;	/* output location ids in ctx.ostack */
	uint64_t count;
};

/* Open-addressing set of ids (0 = empty slot), sized once. */
struct pp_index {
	uint32_t *slots;
	size_t mask;
};

/* An output function: a profile function, or a synthetic one named by a
 * location's fallback text (fn == 0). */
struct pp_fn {
	uint32_t fn;		/* profile function id, 0 = synthetic */
	uint32_t name;		/* synthetic: profile string id, 0 for
				 * PP_NO_STACK */
};

struct pp_ctx {
	const struct profile *p;
	const char *countname;	/* --countname: counts are not samples; NULL */
	struct sf_arena ar;	/* the arrays below sized once, the message's
				 * arrays, the packed bytes and zlib's state */
	struct strtab st;	/* output string table, "" at 0 */
	uint32_t *strmap;	/* profile string id -> output id (0: none yet) */
	uint32_t *locmap;	/* profile location id -> output id (first-use
				 * ids: stale after order_locs(), as are
				 * synloc, lidx and nostack_loc) */
	uint32_t *fnmap;	/* profile function id -> output id */
	uint32_t *synfn;	/* profile string id -> synthetic output fn id */
	uint32_t *synloc;	/* profile string id -> synthetic location id */
	uint32_t *mapmap;	/* profile mapping id -> output id */
	bool *mapsym0;		/* mapping has written addressless locations
				 * with lines */
	bool *mapunres;		/* mapping has written locations that have
				 * an address and no lines (unnamed) */
	uint64_t *mapweight;	/* profile mapping id -> samples using it */
	uint32_t *maplast;	/* profile mapping id -> last sample counted */
	bool *mapguess;		/* basename matches the sample's comm */
	uint32_t *locs;		/* output location order: profile ids */
	struct pp_fn *fns;	/* output function order */
	uint32_t *maps;		/* output mapping order: profile ids */
	size_t nlocs, nfns, nmaps, nlines, nlabels, nsamples;
	size_t fns_cap;
	struct pp_index lidx;	/* symbolized output locations by line chain */
	struct pp_index sidx;	/* output samples by labels and stack */
	struct pp_sample *osm;	/* output samples, sorted by collect() */
	uint32_t *ostack;	/* their stacks: output location ids */
	size_t ostack_len, ostack_cap;
	uint32_t kpm;		/* profile mapping for kernel locations without
				 * one: the first kernel mapping, or PP_NO_MAP
				 * for a synthetic [kernel.kallsyms] */
	uint32_t kout;		/* its output id, once ordered */
	uint32_t nostack_loc;	/* output id of [no stack], 0: unused */
	uint32_t nostack_fn;
	bool kmap_used;
	bool kmap_has_functions;	/* a location on the kernel's mapping
					 * (synthetic or kpm) has lines */
	bool kmap_addr;		/* a location on the synthetic kernel mapping
				 * carries an address */
	char *tmp;		/* UTF-8 repair buffer */
	size_t tmpcap;
	unsigned fold_flags;	/* -U/-K: the frames every output keeps */
};

/* Zeroed n * size bytes that live as long as the writer's context: one
 * arena (a profile's arrays are written once and freed together; from
 * fresh 4 KiB pages, faulting them in was half of the writer's time). */
static void *pp_calloc(struct pp_ctx *c, size_t n, size_t size)
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

static int64_t pp_cstr(struct pp_ctx *c, const char *s)
{
	return pp_intern(c, s, strlen(s));
}

/* Output index of profile string id, interned on first use. */
static int64_t pp_pstr(struct pp_ctx *c, uint32_t id)
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
static bool loc_is_synthetic(const struct pf_location *l)
{
	return l->nlines == 0 && l->unknown_name &&
	       (l->kind == PF_LOC_MARK ||
		(!l->mapping && (!l->address || l->kind != PF_LOC_KERNEL)));
}

static bool loc_on_kernel_map(const struct pf_location *l)
{
	return l->mapping == 0 && l->kind == PF_LOC_KERNEL &&
	       !loc_is_synthetic(l);
}

static int index_init(struct pp_ctx *c, struct pp_index *x, size_t entries)
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
	return loc_on_kernel_map(l) ? c->kpm : 0;
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
	c->mapmap[m] = 1;	/* seen; real ids assigned by order_maps() */
}

static int use_loc(struct pp_ctx *c, uint32_t id)
{
	const struct profile *p = c->p;
	const struct pf_location *l = &p->locations[id];

	if (c->locmap[id])
		return 0;
	if (loc_is_synthetic(l) && c->synloc[l->unknown_name]) {
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
	else if (loc_on_kernel_map(l) && c->kpm != PP_NO_MAP)
		use_map(c, c->kpm);
	else if (loc_on_kernel_map(l) && !c->kmap_used) {
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
	if (loc_is_synthetic(l)) {
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
static uint32_t comm_label(const struct pf_sample *s)
{
	return s->process ? s->process : s->comm;
}

/* Does the basename of mapping m's file start with the sample's comm (a
 * comm is the executable's name cut to 15 bytes)? */
static bool map_matches_comm(const struct pp_ctx *c, uint32_t m,
			     const struct pf_sample *s)
{
	const struct pf_mapping *pm = &c->p->mappings[m];
	if (!comm_label(s) || !pm->filename || pm->is_kernel)
		return false;
	const char *f = profile_str(c->p, pm->filename);
	const char *b = strrchr(f, '/');
	const char *comm = profile_str(c->p, comm_label(s));
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
	       comm_label(a) == comm_label(b) &&
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
		     sf_hash_u64((uint64_t)comm_label(s) << 32 | s->thread_name);
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
	c->nlabels += !!s->pid + !!s->tid + !!comm_label(s) + !!s->thread_name;
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
	uint64_t kx[4] = { comm_label(sx), sx->pid, sx->tid, sx->thread_name };
	uint64_t ky[4] = { comm_label(sy), sy->pid, sy->tid, sy->thread_name };

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

static int collect(struct pp_ctx *c)
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
static void order_maps(struct pp_ctx *c)
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
static uint64_t loc_address(const struct pf_location *l)
{
	if (loc_is_synthetic(l))
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
			  : loc_on_kernel_map(l) ? c->kout : 0;
	k[1] = loc_address(l);
}

/* Output function id of line k of output location i (0-based). */
static uint32_t *loc_fn(struct pp_ctx *c, size_t i, uint32_t k)
{
	const struct pf_location *l;

	if (c->locs[i] == PP_NO_STACK_LOC)
		return &c->nostack_fn;
	l = &c->p->locations[c->locs[i]];
	if (loc_is_synthetic(l))
		return &c->synfn[l->unknown_name];
	return &c->fnmap[c->p->lines[l->line_start + k].function];
}

static uint32_t loc_nfns(const struct pp_ctx *c, size_t i)
{
	const struct pf_location *l;

	if (c->locs[i] == PP_NO_STACK_LOC)
		return 1;
	l = &c->p->locations[c->locs[i]];
	return loc_is_synthetic(l) ? 1 : l->nlines;
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
static int order_locs(struct pp_ctx *c)
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

/* ---- pass 2: the protobuf-c message ----------------------------------- */

/* Every array the message points into; freed together. */
struct pp_msg {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType vt[3];	/* samples, cpu, period */
	Perftools__Profiles__ValueType *vtp[2];
	Perftools__Profiles__Sample *samples, **samplep;
	uint64_t *locids;
	int64_t *values;
	Perftools__Profiles__Label *labels, **labelp;
	Perftools__Profiles__Location *locs, **locp;
	Perftools__Profiles__Line *lines, **linep;
	Perftools__Profiles__Function *fns, **fnp;
	Perftools__Profiles__Mapping *maps, **mapp;
	int64_t comments[2];
	char **strs;
};

/* The message's arrays, in the context's arena (freed with it). */
static int msg_alloc(struct pp_msg *m, struct pp_ctx *c)
{
	m->samples = pp_calloc(c, c->nsamples, sizeof(*m->samples));
	m->samplep = pp_calloc(c, c->nsamples, sizeof(*m->samplep));
	m->locids = pp_calloc(c, c->ostack_len, sizeof(*m->locids));
	m->values = pp_calloc(c, c->nsamples * 2, sizeof(*m->values));
	m->labels = pp_calloc(c, c->nlabels, sizeof(*m->labels));
	m->labelp = pp_calloc(c, c->nlabels, sizeof(*m->labelp));
	m->locs = pp_calloc(c, c->nlocs, sizeof(*m->locs));
	m->locp = pp_calloc(c, c->nlocs, sizeof(*m->locp));
	m->lines = pp_calloc(c, c->nlines, sizeof(*m->lines));
	m->linep = pp_calloc(c, c->nlines, sizeof(*m->linep));
	m->fns = pp_calloc(c, c->nfns, sizeof(*m->fns));
	m->fnp = pp_calloc(c, c->nfns, sizeof(*m->fnp));
	m->maps = pp_calloc(c, c->nmaps, sizeof(*m->maps));
	m->mapp = pp_calloc(c, c->nmaps, sizeof(*m->mapp));
	if (!m->samples || !m->samplep || !m->locids || !m->values ||
	    !m->labels || !m->labelp || !m->locs || !m->locp || !m->lines ||
	    !m->linep || !m->fns || !m->fnp || !m->maps || !m->mapp)
		return -ENOMEM;
	return 0;
}

static int64_t sat_mul(uint64_t a, uint64_t b)
{
	if (b && a > (uint64_t)INT64_MAX / b)
		return INT64_MAX;
	return (int64_t)(a * b);
}

/* Keys are interned on first use so an unused key costs nothing. */
static int add_label(struct pp_ctx *c, Perftools__Profiles__Label *lb,
		     const char *key, int64_t num, uint32_t pstr)
{
	static const Perftools__Profiles__Label init =
		PERFTOOLS__PROFILES__LABEL__INIT;
	int64_t k = pp_cstr(c, key), s = pstr ? pp_pstr(c, pstr) : 0;

	if (k < 0 || s < 0)
		return -ENOMEM;
	*lb = init;
	lb->key = k;
	lb->str = s;
	lb->num = pstr ? 0 : num;
	return 0;
}

static int build_labels(struct pp_ctx *c, const struct pf_sample *s,
			Perftools__Profiles__Label *lb, size_t *n)
{
	int rc = 0;
	size_t k = 0;

	if (s->pid)
		rc |= add_label(c, &lb[k++], "pid", s->pid, 0);
	if (s->tid)
		rc |= add_label(c, &lb[k++], "tid", s->tid, 0);
	if (comm_label(s))
		rc |= add_label(c, &lb[k++], "comm", 0, comm_label(s));
	if (s->thread_name)
		rc |= add_label(c, &lb[k++], "thread_name", 0, s->thread_name);
	*n = k;
	return rc ? -ENOMEM : 0;
}

static int build_samples(struct pp_ctx *c, struct pp_msg *m, uint64_t period)
{
	static const Perftools__Profiles__Sample init =
		PERFTOOLS__PROFILES__SAMPLE__INIT;
	size_t nl = 0;

	for (size_t ns = 0; ns < c->nsamples; ns++) {
		const struct pp_sample *os = &c->osm[ns];
		const struct pf_sample *s = &c->p->samples[os->sid];
		Perftools__Profiles__Sample *o = &m->samples[ns];
		size_t k;
		*o = init;
		o->n_location_id = os->depth;
		o->location_id = m->locids + os->off;
		for (uint32_t i = 0; i < os->depth; i++)
			m->locids[os->off + i] = c->ostack[os->off + i];
		o->n_value = c->countname ? 1 : 2;
		o->value = m->values + 2 * ns;
		o->value[0] = sat_mul(os->count, 1);
		o->value[1] = sat_mul(os->count, period);
		if (build_labels(c, s, m->labels + nl, &k))
			return -ENOMEM;
		o->n_label = k;
		o->label = m->labelp + nl;
		for (size_t i = 0; i < k; i++, nl++)
			m->labelp[nl] = &m->labels[nl];
		m->samplep[ns] = o;
	}
	m->prof.n_sample = c->nsamples;
	m->prof.sample = m->samplep;
	return 0;
}

static int build_mapping(struct pp_ctx *c, Perftools__Profiles__Mapping *o,
			 uint32_t pm)
{
	static const Perftools__Profiles__Mapping init =
		PERFTOOLS__PROFILES__MAPPING__INIT;
	const struct pf_mapping *m = &c->p->mappings[pm == PP_NO_MAP ? 0 : pm];
	int64_t fname, bid;

	*o = init;
	if (pm == PP_NO_MAP) {
		fname = pp_cstr(c, PP_KERNEL_NAME);
		/* the writer's own lines: the kernel symbols the input named */
		o->has_functions = c->kmap_has_functions;
		if (c->kmap_addr) {	/* the kernel half, as resolve.c */
			o->memory_start = PP_KERNEL_START;
			o->memory_limit = UINT64_MAX;
		}
		bid = 0;
	} else {
		if (!m->filename && m->is_kernel)
			fname = pp_cstr(c, PP_KERNEL_NAME);
		else
			fname = pp_pstr(c, m->filename);
		bid = pp_pstr(c, m->build_id);
		o->memory_start = m->start;
		o->memory_limit = m->limit;
		o->file_offset = m->offset;
		/* The symbolizer's flags.  pprof re-symbolizes a mapping with
		 * none of functions/filenames/line numbers, replacing each
		 * location's lines by a lookup of its address; has_functions
		 * says every location on it has a function, so a mapping
		 * with one the symbolizer could not name (a stripped static
		 * function) says it has none, and a reader with the binary
		 * names it.  A location written with lines but no address
		 * (pre-symbolized input on a mapping) would be looked up at
		 * 0, so such a mapping says it has functions, which its
		 * lines are. */
		o->has_functions = (m->has_functions && !c->mapunres[pm]) ||
				   (c->mapsym0[pm] && !m->has_filenames &&
				    !m->has_line_numbers);
		if (pm == c->kpm)	/* kallsyms may be hidden or unreadable */
			o->has_functions = c->kmap_has_functions;
		/* pprof re-symbolizes only a mapping with none of the three:
		 * one with an unnamed location says it has none (a reader with
		 * the binary looks up every location again, the named ones
		 * too: it keeps a location's lines where its own lookup finds
		 * nothing) */
		bool part = c->mapunres[pm];
		o->has_filenames = m->has_filenames && !part;
		o->has_line_numbers = m->has_line_numbers && !part;
		o->has_inline_frames = m->has_inline_frames && !part;
	}
	if (fname < 0 || bid < 0)
		return -ENOMEM;
	o->filename = fname;
	o->build_id = bid;
	return 0;
}

static int build_mappings(struct pp_ctx *c, struct pp_msg *m)
{
	for (size_t i = 0; i < c->nmaps; i++) {
		if (build_mapping(c, &m->maps[i], c->maps[i]))
			return -ENOMEM;
		m->maps[i].id = i + 1;
		m->mapp[i] = &m->maps[i];
	}
	m->prof.n_mapping = c->nmaps;
	m->prof.mapping = m->mapp;
	return 0;
}

static void add_line(struct pp_msg *m, size_t *nl, uint32_t fn,
		     uint32_t line)
{
	static const Perftools__Profiles__Line init =
		PERFTOOLS__PROFILES__LINE__INIT;

	m->lines[*nl] = init;
	m->lines[*nl].function_id = fn;
	m->lines[*nl].line = line;
	m->linep[*nl] = &m->lines[*nl];
	(*nl)++;
}

static void build_location(struct pp_ctx *c, struct pp_msg *m, size_t i,
			   size_t *nl)
{
	static const Perftools__Profiles__Location init =
		PERFTOOLS__PROFILES__LOCATION__INIT;
	const struct profile *p = c->p;
	Perftools__Profiles__Location *o = &m->locs[i];

	*o = init;
	o->id = i + 1;
	o->line = m->linep + *nl;
	if (c->locs[i] == PP_NO_STACK_LOC) {
		add_line(m, nl, c->nostack_fn, 0);
		o->n_line = 1;
		return;
	}
	const struct pf_location *l = &p->locations[c->locs[i]];
	o->mapping_id = l->mapping ? c->mapmap[l->mapping]
				   : loc_on_kernel_map(l) ? c->kout : 0;
	/* (a return address one past its mapping, after a call to a
	 * noreturn function at the end of the text, is inside it so) */
	o->address = loc_address(l);
	if (loc_is_synthetic(l)) {
		add_line(m, nl, c->synfn[l->unknown_name], 0);
		o->n_line = 1;
		return;
	}
	for (uint32_t k = 0; k < l->nlines; k++) {
		const struct pf_line *pl = &p->lines[l->line_start + k];
		add_line(m, nl, c->fnmap[pl->function], pl->line);
	}
	o->n_line = l->nlines;
}

static void build_locations(struct pp_ctx *c, struct pp_msg *m)
{
	size_t nl = 0;

	for (size_t i = 0; i < c->nlocs; i++) {
		build_location(c, m, i, &nl);
		m->locp[i] = &m->locs[i];
	}
	m->prof.n_location = c->nlocs;
	m->prof.location = m->locp;
}

static int build_function(struct pp_ctx *c, Perftools__Profiles__Function *o,
			  const struct pp_fn *f)
{
	static const Perftools__Profiles__Function init =
		PERFTOOLS__PROFILES__FUNCTION__INIT;
	const struct pf_function *pf = &c->p->functions[f->fn];
	int64_t name, sys = 0, file = 0;

	*o = init;
	if (!f->fn && !f->name) {
		name = pp_cstr(c, PP_NO_STACK);
	} else if (!f->fn) {
		name = pp_pstr(c, f->name);
	} else {
		name = pp_pstr(c, pf->name);
		sys = pp_pstr(c, pf->system_name ? pf->system_name : pf->name);
		file = pp_pstr(c, pf->filename);
		o->start_line = pf->start_line;
	}
	if (!name)	/* an empty frame of folded input, as folded prints it */
		name = pp_cstr(c, "[empty]");
	if (name < 0 || sys < 0 || file < 0)
		return -ENOMEM;
	o->name = name;
	o->system_name = f->fn && sys ? sys : name;
	o->filename = file;
	return 0;
}

static int build_functions(struct pp_ctx *c, struct pp_msg *m)
{
	for (size_t i = 0; i < c->nfns; i++) {
		if (build_function(c, &m->fns[i], &c->fns[i]))
			return -ENOMEM;
		m->fns[i].id = i + 1;
		m->fnp[i] = &m->fns[i];
	}
	m->prof.n_function = c->nfns;
	m->prof.function = m->fnp;
	return 0;
}

/* Append " key=value" for a known profile string. */
static void meta_part(const struct profile *p, char *buf, size_t cap,
		      const char *key, uint32_t id)
{
	size_t n = strlen(buf);
	if (id && n < cap)
		snprintf(buf + n, cap - n, "%s%s=%s", n ? " " : "", key,
			 profile_str(p, id));
}

/* Append " KEY=V" to buf, or " KEY=unknown" when the input could not
 * tell. */
static void loss_counter(char *buf, size_t cap, const char *key, uint64_t v,
			 bool unknown)
{
	size_t n = strlen(buf);
	if (n + 1 >= cap)
		return;
	if (unknown)
		snprintf(buf + n, cap - n, " %s=unknown", key);
	else
		snprintf(buf + n, cap - n, " %s=%llu", key, (unsigned long long)v);
}

/* The same for a counter shown only when there is something to count
 * (rare ones, absent from most profiles). */
static void rare_counter(char *buf, size_t cap, const char *key, uint64_t v)
{
	if (v)
		loss_counter(buf, cap, key, v, false);
}

static int build_comments(struct pp_ctx *c, struct pp_msg *m)
{
	const struct pf_counters *k = &c->p->counters;
	const struct pf_meta *mt = &c->p->meta;
	char buf[4096];
	int64_t id;

	snprintf(buf, sizeof(buf), "%s=%llu", c->countname ? c->countname : "samples",
		 (unsigned long long)k->samples);
	/* every counter, in the table's order; "unknown" where the input
	 * could not tell */
	for (int i = 0; i < LOSS_N; i++) {
		enum loss_id l = (enum loss_id)i;
		if (loss_table[l].rare)
			rare_counter(buf, sizeof(buf), loss_table[l].key,
				     loss_value(k, l));
		else
			loss_counter(buf, sizeof(buf), loss_table[l].key,
				     loss_value(k, l), loss_unknown(k, l));
	}
	if ((id = pp_cstr(c, buf)) < 0)
		return -ENOMEM;
	m->comments[m->prof.n_comment++] = id;
	buf[0] = '\0';
	meta_part(c->p, buf, sizeof(buf), "bpftrace", mt->bpftrace_version);
	meta_part(c->p, buf, sizeof(buf), "kernel", mt->kernel_release);
	meta_part(c->p, buf, sizeof(buf), "host", mt->hostname);
	meta_part(c->p, buf, sizeof(buf), "cmdline", mt->cmdline);
	if (buf[0]) {
		if ((id = pp_cstr(c, buf)) < 0)
			return -ENOMEM;
		m->comments[m->prof.n_comment++] = id;
	}
	m->prof.comment = m->comments;
	return 0;
}

/* pprof's unit for a --countname: readers scale time and memory units
 * ("1.80s"), and show any other as a count. */
static const char *pp_unit(const char *name)
{
	static const char *const units[][2] = {
		{ "ns", "nanoseconds" }, { "nanoseconds", "nanoseconds" },
		{ "us", "microseconds" }, { "microseconds", "microseconds" },
		{ "ms", "milliseconds" }, { "milliseconds", "milliseconds" },
		{ "s", "seconds" }, { "seconds", "seconds" },
		{ "bytes", "bytes" }, { "B", "bytes" },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(name, units[i][0]))
			return units[i][1];
	return "count";
}

/* Counts that are not samples (--countname): one value, in their unit,
 * never count * 1e9/hz (1.8 s off-CPU would read as 5057 hours). */
static int build_header_counts(struct pp_ctx *c, struct pp_msg *m)
{
	static const Perftools__Profiles__ValueType vinit =
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	int64_t type = pp_cstr(c, c->countname);
	int64_t unit = pp_cstr(c, pp_unit(c->countname));

	if (type < 0 || unit < 0)
		return -ENOMEM;
	m->vt[0] = vinit;
	m->vt[0].type = type;
	m->vt[0].unit = unit;
	m->vtp[0] = &m->vt[0];
	m->prof.n_sample_type = 1;
	m->prof.sample_type = m->vtp;
	m->prof.period_type = &m->vt[0];
	m->prof.period = 1;
	m->prof.time_nanos = (int64_t)c->p->meta.time_nanos;
	m->prof.duration_nanos = (int64_t)c->p->meta.duration_nanos;
	return 0;
}

static int build_header(struct pp_ctx *c, struct pp_msg *m, uint64_t period)
{
	static const Perftools__Profiles__ValueType vinit =
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	if (c->countname)
		return build_header_counts(c, m);
	int64_t samples = pp_cstr(c, "samples"), count = pp_cstr(c, "count");
	int64_t cpu = pp_cstr(c, "cpu"), ns = pp_cstr(c, "nanoseconds");

	if (samples < 0 || count < 0 || cpu < 0 || ns < 0)
		return -ENOMEM;
	for (int i = 0; i < 3; i++)
		m->vt[i] = vinit;
	m->vt[0].type = samples;
	m->vt[0].unit = count;
	m->vt[1].type = m->vt[2].type = cpu;
	m->vt[1].unit = m->vt[2].unit = ns;
	m->vtp[0] = &m->vt[0];
	m->vtp[1] = &m->vt[1];
	m->prof.n_sample_type = 2;
	m->prof.sample_type = m->vtp;
	m->prof.period_type = &m->vt[2];
	m->prof.period = (int64_t)period;
	m->prof.time_nanos = (int64_t)c->p->meta.time_nanos;
	m->prof.duration_nanos = (int64_t)c->p->meta.duration_nanos;
	return 0;
}

static int build_msg(struct pp_ctx *c, struct pp_msg *m)
{
	static const Perftools__Profiles__Profile init =
		PERFTOOLS__PROFILES__PROFILE__INIT;
	uint64_t hz = c->p->meta.hz ? c->p->meta.hz : PP_DEFAULT_HZ;
	uint64_t period = 1000000000ULL / hz;

	m->prof = init;
	if (msg_alloc(m, c) || build_header(c, m, period) ||
	    build_samples(c, m, period) || build_mappings(c, m) ||
	    build_functions(c, m) || build_comments(c, m))
		return -ENOMEM;
	build_locations(c, m);
	/* The string table is complete only now. */
	m->strs = pp_calloc(c, c->st.n, sizeof(*m->strs));
	if (!m->strs)
		return -ENOMEM;
	for (size_t i = 0; i < c->st.n; i++)
		m->strs[i] = c->st.strs[i];
	m->prof.n_string_table = c->st.n;
	m->prof.string_table = m->strs;
	return 0;
}

/* ---- output ------------------------------------------------------------ */

static int write_raw(FILE *out, const uint8_t *buf, size_t len,
		     struct sf_err *err)
{
	if (len && fwrite(buf, 1, len, out) != len)
		return sf_err_set(err, EIO, "pprof: write error");
	return 0;
}

/* zlib's state from the arena; freed with it. */
static voidpf zarena_alloc(voidpf ar, uInt n, uInt size)
{
	return sf_arena_zalloc(ar, n, size);
}

static void zarena_free(voidpf ar, voidpf p)
{
	(void)ar;
	(void)p;
}

/* gzip (deflate, windowBits 31) with a fixed header: mtime 0, OS 255.
 * Level 6 (zlib default): level 9 costs twice the CPU for 1% smaller
 * output (bench/pprof.sh). */
static int write_gzip(struct pp_ctx *c, FILE *out, const uint8_t *buf,
		      size_t len, struct sf_err *err)
{
	z_stream zs;
	gz_header hdr;
	unsigned char chunk[65536];
	int zrc, rc = 0;

	memset(&zs, 0, sizeof(zs));
	zs.zalloc = zarena_alloc;
	zs.zfree = zarena_free;
	zs.opaque = &c->ar;
	memset(&hdr, 0, sizeof(hdr));
	hdr.os = 255;
	zrc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8,
			   Z_DEFAULT_STRATEGY);
	if (zrc != Z_OK)
		return sf_err_set(err, ENOMEM, "pprof: deflateInit2: %s",
				  zError(zrc));
	deflateSetHeader(&zs, &hdr);
	zs.next_in = (Bytef *)buf;
	zs.avail_in = (uInt)len;	/* packed size < 4 GiB, checked by caller */
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zrc = deflate(&zs, Z_FINISH);
		if (zrc == Z_STREAM_ERROR) {
			rc = sf_err_set(err, EIO, "pprof: deflate failed");
			break;
		}
		rc = write_raw(out, chunk, sizeof(chunk) - zs.avail_out, err);
	} while (!rc && zrc != Z_STREAM_END);
	deflateEnd(&zs);
	return rc;
}

static int pack_and_write(struct pp_ctx *c, FILE *out, const struct pp_msg *m,
			  bool gzip, struct sf_err *err)
{
	size_t len = perftools__profiles__profile__get_packed_size(&m->prof);
	uint8_t *buf;
	int rc;

	if (len >= UINT32_MAX)
		return sf_err_set(err, EFBIG, "pprof: profile too large (%zu bytes)",
				  len);
	buf = pp_calloc(c, len, 1);
	if (!buf)
		return sf_err_set(err, ENOMEM, "pprof: out of memory");
	perftools__profiles__profile__pack(&m->prof, buf);
	rc = gzip ? write_gzip(c, out, buf, len, err)
		  : write_raw(out, buf, len, err);
	if (!rc && fflush(out))
		rc = sf_err_set(err, EIO, "pprof: write error");
	return rc;
}

/* ---- folded-only input -------------------------------------------------- */

/* A profile of named locations from a fold (root-first frames), for input
 * that came without a profile. */
static int profile_from_fold(struct profile *p, const struct fold *f)
{
	uint32_t *locs = NULL;
	size_t cap = 0;
	int rc = profile_init(p);

	for (size_t i = 0; !rc && i < f->n; i++) {
		const char *s = f->lines[i].stack, *end = s + f->lines[i].len;
		size_t n = 0, len;
		while (!rc && s <= end) {
			const char *e = fold_next_frame(s, end, &len);
			int64_t id = profile_named_location(p, s, len,
							    PF_LOC_USER);
			if (id < 0 || sf_grow((void **)&locs, &cap, n + 1,
					      sizeof(*locs)))
				rc = -ENOMEM;
			else
				locs[n++] = (uint32_t)id;
			s = e + 1;
		}
		for (size_t a = 0; !rc && n && a < n / 2; a++) {
			uint32_t t = locs[a];
			locs[a] = locs[n - 1 - a];
			locs[n - 1 - a] = t;
		}
		if (!rc)
			rc = profile_add_sample(p, 0, 0, 0, 0, locs,
						(uint32_t)n, f->lines[i].count);
	}
	if (!rc)
		p->counters.samples = f->total;
	free(locs);
	return rc;
}

/* ---- entry ---------------------------------------------------------------- */

static int ctx_init(struct pp_ctx *c, const struct profile *p)
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
	if (!c->osm || index_init(c, &c->lidx, p->nlocations + 1) ||
	    index_init(c, &c->sidx, p->nsamples))
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

static void ctx_release(struct pp_ctx *c)
{
	strtab_release(&c->st);
	free(c->fns);
	free(c->tmp);
	free(c->ostack);
	sf_arena_release(&c->ar);
}

static int write_profile(FILE *out, const struct profile *p, bool gzip,
			 const struct out_opts *opts, struct sf_err *err)
{
	unsigned fold_flags = opts ? opts->fold_flags : 0;
	const char *countname = opts ? opts->countname : NULL;
	struct pp_ctx c;
	struct pp_msg m;
	int rc;

	memset(&m, 0, sizeof(m));
	rc = ctx_init(&c, p);
	c.fold_flags = fold_flags & (FOLD_USER_ONLY | FOLD_KERNEL_ONLY);
	c.countname = countname && strcmp(countname, "samples") ? countname
								: NULL;
	if (!rc)
		rc = collect(&c);
	if (!rc) {
		order_maps(&c);
		rc = order_locs(&c);
	}
	if (!rc)
		rc = build_msg(&c, &m);
	if (rc)
		rc = sf_err_set(err, ENOMEM, "pprof: out of memory");
	else
		rc = pack_and_write(&c, out, &m, gzip, err);
	ctx_release(&c);
	return rc;
}

int out_pprof_write(FILE *out, const struct out_input *in,
		    const struct out_opts *opts, struct sf_err *err)
{
	bool gzip = !(opts && opts->pprof_no_gzip);
	struct profile tmp;
	int rc;

	memset(&tmp, 0, sizeof(tmp));
	if (in->prof)
		return write_profile(out, in->prof, gzip, opts, err);
	if (!in->fold)
		return sf_err_set(err, EINVAL, "pprof: no profile to write");
	rc = profile_from_fold(&tmp, in->fold);
	if (in->counters) {	/* what the input told (unparsable lines...) */
		uint64_t n = tmp.counters.samples;
		tmp.counters = *in->counters;
		tmp.counters.samples = n;
	}
	tmp.counters.losses_unknown = true;	/* folded text records none */
	if (rc)
		rc = sf_err_set(err, ENOMEM, "pprof: out of memory");
	else
		rc = write_profile(out, &tmp, gzip, opts, err);
	profile_release(&tmp);
	return rc;
}
