/*
 * libopen.h - the open(2) that libdw, libelf and libdebuginfod call.
 *
 * Those libraries open some files by name themselves, with a blocking
 * open(2) and no look at what the name is: libdw a split unit's .dwo
 * (DW_AT_dwo_name) and the DWZ alt file (.gnu_debugaltlink, beside the
 * file or by build-id), libdebuginfod the files of its cache.  The names
 * come from a profiled program's data or from a directory a user may
 * own, so a FIFO there would hang root's profiler inside open(2), and a
 * device there would have its driver run; a check of the name before the
 * call cannot close the race with a rename.  None of them takes a
 * descriptor instead (libdw has no call for a split unit's file, and its
 * alt-file search runs before any dwarf_setalt() could be made).
 *
 * So this program defines open() and open64() itself, and the dynamic
 * linker binds those libraries' calls to them: a call made from inside
 * one of them, for reading, goes through sf_open_untrusted() (a regular
 * file or nothing, never blocking), and a file another user may write is
 * handed over as a sealed private copy (libdw maps what it opens: a
 * truncation would be a SIGBUS) and refused when its compressed sections
 * claim more than the index's bounds allow; every other call, and every call of
 * this program's own code, is the plain system call.  Refusals are counted
 * for the summary.  Only open() and open64() are what elfutils 0.188
 * calls (nm -D); t75's FIFO cases fail should a build call another.
 */
#ifndef SF_BASE_LIBOPEN_H
#define SF_BASE_LIBOPEN_H

#include <stdbool.h>
#include <stdint.h>

/* Names those libraries asked for that were not regular files (FIFOs,
 * sockets, devices, directories), refused since the process started. */
uint64_t sf_libopen_refused(void);
/* Files those libraries asked for whose compressed sections claim more
 * than untrusted.h's bounds allow (refused whole, as libdw would inflate
 * them to what they claim). */
uint64_t sf_libopen_refused_bound(void);
/* The refusals of either kind (bound: the second), by the calling thread
 * only (to tell what one call did). */
uint64_t sf_libopen_refused_here(bool bound);

#endif
