/*
 * debuglink.c - find an ELF file's separate debug info, the way gdb and
 * libdwfl look for it:
 *   1. ROOT/.build-id/xx/yyyy.debug for each debug root (build-id checked);
 *   2. .gnu_debuglink NAME next to the file, in its .debug/ directory and in
 *      ROOT/<file's dir>/, with the link's CRC32 checked (a mismatch is
 *      reported and the file is not used);
 *   3. debuginfod (libdebuginfod), only when $DEBUGINFOD_URLS is set.
 * Debug roots: the colon-separated $STACKFOLD_DEBUG_DIRS, then
 * /usr/lib/debug.  Also .gnu_debugdata (MiniDebugInfo: an xz-compressed ELF
 * holding a .symtab), decoded with liblzma.
 *
 * libdwfl's dwfl_standard_find_debuginfo does most of 1 and 2, but needs a
 * whole Dwfl session per file and offers no way to report a CRC mismatch,
 * so the search order is written out here (it is short).
 */
#include "elf/elfidx_priv.h"
#include "elf/debuglink.h"
#include "base/safedir.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define DEBUGINFOD_TIMEOUT_S 5
#define SF_STR_(x) #x
#define SF_STR(x) SF_STR_(x)
#define DEBUGDATA_MAX (512u << 20)

static Elf *elf_from_fd(int fd)
{
	Elf *e = elf_begin(fd, elf_read_cmd(fd), NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

static bool same_build_id(Elf *e, const char *hex)
{
	const void *id = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(e, &id);
	static const char dg[] = "0123456789abcdef";

	if (n <= 0 || strlen(hex) != (size_t)n * 2)
		return false;
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = ((const unsigned char *)id)[i];
		if (hex[2 * i] != dg[c >> 4] || hex[2 * i + 1] != dg[c & 15])
			return false;
	}
	return true;
}

/* Open path as ELF; NULL if unusable or it is the file itself.  A name
 * that is not a regular file is never opened for reading (a FIFO would
 * block): counted and said, once a name (the session's warnings are
 * deduplicated by text). */
static Elf *try_open(const char *path, const struct stat *self,
		     struct idx_builder *b, int *fdp, struct stat *st)
{
	int fd = sf_open_untrusted(path, st);

	if (fd == -SF_ENOTREG) {
		sf_limits_count(b->limits, SF_REFUSED_TYPE);
		idxb_warn(b, "debug file '%s' is %s, not a regular file: not read",
			  path, sf_file_kind(st->st_mode));
		return NULL;
	}
	if (fd < 0)
		return NULL;
	if (self && st->st_dev == self->st_dev && st->st_ino == self->st_ino) {
		close(fd);
		return NULL;
	}
	Elf *e = elf_from_fd(fd);
	if (!e) {
		close(fd);
		return NULL;
	}
	*fdp = fd;
	return e;
}

static void drop(Elf *e, int fd)
{
	elf_end(e);
	close(fd);
}

/* Call fn(root) for each debug root until it returns non-NULL. */
static Elf *each_root(Elf *(*fn)(const char *root, void *arg), void *arg)
{
	const char *env = getenv("STACKFOLD_DEBUG_DIRS");
	char buf[PATH_MAX];

	while (env && *env) {
		size_t n = strcspn(env, ":");
		if (n && n < sizeof(buf)) {
			memcpy(buf, env, n);
			buf[n] = '\0';
			Elf *e = fn(buf, arg);
			if (e)
				return e;
		}
		env += n + (env[n] == ':');
	}
	return fn("/usr/lib/debug", arg);
}

struct find {
	const char *build_id;
	const char *name;	/* debuglink name */
	const char *dir;	/* the file's directory */
	uint32_t crc;
	const struct stat *self;
	struct idx_builder *b;
	int fd;
	Elf *(*try_path)(struct find *f, const char *path);
	uint64_t since;		/* debuglink_appeared(): seconds */
};

static Elf *by_build_id(const char *root, void *arg)
{
	struct find *f = arg;
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", root,
		     f->build_id, f->build_id + 2) >= (int)sizeof(p))
		return NULL;
	struct stat st;
	Elf *e = try_open(p, f->self, f->b, &f->fd, &st);
	if (e && !same_build_id(e, f->build_id)) {
		drop(e, f->fd);
		return NULL;
	}
	return e;
}

static int file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	*crc = (uint32_t)c;
	return n < 0 ? -errno : 0;
}

