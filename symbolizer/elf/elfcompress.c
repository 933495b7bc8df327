/*
 * elfcompress.c - compressed debug sections, decompressed before libdw sees
 * them.
 *
 * SHF_COMPRESSED sections with ch_type ELFCOMPRESS_ZSTD (gcc -gz=zstd,
 * objcopy --compress-debug-sections=zstd) are only understood by libelf
 * from elfutils 0.189; Debian 12 ships 0.188, whose libdw then silently
 * skips them.  zlib sections libelf does decompress, but one after the
 * other while libdw opens the file: distribution debug files (libc6-dbg)
 * are zlib-compressed, and that was a fifth of a cold build.  So every
 * compressed section is decompressed here (libzstd; zlib's format through
 * libdeflate, below), the biggest on a second thread, and the in-memory
 * section header and data of the privately mapped Elf are replaced, which
 * is what elf_compress(scn, 0, 0) does.  Nothing is written back to the
 * file.  libelf is only called from the calling thread; the worker
 * touches plain buffers.
 *
 * zlib sections go through libdeflate, not zlib: the whole section is in
 * memory and its size is in the header, which is what libdeflate is made
 * for, and it decodes libc6-dbg's 8.5 MB of DWARF in a third of zlib's
 * time here.  A file's sections share one 2 MiB-aligned buffer advised
 * for huge pages when they fill at least half of it: faulting in 4 KiB
 * pages one at a time costs twice as much on this VM, and a buffer per
 * section, each rounded up to 2 MiB, took 10 MiB of fresh memory for
 * libc's 7.7 MiB of big sections (fresh memory is the dearest part of a
 * cold run here, bench/memcost.sh); under 1 MiB in all, 4 KiB pages cost
 * less than a whole huge page (ld.so's debug file).  Every buffer and
 * decoder is allocated on the calling thread before the worker starts, so
 * the worker never calls malloc or free: the first call there makes glibc
 * a new arena, a fresh 64 MiB heap (on huge pages when
 * glibc.malloc.hugetlb=1, as scripts/profile sets) for a few KB of
 * decoder state.
 */
#include "elf/elfidx_priv.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include <zstd.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* Refuse absurd sizes from a malformed header (cf. CVE-2014-0172). */
#define SECTION_MAX (1ull << 31)
/* Below this many compressed bytes a thread is not worth starting. */
#define THREAD_MIN (256u << 10)

struct zjob {
	Elf_Scn *scn;
	const unsigned char *src;
	size_t srclen, dstlen, align;
	unsigned type;
	void *dst;	/* where to decompress (NULL: nowhere) */
	size_t off;	/* dst's offset in the shared buffer, if any */
	bool own;	/* dst is its own malloc'd buffer, not in the shared one */
	int rc;		/* nonzero: dst holds no section */
};

static uint32_t le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* A section may hold several frames (a parallel compressor writes one per
 * block): their content sizes add up to ch_size (at most, when a frame
 * does not say). */
static bool zstd_size_plausible(const unsigned char *p, size_t n,
				uint64_t want)
{
	uint64_t sum = 0;
	bool unknown = false;
	if (!n)
		return false;
	while (n) {
		uint32_t m = n >= 4 ? le32(p) : 0;
		if (m != ZSTD_MAGICNUMBER &&
		    (m & 0xfffffff0u) != ZSTD_MAGIC_SKIPPABLE_START)
			return false;
		size_t fl = ZSTD_findFrameCompressedSize(p, n);
		if (ZSTD_isError(fl) || fl > n)
			return false;
		if (m == ZSTD_MAGICNUMBER) {
			unsigned long long fs = ZSTD_getFrameContentSize(p, fl);
			if (fs == ZSTD_CONTENTSIZE_ERROR)
				return false;
			if (fs == ZSTD_CONTENTSIZE_UNKNOWN)
				unknown = true;
			else if (fs > want - sum)
				return false;
			else
				sum += fs;
		}
		p += fl;
		n -= fl;
	}
	return unknown ? sum <= want : sum == want;
}

/* Does the header's size fit what the payload can expand to?  (zlib
 * expands at most ~1032:1; a zstd frame states its size.)  Keeps a forged
 * ch_size from costing a huge allocation.  zstd must be standard frames:
 * libzstd decodes legacy ones with a malloc'd context of their own, which
 * the worker thread must not make. */
static bool size_plausible(const struct zjob *j)
{
	if (j->type == ELFCOMPRESS_ZLIB)
		return j->dstlen / 1100 <= j->srclen;
	return zstd_size_plausible(j->src, j->srclen, j->dstlen);
}

