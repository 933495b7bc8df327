/*
 * debuglink.h - where a file's separate debug
 * information is (build-id dirs, .gnu_debuglink, debuginfod, MiniDebugInfo).
 * Internal to symbolizer/elf/.
 */
#ifndef SF_DEBUGLINK_H
#define SF_DEBUGLINK_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "elf/elfidx_priv.h"

/* The separate debug file of elf (build-id dirs, then
 * .gnu_debuglink with CRC check, then debuginfod), or NULL.  On success
 * *fdp is its fd: the caller does elf_end() and close().  Warnings go to
 * b's sink; IDX_DINFOD_MISS is set in b->flags when debuginfod was asked
 * and answered "not found".  A debuginfod server that cannot be reached
 * or misses the deadline is reported once per process (to the b of the
 * call that found it so) and not asked again by this process. */
Elf *debuglink_open(Elf *elf, int fd, const char *path, const char *build_id,
		    struct idx_builder *b, int *fdp);
/* Does a build-id debug file for build_id exist now in a
 * debug root?  (A cached index built before libc6-dbg & co. were
 * installed is then rebuilt.) */
bool debuglink_buildid_exists(const char *build_id);
/* Is there a file where elf's .gnu_debuglink points (any
 * place gdb looks; CRC not checked) put there or changed (ctime) at or
 * after since (seconds since the epoch)?  path is elf's. */
bool debuglink_appeared(Elf *elf, const char *path, uint64_t since);
/* The MiniDebugInfo ELF in elf's .gnu_debugdata, into
 * dd->elf (NULL: none, or not read).  Its xz is decoded within
 * b->limits as compressed debug sections are (sf_inflate_bound of the
 * section's size, and the session's budget, held until
 * debugdata_close()); past a bound it is not read, counted and said
 * (path names the file).  0, or -ENOMEM (dd then empty).  Always
 * debugdata_close(dd) after. */
struct debugdata {
	Elf *elf;
	char *buf;		/* the decoded ELF */
	size_t len;
	uint64_t charged;	/* taken from limits */
	struct sf_limits *limits;
};
int debugdata_open(Elf *elf, struct idx_builder *b, const char *path,
		   struct debugdata *dd);
void debugdata_close(struct debugdata *dd);

#endif