/* A debuglink candidate's CRC costs a read of all of it: one past
 * limits->crc_max, or mostly holes (sparse: no debug file is), is refused
 * before that work. */
static bool crc_affordable(struct find *f, const char *p,
			   const struct stat *st)
{
	uint64_t max = f->b->limits ? f->b->limits->crc_max : 0;
	uint64_t size = (uint64_t)st->st_size;
	bool sparse = size > (1u << 20) &&
		      (uint64_t)st->st_blocks * 512 < size / 2;

	if ((!max || size <= max) && !sparse)
		return true;
	sf_limits_count(f->b->limits, SF_REFUSED_BOUND);
	idxb_warn(f->b, "debuglink '%s' is %s (%" PRIu64 " bytes%s): its CRC is not computed; not used",
		  p, sparse ? "sparse" : "too big to check", size,
		  sparse ? ", mostly holes" : "");
	return false;
}

static Elf *link_candidate(struct find *f, const char *p)
{
	uint32_t crc = 0;
	struct stat st;
	Elf *e = try_open(p, f->self, f->b, &f->fd, &st);

	if (!e)
		return NULL;
	if (!crc_affordable(f, p, &st)) {
		drop(e, f->fd);
		return NULL;
	}
	if (file_crc(f->fd, &crc) || crc != f->crc) {
		idxb_warn(f->b, "debuglink '%s' has a wrong crc (0x%08x, want 0x%08x); not used",
			  p, crc, f->crc);
		drop(e, f->fd);
		return NULL;
	}
	/* The crc is the debug file's own: --add-gnu-debuglink run against
	 * an older build's debug file matches it.  Both with a build-id and
	 * not the same: the old build's DWARF would name other code
	 * (eu-addr2line refuses it too). */
	const void *id = NULL;
	if (*f->build_id && dwelf_elf_gnu_build_id(e, &id) > 0 &&
	    !same_build_id(e, f->build_id)) {
		idxb_warn(f->b, "debuglink '%s' is another build's (build-id differs); not used",
			  p);
		drop(e, f->fd);
		return NULL;
	}
	return e;
}

static Elf *by_link_root(const char *root, void *arg)
{
	struct find *f = arg;
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s%s/%s", root, f->dir, f->name) >=
	    (int)sizeof(p))
		return NULL;
	return f->try_path(f, p);
}

/* f->try_path on each place gdb looks for a .gnu_debuglink name: beside
 * the file, in .debug/ there, under each debug root + the file's (absolute)
 * directory; the first non-NULL answer. */
static Elf *each_link_path(struct find *f)
{
	char p[PATH_MAX];
	Elf *e;

	if (snprintf(p, sizeof(p), "%s/%s", f->dir, f->name) <
		    (int)sizeof(p) &&
	    (e = f->try_path(f, p)))
		return e;
	if (snprintf(p, sizeof(p), "%s/.debug/%s", f->dir, f->name) <
		    (int)sizeof(p) &&
	    (e = f->try_path(f, p)))
		return e;
	return each_root(by_link_root, f);
}

/* path's directory, absolute (a debug root + a relative one is no path),
 * into dir[PATH_MAX]; false when it cannot be had. */
static bool dir_of(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 1;
	char rel[PATH_MAX];

	if (n >= sizeof(rel))
		return false;
	memcpy(rel, slash ? path : ".", n);
	rel[n] = '\0';
	if (rel[0] == '/' || !n) {	/* "/x": the root itself */
		memcpy(dir, rel, n + 1);
		return true;
	}
	return realpath(rel, dir) != NULL;
}

/* .gnu_debuglink contents: name and CRC; false if absent/malformed. */
static bool read_debuglink(Elf *elf, const char **name, uint32_t *crc)
{
	GElf_Word w;
	*name = dwelf_elf_gnu_debuglink(elf, &w);
	*crc = w;
	return *name && **name && !strchr(*name, '/');
}

/*
 * libdebuginfod is loaded with dlopen() the first time it is needed: it
 * pulls in libcurl and its TLS/Kerberos/LDAP dependencies, which would
 * otherwise be loaded (and relocated) by every stackfold run, doubling the
 * start-up time of a warm-cache run, while it is used only when
 * $DEBUGINFOD_URLS is set.
 */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
} dinfod;
static pthread_once_t dinfod_once = PTHREAD_ONCE_INIT;

