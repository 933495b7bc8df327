/*
 * idxblob.c - the index blob: building it (struct idx_builder), freezing it
 * into flat bytes, and validating flat bytes back into a struct elf_index.
 * See elfidx_priv.h for the layout.
 */
#include "elf/elfidx_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

int idxb_init(struct idx_builder *b)
{
	memset(b, 0, sizeof(*b));
	return strtab_init(&b->strs);
}

void idxb_start(struct idx_builder *b, const struct elfidx_opts *o,
		const char *build_id)
{
	b->demangle = true;
	b->no_lines = o->no_lines;
	if (o->no_lines)
		b->flags |= IDX_NO_LINES;
	b->warn = o->warn;
	b->warn_ctx = o->warn_ctx;
	b->limits = o->limits;
	snprintf(b->build_id, sizeof(b->build_id), "%s", build_id);
}

void idxb_release(struct idx_builder *b)
{
	strtab_release(&b->strs);
	free(b->phdrs);
	free(b->syms);
	free(b->lines);
	free(b->segs);
	free(b->nodes);
	free(b->cus);
	free(b->eager);
	free(b->dm);
	memset(b, 0, sizeof(*b));
}

int64_t idxb_str(struct idx_builder *b, const char *s)
{
	return strtab_intern_cstr(&b->strs, s ? s : "");
}

int idxb_name(struct idx_builder *b, const char *raw, uint32_t *name,
	      uint32_t *sysname)
{
	int64_t sys = idxb_str(b, raw);
	if (sys < 0)
		return -ENOMEM;
	*sysname = *name = (uint32_t)sys;
	if (!b->demangle || !raw || raw[0] != '_')
		return 0;
	if ((size_t)sys < b->dmcap && b->dm[sys]) {
		*name = b->dm[sys] - 1;
		return 0;
	}
	char *dm = demangle_name(raw);
	int64_t id = dm ? idxb_str(b, dm) : sys;
	free(dm);
	if (id < 0)
		return -ENOMEM;
	size_t old = b->dmcap;
	if (sf_grow((void **)&b->dm, &b->dmcap, (size_t)sys + 1, sizeof(*b->dm)))
		return -ENOMEM;
	memset(b->dm + old, 0, (b->dmcap - old) * sizeof(*b->dm));
	b->dm[sys] = (uint32_t)id + 1;
	*name = (uint32_t)id;
	return 0;
}

void idxb_warn(const struct idx_builder *b, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!b->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	b->warn(b->warn_ctx, msg);
}

/* zlib's crc32 takes uInt lengths: feed it in 1 GiB pieces. */
static uLong crc_feed(uLong crc, const unsigned char *p, size_t n)
{
	while (n) {
		size_t k = n > (1u << 30) ? (1u << 30) : n;
		crc = crc32(crc, p, (uInt)k);
		p += k;
		n -= k;
	}
	return crc;
}

uint32_t idx_crc(const unsigned char *blob, size_t len)
{
	size_t at = offsetof(struct idx_hdr, crc), hl = sizeof(struct idx_hdr);
	uLong crc = crc32(0L, Z_NULL, 0);

	if (len < hl)
		return 0;
	crc = crc_feed(crc, blob, at);
	crc = crc_feed(crc, blob + at + sizeof(uint32_t),
		       hl - at - sizeof(uint32_t));
	return (uint32_t)crc_feed(crc, blob + hl, len - hl);
}

static const size_t sect_elsz[IDX_NSECT] = {
	[IDX_PHDRS] = sizeof(struct idx_phdr),
	[IDX_SYMS] = sizeof(struct idx_sym),
	[IDX_STRS] = 1,
	[IDX_LINES] = sizeof(struct idx_line),
	[IDX_SEGS] = sizeof(struct idx_seg),
	[IDX_NODES] = sizeof(struct idx_node),
	[IDX_CUS] = sizeof(struct idx_cu),
	[IDX_EAGER] = sizeof(uint64_t),
};

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* Byte offset of every interned string in the STRS section. */
static uint32_t *strs_offsets(const struct strtab *t, size_t *total)
{
	uint32_t *off = malloc((t->n ? t->n : 1) * sizeof(*off));
	size_t pos = 0;

	if (!off)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		off[i] = (uint32_t)pos;
		pos += t->lens[i] + 1;
	}
	*total = pos;
	return off;
}

