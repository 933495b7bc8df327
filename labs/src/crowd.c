/*
 * crowd.c - a planted CPU saturation (lab 16).  Once SIGUSR1 has come,
 * K threads named "spinner" spin for SECONDS on one CPU (the last), more
 * threads than the CPU can run: each waits in the run queue while the
 * others run.  A thread named "napper" shares that CPU and sleeps 1 ms
 * at a time, so that it waits after each wakeup.  At its end each
 * thread reads what the scheduler counted for it
 * (/proc/thread-self/schedstat: time on the CPU, time waiting in a run
 * queue, times it was switched in), and the program prints the sums per
 * name, for labs/check to compare with a run-queue latency tracer.
 *
 * Usage: crowd K SECONDS
 * Prints a line per name: NAME threads N run_ns R wait_ns W slices S
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "startgate.h"

struct sums {
	pthread_mutex_t lock;
	long threads;
	unsigned long long run, wait, slices;
};

static struct sums spinners = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct sums nappers = { .lock = PTHREAD_MUTEX_INITIALIZER };
static double end_at;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Add this thread's schedstat to S. */
static void account(struct sums *s)
{
	unsigned long long run = 0, wait = 0, slices = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (f) {
		if (fscanf(f, "%llu %llu %llu", &run, &wait, &slices) != 3)
			run = wait = slices = 0;
		fclose(f);
	}
	pthread_mutex_lock(&s->lock);
	s->threads++;
	s->run += run;
	s->wait += wait;
	s->slices += slices;
	pthread_mutex_unlock(&s->lock);
}

static void *spin(void *arg)
{
	(void)arg;
	volatile unsigned long n = 0;
	while (now() < end_at)
		n++;
	account(&spinners);
	return NULL;
}

static void *nap(void *arg)
{
	(void)arg;
	struct timespec ms = { 0, 1000000L };
	while (now() < end_at)
		nanosleep(&ms, NULL);
	account(&nappers);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: crowd K SECONDS\n");
		return 2;
	}
	int k = atoi(argv[1]);
	double secs = atof(argv[2]);
	if (k < 1 || k > 64) {
		fprintf(stderr, "crowd: K must be 1 to 64\n");
		return 2;
	}
	if (start_gate())
		return 1;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &one);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	end_at = now() + secs;
	pthread_t th[65];
	for (int i = 0; i <= k; i++) {
		if (pthread_create(&th[i], &attr, i < k ? spin : nap, NULL) != 0)
			return 1;
		pthread_setname_np(th[i], i < k ? "spinner" : "napper");
	}
	for (int i = 0; i <= k; i++)
		pthread_join(th[i], NULL);
	printf("spinner threads %ld run_ns %llu wait_ns %llu slices %llu\n",
	       spinners.threads, spinners.run, spinners.wait, spinners.slices);
	printf("napper threads %ld run_ns %llu wait_ns %llu slices %llu\n",
	       nappers.threads, nappers.run, nappers.wait, nappers.slices);
	return 0;
}
