/*
 * snapshot.c - CPU per process snapshot (bench/snapshot.sh builds it
 * against a tree's libstackfold.a).
 *
 * Usage: snapshot N PID...  Takes N rounds of sym_process_snapshot() of
 * every PID in one session (each round replaces the last: the same work
 * as a new process of a known program, its files already in the table),
 * and prints "snapshots K cpu_us_per_snapshot U failed F", the CPU of
 * this process (user + system, getrusage) over the rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "symbolizer.h"

static double cpu_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return fprintf(stderr, "usage: snapshot N PID...\n"), 2;
	long n = atol(argv[1]);
	struct sym_opts o = { 0 };
	struct sf_err err = { "" };
	struct sym_session *s = sym_session_new(&o, &err);
	if (!s)
		return fprintf(stderr, "snapshot: %s\n", err.msg), 1;
	long k = 0, failed = 0;
	/* one round first: the files' first opens are not the steady state */
	for (int i = 2; i < argc; i++)
		sym_process_snapshot(s, atoi(argv[i]), 0, 0, NULL);
	double t0 = cpu_us();
	for (long r = 0; r < n; r++) {
		for (int i = 2; i < argc; i++, k++)
			failed += sym_process_snapshot(s, atoi(argv[i]), 0, 0,
						       NULL) != 0;
		sym_session_drop_retired(s);
	}
	double t = cpu_us() - t0;
	printf("snapshots %ld cpu_us_per_snapshot %.1f failed %ld\n", k,
	       k ? t / (double)k : 0, failed);
	sym_session_free(s);
	return 0;
}
