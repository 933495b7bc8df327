/*
 * latency.c - requests whose latency has two modes (lab 15).  Once
 * SIGUSR1 has come, two threads serve N requests between them, each a
 * call of handle(MS): a sleep of 1 ms for a fast request, of 8 ms for a
 * slow one, SLOW percent of them slow (which ones, from SEED).  The
 * average falls between the two modes, where no request is.  Each call
 * is timed around handle() with the monotonic clock; at the end the
 * program prints what it measured, for labs/check.
 *
 * Usage: latency N SLOW SEED
 * Prints: requests N avg_us A min_us M max_us X fast F slow S
 * (fast: the requests under 4000 us, slow: the others)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "startgate.h"

#define SPLIT_US 4000

struct tally {
	pthread_mutex_t lock;
	long next, n, slow_pct, fast, slow;
	uint64_t seed;
	double sum_us, min_us, max_us;
};

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* One request: MS milliseconds of sleep. */
__attribute__((noipa)) int handle(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	return nanosleep(&ts, NULL);
}

static void *serve(void *arg)
{
	struct tally *t = arg;
	for (;;) {
		pthread_mutex_lock(&t->lock);
		int more = t->next < t->n;
		t->seed ^= t->seed << 13;	/* xorshift64 */
		t->seed ^= t->seed >> 7;
		t->seed ^= t->seed << 17;
		int ms = (long)(t->seed % 100) < t->slow_pct ? 8 : 1;
		t->next++;
		pthread_mutex_unlock(&t->lock);
		if (!more)
			return NULL;
		double t0 = now_us();
		handle(ms);
		double us = now_us() - t0;
		pthread_mutex_lock(&t->lock);
		t->sum_us += us;
		if (t->min_us == 0 || us < t->min_us)
			t->min_us = us;
		if (us > t->max_us)
			t->max_us = us;
		if (us < SPLIT_US)
			t->fast++;
		else
			t->slow++;
		pthread_mutex_unlock(&t->lock);
	}
}

int main(int argc, char **argv)
{
	static struct tally t = { .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t th[2];
	if (argc != 4) {
		fprintf(stderr, "usage: latency N SLOW SEED\n");
		return 2;
	}
	t.n = atol(argv[1]);
	t.slow_pct = atol(argv[2]);
	t.seed = strtoull(argv[3], NULL, 10) | 1;
	if (start_gate())
		return 1;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, serve, &t) != 0)
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("requests %ld avg_us %.0f min_us %.0f max_us %.0f fast %ld slow %ld\n",
	       t.fast + t.slow, t.fast + t.slow ? t.sum_us / (t.fast + t.slow) : 0,
	       t.min_us, t.max_us, t.fast, t.slow);
	return 0;
}