static void freeze_copy(struct idx_builder *b, unsigned char *blob,
			const struct idx_hdr *h, const uint32_t *so)
{
	struct idx_sym *sy = (void *)(blob + h->sect_off[IDX_SYMS]);
	struct idx_line *li = (void *)(blob + h->sect_off[IDX_LINES]);
	struct idx_node *no = (void *)(blob + h->sect_off[IDX_NODES]);
	char *st = (char *)blob + h->sect_off[IDX_STRS];

	if (b->nphdrs)
		memcpy(blob + h->sect_off[IDX_PHDRS], b->phdrs,
		       b->nphdrs * sizeof(*b->phdrs));
	struct idx_seg *sg = (void *)(blob + h->sect_off[IDX_SEGS]);
	for (size_t i = 0; i < b->nsegs; i++)
		sg[i] = (struct idx_seg){
			.lo = (uint32_t)(b->segs[i].lo - h->addr_base),
			.node = b->segs[i].node,
		};
	for (size_t i = 0; i < b->nsyms; i++) {
		sy[i] = b->syms[i];
		sy[i].name = so[sy[i].name];
		sy[i].sysname = so[sy[i].sysname];
	}
	for (size_t i = 0; i < b->nlines; i++)
		li[i] = (struct idx_line){
			.addr = (uint32_t)(b->lines[i].addr - h->addr_base),
			.file = so[b->lines[i].file],
			.line = b->lines[i].line,
			.disc = b->lines[i].disc,
		};
	for (size_t i = 0; i < b->nnodes; i++) {
		no[i] = b->nodes[i];
		no[i].name = so[no[i].name];
		no[i].sysname = so[no[i].sysname];
		no[i].call_file = so[no[i].call_file];
	}
	for (size_t i = 0; i < b->strs.n; i++)
		memcpy(st + so[i], b->strs.strs[i], b->strs.lens[i] + 1);
	if (b->ncus)
		memcpy(blob + h->sect_off[IDX_CUS], b->cus,
		       b->ncus * sizeof(*b->cus));
	if (b->neager)
		memcpy(blob + h->sect_off[IDX_EAGER], b->eager,
		       b->neager * sizeof(*b->eager));
}

/* Lowest loaded address: LINES and SEGS are stored relative to it. */
static uint64_t addr_base(const struct idx_builder *b)
{
	uint64_t base = UINT64_MAX;

	for (size_t i = 0; i < b->nphdrs; i++)
		if (b->phdrs[i].vaddr < base)
			base = b->phdrs[i].vaddr;
	if (b->nlines && b->lines[0].addr < base)
		base = b->lines[0].addr;
	if (b->nsegs && b->segs[0].lo < base)
		base = b->segs[0].lo;
	return base == UINT64_MAX ? 0 : base;
}

/* Drop rows and segments that a 32-bit offset from base cannot hold. */
static void clip_to_base(struct idx_builder *b, uint64_t base)
{
	size_t n = 0;

	for (size_t i = 0; i < b->nlines; i++)
		if (b->lines[i].addr >= base &&
		    b->lines[i].addr - base <= UINT32_MAX)
			b->lines[n++] = b->lines[i];
	b->nlines = n;
	n = 0;
	for (size_t i = 0; i < b->nsegs; i++)
		if (b->segs[i].lo >= base && b->segs[i].lo - base <= UINT32_MAX)
			b->segs[n++] = b->segs[i];
	b->nsegs = n;
}

int idxb_freeze(struct idx_builder *b, const char *key, unsigned char **blob,
		size_t *len)
{
	size_t nstr = 0, pos = align8(sizeof(struct idx_hdr));
	uint32_t *so = strs_offsets(&b->strs, &nstr);
	struct idx_hdr h;

	if (!so)
		return -ENOMEM;
	if (nstr > UINT32_MAX - 1) {
		free(so);
		return -E2BIG;
	}
	memset(&h, 0, sizeof(h));
	h.addr_base = addr_base(b);
	h.built_at = (uint64_t)time(NULL);
	clip_to_base(b, h.addr_base);
	memcpy(h.magic, IDX_MAGIC, 8);
	h.version = IDX_VERSION;
	h.flags = b->flags;
	h.nsect = IDX_NSECT;
	snprintf(h.key, sizeof(h.key), "%s", key);
	snprintf(h.build_id, sizeof(h.build_id), "%s", b->build_id);
	h.sect_count[IDX_PHDRS] = b->nphdrs;
	h.sect_count[IDX_SYMS] = b->nsyms;
	h.sect_count[IDX_STRS] = nstr;
	h.sect_count[IDX_LINES] = b->nlines;
	h.sect_count[IDX_SEGS] = b->nsegs;
	h.sect_count[IDX_NODES] = b->nnodes;
	h.sect_count[IDX_CUS] = b->ncus;
	h.sect_count[IDX_EAGER] = b->neager;
	for (int s = 0; s < IDX_NSECT; s++) {
		h.sect_off[s] = pos;
		pos = align8(pos + h.sect_count[s] * sect_elsz[s]);
	}
	h.total_len = pos;
	unsigned char *out = calloc(1, pos);
	if (!out) {
		free(so);
		return -ENOMEM;
	}
	freeze_copy(b, out, &h, so);
	free(so);
	memcpy(out, &h, sizeof(h));
	((struct idx_hdr *)out)->crc = idx_crc(out, pos);
	*blob = out;
	*len = pos;
	return 0;
}

/* --- validation --- */

static int bad(struct sf_err *err, const char *what)
{
	return sf_err_set(err, EINVAL, "corrupt index: %s", what);
}

