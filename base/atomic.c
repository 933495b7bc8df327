/* atomic.c - see atomic.h. */
#include "base/atomic.h"
#include "base/safedir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The temporary files being written, for atomic_unlink_open() from a
 * signal handler: their names copied into static storage, so that the
 * handler never reads memory that is being freed. */
#define ATOMIC_SLOTS 8
static char g_tmp[ATOMIC_SLOTS][NAME_MAX + 1];
static int g_dirfd[ATOMIC_SLOTS];
static volatile sig_atomic_t g_used[ATOMIC_SLOTS];

static int slot_take(int dirfd, const char *tmpbase)
{
	if (strlen(tmpbase) > NAME_MAX)
		return -1;
	for (int i = 0; i < ATOMIC_SLOTS; i++)
		if (!g_used[i]) {
			strcpy(g_tmp[i], tmpbase);
			g_dirfd[i] = dirfd;
			g_used[i] = 1;
			return i;
		}
	return -1;	/* more open at once than slots: not cleaned up */
}

void atomic_unlink_open(void)
{
	for (int i = 0; i < ATOMIC_SLOTS; i++)
		if (g_used[i])
			unlinkat(g_dirfd[i], g_tmp[i], 0);
}

/* The last component of a name. */
static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void af_release(struct atomic_file *af)
{
	if (af->slot >= 0)
		g_used[af->slot] = 0;
	af->slot = -1;
	if (af->dirfd >= 0)
		close(af->dirfd);
	af->dirfd = -1;
	free(af->path);
	free(af->tmp);
	af->path = af->tmp = NULL;
	af->fp = NULL;
}

/* A name under /proc or /dev/fd: a descriptor's link, written in place,
 * whose link is the kernel's. */
static bool proc_name(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/dev/fd/", 8) == 0;
}

/* Devices and FIFOs are written in place, never renamed over.  Opened
 * without blocking and without following a link (resolve() followed the
 * trusted ones), in the directory resolve() walked (af->dirfd; a /proc
 * name, with none, by its whole name), then checked to be what lstat()
 * saw. */
static int open_special(struct atomic_file *af, const char *path,
			const struct stat *seen, struct sf_err *err)
{
	bool at = af->dirfd >= 0 && !proc_name(path);
	int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		    (at ? O_NOFOLLOW : 0);
	int fd, e;
	/* A FIFO of ours (the only kind that gets here, owner_trusted())
	 * with no reader yet: its reader is waited for, as a shell's
	 * redirection does, but in steps, never inside open(). */
	while ((fd = at ? openat(af->dirfd, base_of(path), flags) :
			  open(path, flags)) < 0 && errno == ENXIO && seen &&
	       S_ISFIFO(seen->st_mode))
		poll(NULL, 0, 20);
	e = errno;
	struct stat st;
	if (fd >= 0 && seen && (fstat(fd, &st) != 0 || st.st_dev != seen->st_dev ||
				st.st_ino != seen->st_ino)) {
		close(fd);
		fd = -1;
		e = EAGAIN;	/* replaced between the look and the open */
	}
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	af->path = fd >= 0 ? strdup(path) : NULL;
	af->fp = af->path ? fdopen(fd, "w") : NULL;
	if (!af->fp) {
		e = fd < 0 ? e : af->path ? errno : ENOMEM;
		if (fd >= 0)
			close(fd);
		af_release(af);
		if (e == ENXIO)
			return sf_err_set(err, e, "cannot write '%s': a FIFO "
					  "that nobody reads (not waited for)",
					  path);
		return sf_err_set(err, e, "cannot write '%s': %s", path,
				  strerror(e));
	}
	return 0;
}

/* The kernel's fs.protected_symlinks and protected_regular rules, applied
 * whatever those settings are: a symbolic link is followed, and a file
 * that is not a regular file is written in place, only when its owner is
 * the user running stackfold or the owner of its directory.  Anyone else
 * who can create names there (a sticky /tmp) could otherwise point root's
 * output at a file of their choosing, or hang it on a FIFO.  (The
 * directory itself is one a trusted user owns: sf_dir_open().) */
static bool owner_trusted(const struct stat *st, const struct stat *dir)
{
	return st->st_uid == geteuid() || st->st_uid == dir->st_uid;
}

static int refuse(const char *path, const char *what, const struct stat *st,
		  struct sf_err *err)
{
	return sf_err_set(err, EPERM, "refusing to write '%s': %s owned by uid "
			  "%u, neither this user (uid %u) nor the directory's "
			  "owner", path, what, (unsigned)st->st_uid,
			  (unsigned)geteuid());
}

/* The directory of cur (into dir[PATH_MAX], its last component *base)
 * opened by sf_dir_open() into af->dirfd, its stat in *d.  0 or -errno
 * with err filled (path named). */