/* Has job j a buffer to decompress into, and no error so far? */
static bool job_live(const struct zjob *j)
{
	return j->dst && !j->rc;
}

/* One thread's decoders, made on the calling thread. */
struct zdec {
	struct libdeflate_decompressor *zlib;
	ZSTD_DCtx *zstd;
};

static bool zdec_init(struct zdec *d, const struct zjob *v, size_t n,
		      const bool *mine, bool side)
{
	for (size_t i = 0; i < n; i++) {
		if (!job_live(&v[i]) || (mine && mine[i] != side))
			continue;
		if (v[i].type == ELFCOMPRESS_ZSTD && !d->zstd &&
		    !(d->zstd = ZSTD_createDCtx()))
			return false;
		if (v[i].type == ELFCOMPRESS_ZLIB && !d->zlib &&
		    !(d->zlib = libdeflate_alloc_decompressor()))
			return false;
	}
	return true;
}

static void zdec_release(struct zdec *d)
{
	if (d->zlib)
		libdeflate_free_decompressor(d->zlib);
	ZSTD_freeDCtx(d->zstd);
	memset(d, 0, sizeof(*d));
}

/* Decompress into j->dst, which was allocated.  No malloc or free here:
 * either would make glibc an arena for the worker thread. */
static void zjob_run(struct zjob *j, struct zdec *d)
{
	size_t n = 0;
	bool ok;

	if (!job_live(j))
		return;
	if (j->type == ELFCOMPRESS_ZSTD) {
		n = ZSTD_decompressDCtx(d->zstd, j->dst, j->dstlen, j->src, j->srclen);
		ok = !ZSTD_isError(n) && n == j->dstlen;
	} else {
		ok = libdeflate_zlib_decompress(d->zlib, j->src, j->srclen, j->dst,
						j->dstlen, &n) == LIBDEFLATE_SUCCESS &&
		     n == j->dstlen;
	}
	if (!ok)
		j->rc = -EINVAL;
}

struct zbatch {
	struct zjob *v;
	size_t n;
	const bool *mine;	/* NULL: every job */
	bool side;		/* run the jobs with mine[i] == side */
	struct zdec dec;
};

static void *zbatch_run(void *arg)
{
	struct zbatch *b = arg;
	for (size_t i = 0; i < b->n; i++)
		if (!b->mine || b->mine[i] == b->side)
			zjob_run(&b->v[i], &b->dec);
	return NULL;
}

/* Hide a section from libdw (an empty name in the in-memory header):
 * one that is compressed and that we do not decompress, which libdw
 * would decompress to whatever size its header claims. */
static void hide(Elf_Scn *scn)
{
	GElf_Shdr sh;
	if (gelf_getshdr(scn, &sh)) {
		sh.sh_name = 0;
		gelf_update_shdr(scn, &sh);
	}
}

/* The obsolete GNU format (.zdebug_*, "ZLIB" and the size, big-endian),
 * which libdw decompresses: its sizes are added to gnu, or the section
 * hidden when its size is implausible (zlib expands at most ~1032:1). */
struct gnu_sizes {
	uint64_t in, out;
};

static void gnu_size(Elf_Scn *scn, struct gnu_sizes *gnu)
{
	Elf_Data *raw = elf_rawdata(scn, NULL);
	const unsigned char *p = raw ? raw->d_buf : NULL;
	uint64_t size = 0;

	if (!p || raw->d_size < 12 || memcmp(p, "ZLIB", 4)) {
		hide(scn);
		return;
	}
	for (int i = 4; i < 12; i++)
		size = size << 8 | p[i];
	if (size / 1100 > raw->d_size || size > SECTION_MAX) {
		hide(scn);
		return;
	}
	gnu->in += raw->d_size;
	gnu->out += size;
}

/* Collect the compressed sections we can decode (libelf, this thread);
 * hide the other compressed ones, but .zdebug_* (sized into gnu). */
