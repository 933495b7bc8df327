/*
 * stopsig.c - SIGINT and SIGTERM as stop and abort requests (stopsig.h).
 */
#include "stopsig.h"

#include <stdint.h>
#include <time.h>

static volatile sig_atomic_t g_signals, g_sigints;
/* when the last SIGINT came; written by the handler only (SIGINT is
 * blocked while its own handler runs, and SIGTERM's does not touch it) */
static uint64_t g_last_int_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;	/* clock_gettime is async-signal-safe */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	if (sig == SIGINT) {
		uint64_t t = now_ns();
		if (!g_sigints || t - g_last_int_ns >= STOPSIG_SAME_NS)
			g_sigints++;
		g_last_int_ns = t;
	}
	g_signals++;
}

void stopsig_install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

sig_atomic_t stopsig_count(void)
{
	return g_signals;
}

bool stopsig_abort(void)
{
	return g_sigints >= 2;
}
