/* profile.c - the in-memory profile; see profile.h. */
#include "model/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Largest sample total: pprof values are int64, and a sum past this is a
 * corrupt count, not a profile (profile_add_sample() gives -EOVERFLOW). */
#define PF_MAX_TOTAL ((uint64_t)INT64_MAX)

/* Open-addressing index of ids (id+0, 0 = empty slot; ids start at 1). */

static uint64_t map_hash(const struct pf_mapping *m)
{
	uint64_t h = sf_hash_u64(m->start ^ sf_hash_u64(m->limit));
	h ^= sf_hash_u64(m->offset + m->filename * 31ULL + m->build_id);
	h ^= sf_hash_u64(m->inode ^ sf_hash_u64(m->dev));
	return h ^ (uint64_t)m->is_kernel;
}

static bool map_eq(const struct pf_mapping *a, const struct pf_mapping *b)
{
	return a->start == b->start && a->limit == b->limit &&
	       a->offset == b->offset && a->filename == b->filename &&
	       a->build_id == b->build_id && a->is_kernel == b->is_kernel &&
	       a->dev == b->dev && a->inode == b->inode;
}

static uint64_t fn_hash(const struct pf_function *f)
{
	return sf_hash_u64(((uint64_t)f->name << 32 | f->system_name) ^
			   sf_hash_u64((uint64_t)f->filename << 32 |
				       f->start_line));
}

static bool fn_eq(const struct pf_function *a, const struct pf_function *b)
{
	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

static uint64_t loc_hash(const struct profile *p, const struct pf_location *l,
			 const struct pf_line *lines)
{
	uint64_t h = sf_hash_u64(l->mapping * 0x9e3779b97f4a7c15ULL ^
				 l->address) ^ l->kind ^ (uint64_t)l->is_return << 8 ^
		     sf_hash_u64(l->unknown_name) ^
		     sf_hash_u64((uint64_t)l->has_offset << 32 | l->offset) ^
		     sf_hash_u64(l->offset_name);
	if (!l->address && !l->mapping)
		h ^= sf_hash_bytes(lines, l->nlines * sizeof(*lines), l->nlines);
	(void)p;
	return h;
}

static bool loc_eq(const struct profile *p, const struct pf_location *a,
		   const struct pf_location *b, const struct pf_line *blines)
{
	if (a->mapping != b->mapping || a->address != b->address ||
	    a->kind != b->kind || a->is_return != b->is_return ||
	    a->unknown_name != b->unknown_name ||
	    a->has_offset != b->has_offset || a->offset != b->offset ||
	    a->offset_name != b->offset_name)
		return false;
	if (a->address || a->mapping)
		return true;
	/* no lines: blines may be NULL, which memcmp must not see */
	return a->nlines == b->nlines &&
	       (!b->nlines || !memcmp(p->lines + a->line_start, blines,
				      b->nlines * sizeof(*blines)));
}

static uint64_t sample_hash(const struct pf_sample *s, const uint32_t *locs)
{
	uint64_t h = sf_hash_u64((uint64_t)s->pid << 32 | s->tid);
	h ^= sf_hash_u64((uint64_t)s->comm << 32 | s->thread_name);
	h ^= sf_hash_u64(s->process);
	return h ^ sf_hash_bytes(locs, s->depth * sizeof(*locs), s->depth);
}

static bool sample_eq(const struct profile *p, const struct pf_sample *a,
		      const struct pf_sample *b, const uint32_t *blocs)
{
	return a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->thread_name == b->thread_name && a->process == b->process &&
	       a->depth == b->depth &&
	       (!b->depth || !memcmp(p->stack_ids + a->stack_start, blocs,
				     b->depth * sizeof(*blocs)));
}

static int slots_init(uint32_t **slots, size_t *n)
{
	*n = 1024;
	*slots = calloc(*n, sizeof(**slots));
	return *slots ? 0 : -ENOMEM;
}

int profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	if (strtab_init(&p->strs) || slots_init(&p->fn_slots, &p->fn_nslots) ||
	    slots_init(&p->loc_slots, &p->loc_nslots) ||
	    slots_init(&p->map_slots, &p->map_nslots) ||
	    slots_init(&p->sample_slots, &p->sample_nslots))
		goto fail;
	/* id 0 of each table is a placeholder meaning "none" */
	if (sf_grow((void **)&p->mappings, &p->mappings_cap, 1, sizeof(*p->mappings)) ||
	    sf_grow((void **)&p->functions, &p->functions_cap, 1, sizeof(*p->functions)) ||
	    sf_grow((void **)&p->locations, &p->locations_cap, 1, sizeof(*p->locations)) ||
	    sf_grow((void **)&p->samples, &p->samples_cap, 1, sizeof(*p->samples)) ||
	    /* never NULL, so p->lines + 0 and memcmp on them are defined */
	    sf_grow((void **)&p->lines, &p->lines_cap, 1, sizeof(*p->lines)) ||
	    sf_grow((void **)&p->stack_ids, &p->stack_ids_cap, 1,
		    sizeof(*p->stack_ids)))
		goto fail;
	memset(&p->mappings[0], 0, sizeof(p->mappings[0]));
	memset(&p->functions[0], 0, sizeof(p->functions[0]));
	memset(&p->locations[0], 0, sizeof(p->locations[0]));
	memset(&p->samples[0], 0, sizeof(p->samples[0]));
	p->nmappings = p->nfunctions = p->nlocations = p->nsamples = 1;
	return 0;
fail:
	profile_release(p);
	return -ENOMEM;
}

