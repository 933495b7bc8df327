/*
 * dwlazy.c - an index's DWARF, read one group of compile units at a time.
 *
 * Building the rows and scopes of every unit of a big debug file was most
 * of a cold run (libc with libc6-dbg: 1,700 units, 0.2 s) when a profile
 * lands in a few dozen of them.  So a cold index holds the symbols and the
 * unit table (struct idx_cu); the first lookup in a group of units builds
 * a small index of just that group (an overlay, same format, answered by
 * the same code), and a flush stores one index of the groups read so far,
 * so the next run reads none of them again.  Overlays stay until the
 * index is freed: results point into them.
 */
#include "elf/elfidx_priv.h"
#include "elf/dwsrc.h"
#include "elf/idxcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct overlay {
	uint64_t lo;			/* the group's start */
	struct elf_index *ix;		/* NULL: could not be read */
	uint64_t *offs;			/* the group's units */
	size_t noffs;
};

struct dwlazy {
	int fd;				/* dup of the ELF file's fd */
	struct stat st;			/* fd's at attach (src_changed) */
	char *path;
	struct elfidx_opts o;
	struct dwsrc src;
	bool src_open, src_failed;
	struct overlay *ov;		/* sorted by lo */
	size_t nov, ovcap;
	struct elf_index *all;		/* every unit and the symbols, once
					 * many groups were read */
	size_t ngroups;
	bool all_tried;
	bool dirty;			/* overlays not yet stored */
	bool dwo_warned;		/* a missing .dwo was reported */
};

/* Past this many groups read one by one, reading every unit at once
 * costs less than going on (a lookup of addresses all over the file). */
#define ALL_AFTER(ngroups) ((ngroups) / 8 > 32 ? (ngroups) / 8 : 32)

/* Does x have units not read yet? */
static bool units_left(const struct elf_index *x)
{
	for (size_t i = 0; i < x->ncus; i++)
		if (!x->cus[i].done)
			return true;
	return false;
}

int dwlazy_attach(struct elf_index *x, int fd, const char *path,
		  const struct elfidx_opts *o, struct dwsrc *src)
{
	if (!units_left(x)) {	/* every unit is in x: nothing to hold */
		if (src)
			dwarfidx_close(src);
		return 0;
	}
	struct dwlazy *z = calloc(1, sizeof(*z));

	if (z) {
		z->path = strdup(path);
		z->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	}
	if (!z || !z->path || z->fd < 0 || fstat(z->fd, &z->st)) {
		if (z && z->fd >= 0)
			close(z->fd);
		if (z)
			free(z->path);
		free(z);
		if (src)
			dwarfidx_close(src);
		return -ENOMEM;
	}
	z->o = *o;
	for (size_t i = 0; i < x->ncus; i++)
		z->ngroups += !i || x->cus[i].lo != x->cus[i - 1].lo;
	if (src && src->dw) {
		z->src = *src;
		z->src_open = true;
		memset(src, 0, sizeof(*src));
	}
	x->lazy = z;
	return 0;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

/* Sort v[0..n) and drop repeats; the new count. */
static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t u = 0;

	if (n)
		qsort(v, n, sizeof(*v), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	return u;
}

/* The group holding vaddr: entries [*first, *last], or false. */
static bool find_group(const struct elf_index *x, uint64_t vaddr,
		       size_t *first, size_t *last)
{
	size_t i = LAST_LE(x->cus, x->ncus, lo, vaddr);

	if (i == SIZE_MAX || vaddr >= x->cus[i].hi)
		return false;
	*last = i;
	*first = *last;
	while (*first && x->cus[*first - 1].lo == x->cus[*last].lo)
		--*first;
	return true;
}

static bool group_done(const struct elf_index *x, size_t first, size_t last)
{
	for (size_t i = first; i <= last; i++)
		if (!x->cus[i].done)
			return false;
	return true;
}

/* Index of the overlay for group start lo, or where it would go. */
static size_t ov_find(const struct dwlazy *z, uint64_t lo, bool *found)
{
	size_t a = 0, b = z->nov;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (z->ov[mid].lo < lo)
			a = mid + 1;
		else
			b = mid;
	}
	*found = a < z->nov && z->ov[a].lo == lo;
	return a;
}

/* The file's DWARF does not match the stored unit table (another copy
 * with the same build-id): read nothing more from it, store nothing. */
