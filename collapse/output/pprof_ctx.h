/*
 * pprof_ctx.h - the pprof writer's context (out_pprof.c's pass 1): the
 * output string table, and which mappings, locations, functions and
 * samples the profile's samples use, with their output ids and orders.
 * Private to the writer: out_pprof.c builds the message from it.
 * Everything lives in the context's arena, freed by pp_ctx_release().
 */
#ifndef STACKFOLD_OUTPUT_PPROF_CTX_H
#define STACKFOLD_OUTPUT_PPROF_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/out.h"

#define PP_DEFAULT_HZ 99
#define PP_KERNEL_NAME "[kernel.kallsyms]"
#define PP_NO_MAP UINT32_MAX	/* maps[] entry: the synthetic kernel mapping */
#define PP_KERNEL_START 0xffff800000000000ULL	/* its range when it carries
						 * addresses (resolver.c's) */
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

/* The context of profile p, its arrays sized once (0 or -ENOMEM); then
 * pp_collect() (pass 1: what the samples use, the output samples sorted),
 * pp_order_maps() and pp_order_locs() (the ids written). */
int pp_ctx_init(struct pp_ctx *c, const struct profile *p);
void pp_ctx_release(struct pp_ctx *c);
int pp_collect(struct pp_ctx *c);
void pp_order_maps(struct pp_ctx *c);
int pp_order_locs(struct pp_ctx *c);
/* Zeroed n * size bytes in the context's arena; NULL when out of memory. */
void *pp_calloc(struct pp_ctx *c, size_t n, size_t size);
/* Open-addressing set of entries ids (0 or -ENOMEM). */
int pp_index_init(struct pp_ctx *c, struct pp_index *x, size_t entries);
/* Output string ids (interned, made valid UTF-8): of a C string, of a
 * profile string id; -ENOMEM when out of memory. */
int64_t pp_cstr(struct pp_ctx *c, const char *s);
int64_t pp_pstr(struct pp_ctx *c, uint32_t id);
/* A location known only by its fallback text (one per text). */
bool pp_loc_is_synthetic(const struct pf_location *l);
/* A kernel location without a mapping of its own. */
bool pp_loc_on_kernel_map(const struct pf_location *l);
/* The address a location is written with (0: none). */
uint64_t pp_loc_address(const struct pf_location *l);
/* A sample's comm label: profile string id. */
uint32_t pp_comm_label(const struct pf_sample *s);

#endif
