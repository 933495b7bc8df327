/*
 * unwmap.h - what the CFI unwinder (unwinder.h) needs of a session's process
 * snapshots: the mapping holding an address, and the mapped file's bytes.
 *
 * The file pointer is the session's own file entry: stable until
 * sym_session_free(), one per distinct file (dev, inode and build-id), so
 * it keys per-file caches across processes.  Nothing here prints.
 */
#ifndef SF_UNWMAP_H
#define SF_UNWMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer.h"

struct elfidx_opts;

struct sym_unwind_map {
	const void *file;	/* NULL: no file (anonymous, JIT code) */
	uint64_t start, limit;	/* the mapping, [start, limit) */
	uint64_t offset;	/* file offset of start */
	bool vdso;
};

/* The executable mapping of pid's image holding addr.  0; -ESRCH when the
 * image has no snapshot; -ENOENT when no executable mapping holds addr. */
int sym_unwind_map(struct sym_session *s, int pid, uint32_t image,
		   uint64_t addr, struct sym_unwind_map *out);
/* A new descriptor of the file (the caller closes it), or -errno: the
 * file cannot be opened or is not the one mapped (build-id). */
int sym_unwind_file_fd(struct sym_session *s, const void *file);
/* The file's build-id (lowercase hex, session-owned) when known from
 * the file or the saved map, else NULL. */
const char *sym_unwind_file_build_id(const void *file);
/* The session's index cache (its directory, byte cap, warnings), or NULL
 * when it has none. */
const struct elfidx_opts *sym_unwind_cache(struct sym_session *s);
/* The session's bounds on decompression (base/untrusted.h). */
struct sf_limits *sym_unwind_limits(struct sym_session *s);

#endif
