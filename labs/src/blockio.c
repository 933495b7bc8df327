/*
 * blockio.c - direct reads of known sizes from a block device (lab 17).
 * Once SIGUSR1 has come, a thread named "data" reads N times from the
 * first half of PATH, then a thread named "hole" N times from the second
 * half, one read at a time, THINK_US apart.  Each read is O_DIRECT (no
 * page cache: one read, one block request), at a random 4 KiB-aligned
 * offset, of a random size from 4 to 64 KiB (both from SEED).  The lab
 * makes PATH a loop device over a file whose first half is written and
 * whose second half is a hole: a read of the first half waits for the
 * disk, one of the hole is answered with zeros by the filesystem.
 * Each read is timed around pread() with the monotonic clock.
 *
 * Usage: blockio PATH N THINK_US SEED
 * Prints, per thread: NAME requests R bytes B us U (U: the reads' time)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "startgate.h"

#define PAGE 4096
#define MAX_PAGES 16

struct phase {
	const char *name;
	int fd, n;
	long think_us;
	uint64_t seed;
	off_t base, span;	/* where its reads fall, bytes */
	void *buf;
	long requests;
	long long bytes;
	double us;
	int err;
};

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;	/* xorshift64 */
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *run(void *arg)
{
	struct phase *p = arg;
	struct timespec gap = { p->think_us / 1000000, p->think_us % 1000000 * 1000 };
	pthread_setname_np(pthread_self(), p->name);
	for (int i = 0; i < p->n; i++) {
		size_t len = (next(&p->seed) % MAX_PAGES + 1) * PAGE;
		off_t off = p->base + (off_t)(next(&p->seed) % ((p->span - len) / PAGE)) * PAGE;
		double t0 = now_us();
		ssize_t got = pread(p->fd, p->buf, len, off);
		p->us += now_us() - t0;
		if (got != (ssize_t)len) {
			p->err = got < 0 ? errno : EIO;
			return NULL;
		}
		p->requests++;
		p->bytes += got;
		nanosleep(&gap, NULL);
	}
	return NULL;
}

static off_t size_of(int fd)
{
	struct stat st;
	uint64_t bytes;
	if (fstat(fd, &st) != 0)
		return -1;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, &bytes) == 0 ? (off_t)bytes : -1;
	return st.st_size;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: blockio PATH N THINK_US SEED\n");
		return 2;
	}
	int n = atoi(argv[2]);
	long think = atol(argv[3]);
	uint64_t seed = strtoull(argv[4], NULL, 10) | 1;
	int fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "blockio: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	off_t half = size_of(fd) / 2 / PAGE * PAGE;
	void *buf;
	if (n < 1 || think < 0 || half < 2 * MAX_PAGES * PAGE ||
	    posix_memalign(&buf, PAGE, MAX_PAGES * PAGE) != 0) {
		fprintf(stderr, "blockio: N >= 1, THINK_US >= 0, PATH of 256 KiB or more\n");
		return 2;
	}
	struct phase ph[2] = {
		{ "data", fd, n, think, seed, 0, half, buf, 0, 0, 0, 0 },
		{ "hole", fd, n, think, seed * 7 + 1, half, half, buf, 0, 0, 0, 0 },
	};
	if (start_gate() != 0)
		return 1;
	for (int i = 0; i < 2; i++) {
		pthread_t th;
		/* one after the other: one read in flight at a time */
		if (pthread_create(&th, NULL, run, &ph[i]) != 0 || pthread_join(th, NULL) != 0)
			return 1;
		if (ph[i].err) {
			fprintf(stderr, "blockio: %s: read: %s\n", argv[1], strerror(ph[i].err));
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		printf("%s requests %ld bytes %lld us %.0f\n", ph[i].name, ph[i].requests, ph[i].bytes, ph[i].us);
	return 0;
}