static void stale(struct dwlazy *z)
{
	z->src_failed = true;
	z->dirty = false;
	if (z->src_open)
		dwarfidx_close(&z->src);
	z->src_open = false;
}

/* Was the file, or its debug file, rewritten in place since (cp over
 * it)?  Then nothing more is read from it (dwarfidx_changed: a shorter
 * file kills the reader with SIGBUS) and nothing stored; lookups in units
 * not read yet give its symbol-table names.  Said once. */
static bool src_changed(const struct elf_index *x, struct dwlazy *z)
{
	if (!sf_file_changed(z->fd, &z->st) &&
	    !(z->src_open && dwarfidx_changed(&z->src)))
		return false;
	struct idx_builder warnb = { 0 };
	idxb_start(&warnb, &z->o, x->hdr->build_id);
	idxb_warn(&warnb, "'%s' or its debug file was rewritten while in use: no more of its DWARF is read (names from its symbol table)",
		  z->path);
	stale(z);
	return true;
}

static bool open_src(const struct elf_index *x, struct dwlazy *z)
{
	if (z->src_failed || src_changed(x, z))
		return false;
	if (z->src_open)
		return true;
	if (dwsrc_open(z->fd, z->path, x->hdr->build_id, &z->o,
			      &z->src)) {
		z->src_failed = true;
		return false;
	}
	z->src_open = true;
	return true;
}

/* A malloc'd copy of n elements of size bytes at src (n may be 0). */
static void *dup_array(const void *src, size_t n, size_t size)
{
	void *p = malloc(n ? n * size : 1);
	if (p && n)
		memcpy(p, src, n * size);
	return p;
}

static int copy_phdrs(struct idx_builder *b, const struct elf_index *x)
{
	if (!(b->phdrs = dup_array(x->phdrs, x->nphdrs, sizeof(*b->phdrs))))
		return -ENOMEM;
	b->nphdrs = b->phcap = x->nphdrs;
	return 0;
}

/* dwarfidx_collect() of units offs[0..n) into b.  Units read without
 * their .dwo are reported once a file, and what was read is then not
 * stored (a .dwo found later must not be hidden by the entry). */
static int collect_units(struct dwlazy *z, struct idx_builder *b,
			 const uint64_t *offs, size_t n)
{
	b->dwo_warned = z->dwo_warned;
	int rc = dwarfidx_collect(b, &z->src, offs, n);
	if (b->dwo_missing) {
		z->dwo_warned = true;
		z->o.cache_dir = NULL;
	}
	return rc;
}

/* A blob of the units offs[0..n) alone. */
static struct elf_index *build_overlay(const struct elf_index *x,
				       struct dwlazy *z, const uint64_t *offs,
				       size_t n)
{
	struct idx_builder b;
	unsigned char *blob = NULL;
	size_t len = 0;
	struct sf_err err = { "" };
	struct elf_index *ix = calloc(1, sizeof(*ix));

	if (!ix || idxb_init(&b)) {
		free(ix);
		return NULL;
	}
	idxb_start(&b, &z->o, x->hdr->build_id);
	int rc = copy_phdrs(&b, x);
	if (!rc)
		rc = collect_units(z, &b, offs, n);
	if (rc == -ESTALE)
		stale(z);
	if (!rc)
		rc = idxb_freeze(&b, "", &blob, &len);
	idxb_release(&b);
	if (!rc)
		rc = idx_attach(ix, blob, len, NULL, &err);
	if (rc) {
		free(blob);
		free(ix);
		return NULL;
	}
	ix->no_demangle = x->no_demangle;
	return ix;
}

