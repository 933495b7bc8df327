/*
 * watch.h - wait for a set of processes or threads to exit: what
 * `stackfold record --watch-pid` stops on (once every target is gone).
 *
 * Library code: never prints, never exits.
 *
 * A target is an id: a process id (gone once the whole process has
 * exited: every thread, the leader a zombie or reaped) or the id of a
 * thread that is not its process's leader (gone once that thread has
 * exited).  Each is watched through a pidfd opened by watch_open() when
 * the kernel has one (Linux >= 5.3 for processes, >= 6.9 for threads,
 * PIDFD_THREAD): exact, a pid reused later is not the target.  Otherwise
 * it is polled through /proc/ID/stat: gone when that file is missing, the
 * task is dead, a zombie with no thread left, or has another start time
 * than the one read at watch_open() (the id was reused).
 */
#ifndef SF_WATCH_H
#define SF_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct watch_target {
	int id;
	int fd;				/* pidfd, or -1: polled */
	unsigned long long start;	/* start time (clock ticks), polled */
	bool gone;
};

struct watch {
	struct watch_target *t;	/* owned */
	size_t n;		/* targets */
	size_t live;		/* of them not gone yet */
	size_t polled;		/* live targets without a pidfd */
	int epfd;		/* epoll set of the pidfds (-1: none) */
};

/* Start watching ids[0..n).  An id already gone counts as gone at once.
 * no_pidfd: poll every target (to test the fallback).  Returns 0, or
 * -errno (-ENOMEM) with nothing to release.  n may be 0: nothing is
 * watched and watch_live() stays 0. */
int watch_open(struct watch *w, const int *ids, size_t n, bool no_pidfd);
/* An fd that turns readable (POLLIN) when a pidfd target exits, or -1. */
int watch_fd(const struct watch *w);
/* Whether some live targets have no pidfd: the caller must then call
 * watch_check() every so often (a fifth of a second, say) by itself. */
bool watch_polled(const struct watch *w);
/* Look again: mark the targets that have exited, and return how many
 * are still alive.  Never blocks. */
size_t watch_check(struct watch *w);
/* Targets not seen gone yet (no new look). */
size_t watch_live(const struct watch *w);
/* Release what watch_open() set up (also after it failed); safe to call
 * twice. */
void watch_close(struct watch *w);

#endif
