/* watch.c - see watch.h. */
#include "capture/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/procfs.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL	/* Linux 6.9: a pidfd for one thread */
#endif

/* A pidfd for a process, or for a thread that is not its process's
 * leader (pidfd_open says EINVAL, or ENOENT on newer kernels, for those
 * without PIDFD_THREAD; kernels before 6.9 say EINVAL to the flag),
 * close-on-exec as every pidfd is.  -1 with errno: ESRCH when the id is
 * gone, anything else when the kernel cannot. */
static int open_pidfd(int id)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, id, 0);
	if (fd < 0 && (errno == EINVAL || errno == ENOENT))
		fd = syscall(SYS_pidfd_open, id, PIDFD_THREAD);
	return fd < 0 ? -1 : (int)fd;
#else
	(void)id;
	errno = ENOSYS;
	return -1;
#endif
}

/* /proc/ID/stat: 0 with its start time, and whether the task has ended
 * (dead, or a zombie with no thread left: a leader that called
 * pthread_exit() is a zombie while its other threads run); -1 when gone. */
static int read_stat(int id, unsigned long long *start, bool *ended)
{
	struct procfs_stat st;
	if (procfs_stat(id, &st))
		return -1;
	*start = st.starttime;
	*ended = st.state == 'X' || st.state == 'x' ||
		 (st.state == 'Z' && st.num_threads <= 1);
	return 0;
}

static bool polled_gone(const struct watch_target *t)
{
	unsigned long long start;
	bool ended;
	return read_stat(t->id, &start, &ended) || ended || start != t->start;
}

static void mark_gone(struct watch *w, struct watch_target *t)
{
	if (t->gone)
		return;
	t->gone = true;
	w->live--;
	if (t->fd >= 0) {
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, t->fd, NULL);
		close(t->fd);	/* stays readable: stop polling it */
		t->fd = -1;
	} else {
		w->polled--;
	}
}

/* Set up target t: a pidfd in the epoll set, or its start time. */
static void target_open(struct watch *w, struct watch_target *t, bool no_pidfd)
{
	bool ended;
	t->fd = no_pidfd ? -1 : open_pidfd(t->id);
	if (t->fd < 0 && !no_pidfd && errno == ESRCH) {
		t->gone = true;
		return;
	}
	if (t->fd >= 0 && w->epfd < 0)
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = t };
	if (t->fd >= 0 && (w->epfd < 0 ||
			   epoll_ctl(w->epfd, EPOLL_CTL_ADD, t->fd, &ev))) {
		close(t->fd);	/* cannot wait for it: poll it */
		t->fd = -1;
	}
	if (t->fd < 0 && (read_stat(t->id, &t->start, &ended) || ended)) {
		t->gone = true;
		return;
	}
	w->polled += t->fd < 0;
}

int watch_open(struct watch *w, const int *ids, size_t n, bool no_pidfd)
{
	*w = (struct watch){ .epfd = -1 };
	if (!n)
		return 0;
	w->t = calloc(n, sizeof(*w->t));
	if (!w->t)
		return -ENOMEM;
	w->n = n;
	for (size_t i = 0; i < n; i++) {
		w->t[i].id = ids[i];
		target_open(w, &w->t[i], no_pidfd);
		w->live += !w->t[i].gone;
	}
	return 0;
}

int watch_fd(const struct watch *w)
{
	return w->live > w->polled ? w->epfd : -1;
}

bool watch_polled(const struct watch *w)
{
	return w->polled > 0;
}

size_t watch_check(struct watch *w)
{
	struct epoll_event ev[16];
	int k;
	/* a pidfd is readable once its process (or thread) has exited */
	while (w->live > w->polled &&
	       (k = epoll_wait(w->epfd, ev, 16, 0)) > 0)
		for (int i = 0; i < k; i++)
			mark_gone(w, ev[i].data.ptr);
	for (size_t i = 0; w->polled && i < w->n; i++)
		if (!w->t[i].gone && w->t[i].fd < 0 && polled_gone(&w->t[i]))
			mark_gone(w, &w->t[i]);
	return w->live;
}

size_t watch_live(const struct watch *w)
{
	return w->live;
}

void watch_close(struct watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->t[i].fd >= 0)
			close(w->t[i].fd);
	if (w->epfd >= 0)
		close(w->epfd);
	free(w->t);
	*w = (struct watch){ .epfd = -1 };
}
