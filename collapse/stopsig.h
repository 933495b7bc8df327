/*
 * stopsig.h - SIGINT and SIGTERM for the commands that run bpftrace
 * (`stackfold record`, `stackfold continuous`).
 *
 * Any SIGINT or SIGTERM asks to stop (bpftrace prints, the outputs are
 * written); a second SIGINT, Ctrl-C again, asks to abort.  SIGTERM never
 * aborts: systemd, kill of a process group and timeout(1) can send one
 * stop request twice.  So can `timeout -s INT` (bpftrace users' idiom): it
 * signals its command, then its process group, microseconds apart; a
 * SIGINT within STOPSIG_SAME_NS of the one before is that same request,
 * not a second Ctrl-C (no hand presses a key twice in 50 ms).
 */
#ifndef STACKFOLD_STOPSIG_H
#define STACKFOLD_STOPSIG_H

#include <signal.h>
#include <stdbool.h>

#define STOPSIG_SAME_NS 50000000ULL

/* Catch SIGINT and SIGTERM (once, before bpftrace starts). */
void stopsig_install(void);

/* Stop requests seen so far (it grows: compare with an earlier value to
 * see a new one); 0 while none came. */
sig_atomic_t stopsig_count(void);

/* A second SIGINT came, apart from the first: abort. */
bool stopsig_abort(void);

#endif
