/*
 * dwsrc.h - the DWARF source of an ELF file: its own DWARF,
 * else its separate debug file's (debuglink.h).
 * Internal to symbolizer/elf/.
 */
#ifndef SF_DWSRC_H
#define SF_DWSRC_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "elf/elfidx_priv.h"

/* Open the DWARF of the ELF file readable through fd (its own,
 * else its separate debug file, looked for as elfidx_open does) into src.
 * fd is not taken.  0, -ENOENT when there is none, -ENOMEM. */
int dwsrc_open(int fd, const char *path, const char *build_id,
	       const struct elfidx_opts *o, struct dwsrc *src);
/* The ELF file on fd, read with cmd (fd not taken; elf_end()
 * it); NULL when it is no ELF file. */
Elf *dwsrc_elf_open(int fd, Elf_Cmd cmd);
/* Has elf DWARF of its own (.debug_info, .zdebug_info)? */
bool dwsrc_has_dwarf(Elf *elf);
/* The DWARF source for a file: its own DWARF (own: on a dup of
 * fd, so the source outlives the caller's Elf), else dbg (taken, with
 * dbgfd).  0, -ENOENT, -ENOMEM. */
int dwsrc_from(int fd, bool own, Elf *dbg, int dbgfd,
	       const struct elfidx_opts *o, const char *path, struct dwsrc *src);
/* Said once: the DWZ alt file (.gnu_debugaltlink) of src's DWARF is
 * missing, or not a regular file (libdw's open of it goes through
 * base/libopen.c, which never waits on a FIFO). */
void dwsrc_check_alt(struct idx_builder *b, struct dwsrc *src);

#endif
