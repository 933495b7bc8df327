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
 * time here.  Big buffers are 2 MiB-aligned and advised for huge pages:
 * faulting in 4 KiB pages one at a time cost as much again on this VM.
 */
#include "elfidx_priv.h"

#include <errno.h>
#include <gelf.h>
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
/* From this many decompressed bytes a buffer gets huge pages. */
#define HUGE_MIN (512u << 10)
/* Below this many compressed bytes a thread is not worth starting. */
#define THREAD_MIN (256u << 10)

struct zjob {
	Elf_Scn *scn;
	const unsigned char *src;
	size_t srclen, dstlen, align;
	unsigned type;
	void *dst;	/* NULL until decompressed */
	int rc;
};

/* Does the header's size fit what the payload can expand to?  (zlib
 * expands at most ~1032:1; a zstd frame states its size.)  Keeps a forged
 * ch_size from costing a huge allocation. */
static bool size_plausible(const struct zjob *j)
{
	if (j->type == ELFCOMPRESS_ZLIB)
		return j->dstlen / 1100 <= j->srclen;
	unsigned long long fs = ZSTD_getFrameContentSize(j->src, j->srclen);
	return fs == ZSTD_CONTENTSIZE_UNKNOWN || fs == j->dstlen;
}

/* A buffer for n bytes, freed with free(). */
static void *section_alloc(size_t n)
{
	return n < HUGE_MIN ? malloc(n ? n : 1) : sf_alloc_huge(n);
}

static bool zlib_decode(struct zjob *j)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	size_t n = 0;
	bool ok = d && libdeflate_zlib_decompress(d, j->src, j->srclen, j->dst,
						  j->dstlen, &n) ==
				   LIBDEFLATE_SUCCESS &&
		  n == j->dstlen;
	if (d)
		libdeflate_free_decompressor(d);
	return ok;
}

static void zjob_run(struct zjob *j)
{
	if (!size_plausible(j)) {
		j->rc = -EINVAL;
		return;
	}
	j->dst = section_alloc(j->dstlen);
	if (!j->dst) {
		j->rc = -ENOMEM;
		return;
	}
	bool ok;
	if (j->type == ELFCOMPRESS_ZSTD) {
		size_t n = ZSTD_decompress(j->dst, j->dstlen, j->src, j->srclen);
		ok = !ZSTD_isError(n) && n == j->dstlen;
	} else {
		ok = zlib_decode(j);
	}
	if (!ok) {
		free(j->dst);
		j->dst = NULL;
		j->rc = -EINVAL;
	}
}

struct zbatch {
	struct zjob *v;
	size_t n;
	bool worker;	/* run the jobs marked for the worker, or the others */
	bool *mine;
};

static void *zbatch_run(void *arg)
{
	struct zbatch *b = arg;
	for (size_t i = 0; i < b->n; i++)
		if (b->mine[i] == b->worker)
			zjob_run(&b->v[i]);
	return NULL;
}

/* Collect the compressed sections we can decode (libelf, this thread). */
static int collect_jobs(Elf *elf, struct zjob **out, size_t *nout)
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
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strncmp(name, ".debug_", 7) ||	/* hidden ones have "" */
		    !(sh.sh_flags & SHF_COMPRESSED) || !gelf_getchdr(scn, &ch) ||
		    (ch.ch_type != ELFCOMPRESS_ZSTD && ch.ch_type != ELFCOMPRESS_ZLIB) ||
		    ch.ch_size > SECTION_MAX || !(raw = elf_rawdata(scn, NULL)) ||
		    !raw->d_buf || raw->d_size < hdr)
			continue;	/* left alone: libdw decides */
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

static int zjob_bigger(const void *pa, const void *pb)
{
	const struct zjob *const *a = pa, *const *b = pb;
	return (*a)->srclen < (*b)->srclen ? 1 : (*a)->srclen > (*b)->srclen ? -1 : 0;
}

/* Split jobs between this thread and a worker (biggest first, each to
 * the less loaded side), or run them all here when that is not worth it. */
static void run_jobs(struct zjob *v, size_t n)
{
	bool *mine = calloc(n ? n : 1, sizeof(*mine));
	struct zjob **order = malloc((n ? n : 1) * sizeof(*order));
	size_t total = 0, load[2] = { 0, 0 };
	pthread_t t;

	for (size_t i = 0; i < n; i++) {
		total += v[i].srclen;
		if (order)
			order[i] = &v[i];
	}
	if (mine && order && n > 1 && total >= THREAD_MIN) {
		qsort(order, n, sizeof(*order), zjob_bigger);
		for (size_t k = 0; k < n; k++) {
			bool w = load[1] < load[0];
			load[w] += order[k]->srclen;
			mine[order[k] - v] = w;
		}
		struct zbatch wb = { v, n, true, mine }, mb = { v, n, false, mine };
		if (pthread_create(&t, NULL, zbatch_run, &wb) == 0) {
			zbatch_run(&mb);
			pthread_join(t, NULL);
			free(order);
			free(mine);
			return;
		}
	}
	for (size_t i = 0; i < n; i++)
		zjob_run(&v[i]);
	free(order);
	free(mine);
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

int elfcomp_inflate(Elf *elf, struct elfcomp_bufs *bufs)
{
	struct zjob *v = NULL;
	size_t n = 0;
	int rc = collect_jobs(elf, &v, &n);

	if (!rc)
		run_jobs(v, n);
	for (size_t i = 0; i < n; i++) {
		if (!rc && v[i].rc == -ENOMEM)
			rc = -ENOMEM;
		if (!v[i].dst)
			continue;	/* undecodable: left compressed */
		/* room for the buffer first: once installed, the section
		 * points into it and it must not be freed */
		if (rc || sf_grow((void **)&bufs->v, &bufs->cap, bufs->n + 1,
				  sizeof(*bufs->v)) ||
		    !install(&v[i])) {
			free(v[i].dst);
			continue;
		}
		bufs->v[bufs->n++] = v[i].dst;
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

void elfcomp_hide_unused(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (size_t i = 0; i < sizeof(unused_debug) / sizeof(*unused_debug); i++) {
			if (strcmp(name, unused_debug[i]))
				continue;
			sh.sh_name = 0;
			gelf_update_shdr(scn, &sh);
			break;
		}
	}
}

void elfcomp_release(struct elfcomp_bufs *bufs)
{
	for (size_t i = 0; i < bufs->n; i++)
		free(bufs->v[i]);
	free(bufs->v);
	memset(bufs, 0, sizeof(*bufs));
}
