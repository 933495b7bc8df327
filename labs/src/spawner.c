/*
 * spawner.c - a workload that runs commands known in advance (lab 14).
 * Once SIGUSR1 has come it starts N children one after the other, each
 * an execve(2) of a command picked from SEED: mostly /bin/true with
 * arguments of its own and an argv[0] that is not the file's name; now
 * and then a file that does not exist (the execve fails with ENOENT) or
 * one that is not executable (EACCES), the second and third child
 * always.  It prints what each child did, for labs/check to compare
 * with the events a tracer printed.
 *
 * Usage: spawner N SEED
 * Prints a line per child: exec PID FILENAME ARG0 ARG1 ... = RET
 * (RET: 0, or -errno when the execve failed)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "startgate.h"

static const char *const words[] = { "alpha", "bravo", "delta", "kilo", "oscar", "tango" };

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;	/* xorshift64 */
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Run one child: FILE with ARGV; returns what its execve returned. */
static int run_child(const char *file, char *const argv[], pid_t *pid)
{
	int st;
	*pid = fork();
	if (*pid < 0)
		return -EAGAIN;
	if (*pid == 0) {
		char *const envp[] = { NULL };
		execve(file, argv, envp);
		_exit(100 + errno);	/* the execve's error, for the parent */
	}
	if (waitpid(*pid, &st, 0) < 0 || !WIFEXITED(st))
		return -EINTR;
	return WEXITSTATUS(st) >= 100 ? -(WEXITSTATUS(st) - 100) : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: spawner N SEED\n");
		return 2;
	}
	long n = atol(argv[1]);
	uint64_t x = strtoull(argv[2], NULL, 10) | 1;
	if (start_gate())
		return 1;
	for (long i = 0; i < n; i++) {
		char a0[32], a1[32], a2[32], file[48];
		char *args[4] = { a0, a1, a2, NULL };
		uint64_t r = next(&x);
		snprintf(a0, sizeof(a0), "step-%ld", i);
		snprintf(a1, sizeof(a1), "%s", words[r % 6]);
		snprintf(a2, sizeof(a2), "%lu", (unsigned long)(r / 6 % 1000));
		if (r % 7 == 0 || i == 1)	/* at least one of each */
			snprintf(file, sizeof(file), "/nonexistent/tool-%ld", i);
		else if (r % 7 == 1 || i == 2)
			snprintf(file, sizeof(file), "/etc/passwd");
		else
			snprintf(file, sizeof(file), "/bin/true");
		if (r / 7 % 3 == 0)
			args[2] = NULL;	/* one argument fewer */
		pid_t pid;
		int ret = run_child(file, args, &pid);
		printf("exec %d %s %s %s%s%s = %d\n", (int)pid, file, a0, a1,
		       args[2] ? " " : "", args[2] ? a2 : "", ret);
	}
	return 0;
}
