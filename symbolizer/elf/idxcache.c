/*
 * idxcache.c - see idxcache.h.
 */
#include "elf/idxcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* An entry bigger than this is not ours (or is garbage): don't read it. */
#define IDXCACHE_MAX_ENTRY (4ull << 30)
/* Temp files older than this belong to a writer that died. */
#define IDXCACHE_STALE_TMP_S 3600

static int entry_path(char *buf, size_t size, const char *dir,
		      const char *key)
{
	int n = snprintf(buf, size, "%s/%s.idx", dir, key);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int read_all(int fd, unsigned char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = pread(fd, buf + off, len - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EINVAL;	/* shrank under us */
		off += (size_t)n;
	}
	return 0;
}

/* A buffer for a len-byte entry.  From 2 MiB on (libc with its DWARF: 2.9
 * MB) its whole 2 MiB blocks are given to transparent huge pages: on this
 * kind of VM, mapping 4 KiB pages one by one cost more than reading the
 * file (warm symbolize of 1000 libc addresses: 19 -> 12 ms CPU).  The tail
 * keeps small pages, so RSS does not grow, populated in the same call.
 * *base and *span describe the mapping to unmap, *base NULL for a
 * malloc'd buffer. */
#define IDXCACHE_HUGE (2u << 20)
static unsigned char *blob_alloc(size_t len, void **base, size_t *span)
{
	*base = NULL;
	*span = 0;
	if (len < IDXCACHE_HUGE)
		return malloc(len);
	size_t s = len + IDXCACHE_HUGE;	/* room to align */
	unsigned char *raw = mmap(NULL, s, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	uintptr_t a = ((uintptr_t)raw + IDXCACHE_HUGE - 1) &
		      ~(uintptr_t)(IDXCACHE_HUGE - 1);
	/* advice, fine if refused: huge pages, then every page in one call */
	(void)madvise((void *)a, len & ~(size_t)(IDXCACHE_HUGE - 1),
		      MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
	(void)madvise((void *)a, len, MADV_POPULATE_WRITE);
#endif
	*base = raw;
	*span = s;
	return (unsigned char *)a;
}

int idxcache_load(const char *dir, const char *key, struct elf_index *idx,
		  struct sf_err *err)
{
	char path[PATH_MAX];
	struct stat st;
	int rc = entry_path(path, sizeof(path), dir, key);

	if (rc)
		return sf_err_set(err, -rc, "cache path too long");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT :
		       sf_err_set(err, errno, "cannot open '%s': %s", path,
				  strerror(errno));
	if (fstat(fd, &st)) {
		rc = sf_err_set(err, errno, "cannot stat '%s'", path);
		close(fd);
		return rc;
	}
	if (st.st_size < (off_t)sizeof(struct idx_hdr) ||
	    (uint64_t)st.st_size > IDXCACHE_MAX_ENTRY) {
		close(fd);
		unlink(path);
		return sf_err_set(err, EINVAL, "cache entry '%s': bad size %lld",
				  path, (long long)st.st_size);
	}
	size_t len = (size_t)st.st_size;
	/* Read, not mmap'd: a file truncated under a mapping would SIGBUS. */
	void *base;
	size_t span;
	unsigned char *blob = blob_alloc(len, &base, &span);
	if (!blob) {
		close(fd);
		return sf_err_set(err, ENOMEM, "out of memory reading '%s'",
				  path);
	}
	rc = read_all(fd, blob, len);
	if (!rc) {
		struct sf_err why;
		rc = idx_attach(idx, blob, len, key, &why);
		if (rc == -ESTALE) {	/* rebuilt and replaced, unreported */
			rc = -ENOENT;
		} else if (rc) {
			sf_err_set(err, EINVAL, "cache entry '%s': %s", path,
				   why.msg);
		} else {
			idx->map_base = base;
			idx->map_span = span;
		}
	} else if (rc == -EINVAL) {
		sf_err_set(err, EINVAL, "cache entry '%s': truncated", path);
	} else {
		sf_err_set(err, -rc, "cannot read '%s'", path);
	}
	if (rc == 0)
		futimens(fd, NULL);	/* LRU: mark as used */
	close(fd);
	if (rc) {
		if (base)
			munmap(base, span);
		else
			free(blob);
		if (rc == -EINVAL)
			unlink(path);
	}
	return rc;
}

int idxcache_read(const char *dir, const char *key, unsigned char **out,
		  size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	if (!dir || entry_path(path, sizeof(path), dir, key))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > IDXCACHE_MAX_ENTRY)
		rc = -EINVAL;
	unsigned char *b = rc ? NULL : malloc((size_t)st.st_size);
	if (!rc && !b)
		rc = -ENOMEM;
	if (!rc)
		rc = read_all(fd, b, (size_t)st.st_size);
	if (!rc)
		futimens(fd, NULL);	/* LRU: mark as used */
	close(fd);
	if (rc) {
		free(b);
		return rc;
	}
	*out = b;
	*len = (size_t)st.st_size;
	return 0;
}

void idxcache_drop(const char *dir, const char *key)
{
	char path[PATH_MAX];
	if (dir && !entry_path(path, sizeof(path), dir, key))
		unlink(path);
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

struct centry {
	char name[NAME_MAX + 1];
	off_t size;
	struct timespec mtime;
};

static int centry_cmp(const void *pa, const void *pb)
{
	const struct centry *a = pa, *b = pb;
	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Is name a cache key (elfindex.c: "b-BUILDID" or "f-DEV-INO-HASH", with
 * "-s", "-n" suffixes) followed by end? */
static bool key_then(const char *name, const char *end)
{
	size_t n = strlen(name), m = strlen(end);
	return n > 2 + m && (!strncmp(name, "b-", 2) || !strncmp(name, "f-", 2)) &&
	       !strcmp(name + n - m, end) &&
	       strspn(name + 2, "0123456789abcdefns-") == n - 2 - m;
}

/* One of ours: an entry KEY.idx, or a temporary .KEY.tmp.XXXXXX (*tmp).
 * Anything else in the directory is left alone, never evicted. */
static bool ours(const char *name, bool *tmp)
{
	const char *t = strstr(name, ".tmp.");
	char key[NAME_MAX + 1];

	*tmp = name[0] == '.' && t && strlen(t) == 11;
	if (!*tmp)
		return key_then(name, ".idx");
	snprintf(key, sizeof(key), "%.*s", (int)(t - name - 1), name + 1);
	return key_then(key, "");
}

/* Entries of dir (and stale temp files removed on the way). */
static int scan(int dfd, struct centry **out, size_t *nout, uint64_t *total)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t cap = 0;
	time_t now = time(NULL);

	if (!d) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	*out = NULL;
	*nout = 0;
	*total = 0;
	while ((de = readdir(d))) {
		struct stat st;
		bool tmp;
		if (!ours(de->d_name, &tmp) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (tmp) {
			if (now - st.st_mtime > IDXCACHE_STALE_TMP_S)
				unlinkat(dfd, de->d_name, 0);
			continue;
		}
		if (sf_grow((void **)out, &cap, *nout + 1, sizeof(**out)))
			break;
		struct centry *e = &(*out)[(*nout)++];
		snprintf(e->name, sizeof(e->name), "%s", de->d_name);
		e->size = st.st_size;
		e->mtime = st.st_mtim;
		*total += (uint64_t)st.st_size;
	}
	closedir(d);
	return 0;
}

/* Delete least-recently-used entries (never `keep`) until under max. */
static void evict(const char *dir, const char *keep, uint64_t max)
{
	struct centry *v = NULL;
	size_t n = 0;
	uint64_t total = 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return;
	if (!scan(dfd, &v, &n, &total) && total > max) {
		qsort(v, n, sizeof(*v), centry_cmp);
		for (size_t i = 0; i < n && total > max; i++) {
			if (!strcmp(v[i].name, keep))
				continue;
			if (!unlinkat(dfd, v[i].name, 0))
				total -= (uint64_t)v[i].size;
		}
	}
	free(v);
	close(dfd);
}

int idxcache_store(const char *dir, const char *key,
		   const unsigned char *blob, size_t len, uint64_t max_bytes,
		   struct sf_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int rc = sf_mkdir_p(dir, 0700);	/* the cache is private */

	if (rc)
		return sf_err_set(err, -rc, "cannot create cache dir '%s': %s",
				  dir, strerror(-rc));
	if (entry_path(path, sizeof(path), dir, key) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.XXXXXX", dir, key) >=
		    (int)sizeof(tmp))
		return sf_err_set(err, ENAMETOOLONG, "cache path too long");
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)	/* no temp name in the message: it must repeat */
		return sf_err_set(err, errno, "cannot write in cache dir '%s': %s",
				  dir, strerror(errno));
	/* No fsync: this is a cache.  An entry torn by a crash fails its
	 * length or CRC check and is rebuilt (with one warning); syncing
	 * every entry cost more than a cold run's DWARF reading. */
	rc = write_all(fd, blob, len);
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return sf_err_set(err, -rc, "cannot write cache entry '%s': %s",
				  path, strerror(-rc));
	}
	char name[NAME_MAX + 1];
	snprintf(name, sizeof(name), "%s.idx", key);
	evict(dir, name, max_bytes ? max_bytes : IDXCACHE_DEFAULT_MAX);
	return 0;
}

int idxcache_put(const struct elfidx_opts *o, const char *key,
		 const unsigned char *blob, size_t len)
{
	struct sf_err e = { "" };
	int rc = idxcache_store(o->cache_dir, key, blob, len,
				o->cache_max_bytes, &e);

	if (rc && o->warn) {
		char msg[SF_ERRLEN + 64];
		snprintf(msg, sizeof(msg), "%s; index not cached", e.msg);
		o->warn(o->warn_ctx, msg);
	}
	return rc;
}
