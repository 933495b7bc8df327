/*
 * waiters.c - threads that spend nearly all their time off-CPU (lab 10),
 * each waiting in a different way.  Thread names (comm) say which:
 *
 *   sleeper  nap(): clock_nanosleep(2) for 10 ms, over and over
 *   holder   hold_lock(): takes the mutex, sleeps 20 ms holding it, lets go
 *   waiter   wait_for_lock(): blocks on that mutex (futex wait)
 *   reader   read_pipe(): blocks in read(2) on a pipe
 *   (main)   feed_pipe(): writes one byte into the pipe every 5 ms
 *
 * Usage: waiters [SECONDS [PERCENT]]   (SECONDS default 10, 0 runs until
 *        killed; every sleep scaled to PERCENT of its length, default 100:
 *        labs/check runs a copy at 20, sleeps of 1, 2 and 4 ms with the
 *        same thread names, to tell a filter on the pid from one on comm)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pipefd[2];
static volatile int stop;
static long percent = 100;

static void sleep_ms(long ms)
{
	long us = ms * 10 * percent;
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

__attribute__((noinline)) void nap(void)
{
	sleep_ms(10);
}

__attribute__((noinline)) void *sleeper(void *arg)
{
	(void)arg;
	while (!stop)
		nap();
	return NULL;
}

__attribute__((noinline)) void hold_lock(void)
{
	pthread_mutex_lock(&lock);
	sleep_ms(20);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void *holder(void *arg)
{
	(void)arg;
	while (!stop) {
		hold_lock();
		sched_yield();	/* let the waiter in now and then */
	}
	return NULL;
}

__attribute__((noinline)) void wait_for_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void *waiter(void *arg)
{
	(void)arg;
	while (!stop)
		wait_for_lock();
	return NULL;
}

__attribute__((noinline)) int read_pipe(void)
{
	char c;
	return (int)read(pipefd[0], &c, 1);
}

__attribute__((noinline)) void *reader(void *arg)
{
	(void)arg;
	while (read_pipe() == 1)
		;
	return NULL;
}

__attribute__((noinline)) void feed_pipe(void)
{
	if (write(pipefd[1], "x", 1) != 1)
		stop = 1;
	sleep_ms(5);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	percent = argc > 2 ? atol(argv[2]) : 100;
	if (percent < 1 || percent > 1000) {
		fprintf(stderr, "waiters: PERCENT must be 1..1000\n");
		return 2;
	}
	static const struct { const char *name; void *(*fn)(void *); } kinds[] = {
		{ "sleeper", sleeper }, { "holder", holder },
		{ "waiter", waiter }, { "reader", reader },
	};
	pthread_t th[4];

	if (pipe(pipefd) != 0) {
		perror("waiters: pipe");
		return 1;
	}
	for (int i = 0; i < 4; i++) {
		if (pthread_create(&th[i], NULL, kinds[i].fn, NULL) != 0) {
			fprintf(stderr, "waiters: cannot create a thread\n");
			return 1;
		}
		pthread_setname_np(th[i], kinds[i].name);
	}
	uint64_t end = now_ms() + (uint64_t)(secs * 1000);
	while (!stop && (secs <= 0 || now_ms() < end))
		feed_pipe();
	stop = 1;
	close(pipefd[1]);	/* the reader sees end of file */
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return 0;
}