static int walk_dir(struct atomic_file *af, const char *path,
		    const char *cur, char *dir, const char **base,
		    struct stat *d, struct sf_err *err)
{
	if (af->dirfd >= 0)
		close(af->dirfd);
	af->dirfd = -1;
	if (!sf_path_split(cur, dir, PATH_MAX, base))
		return sf_err_set(err, ENAMETOOLONG, "cannot write '%s': %s",
				  path, strerror(ENAMETOOLONG));
	if (!**base)
		return sf_err_set(err, EISDIR, "cannot write '%s': %s", path,
				  strerror(EISDIR));
	return sf_dir_open(dir, path, 0, &af->dirfd, d, err);
}

/* Walk path's directory (sf_dir_open(): no link of another user's
 * followed, a trusted user's directory reached) into af->dirfd, then
 * follow the symbolic links at its last component (as many hops as the
 * kernel allows), each checked by owner_trusted(), walking each target's
 * directory again.  *out (owned): the name reached; *st: lstat() of it,
 * *exists false when it names nothing.  0 or -errno with err filled. */
static int resolve(struct atomic_file *af, const char *path, char **out,
		   struct stat *st, bool *exists, struct sf_err *err)
{
	char *cur = strdup(path);
	for (int hops = 0; cur; hops++) {
		char dir[PATH_MAX], target[PATH_MAX];
		const char *base;
		struct stat d;
		int ret = walk_dir(af, path, cur, dir, &base, &d, err);
		if (ret) {
			free(cur);
			return ret;
		}
		*exists = fstatat(af->dirfd, base, st, AT_SYMLINK_NOFOLLOW) == 0;
		/* (a descriptor's link names a pipe, not a path) */
		if (!*exists || !S_ISLNK(st->st_mode) || proc_name(cur))
			break;
		if (!owner_trusted(st, &d)) {
			ret = refuse(cur, "a symbolic link", st, err);
			free(cur);
			return ret;
		}
		ssize_t n = hops < 40 ? readlinkat(af->dirfd, base, target,
						   sizeof(target) - 1) : -1;
		char *next = NULL;
		if (n > 0) {
			target[n] = 0;
			if (target[0] == '/' || !*dir)
				next = strdup(target);
			else if (asprintf(&next, "%s/%s", dir, target) < 0)
				next = NULL;
		}
		free(cur);
		if (n <= 0) {
			int e = hops < 40 ? EIO : ELOOP;
			return sf_err_set(err, e, "cannot write '%s': %s", path,
					  strerror(e));
		}
		cur = next;
	}
	if (!cur)
		return sf_err_set(err, ENOMEM, "out of memory");
	*out = cur;
	return 0;
}

/* The descriptor an output names (/dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N), else -1.  It is written through, as a shell's
 * redirection to it is: opened again, a file behind it would be truncated
 * under a caller still writing to it, and renamed over, the link itself
 * would be replaced. */
static int named_fd(const char *path)
{
	static const char *const pfx[] = { "/dev/fd/", "/proc/self/fd/" };
	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++) {
		size_t n = strlen(pfx[i]);
		if (strncmp(path, pfx[i], n) != 0 || !path[n])
			continue;
		char *end;
		long fd = strtol(path + n, &end, 10);
		return *end || fd < 0 || fd > INT_MAX ? -1 : (int)fd;
	}
	return -1;
}