/* Read group [first, last] into a new overlay at position at. */
static struct overlay *add_overlay(const struct elf_index *x,
				   struct dwlazy *z, size_t first,
				   size_t last, size_t at)
{
	size_t n = last - first + 1;
	uint64_t *offs = malloc(n * sizeof(*offs));

	if (!offs || sf_grow((void **)&z->ov, &z->ovcap, z->nov + 1,
			     sizeof(*z->ov))) {
		free(offs);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		offs[i] = x->cus[first + i].off;
	n = sort_unique(offs, n);	/* a unit with two ranges in one group */
	memmove(z->ov + at + 1, z->ov + at, (z->nov - at) * sizeof(*z->ov));
	z->nov++;
	z->ov[at] = (struct overlay){ .lo = x->cus[first].lo, .offs = offs,
				      .noffs = n };
	if (open_src(x, z))
		z->ov[at].ix = build_overlay(x, z, offs, n);
	if (z->ov[at].ix && !z->src_failed)
		z->dirty = true;
	return &z->ov[at];
}

static int build_whole(const struct elf_index *x, struct dwlazy *z,
		       uint64_t *read, size_t nread, unsigned char **blob,
		       size_t *len);

/* Read every unit into z->all (once): a whole index, symbols included,
 * which is also what a flush stores. */
static void read_all(const struct elf_index *x, struct dwlazy *z)
{
	unsigned char *blob = NULL;
	size_t len = 0;
	struct sf_err err = { "" };

	z->all_tried = true;
	if (!open_src(x, z))
		return;
	uint64_t *all = malloc((x->ncus ? x->ncus : 1) * sizeof(*all));
	if (!all)
		return;
	for (size_t i = 0; i < x->ncus; i++)
		all[i] = x->cus[i].off;
	int rc = build_whole(x, z, all, sort_unique(all, x->ncus), &blob, &len);
	if (rc == -ESTALE)
		stale(z);
	if (rc)
		return;
	z->all = calloc(1, sizeof(*z->all));
	if (!z->all || idx_attach(z->all, blob, len, NULL, &err)) {
		free(z->all);
		free(blob);
		z->all = NULL;
		return;
	}
	z->all->no_demangle = x->no_demangle;
	z->dirty = true;
}

const struct elf_index *dwlazy_for(const struct elf_index *x, uint64_t vaddr)
{
	struct dwlazy *z = x->lazy;
	size_t first, last;
	bool found;

	if (z && z->all)
		return z->all;
	if (!z || !find_group(x, vaddr, &first, &last) ||
	    group_done(x, first, last))
		return x;
	if (!z->all_tried &&
	    (z->o.dwarf_whole || z->nov >= ALL_AFTER(z->ngroups)))
		read_all(x, z);
	if (z->all)
		return z->all;
	size_t at = ov_find(z, x->cus[first].lo, &found);
	struct overlay *ov = found ? &z->ov[at] :
				     add_overlay(x, z, first, last, at);
	return ov && ov->ix ? ov->ix : x;
}

/* --- storing what was read --- */

/* Does the cache entry disk describe the same units as x? */
static bool same_units(const struct elf_index *disk, const struct elf_index *x)
{
	if (!(disk->hdr->flags & IDX_DWARF_LAZY) || disk->ncus != x->ncus)
		return false;
	for (size_t i = 0; i < x->ncus; i++)
		if (disk->cus[i].lo != x->cus[i].lo ||
		    disk->cus[i].hi != x->cus[i].hi ||
		    disk->cus[i].off != x->cus[i].off)
			return false;
	return true;
}

/* Units read so far (x's done ones, the overlays', and those of the
 * entry now in the cache, which another run may have grown since x was
 * loaded: what is stored only grows), sorted, unique. */
static uint64_t *units_read(const struct elf_index *x, const struct dwlazy *z,
			    const struct elf_index *disk, size_t *np)
{
	size_t n = 0, cap = x->ncus + (disk ? disk->ncus : 0);
	for (size_t i = 0; i < z->nov; i++)
		cap += z->ov[i].ix ? z->ov[i].noffs : 0;
	uint64_t *v = malloc((cap ? cap : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < x->ncus; i++)
		if (x->cus[i].done || (disk && disk->cus[i].done))
			v[n++] = x->cus[i].off;
	for (size_t i = 0; i < z->nov; i++)
		for (size_t k = 0; z->ov[i].ix && k < z->ov[i].noffs; k++)
			v[n++] = z->ov[i].offs[k];
	*np = sort_unique(v, n);
	return v;
}

static int copy_syms(struct idx_builder *b, const struct elf_index *x)
{
	if (!x->nsyms)
		return 0;
	b->syms = malloc(x->nsyms * sizeof(*b->syms));
	if (!b->syms)
		return -ENOMEM;
	b->symcap = x->nsyms;
	for (size_t i = 0; i < x->nsyms; i++) {
		int64_t n = idxb_str(b, x->strs + x->syms[i].name);
		int64_t sn = idxb_str(b, x->strs + x->syms[i].sysname);
		if (n < 0 || sn < 0)
			return -ENOMEM;
		b->syms[i] = x->syms[i];
		b->syms[i].name = (uint32_t)n;
		b->syms[i].sysname = (uint32_t)sn;
	}
	b->nsyms = x->nsyms;
	return 0;
}

/* x's unit table (done flags set by the caller) and eager units. */
static int copy_units(struct idx_builder *b, const struct elf_index *x)
{
	b->cus = dup_array(x->cus, x->ncus, sizeof(*b->cus));
	b->eager = dup_array(x->eager, x->neager, sizeof(*b->eager));
	if (!b->cus || !b->eager)
		return -ENOMEM;
	b->ncus = b->cucap = x->ncus;
	b->neager = b->eagercap = x->neager;
	return 0;
}

/* Mark b's units in read[] done; append the eager ones to read. */
static int mark_done(struct idx_builder *b, uint64_t **read, size_t *nread)
{
	for (size_t i = 0; i < b->ncus; i++)
		b->cus[i].done = bsearch(&b->cus[i].off, *read, *nread,
					 sizeof(**read), u64_cmp) != NULL;
	uint64_t *v = realloc(*read, (*nread + b->neager + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (b->neager)
		memcpy(v + *nread, b->eager, b->neager * sizeof(*v));
	*read = v;
	*nread += b->neager;
	return 0;
}

/* A whole index under x's key: x's symbols, the units read[0..n)
 * (taken) and the eager ones. */
static int build_whole(const struct elf_index *x, struct dwlazy *z,
		       uint64_t *read, size_t nread, unsigned char **blob,
		       size_t *len)
{
	struct idx_builder b;

	if (idxb_init(&b)) {
		free(read);
		return -ENOMEM;
	}
	idxb_start(&b, &z->o, x->hdr->build_id);
	b.flags = x->hdr->flags;
	int rc = copy_phdrs(&b, x);
	if (!rc)
		rc = copy_syms(&b, x);
	if (!rc)
		rc = copy_units(&b, x);
	if (!rc)
		rc = mark_done(&b, &read, &nread);
	if (!rc)
		rc = collect_units(z, &b, read, nread);
	if (!rc)
		rc = idxb_freeze(&b, x->hdr->key, blob, len);
	idxb_release(&b);
	free(read);
	return rc;
}

/* What was read, into the cache under x's key. */
static int store_union(struct elf_index *x, struct dwlazy *z)
{
	unsigned char *blob = NULL;
	size_t len = 0, nread = 0;
	struct sf_err err = { "" };
	uint64_t *read = NULL;
	int rc = 0;

	if (z->all) {
		blob = z->all->blob;
		len = z->all->len;
	} else {
		struct elf_index disk = { 0 };
		bool have = !idxcache_load(z->o.cache_dir, x->hdr->key, &disk,
					   &err);
		read = units_read(x, z, have && same_units(&disk, x) ? &disk :
								       NULL,
				  &nread);
		if (have)
			idx_release_blob(&disk);
		if (!read)
			return -ENOMEM;
		rc = build_whole(x, z, read, nread, &blob, &len);
	}
	/* (a .dwo missing when the units were read leaves no cache dir) */
	if (!rc && z->o.cache_dir &&
	    idxcache_put(&z->o, x->hdr->key, blob, len))
		dwlazy_uncache(x);
	if (!z->all)
		free(blob);
	return rc;
}

void dwlazy_uncache(struct elf_index *x)
{
	if (x->lazy)
		x->lazy->o.cache_dir = NULL;
}

void dwlazy_flush(struct elf_index *x)
{
	struct dwlazy *z = x->lazy;

	if (!z)
		return;
	if (z->dirty && z->src_open && z->o.cache_dir && !src_changed(x, z))
		store_union(x, z);
	z->dirty = false;
	if (z->src_open)
		dwarfidx_close(&z->src);
	z->src_open = false;
}

void dwlazy_free(struct elf_index *x)
{
	struct dwlazy *z = x->lazy;

	if (!z)
		return;
	dwarfidx_close(&z->src);
	for (size_t i = 0; i < z->nov; i++) {
		if (z->ov[i].ix) {
			idx_release_blob(z->ov[i].ix);
			free(z->ov[i].ix);
		}
		free(z->ov[i].offs);
	}
	free(z->ov);
	if (z->all) {
		idx_release_blob(z->all);
		free(z->all);
	}
	close(z->fd);
	free(z->path);
	free(z);
	x->lazy = NULL;
}
