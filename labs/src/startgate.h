/*
 * startgate.h - a lab program waits here for SIGUSR1 before its counted
 * work, so that a tracer can attach first (labs/check sends the signal
 * once the student's program has attached).  Returns 0 once it came, -1
 * when sigwait failed.  No system call after it but the work's own.
 */
#ifndef LABS_STARTGATE_H
#define LABS_STARTGATE_H

#include <signal.h>

static inline int start_gate(void)
{
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return sigwait(&set, &sig) == 0 ? 0 : -1;
}

#endif
