/*
 * child.h - running bpftrace as a child and reading its output as it
 * comes, shared by `stackfold record` and `stackfold continuous`.
 *
 * These are front-end helpers: they never print (but the child, after a
 * failed exec, writes one line to its stderr pipe) and never exit.
 */
#ifndef SF_CHILD_H
#define SF_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Line splitter over a pipe fd; buf is freed by bt_child_release(). */
struct pipebuf {
	int fd;
	char *buf;
	size_t len, cap;
	bool eof;
	bool skipping;		/* in a line past LINEREADER_MAX_LINE */
};

/*
 * When a capture whose program prints and clears its maps every period_ns
 * from attached_ns may be sent its stop (SIGINT).  bpftrace carries out
 * print() and clear() in user space, in order, and at a SIGINT runs END
 * and exits: what is queued then is lost (a window printed without its
 * total line, whose samples then read as counted twice; or not printed
 * at all), and a SIGINT between a print and its clear shows the entries
 * again.  So not while a flush due has not ended (flushes, the flushes'
 * closing lines seen, < those due), nor in the last 0.5 s before the next
 * is due.  Never forever: 2 periods + 2 s after wanted_ns it may, unless
 * a print's entries are still coming (in_print, the last output at
 * out_ns under 1 s ago), up to a minute.  Times are CLOCK_MONOTONIC ns;
 * period_ns or attached_ns 0: at once.
 */
struct stop_clock {
	uint64_t period_ns, attached_ns, wanted_ns, out_ns, flushes;
	bool in_print;
};
bool stop_clock_safe(const struct stop_clock *c, uint64_t now);

/*
 * One run of bpftrace as a child: its pid, its two pipes, and the rule
 * for stopping it, shared by record and continuous (which differ in how
 * they wait and what they make of the lines).  Start from a zeroed struct
 * with out.fd and err.fd -1.  The owner sets clock.period_ns, and
 * clock.attached_ns, .flushes and .in_print as it reads them in the
 * output; bt_child_read() keeps clock.out_ns.
 */
struct bt_child {
	pid_t pid;
	struct pipebuf out, err;
	struct stop_clock clock;
	bool stop_wanted;	/* a stop is due; sent once it is safe */
	bool stop_sent;
	uint64_t stop_sent_ns;	/* monotonic time the SIGINT was sent */
	uint64_t nudged_ns;	/* the last SIGTERM of bt_child_nudge() */
	bool killed;		/* bt_child_kill()ed in this run */
};

/* How long bpftrace may stay silent after its stop, or alive after its
 * pipes closed, before it is taken for hung and killed. */
#define BT_STOP_GRACE_S 10

/* A line of the child's output; a non-zero result ends the read and is
 * returned by bt_child_read(). */
typedef int (*bt_line_fn)(void *ctx, const char *line, size_t len);

/* Start argv[0] (PATH searched) with stdout and stderr on two pipes, in
 * its own process group (a terminal's Ctrl-C reaches only the caller, who
 * forwards it once), killed if the caller dies (a SIGKILLed stackfold must
 * not leave bpftrace attached).  The run's stop state and clock start
 * afresh (but period_ns); the pipes' buffers are kept for reuse.  0, or
 * -1 with errno. */
int bt_child_start(struct bt_child *b, char **argv);

/* A stop is wanted (from the first call): SIGINT is sent to bpftrace once
 * stop_clock_safe() allows.  Call again until stop_sent. */
void bt_child_stop(struct bt_child *b);

/* Read what stdout (err false) or stderr has, once (call when poll says
 * readable), and call fn for every complete line, and for a last
 * unterminated one at end of file; a NUL byte reads as '?', as in
 * linereader.h.  A line of LINEREADER_MAX_LINE bytes or more is not held: once it
 * ends, fn gets PROTOCOL_OVERLONG for it on stdout (an unparsable line),
 * and a note saying so on stderr.  Returns 0, fn's first non-zero result,
 * or -ENOMEM. */
int bt_child_read(struct bt_child *b, bool err, bt_line_fn fn, void *ctx);

/* Both pipes have reached end of file. */
bool bt_child_done(const struct bt_child *b);

/* Stopped, and still running BT_NUDGE_MS later: SIGTERM, once each
 * BT_NUDGE_MS.  bpftrace looks at its stop flag when its event loop
 * wakes, and a SIGINT that lands while it is busy printing leaves it
 * asleep until its next event: with sampling over (-D), the next flush,
 * seconds away (as long as the 10 s grace with --flush 10).  SIGTERM sets
 * the same flag and wakes the loop; once the loop is over, bpftrace (every
 * version) only sets the flag on SIGTERM, where a second SIGINT would kill
 * it while it prints its maps.  Call at every turn of the caller's loop. */
#define BT_NUDGE_MS 1000
void bt_child_nudge(struct bt_child *b, uint64_t now);

/* Stopped, not killed yet, and no output since for BT_STOP_GRACE_S (one
 * still printing its last maps is not hung): killed now (bt_child_kill),
 * where it waited put in where (bt_child_where()).  True when it was: the
 * caller says so. */
bool bt_child_kill_hung(struct bt_child *b, uint64_t now, char *where,
			size_t n);

/* Where bpftrace waits in the kernel (/proc/PID/wchan of each of its
 * threads, "do_epoll_wait pipe_write ..."), into buf; "" when unknown.
 * Said when it is taken for hung, so that the cause can be seen. */
void bt_child_where(const struct bt_child *b, char *buf, size_t n);

/* SIGKILL bpftrace's process group (hung, or abandoned on an error). */
void bt_child_kill(struct bt_child *b);

/* Reap bpftrace (its pipes at end of file, or it killed): its wait
 * status.  One still alive BT_STOP_GRACE_S later (it closed its pipes
 * itself, or a process it started holds them) is killed first, and
 * killed is set.  SIGCHLD must not be ignored (main() resets it). */
int bt_child_wait(struct bt_child *b);

/* Close the pipes (for the next run); _release also frees the buffers. */
void bt_child_close(struct bt_child *b);
void bt_child_release(struct bt_child *b);

/* The version of the bpftrace that argv runs (argv[0], or the command
 * after `env` and its NAME=VALUE words and options), from `bpftrace
 * --version` (its first line, "bpftrace v0.17.0", into buf, cut to n - 1
 * bytes): for the profile's metadata when STACKFOLD_BPFTRACE_VERSION does
 * not say it (stackfold record run by hand).  Costs what that run costs
 * (some 20 ms of CPU); one silent for 5 s is killed.  0, or -1 when argv
 * runs no bpftrace or no such line came. */
int bt_child_version(char *const *argv, char *buf, size_t n);

/* bpftrace 0.17's harmless start-up complaint, not worth showing. */
bool bpftrace_noise(const char *line, size_t len);


#endif
