/* atomic.c - see atomic.h. */
#include "output/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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

/* Devices and FIFOs are written in place, never renamed over. */
static int open_special(struct atomic_file *af, const char *path,
			struct sf_err *err)
{
	af->path = strdup(path);
	af->fp = af->path ? fopen(path, "w") : NULL;
	if (!af->fp) {
		int e = af->path ? errno : ENOMEM;
		af_release(af);
		return sf_err_set(err, e, "cannot write '%s': %s", path, strerror(e));
	}
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

/* The mode the new file gets: the old file's, else 0666 less the umask
 * (never wider than what the user had or asked for). */
static mode_t file_mode(const struct stat *old)
{
	if (old)
		return old->st_mode & 07777;
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

int atomic_open(struct atomic_file *af, const char *path, struct sf_err *err)
{
	struct stat st;
	memset(af, 0, sizeof(*af));
	af->slot = -1;
	int nfd = named_fd(path);
	if (nfd >= 0)
		return open_fd(af, path, nfd, err);
	/* A symbolic link is written through: the file it names is replaced
	 * (renaming over the link would replace the link).  One that names
	 * nothing yet, or a descriptor's (under /proc), is written in place. */
	char *real = NULL;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		real = realpath(path, NULL);
		if (!real || strncmp(real, "/proc/", 6) == 0) {
			free(real);
			return open_special(af, path, err);
		}
	}
	bool exists = stat(real ? real : path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		int ret = open_special(af, real ? real : path, err);
		free(real);
		return ret;
	}
	af->path = real ? real : strdup(path);
	if (!af->path || tmp_name(af->path, &af->tmp) < 0) {
		af->tmp = NULL;
		af_release(af);
		return sf_err_set(err, ENOMEM, "out of memory");
	}
	/* No signal between the file's creation and its slot: a SIGTERM
	 * there left the file behind (1 run in 20 of t70's SIGTERM test). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int fd = mkstemp(af->tmp);
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
	fchmod(fd, file_mode(exists ? &st : NULL));
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
