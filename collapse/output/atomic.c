/* atomic.c - see atomic.h. */
#include "output/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The temporary files being written, for atomic_unlink_open() from a
 * signal handler: their names copied into static storage, so that the
 * handler never reads memory that is being freed. */
#define ATOMIC_SLOTS 8
static char g_tmp[ATOMIC_SLOTS][PATH_MAX];
static volatile sig_atomic_t g_used[ATOMIC_SLOTS];

static int slot_take(const char *tmp)
{
	if (strlen(tmp) >= PATH_MAX)
		return -1;
	for (int i = 0; i < ATOMIC_SLOTS; i++)
		if (!g_used[i]) {
			strcpy(g_tmp[i], tmp);
			g_used[i] = 1;
			return i;
		}
	return -1;	/* more open at once than slots: not cleaned up */
}

void atomic_unlink_open(void)
{
	for (int i = 0; i < ATOMIC_SLOTS; i++)
		if (g_used[i])
			unlink(g_tmp[i]);
}

static void af_release(struct atomic_file *af)
{
	if (af->slot >= 0)
		g_used[af->slot] = 0;
	af->slot = -1;
	free(af->path);
	free(af->tmp);
	af->path = af->tmp = NULL;
	af->fp = NULL;
}

/* Devices and FIFOs are written in place, never renamed over.  Opened
 * without blocking and without following a link (resolve() followed the
 * trusted ones), then checked to be what lstat() saw. */
static int open_special(struct atomic_file *af, const char *path,
			const struct stat *seen, struct sf_err *err)
{
	int nofollow = strncmp(path, "/proc/", 6) == 0 ? 0 : O_NOFOLLOW;
	int fd, e;
	/* A FIFO of ours (the only kind that gets here, owner_trusted())
	 * with no reader yet: its reader is waited for, as a shell's
	 * redirection does, but in steps, never inside open(). */
	while ((fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
			  nofollow)) < 0 && errno == ENXIO && seen &&
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
 * output at a file of their choosing, or hang it on a FIFO. */
static bool owner_trusted(const char *path, const struct stat *st)
{
	if (st->st_uid == geteuid())
		return true;
	char *copy = strdup(path);
	struct stat d;
	bool ok = copy && stat(dirname(copy), &d) == 0 && d.st_uid == st->st_uid;
	free(copy);
	return ok;
}

static int refuse(const char *path, const char *what, const struct stat *st,
		  struct sf_err *err)
{
	return sf_err_set(err, EPERM, "refusing to write '%s': %s owned by uid "
			  "%u, neither this user (uid %u) nor the directory's "
			  "owner", path, what, (unsigned)st->st_uid,
			  (unsigned)geteuid());
}

/* Follow the symbolic links at path (the last component, as many hops as
 * the kernel allows), each checked by owner_trusted(), into *out (owned).
 * *st: lstat() of the end, *exists false when it names nothing.  Stops at
 * a /proc or /dev/fd name (a descriptor's link names a pipe, not a path).
 * 0 or -errno with err filled. */
static int resolve(const char *path, char **out, struct stat *st,
		   bool *exists, struct sf_err *err)
{
	char *cur = strdup(path);
	for (int hops = 0; cur; hops++) {
		*exists = lstat(cur, st) == 0;
		if (!*exists || !S_ISLNK(st->st_mode) || hops == 40 ||
		    strncmp(cur, "/proc/", 6) == 0 ||
		    strncmp(cur, "/dev/fd/", 8) == 0)
			break;
		if (!owner_trusted(cur, st)) {
			int ret = refuse(cur, "a symbolic link", st, err);
			free(cur);
			return ret;
		}
		char target[PATH_MAX];
		ssize_t n = readlink(cur, target, sizeof(target) - 1);
		if (n <= 0)
			break;
		target[n] = 0;
		char *next = NULL, *dir = strdup(cur);
		if (target[0] == '/' || !strchr(cur, '/'))
			next = strdup(target);
		else if (dir && asprintf(&next, "%s/%s", dirname(dir), target) < 0)
			next = NULL;
		free(dir);
		free(cur);
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
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strlen(base) + sizeof(".tmp.XXXXXX") - 1 <= NAME_MAX)
		return asprintf(tmp, "%s.tmp.XXXXXX", path);
	return asprintf(tmp, "%.*s.stackfold.tmp.XXXXXX", (int)(base - path), path);
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
	if (strncmp(real, "/proc/", 6) == 0 || strncmp(real, "/dev/fd/", 8) == 0 ||
	    (exists && !S_ISREG(st->st_mode))) {
		int ret = exists && !S_ISLNK(st->st_mode) && !owner_trusted(real, st) ?
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
	int nfd = named_fd(path);
	if (nfd >= 0)
		return open_fd(af, path, nfd, err);
	/* A symbolic link (a trusted one: resolve()) is written through:
	 * the file it names is replaced, or created when it names nothing
	 * yet (renaming over the link would replace the link). */
	char *real;
	bool exists;
	int ret = resolve(path, &real, &st, &exists, err);
	if (ret || (ret = open_at_end(af, real, &st, exists, err)) || af->fp)
		return ret;
	/* No signal between the file's creation and its slot: a SIGTERM
	 * there left the file behind (1 run in 20 of t70's SIGTERM test).
	 * mkostemp() creates with O_EXCL: a name planted meanwhile is not
	 * opened, another is drawn. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int fd = mkostemp(af->tmp, O_CLOEXEC);
	int e = errno;
	if (fd >= 0)
		af->slot = slot_take(af->tmp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		/* named by the output asked for; the temporary beside it is
		 * ours (ENOENT: its directory is missing) */
		sf_err_set(err, e, "cannot write '%s': %s", af->path, strerror(e));
		af_release(af);
		return -e;
	}
	/* (mkostemp made it 0600: never wider than most meanwhile) */
	fchmod(fd, file_mode(exists ? &st : NULL) & most);
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		e = errno;
		close(fd);
		unlink(af->tmp);
		af_release(af);
		return sf_err_set(err, e, "fdopen: %s", strerror(e));
	}
	return 0;
}

static void fsync_dir(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
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
	if (!e && rename(af->tmp, af->path) != 0)
		e = errno;
	if (e) {
		unlink(af->tmp);
		sf_err_set(err, e, "write '%s': %s", af->path, strerror(e));
		af_release(af);
		return -e;
	}
	fsync_dir(af->path);
	af_release(af);
	return 0;
}

void atomic_abort(struct atomic_file *af)
{
	if (!af || !af->fp)
		return;
	fclose(af->fp);
	if (af->tmp)
		unlink(af->tmp);
	af_release(af);
}
