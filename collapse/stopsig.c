/*
 * stopsig.c - SIGINT and SIGTERM as stop and abort requests (stopsig.h).
 */
#include "stopsig.h"

#include <sys/types.h>

static volatile sig_atomic_t g_signals, g_sigints;
/* the sender of the last SIGINT (0: the kernel, a terminal's Ctrl-C);
 * written by the handler only, which runs with both signals blocked */
static pid_t g_int_pid;

/* the process that sent si with kill(2) and the like, else 0 */
static pid_t sender(const siginfo_t *si)
{
	return si && (si->si_code == SI_USER || si->si_code == SI_QUEUE ||
		      si->si_code == SI_TKILL) ? si->si_pid : 0;
}

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	if (sig == SIGINT) {
		pid_t from = sender(si);
		if (!g_sigints || !from || from != g_int_pid)
			g_sigints++;
		g_int_pid = from;
	}
	g_signals++;
}

void stopsig_install(void)
{
	/* SA_RESTART: a Ctrl-C while an output is written (stdout a full
	 * pipe) must not fail that write with EINTR; poll and ppoll, which
	 * the loops wait in, return EINTR all the same (signal(7)). */
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* SIGHUP only when it is not ignored: under nohup a closed terminal
	 * must not end the capture */
	struct sigaction old;
	if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
}

sig_atomic_t stopsig_count(void)
{
	return g_signals;
}

bool stopsig_abort(void)
{
	return g_sigints >= 2;
}
