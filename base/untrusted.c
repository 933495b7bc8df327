/* untrusted.c - see untrusted.h. */
#include "base/untrusted.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Debug files CRC'd past 1 GiB cost seconds each (a sparse 20 GB one
 * a minute); a bigger one is still found by build-id, which needs no CRC. */
#define CRC_MAX (1ull << 30)
/* DWARF compresses 3-10 times with zlib or zstd; 64 times is beyond any
 * real debug file and far below what zeros reach (1032 times). */
#define INFLATE_RATIO 64
#define INFLATE_FILE_MAX (2ull << 30)
#define INFLATE_HELD_MAX (4ull << 30)

const char *sf_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFDIR:
		return "a directory";
	case S_IFREG:
		return "a regular file";
	}
	return "not a regular file";
}

/* Without /proc (early boot, some containers): a plain non-blocking open,
 * which may still open a device that replaced the file after the O_PATH
 * check. */
static int reopen(int pfd, const char *path)
{
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	int fd = open(self, READ_FLAGS);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, READ_FLAGS);
	return fd;
}

int sf_open_untrusted(const char *path, struct stat *st)
{
	struct stat st0, st1;
	if (!st)
		st = &st0;
	int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		int e = errno;
		close(pfd);
		return -e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(pfd);
		return -SF_ENOTREG;
	}
	int fd = reopen(pfd, path);
	int e = errno;
	close(pfd);
	if (fd < 0)
		return -e;
	if (fstat(fd, &st1) || !S_ISREG(st1.st_mode) ||
	    st1.st_ino != st->st_ino || st1.st_dev != st->st_dev) {
		*st = st1;
		close(fd);
		return -SF_ENOTREG;
	}
	*st = st1;
	return fd;
}

void sf_limits_init(struct sf_limits *l)
{
	const char *env = getenv("STACKFOLD_INFLATE_MAX");
	if (!l->crc_max)
		l->crc_max = CRC_MAX;
	if (!l->inflate_ratio)
		l->inflate_ratio = INFLATE_RATIO;
	if (!l->inflate_file_max)
		l->inflate_file_max = INFLATE_FILE_MAX;
	if (!l->inflate_held_max && env && *env)
		l->inflate_held_max = strtoull(env, NULL, 0);
	if (!l->inflate_held_max)
		l->inflate_held_max = INFLATE_HELD_MAX;
}

uint64_t sf_inflate_bound(const struct sf_limits *l, uint64_t in)
{
	uint64_t ratio = l && l->inflate_ratio ? l->inflate_ratio : INFLATE_RATIO;
	uint64_t max = l && l->inflate_file_max ? l->inflate_file_max :
						   INFLATE_FILE_MAX;
	uint64_t b;
	if (__builtin_mul_overflow(in, ratio, &b) ||
	    __builtin_add_overflow(b, 1u << 20, &b))
		return max;
	return b < max ? b : max;
}

void sf_limits_count(struct sf_limits *l, enum sf_refusal why)
{
	if (!l)
		return;
	uint64_t *n = why == SF_REFUSED_TYPE ? &l->refused_type :
		      why == SF_REFUSED_BOUND ? &l->refused_bound :
						&l->refused_place;
	__atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
}

bool sf_limits_take(struct sf_limits *l, uint64_t n)
{
	if (!l)
		return true;
	uint64_t cur = __atomic_load_n(&l->inflate_held, __ATOMIC_RELAXED);
	do {
		if (n > l->inflate_held_max || cur > l->inflate_held_max - n)
			return false;
	} while (!__atomic_compare_exchange_n(&l->inflate_held, &cur, cur + n,
					      false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

void sf_limits_give(struct sf_limits *l, uint64_t n)
{
	if (l && n)
		__atomic_sub_fetch(&l->inflate_held, n, __ATOMIC_RELAXED);
}
