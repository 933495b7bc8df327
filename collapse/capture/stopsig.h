/*
 * stopsig.h - SIGINT, SIGTERM and SIGHUP for the commands that run
 * bpftrace (`stackfold record`, `stackfold continuous`), and for the
 * filter (stopsig_install_filter()).
 *
 * Any SIGINT, SIGTERM or SIGHUP (the terminal closed) asks to stop
 * (bpftrace prints, the outputs are written); a second SIGINT, Ctrl-C
 * again, asks to abort.  SIGTERM and SIGHUP never
 * abort: systemd, kill of a process group and timeout(1) can send one
 * stop request twice.  So can `timeout -s INT` (bpftrace users' idiom): it
 * signals its command, then its process group.  So a SIGINT that the same
 * process sent (kill(2)) as the SIGINT before it is that same request;
 * one from the terminal (Ctrl-C: sent by the kernel) or from another
 * process is a second.  Not a time window: record blocks the signals
 * while it works, so two sent at once can be handled a long time apart.
 */
#ifndef STACKFOLD_STOPSIG_H
#define STACKFOLD_STOPSIG_H

#include <signal.h>
#include <stdbool.h>

/* Catch SIGINT, SIGTERM and SIGHUP (once, before bpftrace starts); SIGHUP
 * stays ignored when it was (nohup). */
void stopsig_install(void);

/* Stop requests seen so far (it grows: compare with an earlier value to
 * see a new one); 0 while none came. */
sig_atomic_t stopsig_count(void);

/* A second SIGINT came (not the first one sent again): abort. */
bool stopsig_abort(void);

/* From now on an abort (that second SIGINT) ends the process in the
 * signal handler itself: cleanup() (async-signal-safe: it removes the
 * temporary files and says so with write(2)), then _exit(130).  For
 * record once bpftrace has exited: no loop looks at stopsig_abort() while
 * the outputs are written, and a write to a full pipe may block. */
void stopsig_exit_on_abort(void (*cleanup)(void));

/* The filter's (stackfold FILE..., reading a pipe or files): SIGTERM and
 * SIGHUP end the process as by default, after cleanup(); so does SIGINT,
 * but when stdin is a pipe (pipe) only the second one: its writer
 * (bpftrace) got the same Ctrl-C and prints its maps into the pipe, which
 * is read to its end and written out.  A signal ignored at start (a
 * background job, nohup) stays ignored. */
void stopsig_install_filter(void (*cleanup)(void), bool pipe);

#endif
