/*
 * watch_test.c - checks of collapse/capture/watch.c (what `stackfold record
 * --watch-pid` stops on), run by tests/t13-watch.sh.  Prints one
 * "ok NAME" or "FAIL NAME: why" per check and exits 1 if any failed.
 *
 * Each case runs twice: with pidfds (as on any kernel since 5.3; threads
 * since 6.9) and with every target polled through /proc/ID/stat (the
 * fallback), and checks that the targets were watched as asked (a thread
 * through a pidfd from Linux 6.9 on).  Cases: one child that exits (left a zombie, and reaped);
 * two children, the capture must go on until the second is gone; a
 * process whose main thread called pthread_exit() while another runs (a
 * zombie leader, still alive); a thread of this process (a tid that is
 * not a pid); a comm with ") Z " in it; an id already gone; no ids.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/watch.h"

static int failed;
static bool no_pidfd;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s (%s)\n" : "FAIL %s (%s): %s\n", name,
	       no_pidfd ? "polled" : "pidfd", why);
	failed |= !ok;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wait (as stackfold record does: poll the fd, or look every 20 ms)
 * until watch_check() says want are alive, at most secs.  The count. */
static size_t wait_live(struct watch *w, size_t want, double secs)
{
	double end = now_s() + secs;
	size_t live = watch_check(w);
	while (live != want && now_s() < end) {
		struct pollfd pf = { watch_fd(w), POLLIN, 0 };
		poll(&pf, 1, 20);
		live = watch_check(w);
	}
	return live;
}

/* A child that sleeps ms milliseconds then exits; comm set if given. */
static pid_t child(int ms, const char *comm)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (comm)
			prctl(PR_SET_NAME, comm);
		usleep((useconds_t)ms * 1000);
		_exit(0);
	}
	return pid;
}

static void *sleeper(void *arg)
{
	usleep((useconds_t)(long)arg * 1000);
	return NULL;
}

/* A child whose main thread exits at once while a thread sleeps ms. */
static pid_t zombie_leader(int ms)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, sleeper, (void *)(long)ms))
			_exit(1);
		pthread_exit(NULL);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void one_child(bool reaped)
{
	struct watch w;
	pid_t pid = child(300, NULL);
	watch_open(&w, &pid, 1, no_pidfd);
	check(watch_check(&w) == 1, "one child: alive at first", "gone at once");
	check(watch_polled(&w) == no_pidfd, "one child: watched as asked",
	      no_pidfd ? "not polled" : "no pidfd for a process (kernel >= 5.3)");
	if (reaped) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	check(wait_live(&w, 0, 5) == 0, reaped ? "one child: gone once reaped" :
	      "one child: gone as a zombie", "not seen gone after its exit");
	watch_close(&w);
	reap(pid);
}

static void two_children(void)
{
	struct watch w;
	int ids[2] = { child(200, NULL), child(60000, NULL) };
	watch_open(&w, ids, 2, no_pidfd);
	check(wait_live(&w, 1, 5) == 1, "two children: first exits", "count not 1");
	usleep(300000);
	check(watch_check(&w) == 1, "two children: live while the second runs",
	      "count not 1");
	kill(ids[1], SIGKILL);
	check(wait_live(&w, 0, 5) == 0, "two children: gone once both are",
	      "count not 0");
	watch_close(&w);
	reap(ids[0]);
	reap(ids[1]);
}

static void leader_exits(void)
{
	struct watch w;
	pid_t pid = zombie_leader(600);
	usleep(100000);	/* the leader has exited, the thread sleeps */
	watch_open(&w, &pid, 1, no_pidfd);
	check(watch_check(&w) == 1, "zombie leader with a live thread: alive",
	      "gone while a thread runs");
	check(wait_live(&w, 0, 5) == 0, "zombie leader: gone with its last thread",
	      "not seen gone");
	watch_close(&w);
	reap(pid);
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;
	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

struct tid_arg {
	volatile int tid;
	volatile int stop;
};

static void *busy_thread(void *arg)
{
	struct tid_arg *a = arg;
	a->tid = gettid();
	while (!a->stop)
		usleep(10000);
	return NULL;
}

static void one_thread(void)
{
	struct watch w;
	struct tid_arg a = { 0, 0 };
	pthread_t t;
	if (pthread_create(&t, NULL, busy_thread, &a)) {
		check(0, "thread", "pthread_create failed");
		return;
	}
	while (!a.tid)
		usleep(1000);
	int tid = a.tid;
	watch_open(&w, &tid, 1, no_pidfd);
	if (no_pidfd || kernel_at_least(6, 9))
		check(watch_polled(&w) == no_pidfd, "thread id: watched as asked",
		      no_pidfd ? "not polled" : "no thread pidfd (PIDFD_THREAD)");
	usleep(100000);
	check(watch_check(&w) == 1, "thread id: alive while the thread runs",
	      "gone (its process runs on)");
	a.stop = 1;
	pthread_join(t, NULL);
	check(wait_live(&w, 0, 5) == 0, "thread id: gone when the thread exits",
	      "not seen gone while its process runs on");
	watch_close(&w);
}

static void odd_comm(void)
{
	struct watch w;
	pid_t pid = child(60000, "a) Z 1 2 3 4 5");
	usleep(50000);
	watch_open(&w, &pid, 1, no_pidfd);
	usleep(50000);
	check(watch_check(&w) == 1, "comm with ') Z ' in it: alive", "gone");
	kill(pid, SIGKILL);
	check(wait_live(&w, 0, 5) == 0, "comm with ') Z ' in it: gone", "not gone");
	watch_close(&w);
	reap(pid);
}

static void already_gone(void)
{
	struct watch w;
	pid_t pid = child(0, NULL);
	reap(pid);
	watch_open(&w, &pid, 1, no_pidfd);
	check(watch_live(&w) == 0 && watch_check(&w) == 0 && watch_fd(&w) < 0 &&
	      !watch_polled(&w), "an id already gone", "counted alive");
	watch_close(&w);
	watch_close(&w);	/* twice is safe */
	watch_open(&w, NULL, 0, no_pidfd);
	check(watch_live(&w) == 0 && watch_fd(&w) < 0 && !watch_polled(&w),
	      "no ids", "something watched");
	watch_close(&w);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int mode = 0; mode < 2; mode++) {
		no_pidfd = mode;
		one_child(false);
		one_child(true);
		two_children();
		leader_exits();
		one_thread();
		odd_comm();
		already_gone();
	}
	return failed;
}
