/*
 * idxcache.h - the on-disk cache of index blobs (internal to symbolizer/).
 *
 * One file per key, DIR/KEY.idx, holding exactly the blob of
 * elfidx_priv.h (header with magic, version, length, CRC32 of the body).
 * Writers write DIR/.KEY.tmp.XXXXXX and rename() it, so readers see a
 * whole old entry or a whole new one and concurrent writers are safe (not
 * synced: after a crash a torn entry fails validation and is rebuilt).
 * Readers pread() the file into memory and validate it before use: a
 * file truncated or rewritten by someone else can never fault the reader
 * (an mmap of it could SIGBUS).  Using an entry sets its mtime, and the
 * directory is kept under a byte cap by deleting least-recently-used
 * entries.
 */
#ifndef SF_IDXCACHE_H
#define SF_IDXCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "elf/elfidx_priv.h"

#define IDXCACHE_DEFAULT_MAX (256ull << 20)

/*
 * Load DIR/KEY.idx into idx (which takes ownership of the bytes).
 * Returns 0 on a hit, -ENOENT when there is no entry or it is another
 * format version's (an older or newer stackfold's: rebuilt and replaced
 * without a word), -EINVAL when the entry was corrupt (it is deleted so it
 * gets rebuilt; err says why), other -errno when it could not be read.
 */
int idxcache_load(const char *dir, const char *key, struct elf_index *idx,
		  struct sf_err *err);

/*
 * Read DIR/KEY.idx whole into *out (malloc'd; the caller frees and
 * validates it) and mark it used.  0; -ENOENT when there is none; other
 * -errno (-EINVAL: not a regular file, or a bad size).  For entries that
 * are not index blobs (the unwinder's rows).
 */
int idxcache_read(const char *dir, const char *key, unsigned char **out,
		  size_t *len);
/* Delete DIR/KEY.idx (a corrupt entry, to be rebuilt). */
void idxcache_drop(const char *dir, const char *key);

/*
 * Store blob as DIR/KEY.idx (creating DIR 0700 if missing), then evict
 * least-recently-used entries while the directory holds more than
 * max_bytes (0: IDXCACHE_DEFAULT_MAX).  Returns 0 or -errno with err
 * filled; on failure nothing is left behind.
 */
int idxcache_store(const char *dir, const char *key,
		   const unsigned char *blob, size_t len, uint64_t max_bytes,
		   struct sf_err *err);
/* idxcache_store() into o's cache dir, under o's byte cap.  0, or -errno
 * after reporting the failure through o->warn ("index not cached"). */
int idxcache_put(const struct elfidx_opts *o, const char *key,
		 const unsigned char *blob, size_t len);


#endif
