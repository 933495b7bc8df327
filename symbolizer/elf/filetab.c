/* filetab.c - pinned mapped files and their indexes, see filetab.h. */
#include "elf/filetab.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/untrusted.h"
#include "base/procfs.h"

#define FILETAB_MAX_PINNED 4096
#define FILETAB_FD_RESERVE 16	/* fds left for everything else */

static void warnf(struct filetab *ft, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warnf(struct filetab *ft, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	if (!ft->opts || !ft->opts->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ft->opts->warn(ft->opts->warn_ctx, msg);
}

static size_t default_max_pinned(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return FILETAB_MAX_PINNED;
	size_t cur = (size_t)rl.rlim_cur;
	size_t n = cur > 2 * FILETAB_FD_RESERVE ? cur / 2 : 4;
	return n < FILETAB_MAX_PINNED ? n : FILETAB_MAX_PINNED;
}

int filetab_init(struct filetab *ft, size_t max_pinned,
		 const struct elfidx_opts *opts, struct sym_stats *stats)
{
	memset(ft, 0, sizeof(*ft));
	ft->max_pinned = max_pinned ? max_pinned : default_max_pinned();
	ft->opts = opts;
	ft->stats = stats;
	ft->nhash = 64;
	ft->hash = calloc(ft->nhash, sizeof(*ft->hash));
	if (!ft->hash)
		return -ENOMEM;
	return strtab_init(&ft->paths);
}

void filetab_flush(struct filetab *ft)
{
	for (size_t i = 0; i < ft->n; i++)
		if (!ft->v[i]->idx_shared)
			elfidx_flush(ft->v[i]->idx);
}

void filetab_release(struct filetab *ft)
{
	filetab_flush(ft);
	for (size_t i = 0; i < ft->n; i++) {
		struct sym_file *f = ft->v[i];
		if (f->fd >= 0)
			close(f->fd);
		if (!f->idx_shared)
			elfidx_free(f->idx);
		free(f);
	}
	free(ft->v);
	free(ft->hash);
	strtab_release(&ft->paths);
	memset(ft, 0, sizeof(*ft));
}

/* ---- LRU of pinned fds ---- */

static void lru_unlink(struct filetab *ft, struct sym_file *f)
{
	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	else if (ft->lru_head == f)
		ft->lru_head = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else if (ft->lru_tail == f)
		ft->lru_tail = f->lru_prev;
	f->lru_prev = f->lru_next = NULL;
}

static void lru_push(struct filetab *ft, struct sym_file *f)
{
	f->lru_next = ft->lru_head;
	f->lru_prev = NULL;
	if (ft->lru_head)
		ft->lru_head->lru_prev = f;
	ft->lru_head = f;
	if (!ft->lru_tail)
		ft->lru_tail = f;
}

static void unpin(struct filetab *ft, struct sym_file *f)
{
	if (f->fd < 0)
		return;
	lru_unlink(ft, f);
	close(f->fd);
	f->fd = -1;
	f->state = SYMF_CLOSED;
	ft->npinned--;
}

static struct elf_index *build_index(struct filetab *ft, struct sym_file *f);

/* Close least recently used fds until there is room for one more.  A
 * deleted file cannot be reopened by path once its process exits, so it
 * is indexed before its fd goes. */
static void make_room(struct filetab *ft)
{
	struct sym_file *f = ft->lru_tail;
	while (ft->npinned >= ft->max_pinned && f) {
		struct sym_file *prev = f->lru_prev;
		/* a memfd cannot be reopened: it stays */
		if (!f->memfd && f->deleted && !f->idx && !f->idx_failed)
			build_index(ft, f);	/* indexes, then unpins */
		else if (!f->memfd)
			unpin(ft, f);
		f = prev;
	}
}

static void pin(struct filetab *ft, struct sym_file *f, int fd)
{
	make_room(ft);
	f->fd = fd;
	f->state = SYMF_OPEN;
	lru_push(ft, f);
	ft->npinned++;
}

static void touch(struct filetab *ft, struct sym_file *f)
{
	if (f->fd >= 0 && ft->lru_head != f) {
		lru_unlink(ft, f);
		lru_push(ft, f);
	}
}

/* ---- table ---- */

static size_t slot_of(const struct filetab *ft, dev_t dev, ino_t ino)
{
	return sf_hash_u64((uint64_t)dev * 0x9e3779b97f4a7c15ULL ^
			   (uint64_t)ino) & (ft->nhash - 1);
}

static int hash_insert(struct filetab *ft, struct sym_file *f)
{
	if ((ft->n + 1) * 2 > ft->nhash) {
		size_t ns = ft->nhash * 2;
		struct sym_file **h = calloc(ns, sizeof(*h));
		if (!h)
			return -ENOMEM;
		struct sym_file **old = ft->hash;
		size_t on = ft->nhash;
		ft->hash = h;
		ft->nhash = ns;
		for (size_t i = 0; i < on; i++)
			if (old[i])
				hash_insert(ft, old[i]);
		free(old);
	}
	size_t i = slot_of(ft, f->dev, f->ino);
	while (ft->hash[i])
		i = (i + 1) & (ft->nhash - 1);
	ft->hash[i] = f;
	return 0;
}

/* A saved build-id must match a known one; a live mapping (no expected
 * build-id) matches any entry for its (dev, ino). */
static bool bid_compatible(const struct sym_file *f, const char *bid)
{
	if (!bid || !*bid)
		return true;
	return f->bid_known && strcmp(f->build_id, bid) == 0;
}

/* Is f the file desc names?  A (dev, inode) of 0:0 says nothing (saved
 * maps written by hand, or by a tool that leaves them out): then the paths
 * must match too, or two programs would share one index. */
static bool same_file(const struct sym_file *f, const struct sym_file_desc *d)
{
	if (f->dev != d->dev || f->ino != d->ino)
		return false;
	return d->dev || d->ino ||
	       (strlen(f->path) == d->path_len &&
		memcmp(f->path, d->path, d->path_len) == 0);
}

/* The ways to a mapped file under /proc/PID (rel paths for procfs_*):
 * its map_files entry (the mapped file itself; needs CAP_SYS_ADMIN), and
 * its path in the process's root (false: not absolute, or too long). */
#define REL_MAX 4200
static void map_files_rel(char rel[REL_MAX], uint64_t start, uint64_t limit)
{
	snprintf(rel, REL_MAX, "map_files/%" PRIx64 "-%" PRIx64, start, limit);
}

static bool root_rel(char rel[REL_MAX], const char *path, size_t len)
{
	if (!len || path[0] != '/' || len >= REL_MAX - 5)
		return false;
	snprintf(rel, REL_MAX, "root%.*s", (int)len, path);
	return true;
}

/* What a live mapping's file is now, through its process's map_files or
 * root: 1 known (*st filled), 0 unknown (no pid, the process or its map
 * gone, no permission). */
struct live_stat {
	int state;	/* -1 not asked yet */
	struct stat st;
};

static int live_stat(const struct sym_file_desc *d, struct live_stat *ls)
{
	if (ls->state < 0) {
		char rel[REL_MAX];
		map_files_rel(rel, d->map_start, d->map_limit);
		ls->state = d->pid > 0 && d->map_start &&
			    !procfs_stat_path(d->pid, rel, &ls->st);
		/* without map_files, the path in the process's root, if it
		 * is still the mapped inode */
		if (!ls->state && d->pid > 0 && !d->deleted &&
		    root_rel(rel, d->path, d->path_len))
			ls->state = !procfs_stat_path(d->pid, rel, &ls->st) &&
				    ls->st.st_ino == d->ino;
	}
	return ls->state;
}

/* Do st's size or mtime differ from those f was first opened with? */
static bool stamp_differs(const struct sym_file *f, const struct stat *st)
{
	return st->st_size != f->size ||
	       st->st_mtim.tv_sec != f->mtime.tv_sec ||
	       st->st_mtim.tv_nsec != f->mtime.tv_nsec;
}

/* Could f be another file than the one d (a live mapping, no build-id to
 * go by) maps now?  Its size or mtime differ from those f was opened
 * with: through f's own fd while it is pinned (the same inode, but maybe
 * rewritten in place), else through the mapping (the inode may have been
 * freed and reused). */
static bool inode_reused(const struct sym_file *f,
			 const struct sym_file_desc *d, struct live_stat *ls)
{
	struct stat fst;
	const struct stat *st = &fst;
	if (!f->stamp_known || (d->build_id && *d->build_id))
		return false;
	if (f->fd >= 0) {	/* pinned: same inode, maybe rewritten */
		if (fstat(f->fd, &fst))
			return false;
	} else if (live_stat(d, ls)) {
		st = &ls->st;
	} else {
		return false;
	}
	return stamp_differs(f, st);
}

static struct sym_file *hash_find(struct filetab *ft,
				  const struct sym_file_desc *d)
{
	struct live_stat ls = { .state = -1 };
	for (size_t i = slot_of(ft, d->dev, d->ino); ft->hash[i];
	     i = (i + 1) & (ft->nhash - 1)) {
		struct sym_file *f = ft->hash[i];
		if (same_file(f, d) && bid_compatible(f, d->build_id) &&
		    !inode_reused(f, d, &ls))
			return f;
	}
	return NULL;
}

/* A live mapping of a file we could not (or can no longer) open gives it
 * a new way in: this process's map_files and root. */
static void refresh_recipe(struct sym_file *f, const struct sym_file_desc *d)
{
	if (f->fd >= 0 || f->idx || !d->pid ||
	    (d->build_id && *d->build_id))
		return;
	f->pid = d->pid;
	f->starttime = d->starttime;
	f->map_start = d->map_start;
	f->map_limit = d->map_limit;
	if (f->state == SYMF_FAILED) {
		f->state = SYMF_CLOSED;
	}
}

static struct sym_file *file_new(struct filetab *ft, const char *path,
				 size_t len)
{
	int64_t id = strtab_intern(&ft->paths, path, len);
	if (id < 0 || sf_grow((void **)&ft->v, &ft->cap, ft->n + 1,
			      sizeof(*ft->v)))
		return NULL;
	struct sym_file *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strtab_get(&ft->paths, (uint32_t)id);
	f->fd = -1;
	ft->v[ft->n++] = f;
	return f;
}

struct sym_file *filetab_get(struct filetab *ft,
			     const struct sym_file_desc *d)
{
	struct sym_file *f = hash_find(ft, d);
	if (f) {
		refresh_recipe(f, d);
		return f;
	}
	f = file_new(ft, d->path, d->path_len);
	if (!f)
		return NULL;
	f->dev = d->dev;
	f->ino = d->ino;
	f->deleted = d->deleted;
	f->pid = d->pid;
	f->starttime = d->starttime;
	f->map_start = d->map_start;
	f->map_limit = d->map_limit;
	if (d->build_id && *d->build_id) {
		snprintf(f->build_id, sizeof(f->build_id), "%s", d->build_id);
		f->bid_known = true;
	}
	return hash_insert(ft, f) ? NULL : f;
}

struct sym_file *filetab_add_memfd(struct filetab *ft, int fd,
				   const char *path)
{
	struct sym_file *f = file_new(ft, path, strlen(path));
	if (!f) {
		close(fd);
		return NULL;
	}
	f->memfd = true;
	if (!elf_read_build_id(fd, f->build_id, sizeof(f->build_id)))
		f->bid_known = true;
	pin(ft, f, fd);
	return f;
}

/* ---- opening and verifying ---- */

enum verify { V_OK, V_WRONG_FILE, V_ERR };

/* Same file as the maps line?  The inode must match; the device must too,
 * except that two anonymous devices (major 0: btrfs subvolumes, overlayfs)
 * may differ between what maps and what stat(2) report. */
static bool same_id(const struct sym_file *f, const struct stat *st)
{
	if (st->st_ino != f->ino)
		return false;
	return st->st_dev == f->dev ||
	       (major(st->st_dev) == 0 && major(f->dev) == 0);
}

/* Is fd the file f describes?  A known build-id must match; without one,
 * the dev/inode of the maps line must, unless fd came from map_files
 * (`mapped`), which is the mapped file by construction. */
static enum verify verify_id(struct sym_file *f, int fd,
			     const struct stat *st, bool mapped)
{
	if (f->bid_known && f->build_id[0]) {
		char bid[41] = "";
		elf_read_build_id(fd, bid, sizeof(bid));
		return strcmp(bid, f->build_id) ? V_WRONG_FILE : V_OK;
	}
	if (f->ino && !mapped && !same_id(f, st))
		return V_WRONG_FILE;
	if (!f->bid_known) {
		if (elf_read_build_id(fd, f->build_id, sizeof(f->build_id)))
			f->build_id[0] = 0;
		f->bid_known = true;	/* "" means: has none */
	}
	return V_OK;
}

/* verify_id(); the first fd accepted also gives f its size and mtime,
 * which tell a reused inode (filetab_get). */
static enum verify verify(struct sym_file *f, int fd, bool mapped)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return V_ERR;
	enum verify v = verify_id(f, fd, &st, mapped);
	if (v == V_OK && !f->stamp_known) {
		f->size = st.st_size;
		f->mtime = st.st_mtim;
		f->stamp_known = true;
	}
	return v;
}

/* Candidate i of the reopen recipe: an fd, -1 when there is none,
 * -SF_ENOTREG (*st filled) when the name is not a regular file.  Every
 * name is the process's to choose: opened with sf_open_untrusted(). */
static int open_candidate(const struct sym_file *f, int i, bool alive,
			  struct stat *st)
{
	char rel[REL_MAX];
	int fd = -1;
	switch (i) {
	case 0:
		if (!alive || !f->map_start)
			return -1;
		map_files_rel(rel, f->map_start, f->map_limit);
		fd = procfs_open_untrusted(f->pid, rel, st);
		break;
	case 1:
		if (!alive || !root_rel(rel, f->path, strlen(f->path)))
			return -1;
		fd = procfs_open_untrusted(f->pid, rel, st);
		break;
	case 2:
		/* last resort, checked by build-id or dev/inode like the rest */
		if (f->path[0] != '/')
			return -1;
		fd = sf_open_untrusted(f->path, st);
		break;
	}
	return fd >= 0 || fd == -SF_ENOTREG ? fd : -1;
}

/* A mapped file's name now holds a FIFO, socket or device: not read. */
static void warn_refused(struct filetab *ft, const struct sym_file *f,
			 const struct stat *st)
{
	sf_limits_count(ft->opts ? ft->opts->limits : NULL, SF_REFUSED_TYPE);
	warnf(ft, "'%s' is %s, not a regular file: not read, its frames are "
	      "shown as module+offset", f->path, sf_file_kind(st->st_mode));
}

static void warn_changed(struct filetab *ft, struct sym_file *f)
{
	ft->stats->files_mismatched++;
	warnf(ft, "'%s' changed since it was mapped (build-id or inode "
	      "differs): its frames are shown as module+offset", f->path);
}

int filetab_open(struct filetab *ft, struct sym_file *f)
{
	if (f->fd >= 0) {
		touch(ft, f);
		return 0;
	}
	if (f->state == SYMF_FAILED || f->memfd)
		return -ENOENT;
	bool alive = f->pid > 0 && procfs_same_process(f->pid, f->starttime);
	bool wrong = false, refused = false;
	struct stat st;
	for (int i = 0; i < 3; i++) {
		int fd = open_candidate(f, i, alive, &st);
		if (fd == -SF_ENOTREG && !refused) {
			refused = true;
			warn_refused(ft, f, &st);
		}
		if (fd < 0)
			continue;
		/* map_files is the mapped file itself, if the process is the
		 * one that mapped it (start time known, not just the pid) */
		enum verify v = verify(f, fd, i == 0 && f->starttime);
		if (v == V_OK) {
			if (f->state == SYMF_NEW)
				ft->stats->files_pinned++;
			pin(ft, f, fd);
			return 0;
		}
		wrong |= v == V_WRONG_FILE;
		close(fd);
	}
	f->state = SYMF_FAILED;
	if (wrong) {
		warn_changed(ft, f);
	} else if (!refused) {
		warnf(ft, "cannot open '%s'%s: its frames are shown as "
		      "module+offset", f->path,
		      f->deleted ? " (deleted)" : "");
	}
	return -ENOENT;
}

/* Another file with the same build-id already indexed (copies of one
 * library, the same file in two containers): share its index. */
static bool share_index(struct filetab *ft, struct sym_file *f)
{
	if (!f->bid_known || !f->build_id[0])
		return false;
	for (size_t i = 0; i < ft->n; i++) {
		struct sym_file *g = ft->v[i];
		if (g == f || !g->idx || g->idx_shared ||
		    strcmp(g->build_id, f->build_id))
			continue;
		f->idx = g->idx;
		f->idx_shared = true;
		f->caps = g->caps;
		ft->stats->index_cache_hits++;
		return true;
	}
	return false;
}

/* Is the file f->fd now reads (its index idx) still the one verified at
 * its first open?  An fd pinned while its process ran sees the same inode
 * rewritten in place since (`cp new old` truncates and writes: same
 * inode, new contents): its build-id, or without one its size and mtime,
 * tell. */
static bool still_mapped_file(const struct sym_file *f,
			      const struct elf_index *idx)
{
	if (f->bid_known && f->build_id[0])
		return strncmp(elfidx_build_id(idx), f->build_id,
			       strlen(f->build_id)) == 0;
	struct stat st;
	if (!f->stamp_known || f->memfd || fstat(f->fd, &st))
		return true;
	return !stamp_differs(f, &st);
}

/* Build f's index from its open fd, then release the fd. */
static struct elf_index *build_index(struct filetab *ft, struct sym_file *f)
{
	struct sf_err err = { "" };
	if (!share_index(ft, f)) {
		f->idx = elfidx_open(f->fd, f->path, ft->opts, &err);
		if (f->idx && !still_mapped_file(f, f->idx)) {
			elfidx_free(f->idx);
			f->idx = NULL;
			f->idx_failed = true;
			warn_changed(ft, f);
			if (!f->memfd)
				unpin(ft, f);
			f->state = SYMF_FAILED;
			return NULL;
		}
		if (!f->idx) {
			f->idx_failed = true;
			if (err.msg[0])
				warnf(ft, "%s", err.msg);
			else
				warnf(ft, "cannot read '%s'", f->path);
			if (!f->memfd)
				unpin(ft, f);
			return NULL;
		}
		if (elfidx_from_cache(f->idx))
			ft->stats->index_cache_hits++;
		else
			ft->stats->index_builds++;
		elfidx_caps(f->idx, &f->caps);
	}
	if (!f->bid_known || !f->build_id[0]) {
		snprintf(f->build_id, sizeof(f->build_id), "%s",
			 elfidx_build_id(f->idx));
		f->bid_known = true;
	}
	/* the index no longer needs our fd (elfindex.h: fd not consumed) */
	if (!f->memfd)
		unpin(ft, f);
	return f->idx;
}

struct elf_index *filetab_index(struct filetab *ft, struct sym_file *f)
{
	if (f->idx || f->idx_failed)
		return f->idx;
	if (filetab_open(ft, f))
		return NULL;
	return build_index(ft, f);
}
