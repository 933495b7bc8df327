/* atomic.c - see atomic.h. */
#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void af_release(struct atomic_file *af)
{
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
		return sf_err_set(err, e, "cannot open '%s': %s", path, strerror(e));
	}
	return 0;
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
	bool exists = stat(path, &st) == 0;
	memset(af, 0, sizeof(*af));
	if (exists && !S_ISREG(st.st_mode))
		return open_special(af, path, err);
	af->path = strdup(path);
	if (!af->path || asprintf(&af->tmp, "%s.tmp.XXXXXX", path) < 0) {
		af->tmp = NULL;
		af_release(af);
		return sf_err_set(err, ENOMEM, "out of memory");
	}
	int fd = mkstemp(af->tmp);
	if (fd < 0) {
		int e = errno;
		/* named by the output asked for; the temporary beside it is
		 * ours (ENOENT: its directory is missing) */
		sf_err_set(err, e, "cannot write '%s': %s", af->path, strerror(e));
		af_release(af);
		return -e;
	}
	fchmod(fd, file_mode(exists ? &st : NULL));
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		int e = errno;
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
