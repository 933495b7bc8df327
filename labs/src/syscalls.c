/*
 * syscalls.c - a syscall-heavy workload (lab 9): most of its CPU time is
 * spent in the kernel on its behalf.
 *
 *   main -> tiny_writes   write(2) of 1 byte to /dev/null, over and over
 *                         (the cost is mostly entering and leaving the kernel)
 *        -> stat_paths    stat(2) of a deep path (path walk in the kernel)
 *        -> read_zeros    read(2) of 64 KiB from /dev/zero (kernel clears
 *                         the user buffer)
 *        -> sum_user      pure user-space arithmetic, for contrast
 *
 * Each function runs for 5 ms of wall time per round.
 * Usage: syscalls [SECONDS]   (default 10; 0 runs until killed)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static int null_fd = -1, zero_fd = -1;

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

#define FOR_US(us, body)                                                \
	do {                                                            \
		uint64_t end_ = now_us() + (us);                        \
		while (now_us() < end_)                                 \
			for (int i_ = 0; i_ < 64; i_++) { body; }       \
	} while (0)

__attribute__((noinline)) void tiny_writes(unsigned us)
{
	FOR_US(us, if (write(null_fd, "x", 1) != 1) return);
}

__attribute__((noinline)) void stat_paths(unsigned us)
{
	struct stat st;
	FOR_US(us, sink += stat("/usr/share/doc/../../lib/../bin/sh", &st) == 0);
}

__attribute__((noinline)) void read_zeros(unsigned us)
{
	static char buf[64 << 10];
	FOR_US(us, if (read(zero_fd, buf, sizeof(buf)) < 0) return);
}

__attribute__((noinline)) void sum_user(unsigned us)
{
	FOR_US(us, for (int j = 0; j < 1000; j++) sink += (uint64_t)j * i_);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;

	null_fd = open("/dev/null", O_WRONLY);
	zero_fd = open("/dev/zero", O_RDONLY);
	if (null_fd < 0 || zero_fd < 0) {
		perror("syscalls: open");
		return 1;
	}
	uint64_t end = now_us() + (uint64_t)(secs * 1e6);
	while (secs <= 0 || now_us() < end) {
		tiny_writes(5000);
		stat_paths(5000);
		read_zeros(5000);
		sum_user(5000);
	}
	return 0;
}
