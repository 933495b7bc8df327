/*
 * stopsig.c - SIGINT, SIGTERM and SIGHUP as stop and abort requests
 * (stopsig.h).
 */
#include "capture/stopsig.h"

#include <stdbool.h>
#include <sys/types.h>
#include <unistd.h>

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

/* Set once a request ends the process from the handler itself:
 * g_cleanup runs first; record's abort exits 130, the filter's ends by
 * the signal, as by default (g_reraise). */
static void (*volatile g_cleanup)(void);
static volatile sig_atomic_t g_abort_at;	/* SIGINTs that abort, 0: none */
static volatile sig_atomic_t g_reraise;		/* the filter: every signal ends */

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
	bool abort = sig == SIGINT && g_abort_at && g_sigints >= g_abort_at;
	if (!g_cleanup || !(abort || (g_reraise && sig != SIGINT)))
		return;
	g_cleanup();
	if (!g_reraise)
		_exit(130);
	/* blocked while the handler runs: delivered, and fatal, on return */
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

void stopsig_exit_on_abort(void (*cleanup)(void))
{
	g_cleanup = cleanup;
	g_abort_at = 2;
}

/* on_signal for SIGINT, SIGTERM and SIGHUP, each blocking all three while
 * it runs.  SA_RESTART: a Ctrl-C while an output is written (stdout a
 * full pipe) must not fail that write with EINTR; poll and ppoll, which
 * the loops wait in, return EINTR all the same (signal(7)).  A signal
 * ignored now stays ignored: SIGHUP always (under nohup a closed terminal
 * must not end the capture), all three with keep_ignored. */
static void install(bool keep_ignored)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO | SA_RESTART }, old;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		bool keep = keep_ignored || sigs[i] == SIGHUP;
		if (keep && sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

void stopsig_install_filter(void (*cleanup)(void), bool pipe)
{
	g_cleanup = cleanup;
	g_abort_at = pipe ? 2 : 1;
	g_reraise = 1;
	install(true);	/* a background job's, nohup's */
}

void stopsig_install(void)
{
	install(false);
}

sig_atomic_t stopsig_count(void)
{
	return g_signals;
}

bool stopsig_abort(void)
{
	return g_sigints >= 2;
}
