/*
 * dwsrc.c - a file's DWARF source (its own DWARF, else its separate debug
 * file's), opened for the index build (elfindex.c) and for the lazy reads
 * of compile units (dwlazy.c).
 */
#include "elf/elfidx_priv.h"
#include "elf/debuglink.h"
#include "elf/dwsrc.h"
#include "base/libopen.h"

#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* cmd: ELF_C_READ_MMAP_PRIVATE to read a file's tables, ELF_C_READ for a
 * few headers (only those are read, with pread: no mapping of the whole
 * file and no munmap, whose TLB shootdown was most of a snapshot's cost
 * for big libraries). */
Elf *dwsrc_elf_open(int fd, Elf_Cmd cmd)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, cmd, NULL);
	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

Elf_Cmd elf_read_cmd(int fd)
{
	struct stat st;
	if (!fstat(fd, &st) && st.st_uid == 0 &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)))
		return ELF_C_READ_MMAP_PRIVATE;
	return ELF_C_READ;
}

bool dwsrc_has_dwarf(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info")))
			return true;
	}
	return false;
}

/* The DWARF source for a file: its own DWARF (on a dup of fd, so the
 * source outlives elf), else dbg (taken, with dbgfd). */
int dwsrc_from(int fd, bool own, Elf *dbg, int dbgfd,
	       const struct elfidx_opts *o, const char *path, struct dwsrc *src)
{
	if (own) {
		dbgfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		dbg = dbgfd >= 0 ? dwsrc_elf_open(dbgfd, elf_read_cmd(dbgfd)) : NULL;
		if (!dbg) {
			if (dbgfd >= 0)
				close(dbgfd);
			return -ENOENT;
		}
	}
	return dwarfidx_open(src, dbg, dbgfd, o, path);
}

int dwsrc_open(int fd, const char *path, const char *build_id,
	       const struct elfidx_opts *o, struct dwsrc *src)
{
	struct idx_builder warnb = { 0 };
	idxb_start(&warnb, o, build_id);
	Elf *elf = dwsrc_elf_open(fd, elf_read_cmd(fd)), *dbg = NULL;
	int dbgfd = -1, rc;

	memset(src, 0, sizeof(*src));
	if (!elf)
		return -ENOENT;
	bool own = dwsrc_has_dwarf(elf);
	if (!own)
		dbg = debuglink_open(elf, fd, path, build_id, &warnb, &dbgfd);
	rc = own || dbg ? dwsrc_from(fd, own, dbg, dbgfd, o, path, src) : -ENOENT;
	elf_end(elf);
	return rc;
}

void dwsrc_check_alt(struct idx_builder *b, struct dwsrc *src)
{
	const char *name;
	const void *bid;
	if (!src->dw || dwelf_dwarf_gnu_debugaltlink(src->dw, &name, &bid) <= 0)
		return;
	uint64_t type = sf_libopen_refused_here(false);
	uint64_t bound = sf_libopen_refused_here(true);
	if (dwarf_getalt(src->dw))
		return;
	idxb_warn(b, "DWZ alt file '%s' is not read: %s; the names and types "
		  "it holds are missing", name,
		  sf_libopen_refused_here(false) > type ? "not a regular file" :
		  sf_libopen_refused_here(true) > bound ?
			  "its compressed sections claim past the size bounds" :
			  "not found");
}
