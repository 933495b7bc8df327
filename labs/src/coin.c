/*
 * coin.c - a workload whose time is split by coin tosses (lab 4): slices
 * of equal work, each spent in heads() with probability 1/4 and in
 * tails() otherwise.  heads() is on the CPU a quarter of the time, and
 * a slice (some 20 us) is far shorter than the time between two samples,
 * so each sample is an independent draw: the count of heads samples in n
 * samples is binomial, and the lab can compare its spread with
 * sqrt(p(1-p)/n).
 *
 * Built without PIE (labs/Makefile), so heads() has a fixed address that
 * a bpftrace program can compare the sampled instruction pointer with.
 *
 * Usage: coin [SECONDS]   (default 10; 0 runs until killed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

#define SLICE 20000	/* loop iterations per slice */

__attribute__((noinline)) void heads(void)
{
	for (int i = 0; i < SLICE; i++)
		sink += (uint64_t)i * 2654435761u;
}

__attribute__((noinline)) void tails(void)
{
	for (int i = 0; i < SLICE; i++)
		sink += (uint64_t)i * 2654435761u;
}

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	uint64_t x = 88172645463325252ULL, end = now_s() + (uint64_t)secs;

	if (secs < 0) {
		fprintf(stderr, "usage: coin [SECONDS]\n");
		return 1;
	}
	for (;;) {
		for (int j = 0; j < 1000; j++) {
			x ^= x << 13;	/* xorshift64 */
			x ^= x >> 7;
			x ^= x << 17;
			if (x % 4 == 0)
				heads();
			else
				tails();
		}
		if (secs > 0 && now_s() >= end)
			return 0;
	}
}