void profile_release(struct profile *p)
{
	strtab_release(&p->strs);
	free(p->mappings);
	free(p->functions);
	free(p->locations);
	free(p->lines);
	free(p->stack_ids);
	free(p->samples);
	free(p->fn_slots);
	free(p->loc_slots);
	free(p->map_slots);
	free(p->sample_slots);
	memset(p, 0, sizeof(*p));
}

/* Double a slot table when the load passes 1/2; rehash with hashfn. */
typedef uint64_t (*rehash_fn)(const struct profile *p, uint32_t id);

static int slots_maybe_grow(struct profile *p, uint32_t **slots, size_t *nslots,
			    size_t count, rehash_fn fn)
{
	if (count * 2 < *nslots)
		return 0;
	size_t ns = *nslots * 2;
	uint32_t *s = calloc(ns, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < *nslots; i++) {
		uint32_t id = (*slots)[i];
		if (!id)
			continue;
		size_t j = fn(p, id) & (ns - 1);
		while (s[j])
			j = (j + 1) & (ns - 1);
		s[j] = id;
	}
	free(*slots);
	*slots = s;
	*nslots = ns;
	return 0;
}

static uint64_t rh_map(const struct profile *p, uint32_t id)
{
	return map_hash(&p->mappings[id]);
}
static uint64_t rh_fn(const struct profile *p, uint32_t id)
{
	return fn_hash(&p->functions[id]);
}
static uint64_t rh_loc(const struct profile *p, uint32_t id)
{
	const struct pf_location *l = &p->locations[id];
	return loc_hash(p, l, p->lines + l->line_start);
}
static uint64_t rh_sample(const struct profile *p, uint32_t id)
{
	const struct pf_sample *s = &p->samples[id];
	return sample_hash(s, p->stack_ids + s->stack_start);
}

int64_t profile_mapping(struct profile *p, const struct pf_mapping *m)
{
	size_t mask = p->map_nslots - 1, i = map_hash(m) & mask;
	for (; p->map_slots[i]; i = (i + 1) & mask)
		if (map_eq(&p->mappings[p->map_slots[i]], m))
			return p->map_slots[i];
	if (sf_grow((void **)&p->mappings, &p->mappings_cap, p->nmappings + 1,
		    sizeof(*m)))
		return -ENOMEM;
	uint32_t id = (uint32_t)p->nmappings++;
	p->mappings[id] = *m;
	p->map_slots[i] = id;
	if (slots_maybe_grow(p, &p->map_slots, &p->map_nslots, p->nmappings, rh_map))
		return -ENOMEM;
	return id;
}

int64_t profile_function(struct profile *p, const struct pf_function *f)
{
	size_t mask = p->fn_nslots - 1, i = fn_hash(f) & mask;
	for (; p->fn_slots[i]; i = (i + 1) & mask)
		if (fn_eq(&p->functions[p->fn_slots[i]], f))
			return p->fn_slots[i];
	if (sf_grow((void **)&p->functions, &p->functions_cap,
		    p->nfunctions + 1, sizeof(*f)))
		return -ENOMEM;
	uint32_t id = (uint32_t)p->nfunctions++;
	p->functions[id] = *f;
	p->fn_slots[i] = id;
	if (slots_maybe_grow(p, &p->fn_slots, &p->fn_nslots, p->nfunctions, rh_fn))
		return -ENOMEM;
	return id;
}