static int collect_jobs(Elf *elf, struct zjob **out, size_t *nout,
			struct gnu_sizes *gnu)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Chdr ch;
	size_t hdr = gelf_fsize(elf, ELF_T_CHDR, 1, EV_CURRENT), cap = 0;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *raw;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || !*name)
			continue;	/* hidden ones have "" */
		if (!strncmp(name, ".zdebug", 7)) {
			gnu_size(scn, gnu);	/* libdw decompresses it */
			continue;
		}
		if (strncmp(name, ".debug_", 7) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;	/* not compressed: libdw reads it */
		if (!gelf_getchdr(scn, &ch) ||
		    (ch.ch_type != ELFCOMPRESS_ZSTD && ch.ch_type != ELFCOMPRESS_ZLIB) ||
		    ch.ch_size > SECTION_MAX || !(raw = elf_rawdata(scn, NULL)) ||
		    !raw->d_buf || raw->d_size < hdr) {
			hide(scn);	/* libdw would inflate it unbounded */
			continue;
		}
		if (sf_grow((void **)out, &cap, *nout + 1, sizeof(**out)))
			return -ENOMEM;
		(*out)[(*nout)++] = (struct zjob){
			.scn = scn, .src = (unsigned char *)raw->d_buf + hdr,
			.srclen = raw->d_size - hdr, .dstlen = ch.ch_size,
			.align = ch.ch_addralign, .type = ch.ch_type,
		};
	}
	return 0;
}

/* Section j's alignment in the shared buffer: 64 bytes, more if its
 * header asks (up to a page). */
static size_t slot_align(const struct zjob *j)
{
	return j->align > 64 && j->align <= 4096 &&
			       !(j->align & (j->align - 1)) ? j->align : 64;
}

/* Is one huge-page buffer for total bytes cheaper than 4 KiB pages?  A
 * fresh huge page costs about what 1 MiB of 4 KiB pages does here
 * (bench/memcost.sh), so when total fills at least half of its whole
 * huge pages.  Never under AddressSanitizer: each section its own malloc,
 * between redzones. */
static bool shared_pays(size_t total)
{
	size_t whole = (total + SF_HUGE_PAGE - 1) & ~(size_t)(SF_HUGE_PAGE - 1);
	return !SF_ASAN && total >= whole / 2;
}

/* Give every plausible job its output buffer: all of them slices of one
 * shared huge-page buffer (*shared, freed by the caller) when that pays,
 * else each its own malloc.  -ENOMEM when an allocation fails. */
static int alloc_dsts(struct zjob *v, size_t n, void **shared)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		size_t a = slot_align(&v[i]);
		if (!size_plausible(&v[i])) {
			v[i].rc = -EINVAL;
			continue;
		}
		v[i].off = (total + a - 1) & ~(a - 1);
		if (v[i].dstlen > SIZE_MAX - SF_HUGE_PAGE - v[i].off)
			return -ENOMEM;	/* 32-bit: forged sizes */
		total = v[i].off + v[i].dstlen;
	}
	unsigned char *p = NULL;
	if (total && shared_pays(total) && !(p = *shared = sf_alloc_huge(total)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (v[i].rc)
			continue;
		if (p) {
			v[i].dst = p + v[i].off;
		} else if (!(v[i].dst = malloc(v[i].dstlen ? v[i].dstlen : 1))) {
			return -ENOMEM;
		} else {
			v[i].own = true;
		}
	}
	return 0;
}

static int zjob_bigger(const void *pa, const void *pb)
{
	const struct zjob *const *a = pa, *const *b = pb;
	return (*a)->srclen < (*b)->srclen ? 1 : (*a)->srclen > (*b)->srclen ? -1 : 0;
}

/* Split the jobs between this thread and a worker (biggest first, each to
 * the less loaded side); NULL to run them all here (not worth a thread,
 * or out of memory). */