static int open_fd(struct atomic_file *af, const char *path, int fd,
		   struct sf_err *err)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	af->path = strdup(path);
	af->fp = dfd >= 0 && af->path ? fdopen(dfd, "w") : NULL;
	if (!af->fp) {
		int e = dfd < 0 || af->path ? errno : ENOMEM;
		if (dfd >= 0)
			close(dfd);
		af_release(af);
		return sf_err_set(err, e, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

/* The temporary's name: FINAL.tmp.XXXXXX, or DIR/.stackfold.tmp.XXXXXX
 * where that would be longer than a name may be. */
static int tmp_name(const char *path, char **tmp)
{
	const char *base = base_of(path);
	if (strlen(base) + sizeof(".tmp.XXXXXX") - 1 <= NAME_MAX)
		return asprintf(tmp, "%s.tmp.XXXXXX", path);
	return asprintf(tmp, "%.*s.stackfold.tmp.XXXXXX", (int)(base - path), path);
}

/* Create af->tmp, its XXXXXX drawn anew until a name that does not exist
 * is made (O_EXCL, in af->dirfd: no name of someone else's is opened,
 * no link followed).  The fd, or -errno. */
static int tmp_create(struct atomic_file *af)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = af->tmp + strlen(af->tmp) - 6;
	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -EIO;
		for (int i = 0; i < 6; i++)
			x[i] = chars[r[i] % (sizeof(chars) - 1)];
		int fd = openat(af->dirfd, base_of(af->tmp), O_RDWR | O_CREAT |
				O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* The mode the new file gets: the old file's when it was this user's,
 * else 0666 less the umask; never set-id or sticky. */
static mode_t file_mode(const struct stat *old)
{
	if (old && old->st_uid == geteuid())
		return old->st_mode & 0777;
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* Where resolve() ended: a descriptor, a device or FIFO, or a file to
 * replace through a temporary.  Takes real. */
static int open_at_end(struct atomic_file *af, char *real, struct stat *st,
		       bool exists, struct sf_err *err)
{
	int nfd = named_fd(real);
	if (nfd >= 0) {
		int ret = open_fd(af, real, nfd, err);
		free(real);
		return ret;
	}
	/* a descriptor's link (named nothing openable), or a /proc file */
	if (proc_name(real) || (exists && !S_ISREG(st->st_mode))) {
		struct stat d;
		bool trusted = af->dirfd >= 0 && !fstat(af->dirfd, &d) &&
			       owner_trusted(st, &d);
		int ret = exists && !S_ISLNK(st->st_mode) && !trusted ?
			  refuse(real, S_ISFIFO(st->st_mode) ? "a FIFO" :
				 "a file that is not a regular file", st, err) :
			  open_special(af, real, exists && !S_ISLNK(st->st_mode) ?
				       st : NULL, err);
		free(real);
		return ret;
	}
	af->path = real;
	if (tmp_name(af->path, &af->tmp) < 0) {
		af->tmp = NULL;
		af_release(af);
		return sf_err_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

int atomic_open(struct atomic_file *af, const char *path, struct sf_err *err)
{
	return atomic_open_mode(af, path, 0777, err);
}

int atomic_open_mode(struct atomic_file *af, const char *path, mode_t most,
		     struct sf_err *err)
{
	struct stat st;
	memset(af, 0, sizeof(*af));
	af->slot = -1;
	af->dirfd = -1;
	int nfd = named_fd(path);
	if (nfd >= 0)
		return open_fd(af, path, nfd, err);
	/* a descriptor's link or another /proc file: written in place */
	if (proc_name(path))
		return open_special(af, path, NULL, err);
	/* A symbolic link (a trusted one: resolve()) is written through:
	 * the file it names is replaced, or created when it names nothing
	 * yet (renaming over the link would replace the link). */
	char *real;
	bool exists;
	int ret = resolve(af, path, &real, &st, &exists, err);
	if (ret) {
		af_release(af);
		return ret;
	}
	if ((ret = open_at_end(af, real, &st, exists, err)) || af->fp)
		return ret;
	/* No signal between the file's creation and its slot: a SIGTERM
	 * there left the file behind (1 run in 20 of t70's SIGTERM test).
	 * tmp_create() creates with O_EXCL: a name planted meanwhile is not
	 * opened, another is drawn. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int fd = tmp_create(af);
	int e = fd < 0 ? -fd : 0;
	if (fd >= 0)
		af->slot = slot_take(af->dirfd, base_of(af->tmp));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		/* named by the output asked for; the temporary beside it is
		 * ours (ENOENT: its directory is missing) */
		sf_err_set(err, e, "cannot write '%s': %s", af->path, strerror(e));
		af_release(af);
		return -e;
	}
	/* (tmp_create() made it 0600: never wider than most meanwhile) */
	fchmod(fd, file_mode(exists ? &st : NULL) & most);
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		e = errno;
		close(fd);
		unlinkat(af->dirfd, base_of(af->tmp), 0);
		af_release(af);
		return sf_err_set(err, e, "fdopen: %s", strerror(e));
	}
	return 0;
}

static void fsync_dir(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int atomic_commit(struct atomic_file *af, struct sf_err *err)
{
	int e = 0;
	if (!af->tmp) {		/* a device or FIFO: no rename */
		if (fflush(af->fp) != 0 || ferror(af->fp))
			e = errno ? errno : EIO;
		if (fclose(af->fp) != 0 && !e)
			e = errno ? errno : EIO;
		if (e)
			sf_err_set(err, e, "write '%s': %s", af->path, strerror(e));
		af_release(af);
		return -e;
	}
	if (fflush(af->fp) != 0 || ferror(af->fp))
		e = errno ? errno : EIO;
	if (!e && fsync(fileno(af->fp)) != 0)
		e = errno;
	if (fclose(af->fp) != 0 && !e)
		e = errno ? errno : EIO;
	af->fp = NULL;
	if (!e && renameat(af->dirfd, base_of(af->tmp), af->dirfd,
			   base_of(af->path)) != 0)
		e = errno;
	if (e) {
		unlinkat(af->dirfd, base_of(af->tmp), 0);
		sf_err_set(err, e, "write '%s': %s", af->path, strerror(e));
		af_release(af);
		return -e;
	}
	fsync_dir(af->dirfd);
	af_release(af);
	return 0;
}

void atomic_abort(struct atomic_file *af)
{
	if (!af || !af->fp)
		return;
	fclose(af->fp);
	if (af->tmp)
		unlinkat(af->dirfd, base_of(af->tmp), 0);
	af_release(af);
}
