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

/* Start argv[0] (PATH searched) with stdout and stderr on two pipes, in
 * its own process group (a terminal's Ctrl-C reaches only the caller, who
 * forwards it once), killed if the caller dies (a SIGKILLed stackfold must
 * not leave bpftrace attached).  Returns the pid, or -1 with errno. */
pid_t child_spawn(char **argv, int *out_fd, int *err_fd);

/* Line splitter over a pipe fd.  buf is owned; free it when done. */
struct pipebuf {
	int fd;
	char *buf;
	size_t len, cap;
	bool eof;
	bool skipping;		/* in a line past LR_MAX_LINE */
};

/* Read what the pipe has (once; call when poll says readable) and call
 * fn for every complete line, and for a last unterminated one at end of
 * file; a NUL byte reads as '?', as in linereader.h.  A line of
 * LR_MAX_LINE bytes or more (linereader.h) is not held: fn gets line NULL,
 * len 0 for it once it ends.  Returns 0, fn's first non-zero result, or
 * -ENOMEM. */
int pipebuf_read(struct pipebuf *pb,
		 int (*fn)(void *ctx, const char *line, size_t len), void *ctx);

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

/* bpftrace 0.17's harmless start-up complaint, not worth showing. */
bool bpftrace_noise(const char *line, size_t len);


#endif
