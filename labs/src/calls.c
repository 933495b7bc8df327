/*
 * calls.c - a known number of system calls, for checking tracing programs
 * (labs 1 and 9): the count a program reports can be compared with the
 * exact number made.
 *
 * Usage: calls WRITES READS STATS [READSIZE]
 *
 * Opens /dev/null and /dev/zero, then waits for SIGUSR1, so that a tracer
 * can attach first.  On SIGUSR1 it makes exactly WRITES write(2) calls of
 * one byte to /dev/null, READS read(2) calls of READSIZE bytes (default
 * 65536) from /dev/zero and STATS stat(2) calls (newfstatat) of "/", and
 * exits with _exit(2): after the signal, exit_group is its only other
 * system call.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "startgate.h"

static char buf[1 << 20];

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: calls WRITES READS STATS [READSIZE]\n");
		return 2;
	}
	long writes = atol(argv[1]), reads = atol(argv[2]), stats = atol(argv[3]);
	long size = argc > 4 ? atol(argv[4]) : 65536;
	if (writes < 0 || reads < 0 || stats < 0 || size < 1 || size > (long)sizeof(buf)) {
		fprintf(stderr, "calls: counts must be >= 0, READSIZE 1..%zu\n", sizeof(buf));
		return 2;
	}
	int null_fd = open("/dev/null", O_WRONLY), zero_fd = open("/dev/zero", O_RDONLY);
	if (null_fd < 0 || zero_fd < 0) {
		perror("calls: open");
		return 1;
	}
	if (start_gate())
		return 1;

	struct stat st;
	for (long i = 0; i < writes; i++)
		if (write(null_fd, "x", 1) != 1)
			_exit(1);
	for (long i = 0; i < reads; i++)
		if (read(zero_fd, buf, (size_t)size) != size)
			_exit(1);
	for (long i = 0; i < stats; i++)
		if (stat("/", &st) != 0)
			_exit(1);
	_exit(0);
}