static void dinfod_load(void)
{
	/* Never dlclose()d: it stays for the process lifetime. */
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return;
	*(void **)&dinfod.end = dlsym(h, "debuginfod_end");
	*(void **)&dinfod.find = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&dinfod.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&dinfod.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&dinfod.get_user_data = dlsym(h, "debuginfod_get_user_data");
	if (dinfod.end && dinfod.find && dinfod.set_progressfn &&
	    dinfod.set_user_data && dinfod.get_user_data)
		*(void **)&dinfod.begin = dlsym(h, "debuginfod_begin");
}

/* Set when the servers could not be reached or timed out, or
 * libdebuginfod cannot be used: the rest of this process does not wait on
 * them again (a "not found" does not set it). */
static bool dinfod_down;

struct dinfod_wait {
	time_t deadline;
	bool aborted;
};

static int dinfod_progress(debuginfod_client *c, long a, long b)
{
	struct dinfod_wait *w = dinfod.get_user_data(c);
	(void)a;
	(void)b;
	if (time(NULL) >= w->deadline)
		w->aborted = true;
	return w->aborted;	/* non-zero aborts the transfer */
}

/* Ask the servers no more in this process; the call that finds them down
 * first says so, with why: once a run, not once a file. */
static void dinfod_failed(const struct find *f, const char *urls,
			  const char *why)
{
	f->b->flags |= IDX_DINFOD_DOWN;
	if (!__atomic_exchange_n(&dinfod_down, true, __ATOMIC_RELAXED))
		idxb_warn(f->b, "debuginfod (DEBUGINFOD_URLS=%s): %s; not asked again in this run",
			  urls, why);
}

/* libdebuginfod's cache directory into dir[size], found as elfutils 0.188
 * finds it: $DEBUGINFOD_CACHE_PATH; else ~/.debuginfod_client_cache if it
 * exists; else $XDG_CACHE_HOME (or ~/.cache) /debuginfod_client. */
static bool dinfod_cache_dir(char *dir, size_t size)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	const char *home = getenv("HOME");
	struct stat st;

	if (!home)
		home = "/";
	if (env && *env)
		return (size_t)snprintf(dir, size, "%s", env) < size;
	if ((size_t)snprintf(dir, size, "%s/.debuginfod_client_cache", home) <
		    size && !stat(dir, &st))
		return true;
	/* libdebuginfod takes a relative $XDG_CACHE_HOME */
	return sf_xdg_cache(dir, size, home, "debuginfod_client", true);
}

/*
 * Our deadline aborted a transfer: libdebuginfod (0.188) takes the abort
 * for a "not found" and leaves its negative-cache mark, an empty
 * BUILDID/debuginfo file that makes every client sharing its cache (gdb,
 * eu-addr2line, debuginfod-find, the next stackfold) miss this build-id
 * for cache_miss_s (10 minutes), even from a healthy server.  A slow
 * server must cost this run only, so the mark is removed (a real file is
 * never empty: libdebuginfod renames it into place whole).
 * (DEBUGINFOD_MAXTIME leaves no mark, but would take a setenv() in
 * library code.)
 */