static int check_header(const unsigned char *blob, size_t len,
			const char *key, struct sf_err *err)
{
	const struct idx_hdr *h = (const void *)blob;

	if (len < sizeof(*h))
		return bad(err, "shorter than its header");
	if (memcmp(h->magic, IDX_MAGIC, 8))
		return bad(err, "bad magic");
	if (h->version != IDX_VERSION)	/* another stackfold's: no damage */
		return sf_err_set(err, ESTALE, "format version %u, not %u",
				  h->version, IDX_VERSION);
	if (h->total_len != len)
		return bad(err, "length mismatch (truncated?)");
	if (h->nsect != IDX_NSECT || h->key[sizeof(h->key) - 1] ||
	    h->build_id[sizeof(h->build_id) - 1])
		return bad(err, "bad header fields");
	if (key && strcmp(h->key, key))
		return bad(err, "key mismatch");
	if (idx_crc(blob, len) != h->crc)
		return bad(err, "checksum mismatch");
	for (int s = 0; s < IDX_NSECT; s++) {
		uint64_t off = h->sect_off[s], n = h->sect_count[s];
		if (off % 8 || off < sizeof(*h) || off > len ||
		    n > (len - off) / sect_elsz[s])
			return bad(err, "section out of bounds");
	}
	return 0;
}

static bool str_ok(const struct elf_index *x, uint32_t off)
{
	return off < x->nstrs;
}

/* Groups sorted and disjoint; the entries of a group share its range. */
static int check_cus(const struct elf_index *x, struct sf_err *err)
{
	for (size_t i = 0; i < x->ncus; i++) {
		const struct idx_cu *c = &x->cus[i], *p = i ? c - 1 : NULL;
		if (c->lo >= c->hi || c->done > 1 ||
		    (p && (c->lo == p->lo ? c->hi != p->hi : c->lo < p->hi)))
			return bad(err, "unit table");
	}
	return 0;
}

static int check_refs(const struct elf_index *x, struct sf_err *err)
{
	if (!x->nstrs || x->strs[0] || x->strs[x->nstrs - 1])
		return bad(err, "string table");
	for (size_t i = 0; i < x->nsyms; i++) {
		if (!str_ok(x, x->syms[i].name) ||
		    !str_ok(x, x->syms[i].sysname) ||
		    (i && x->syms[i].lo <= x->syms[i - 1].lo))
			return bad(err, "symbol table");
	}
	for (size_t i = 0; i < x->nlines; i++) {
		if (!str_ok(x, x->lines[i].file) ||
		    (i && x->lines[i].addr < x->lines[i - 1].addr))
			return bad(err, "line table");
	}
	for (size_t i = 0; i < x->nnodes; i++) {
		const struct idx_node *n = &x->nodes[i];
		if (!str_ok(x, n->name) || !str_ok(x, n->sysname) ||
		    !str_ok(x, n->call_file) ||
		    (n->parent != IDX_NONE && n->parent >= i))
			return bad(err, "scope table");
	}
	for (size_t i = 0; i < x->nsegs; i++) {
		if ((x->segs[i].node != IDX_NONE &&
		     x->segs[i].node >= x->nnodes) ||
		    (i && x->segs[i].lo <= x->segs[i - 1].lo))
			return bad(err, "range table");
	}
	return check_cus(x, err);
}

void idx_release_blob(struct elf_index *idx)
{
	if (idx->map_base)
		munmap(idx->map_base, idx->map_span);
	else
		free(idx->blob);
	idx->blob = NULL;
	idx->map_base = NULL;
}

int idx_attach(struct elf_index *idx, unsigned char *blob, size_t len,
	       const char *key, struct sf_err *err)
{
	int rc = check_header(blob, len, key, err);
	if (rc)
		return rc;

	const struct idx_hdr *h = (const void *)blob;
	struct elf_index x = *idx;
	x.blob = blob;
	x.len = len;
	x.hdr = h;
	x.phdrs = (const void *)(blob + h->sect_off[IDX_PHDRS]);
	x.syms = (const void *)(blob + h->sect_off[IDX_SYMS]);
	x.strs = (const char *)blob + h->sect_off[IDX_STRS];
	x.lines = (const void *)(blob + h->sect_off[IDX_LINES]);
	x.segs = (const void *)(blob + h->sect_off[IDX_SEGS]);
	x.nodes = (const void *)(blob + h->sect_off[IDX_NODES]);
	x.cus = (const void *)(blob + h->sect_off[IDX_CUS]);
	x.eager = (const void *)(blob + h->sect_off[IDX_EAGER]);
	x.nphdrs = h->sect_count[IDX_PHDRS];
	x.nsyms = h->sect_count[IDX_SYMS];
	x.nstrs = h->sect_count[IDX_STRS];
	x.nlines = h->sect_count[IDX_LINES];
	x.nsegs = h->sect_count[IDX_SEGS];
	x.nnodes = h->sect_count[IDX_NODES];
	x.ncus = h->sect_count[IDX_CUS];
	x.neager = h->sect_count[IDX_EAGER];
	rc = check_refs(&x, err);
	if (rc)
		return rc;
	*idx = x;
	return 0;
}