static bool *split_jobs(const struct zjob *v, size_t n)
{
	size_t total = 0, live = 0, load[2] = { 0, 0 };

	for (size_t i = 0; i < n; i++)
		if (job_live(&v[i])) {
			live++;
			total += v[i].srclen;
		}
	if (live < 2 || total < THREAD_MIN)
		return NULL;
	bool *mine = calloc(n, sizeof(*mine));
	const struct zjob **order = malloc(n * sizeof(*order));
	if (!mine || !order) {
		free(mine);
		free(order);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (job_live(&v[i]))
			order[k++] = &v[i];
	qsort(order, live, sizeof(*order), zjob_bigger);
	for (k = 0; k < live; k++) {
		bool w = load[1] < load[0];
		load[w] += order[k]->srclen;
		mine[order[k] - v] = w;
	}
	free(order);
	return mine;
}

/* Run the jobs, on a worker too when worth it.  -ENOMEM when a decoder
 * could not be made. */
static int run_jobs(struct zjob *v, size_t n)
{
	bool *mine = split_jobs(v, n);
	struct zbatch wb = { v, n, mine, true, { 0 } };
	struct zbatch mb = { v, n, mine, false, { 0 } };
	pthread_t t;
	int rc = 0;

	if (mine && zdec_init(&wb.dec, v, n, mine, true) &&
	    zdec_init(&mb.dec, v, n, mine, false) &&
	    pthread_create(&t, NULL, zbatch_run, &wb) == 0) {
		zbatch_run(&mb);
		pthread_join(t, NULL);
	} else {
		mb.mine = NULL;	/* all here: add the decoders this side lacks */
		if (zdec_init(&mb.dec, v, n, NULL, false))
			zbatch_run(&mb);
		else
			rc = -ENOMEM;
	}
	zdec_release(&wb.dec);
	zdec_release(&mb.dec);
	free(mine);
	return rc;
}

/* Put decompressed bytes in place of the section's data (this thread). */
static bool install(struct zjob *j)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(j->scn, &sh) || !(d = elf_getdata(j->scn, NULL)))
		return false;
	sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	sh.sh_size = j->dstlen;
	sh.sh_addralign = j->align;
	if (!gelf_update_shdr(j->scn, &sh))
		return false;
	d->d_buf = j->dst;
	d->d_size = j->dstlen;
	d->d_type = ELF_T_BYTE;
	d->d_off = 0;
	d->d_align = j->align ? j->align : 1;
	return true;
}

/* Room in bufs for every buffer the jobs may keep (their own ones and
 * the shared one), made before decoding so that keeping cannot fail. */
static int reserve_bufs(struct elfcomp_bufs *bufs, const struct zjob *v,
			size_t n)
{
	size_t k = bufs->n + 1;
	for (size_t i = 0; i < n; i++)
		k += v[i].own;
	return sf_grow((void **)&bufs->v, &bufs->cap, k, sizeof(*bufs->v)) ?
		       -ENOMEM : 0;
}

/* Hide every compressed debug section of elf. */
static void hide_compressed(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strncmp(name, ".zdebug", 7) ||
		     (!strncmp(name, ".debug_", 7) &&
		      (sh.sh_flags & SHF_COMPRESSED))))
			hide(scn);
}