int64_t profile_location(struct profile *p, const struct pf_location *key,
			 const struct pf_line *lines, uint32_t nlines)
{
	struct pf_location k = *key;
	k.nlines = nlines;
	size_t mask = p->loc_nslots - 1, i = loc_hash(p, &k, lines) & mask;
	for (; p->loc_slots[i]; i = (i + 1) & mask)
		if (loc_eq(p, &p->locations[p->loc_slots[i]], &k, lines))
			return p->loc_slots[i];
	if (sf_grow((void **)&p->locations, &p->locations_cap,
		    p->nlocations + 1, sizeof(k)) ||
	    sf_grow((void **)&p->lines, &p->lines_cap, p->nlines + nlines,
		    sizeof(*lines)))
		return -ENOMEM;
	k.line_start = (uint32_t)p->nlines;
	if (nlines)
		memcpy(p->lines + p->nlines, lines, nlines * sizeof(*lines));
	p->nlines += nlines;
	uint32_t id = (uint32_t)p->nlocations++;
	p->locations[id] = k;
	p->loc_slots[i] = id;
	if (slots_maybe_grow(p, &p->loc_slots, &p->loc_nslots, p->nlocations, rh_loc))
		return -ENOMEM;
	return id;
}

int64_t profile_named_location_at(struct profile *p, const char *name,
				  size_t len, const struct pf_location *key)
{
	int64_t s = strtab_intern(&p->strs, name, len);
	if (s < 0)
		return s;
	struct pf_function f = { .name = (uint32_t)s, .system_name = (uint32_t)s };
	int64_t fid = profile_function(p, &f);
	if (fid < 0)
		return fid;
	struct pf_line line = { .function = (uint32_t)fid };
	return profile_location(p, key, &line, 1);
}

int64_t profile_named_location(struct profile *p, const char *name,
			       size_t len, enum pf_loc_kind kind)
{
	struct pf_location loc = { .kind = (uint8_t)kind };
	return profile_named_location_at(p, name, len, &loc);
}

int64_t profile_add_sample_id(struct profile *p, const struct pf_sample *key,
			      const uint32_t *locs, uint32_t depth,
			      uint64_t count)
{
	struct pf_sample k = *key;	/* its labels; the rest is ours */
	k.stack_start = 0;
	k.depth = depth;
	k.count = count;
	/* Totals stay within pprof's int64 values: refuse, never wrap. */
	if (count > PF_MAX_TOTAL || p->counters.samples > PF_MAX_TOTAL - count)
		return -EOVERFLOW;
	size_t mask = p->sample_nslots - 1, i = sample_hash(&k, locs) & mask;
	for (; p->sample_slots[i]; i = (i + 1) & mask) {
		struct pf_sample *s = &p->samples[p->sample_slots[i]];
		if (sample_eq(p, s, &k, locs)) {
			s->count += count;
			p->counters.samples += count;
			return p->sample_slots[i];
		}
	}
	if (sf_grow((void **)&p->samples, &p->samples_cap, p->nsamples + 1,
		    sizeof(k)) ||
	    sf_grow((void **)&p->stack_ids, &p->stack_ids_cap,
		    p->nstack_ids + depth, sizeof(*locs)))
		return -ENOMEM;
	k.stack_start = (uint32_t)p->nstack_ids;
	if (depth)
		memcpy(p->stack_ids + p->nstack_ids, locs, depth * sizeof(*locs));
	p->nstack_ids += depth;
	uint32_t id = (uint32_t)p->nsamples++;
	p->samples[id] = k;
	p->sample_slots[i] = id;
	p->counters.samples += count;
	if (slots_maybe_grow(p, &p->sample_slots, &p->sample_nslots,
			     p->nsamples, rh_sample))
		return -ENOMEM;
	return id;
}

int profile_add_sample(struct profile *p, uint32_t pid, uint32_t tid,
		       uint32_t comm, uint32_t thread_name,
		       const uint32_t *locs, uint32_t depth, uint64_t count)
{
	struct pf_sample key = { .pid = pid, .tid = tid, .comm = comm,
				 .thread_name = thread_name };
	int64_t id = profile_add_sample_id(p, &key, locs, depth, count);
	return id < 0 ? (int)id : 0;
}

int profile_sample_add_count(struct profile *p, uint32_t id, uint64_t count)
{
	if (id == 0 || id >= p->nsamples)
		return -EINVAL;
	if (count > PF_MAX_TOTAL || p->counters.samples > PF_MAX_TOTAL - count)
		return -EOVERFLOW;
	p->samples[id].count += count;
	p->counters.samples += count;
	return 0;
}
