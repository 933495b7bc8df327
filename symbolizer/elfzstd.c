/*
 * elfzstd.c - zstd-compressed debug sections for libelf versions that
 * cannot decompress them.
 *
 * SHF_COMPRESSED sections with ch_type ELFCOMPRESS_ZSTD (gcc -gz=zstd,
 * objcopy --compress-debug-sections=zstd) are only understood by libelf
 * from elfutils 0.189; Debian 12 ships 0.188, whose libdw then silently
 * skips them.  Here the section is decompressed with libzstd and the
 * in-memory section header and data of the (privately mapped) Elf are
 * replaced, which is exactly what elf_compress(scn, 0, 0) does for zlib.
 * Nothing is written back to the file.
 */
#include "elfidx_priv.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* Refuse absurd sizes from a malformed header (cf. CVE-2014-0172). */
#define ZSTD_SECTION_MAX (1ull << 31)

static int inflate_one(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, void **out)
{
	GElf_Chdr ch;
	Elf_Data *raw = elf_rawdata(scn, NULL);
	size_t hdr = gelf_fsize(elf, ELF_T_CHDR, 1, EV_CURRENT);

	if (!raw || !raw->d_buf || raw->d_size < hdr || !gelf_getchdr(scn, &ch) ||
	    ch.ch_type != ELFCOMPRESS_ZSTD || ch.ch_size > ZSTD_SECTION_MAX)
		return -EINVAL;
	void *buf = malloc(ch.ch_size ? ch.ch_size : 1);
	if (!buf)
		return -ENOMEM;
	size_t n = ZSTD_decompress(buf, ch.ch_size, (char *)raw->d_buf + hdr,
				   raw->d_size - hdr);
	if (ZSTD_isError(n) || n != ch.ch_size) {
		free(buf);
		return -EINVAL;
	}
	Elf_Data *d = elf_getdata(scn, NULL);
	sh->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	sh->sh_size = ch.ch_size;
	sh->sh_addralign = ch.ch_addralign;
	if (!d || !gelf_update_shdr(scn, sh)) {
		free(buf);
		return -EINVAL;
	}
	d->d_buf = buf;
	d->d_size = ch.ch_size;
	d->d_type = ELF_T_BYTE;
	d->d_off = 0;
	d->d_align = ch.ch_addralign ? ch.ch_addralign : 1;
	*out = buf;
	return 0;
}

int elfzstd_inflate(Elf *elf, struct elfzstd_bufs *bufs)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Chdr ch;

	while ((scn = elf_nextscn(elf, scn))) {
		void *buf;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_COMPRESSED) || !gelf_getchdr(scn, &ch) ||
		    ch.ch_type != ELFCOMPRESS_ZSTD)
			continue;
		int rc = inflate_one(elf, scn, &sh, &buf);
		if (rc == -ENOMEM)
			return rc;
		if (rc)
			continue;	/* left compressed: libdw skips it */
		if (sf_grow((void **)&bufs->v, &bufs->cap, bufs->n + 1,
			    sizeof(*bufs->v))) {
			free(buf);
			return -ENOMEM;
		}
		bufs->v[bufs->n++] = buf;
	}
	return 0;
}

/*
 * Sections libdw would decompress and check when the Dwarf is opened but
 * the index never reads (location lists are the biggest section of a
 * typical -O2 debug file).  Hiding them (an empty name in the in-memory
 * section header) saves that work on every cold build.
 */
static const char *const unused_debug[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
	".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
	".debug_gnu_pubtypes", ".debug_names", ".debug_frame", ".gdb_index",
	".zdebug_loc", ".zdebug_loclists", ".zdebug_macro", ".zdebug_frame",
};

void elfzstd_hide_unused(Elf *elf)
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

void elfzstd_release(struct elfzstd_bufs *bufs)
{
	for (size_t i = 0; i < bufs->n; i++)
		free(bufs->v[i]);
	free(bufs->v);
	memset(bufs, 0, sizeof(*bufs));
}