static void warnf(const struct elfidx_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warnf(const struct elfidx_opts *o, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	if (!o || !o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(o->warn_ctx, msg);
}

/*
 * Size before work: the decompressed bytes the sections claim, against
 * o->limits (base/untrusted.h): at most inflate_ratio times their
 * compressed bytes (plus 1 MiB for small files) and inflate_file_max in
 * all, and what the session holds at once (inflate_held_max).  Past a
 * bound every compressed section is hidden (the file gives no DWARF; its
 * symbols still name frames), counted and said.  Implausible sections
 * (sizes the payload cannot give) are hidden alone.  Within the bounds
 * the bytes are charged to the session until elfcomp_release().
 */
static bool within_bounds(Elf *elf, struct zjob *v, size_t n,
			  const struct gnu_sizes *gnu,
			  struct elfcomp_bufs *bufs,
			  const struct elfidx_opts *o, const char *path)
{
	struct sf_limits *l = o ? o->limits : NULL;
	uint64_t in = gnu->in, out = gnu->out;

	for (size_t i = 0; i < n; i++) {
		if (!size_plausible(&v[i])) {
			v[i].rc = -EINVAL;
			hide(v[i].scn);
			continue;
		}
		in += v[i].srclen;
		out += v[i].dstlen;
	}
	bool ok = out <= sf_inflate_bound(l, in);
	if (ok && sf_limits_take(l, out)) {
		bufs->limits = l;
		bufs->charged += out;
		return true;
	}
	hide_compressed(elf);
	sf_limits_count(l, SF_REFUSED_BOUND);
	warnf(o, ok ? "debug sections of '%s' would decompress to %" PRIu64
		      " bytes, past the %" PRIu64 " this run may hold "
		      "(STACKFOLD_INFLATE_MAX): its DWARF is not read"
		    : "debug sections of '%s' claim %" PRIu64 " bytes "
		      "decompressed from %" PRIu64 ": past the bound, its DWARF "
		      "is not read",
	      path ? path : "?", out, ok ? (l ? l->inflate_held_max : 0) : in);
	return false;
}

uint64_t elfidx_bound_libdw(Elf *elf, struct sf_limits *l)
{
	struct zjob *v = NULL;
	size_t n = 0;
	struct gnu_sizes gnu = { 0, 0 };
	struct elfcomp_bufs bufs = { 0 };
	struct elfidx_opts o = { .limits = l };

	if (collect_jobs(elf, &v, &n, &gnu))
		hide_compressed(elf);	/* out of memory: none of them */
	else if (n || gnu.out)
		within_bounds(elf, v, n, &gnu, &bufs, &o, NULL);
	free(v);
	free(bufs.v);
	return bufs.charged;
}

int elfcomp_inflate(Elf *elf, struct elfcomp_bufs *bufs,
		    const struct elfidx_opts *o, const char *path)
{
	struct zjob *v = NULL;
	size_t n = 0;
	void *shared = NULL;
	struct gnu_sizes gnu = { 0, 0 };
	int rc = collect_jobs(elf, &v, &n, &gnu);

	if (!rc && (n || gnu.out) &&
	    !within_bounds(elf, v, n, &gnu, bufs, o, path)) {
		free(v);
		return 0;
	}
	if (!rc)
		rc = alloc_dsts(v, n, &shared);
	if (!rc)
		rc = reserve_bufs(bufs, v, n);
	if (!rc)
		rc = run_jobs(v, n);
	if (shared && rc) {
		free(shared);
		shared = NULL;
	} else if (shared) {	/* kept before any section points into it */
		bufs->v[bufs->n++] = shared;
	}
	for (size_t i = 0; i < n; i++) {
		bool ok = !rc && job_live(&v[i]);
		if (v[i].own && !ok)
			free(v[i].dst);
		else if (v[i].own)
			bufs->v[bufs->n++] = v[i].dst;
		if (ok && install(&v[i]))
			continue;
		hide(v[i].scn);	/* else libdw would inflate it unbounded */
	}
	free(v);
	return rc;
}

/*
 * Sections libdw would decompress and check when the Dwarf is opened but
 * the index never reads (location lists are the biggest section of a
 * typical -O2 debug file).  Hiding them (an empty name in the in-memory
 * section header) saves that work on every cold build.
 */
static const char *const unused_debug[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
	".debug_aranges",	/* units' ranges come from their DIEs */
	".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
	".debug_gnu_pubtypes", ".debug_names", ".debug_frame", ".gdb_index",
	".zdebug_loc", ".zdebug_loclists", ".zdebug_macro", ".zdebug_frame",
};

static bool unused(const char *name, bool no_lines)
{
	for (size_t i = 0; i < sizeof(unused_debug) / sizeof(*unused_debug); i++)
		if (!strcmp(name, unused_debug[i]))
			return true;
	/* .debug_line_str stays: DWARF 5 units' names may be there */
	return no_lines && (!strcmp(name, ".debug_line") ||
			    !strcmp(name, ".zdebug_line"));
}

void elfcomp_hide_unused(Elf *elf, bool no_lines)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    !unused(name, no_lines))
			continue;
		sh.sh_name = 0;
		gelf_update_shdr(scn, &sh);
	}
}

/*
 * libdw reads a DW_FORM_string or a .debug_str/.debug_line_str entry with
 * strlen, trusting the section to end in a NUL: one that does not (a
 * forged file) made it read past the section, into the heap when the file
 * was read into memory (elf_read_cmd) or decompressed.  Such a section is
 * copied with a NUL after its end (its size unchanged).
 */
static const char *const string_sections[] = {
	".debug_info", ".debug_types", ".debug_str", ".debug_line_str",
};

static bool holds_strings(const char *name)
{
	for (size_t i = 0; i < sizeof(string_sections) / sizeof(*string_sections); i++)
		if (!strcmp(name, string_sections[i]))
			return true;
	return false;
}

int elfcomp_terminate(Elf *elf, struct elfcomp_bufs *bufs)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    !holds_strings(name) || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf || !d->d_size ||
		    !((const char *)d->d_buf)[d->d_size - 1])
			continue;
		char *copy = malloc(d->d_size + 1);
		if (!copy || sf_grow((void **)&bufs->v, &bufs->cap, bufs->n + 1,
				     sizeof(*bufs->v))) {
			free(copy);
			return -ENOMEM;
		}
		memcpy(copy, d->d_buf, d->d_size);
		copy[d->d_size] = '\0';
		bufs->v[bufs->n++] = copy;
		d->d_buf = copy;
	}
	return 0;
}

void elfcomp_release(struct elfcomp_bufs *bufs)
{
	sf_limits_give(bufs->limits, bufs->charged);
	for (size_t i = 0; i < bufs->n; i++)
		free(bufs->v[i]);
	free(bufs->v);
	memset(bufs, 0, sizeof(*bufs));
}
