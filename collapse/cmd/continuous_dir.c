/*
 * continuous_dir.c - stackfold continuous's directory: its lock, its
 * windows indexed and retained, DIR made again when it was removed, the
 * bpftrace program held open (continuous_priv.h).  Prints its one line
 * and returns an exit status where it fails.
 */
#include "cmd/continuous_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safedir.h"
#include "cmds.h"

int cont_scan_dir(struct cont *x)
{
	uint64_t stale = 0;
	int rc = windir_scan(&x->dir, &stale);
	if (rc == -ENOMEM) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	} else if (rc) {
		fprintf(stderr, "stackfold: cannot open '%s': %s\n", x->o.dir,
			strerror(-rc));
		return EXIT_IO;
	}
	if (stale)
		fprintf(stderr, "stackfold: removed %" PRIu64 " unfinished file%s "
			"left in '%s' by an earlier run\n", stale,
			stale == 1 ? "" : "s", x->o.dir);
	return 0;
}

/* One writer a directory: DIR/.lock, flock()ed for as long as we run
 * (scripts/continuous takes it too while it writes the program, and lets
 * go before it execs us).  A second instance would rewrite the first's
 * windows and remove its files in progress.  The lock must be a regular
 * file of ours: another user's name there is refused, never followed.
 * 0, or an exit status with its line printed. */
int cont_take_lock(struct cont *x)
{
	char path[4096];
	struct stat st, d;
	struct sf_err e = { "" };
	int dfd;
	if (!windir_path(&x->dir, path, sizeof(path), ".lock", ""))
		return EXIT_IO;
	/* DIR itself reached through no other user's link, and a trusted
	 * user's: DIR made again by someone else is never written into */
	if (sf_dir_open(x->o.dir, x->o.dir, 0, &dfd, &d, &e)) {
		fprintf(stderr, "stackfold: %s\n", e.msg);
		return EXIT_IO;
	}
	int fd = openat(dfd, ".lock", O_WRONLY | O_CREAT | O_NOFOLLOW |
			O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	int err = errno;
	close(dfd);
	if (fd < 0) {
		fprintf(stderr, "stackfold: cannot open '%s': %s\n", path,
			strerror(err));
		return EXIT_IO;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		fprintf(stderr, "stackfold: refusing '%s': not a regular file "
			"of this user\n", path);
		return EXIT_IO;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		fprintf(stderr, "stackfold: another profiler writes to '%s' "
			"(its lock: %s)\n", x->o.dir, path);
		return EXIT_IO;
	}
	if (x->lock_fd >= 0)
		close(x->lock_fd);
	x->lock_fd = fd;
	x->dir_dev = d.st_dev;
	x->dir_ino = d.st_ino;
	return 0;
}

/* --check (scripts/continuous, before and after it makes DIR): an
 * existing DIR must be one cont_take_lock() will take.  0 or EXIT_IO, said. */
int cont_check_existing_dir(const char *dir)
{
	struct stat d;
	struct sf_err e = { "" };
	int dfd;
	if (lstat(dir, &d) && errno == ENOENT)
		return EXIT_OK;
	if (sf_dir_open(dir, dir, 0, &dfd, &d, &e)) {
		fprintf(stderr, "stackfold: %s\n", e.msg);
		return EXIT_IO;
	}
	close(dfd);
	return EXIT_OK;
}

/* DIR removed or replaced under us (its lock and program went with it):
 * made again, locked again and indexed again before a window is written.
 * 0, or an exit status with its line printed (another profiler took the
 * new DIR: we stop). */
int cont_check_dir(struct cont *x)
{
	struct stat d;
	if (stat(x->o.dir, &d) == 0 && d.st_dev == x->dir_dev &&
	    d.st_ino == x->dir_ino)
		return 0;
	int rc = sf_mkdir_p(x->o.dir, 0755);
	if (rc) {
		fprintf(stderr, "stackfold: '%s' was removed and cannot be "
			"created again: %s\n", x->o.dir, strerror(-rc));
		return EXIT_IO;
	}
	if ((rc = cont_take_lock(x)))
		return rc;
	windir_release(&x->dir);
	uint64_t stale = 0;
	rc = windir_scan(&x->dir, &stale);
	if (rc == -ENOMEM) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	}
	fprintf(stderr, "stackfold: '%s' was removed or replaced while running: "
		"made again and locked again (the windows in it before are "
		"gone)\n", x->o.dir);
	return 0;
}

/* bpftrace's program when it lives in DIR (scripts/continuous keeps it
 * there as .continuous.bt): held open and given to bpftrace as
 * /dev/fd/N, so that a restart still has it when DIR was removed. */
int cont_hold_program(struct cont *x)
{
	size_t n = strlen(x->o.dir);
	for (char **a = x->o.argv + 1; *a; a++) {
		struct stat st;
		if (strncmp(*a, x->o.dir, n) != 0 || (*a)[n] != '/')
			continue;
		int fd = open(*a, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || fd < 3) {
			close(fd);
			fprintf(stderr, "stackfold: refusing '%s': not a regular "
				"file of this user\n", *a);
			return EXIT_IO;
		}
		x->prog_fd = fd;	/* inherited by bpftrace: no O_CLOEXEC */
		snprintf(x->prog_arg, sizeof(x->prog_arg), "/dev/fd/%d", fd);
		*a = x->prog_arg;
		return 0;
	}
	return 0;
}

/* Oldest first.  keep_newest: after a window was written, it stays even
 * when it alone is over --max-size.  Without (at start, and after a window
 * could not be written: a full disk is then freed as the limits say, even
 * of its last old window), every window over the limits goes. */
uint64_t cont_retention(struct cont *x, bool keep_newest)
{
	return windir_retain(&x->dir, x->o.max_size, x->o.max_age, keep_newest);
}

void cont_log_removed(uint64_t n)
{
	if (n)
		fprintf(stderr, "stackfold: removed %" PRIu64 " window%s past "
			"--max-age or --max-size\n", n, n == 1 ? "" : "s");
}