static void dinfod_unmark(const char *build_id)
{
	char dir[PATH_MAX], p[PATH_MAX];
	struct stat st, d;
	int dfd;

	/* the cache may be another user's ($HOME): its entry's directory is
	 * walked without following their links, and the mark removed there
	 * only (never a name a link elsewhere stands for) */
	if (!dinfod_cache_dir(dir, sizeof(dir)) ||
	    snprintf(p, sizeof(p), "%s/%s", dir, build_id) >= (int)sizeof(p) ||
	    sf_dir_open(p, p, SF_DIR_STRICT, &dfd, &d, NULL))
		return;
	if (!fstatat(dfd, "debuginfo", &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISREG(st.st_mode) && st.st_size == 0)
		unlinkat(dfd, "debuginfo", 0);
	close(dfd);
}

/* libdebuginfod's cache as this run finds it: a directory of a trusted
 * user's, reached through no other user's directory or link (safedir.h).
 * Root's lookups are answered from it by name, and it may be under a HOME
 * that is not root's: another user could plant a debug file with the
 * right build-id and names of their choosing, or a link that takes
 * libdebuginfod's writes elsewhere.  false, with why, when it is not. */
static bool dinfod_cache_ok(char *why, size_t n)
{
	char dir[PATH_MAX];
	struct sf_err e = { "" };
	if (!dinfod_cache_dir(dir, sizeof(dir)) || sf_cache_dir_usable(dir, &e))
		return true;
	snprintf(why, n, "its cache is not used: %s", e.msg);
	return false;
}

/* A fetch failed with fd (-errno), aborted by our deadline or not. */
static void dinfod_missed(struct find *f, const char *urls, int fd,
			  bool aborted)
{
	/* An abort is reported as -ENOENT: tell it from a real "not found" */
	if (aborted) {
		dinfod_unmark(f->build_id);
		dinfod_failed(f, urls, "took longer than the deadline ("
			      SF_STR(DEBUGINFOD_TIMEOUT_S) " s)");
	} else if (fd == -ENOENT) {
		f->b->flags |= IDX_DINFOD_MISS;
	} else {
		dinfod_failed(f, urls, strerror(-fd));
	}
}

/* fd of the debug file the servers send for id[0..n), or -1.  Their
 * "not found" marks f->b's entry IDX_DINFOD_MISS (the only answer the
 * index cache keeps); any other failure is reported (dinfod_failed). */
static int dinfod_fetch(struct find *f, const char *urls,
			const unsigned char *id, size_t n)
{
	debuginfod_client *c = dinfod.begin();
	if (!c) {
		dinfod_failed(f, urls, "cannot start a libdebuginfod client");
		return -1;
	}
	/* A deadline through the progress callback: libdebuginfod's own
	 * timeout only covers a stalled connection.  A "not found" answer
	 * is remembered by libdebuginfod's cache (cache_miss_s). */
	struct dinfod_wait w = { time(NULL) + DEBUGINFOD_TIMEOUT_S, false };
	dinfod.set_user_data(c, &w);
	dinfod.set_progressfn(c, dinfod_progress);
	int fd = dinfod.find(c, id, (int)n, NULL);
	dinfod.end(c);
	if (fd < 0)
		dinfod_missed(f, urls, fd, w.aborted);
	return fd < 0 ? -1 : fd;
}

static Elf *by_debuginfod(struct find *f)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	unsigned char id[64];
	size_t n = strlen(f->build_id) / 2;

	if (!urls || !*urls || !n || n > sizeof(id))
		return NULL;
	if (__atomic_load_n(&dinfod_down, __ATOMIC_RELAXED)) {
		f->b->flags |= IDX_DINFOD_DOWN;	/* not asked: down this run */
		return NULL;
	}
	pthread_once(&dinfod_once, dinfod_load);
	if (!dinfod.begin) {
		dinfod_failed(f, urls, "libdebuginfod.so.1 cannot be loaded");
		return NULL;
	}
	char why[SF_ERRLEN + 64];
	if (!dinfod_cache_ok(why, sizeof(why))) {
		dinfod_failed(f, urls, why);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		sscanf(f->build_id + 2 * i, "%2hhx", &id[i]);
	int fd = dinfod_fetch(f, urls, id, n);
	if (fd < 0)
		return NULL;
	Elf *e = elf_from_fd(fd);
	if (!e || !same_build_id(e, f->build_id)) {
		if (e)
			elf_end(e);
		close(fd);
		return NULL;
	}
	f->fd = fd;
	return e;
}

static Elf *exists_in(const char *root, void *arg)
{
	const char *bid = arg;
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", root, bid,
		     bid + 2) < (int)sizeof(p) &&
	    access(p, R_OK) == 0)
		return (Elf *)1;	/* a non-NULL marker, never used as Elf */
	return NULL;
}

bool debuglink_buildid_exists(const char *build_id)
{
	return strlen(build_id) > 2 &&
	       each_root(exists_in, (void *)build_id) != NULL;
}

static Elf *newer(struct find *f, const char *p)
{
	struct stat st;
	/* ctime: a file moved or copied in with its old mtime (mv, cp -p,
	 * dpkg) is new here all the same */
	return !stat(p, &st) && (uint64_t)st.st_ctime >= f->since &&
	       S_ISREG(st.st_mode) ? (Elf *)1 : NULL;	/* a marker only */
}

bool debuglink_appeared(Elf *elf, const char *path, uint64_t since)
{
	char dir[PATH_MAX];
	struct find f = { .try_path = newer, .since = since, .dir = dir };
	return read_debuglink(elf, &f.name, &f.crc) && dir_of(path, dir) &&
	       each_link_path(&f) != NULL;
}

Elf *debuglink_open(Elf *elf, int fd, const char *path, const char *build_id,
		    struct idx_builder *b, int *fdp)
{
	struct stat self;
	char dir[PATH_MAX];
	struct find f = {
		.build_id = build_id, .self = fstat(fd, &self) ? NULL : &self,
		.b = b, .fd = -1,
	};
	Elf *e = NULL;

	if (*build_id)
		e = each_root(by_build_id, &f);
	if (!e && read_debuglink(elf, &f.name, &f.crc) && dir_of(path, dir)) {
		f.dir = dir;
		f.try_path = link_candidate;
		e = each_link_path(&f);
	}
	if (!e && *build_id)
		e = by_debuginfod(&f);
	if (e)
		*fdp = f.fd;
	return e;
}

/* --- .gnu_debugdata (MiniDebugInfo) --- */

/* xz's decoder memory (its dictionary): xz -9 needs 65 MiB. */
#define XZ_MEMLIMIT (128u << 20)

/*
 * Decode in[0..inlen) into dd->buf, dd->len.  The output may reach
 * `bound` bytes (sf_inflate_bound: a bomb of zeros reaches 1000s of
 * times its size); what the buffer grows by is taken from l's session
 * budget as it grows (dd->charged).  -EFBIG past the bound, -ENOSPC past
 * the budget, -EINVAL not xz, -ENOMEM.
 */
static int xz_decode(const unsigned char *in, size_t inlen, uint64_t bound,
		     struct sf_limits *l, struct debugdata *dd)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = 0, n = 0;
	int rc = 0;
	lzma_ret r = LZMA_OK;

	if (lzma_stream_decoder(&s, XZ_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	s.next_in = in;
	s.avail_in = inlen;
	while (!rc && r == LZMA_OK) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : inlen * 4 + 4096;
			if (cap >= bound) {
				rc = -EFBIG;
				break;
			}
			if (ncap > bound)
				ncap = (size_t)bound;
			if (!sf_limits_take(l, ncap - cap)) {
				rc = -ENOSPC;
				break;
			}
			dd->charged += ncap - cap;
			char *nb = realloc(dd->buf, ncap);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			dd->buf = nb;
			cap = ncap;
		}
		s.next_out = (unsigned char *)dd->buf + n;
		s.avail_out = cap - n;
		r = lzma_code(&s, LZMA_FINISH);
		n = cap - s.avail_out;
	}
	lzma_end(&s);
	if (!rc && r != LZMA_STREAM_END)
		rc = r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	dd->len = n;
	return rc;
}

void debugdata_close(struct debugdata *dd)
{
	if (dd->elf)
		elf_end(dd->elf);
	free(dd->buf);
	sf_limits_give(dd->limits, dd->charged);
	memset(dd, 0, sizeof(*dd));
}

/* The xz of a .gnu_debugdata section, decoded within the bounds; a
 * refusal is counted and said. */
static int debugdata_decode(Elf_Data *d, struct idx_builder *b,
			    const char *path, struct debugdata *dd)
{
	uint64_t bound = sf_inflate_bound(b->limits, d->d_size);
	if (bound > DEBUGDATA_MAX)
		bound = DEBUGDATA_MAX;
	dd->limits = b->limits;
	int rc = xz_decode(d->d_buf, d->d_size, bound, b->limits, dd);
	if (rc == -EFBIG || rc == -ENOSPC) {
		sf_limits_count(b->limits, SF_REFUSED_BOUND);
		if (rc == -EFBIG)
			idxb_warn(b, ".gnu_debugdata of '%s' decompresses to more "
				  "than %" PRIu64 " bytes from %zu: past the bound, "
				  "its MiniDebugInfo is not read",
				  path ? path : "?", bound, d->d_size);
		else
			idxb_warn(b, ".gnu_debugdata of '%s' would pass the %" PRIu64
				  " decompressed bytes this run may hold "
				  "(STACKFOLD_INFLATE_MAX): its MiniDebugInfo is "
				  "not read", path ? path : "?",
				  b->limits ? b->limits->inflate_held_max : 0);
	}
	return rc;
}

int debugdata_open(Elf *elf, struct idx_builder *b, const char *path,
		   struct debugdata *dd)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	memset(dd, 0, sizeof(*dd));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".gnu_debugdata"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		int rc = d && d->d_buf ? debugdata_decode(d, b, path, dd) : -EINVAL;
		if (!rc)
			dd->elf = elf_memory(dd->buf, dd->len);
		if (!rc && (!dd->elf || elf_kind(dd->elf) != ELF_K_ELF))
			rc = -EINVAL;
		if (rc)
			debugdata_close(dd);
		return rc == -ENOMEM ? rc : 0;
	}
	return 0;
}
