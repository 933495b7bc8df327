/*
 * cmd_record.c - `stackfold record [OPTIONS] -- bpftrace ARGS...`
 *
 * Runs the capture, reads bpftrace's output as it comes, saves each
 * sampled process's memory map at its first sample ("#pid" lines from
 * bt/profile.bt) with its files pinned open, and at the end symbolizes and
 * writes the outputs.  bpftrace runs in its own process group so a
 * terminal Ctrl-C reaches only us: the first SIGINT/SIGTERM is forwarded
 * once (bpftrace then prints its maps and exits), a second one aborts with
 * nothing written (exit 130).  A process gone before its map was read
 * gets the one the kernel's side-band records told (perfside.h), as perf
 * keeps short-lived processes: every process's, or with --side-pid those
 * of the targets and their descendants; STACKFOLD_SIDEBAND=0 turns that
 * off.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "cmd/cli.h"
#include "cmd/cmd_common.h"
#include "capture/protocol.h"
#include "cmd/loading.h"
#include "capture/perfside.h"
#include "capture/rawcap.h"
#include "capture/source.h"
#include "capture/stopsig.h"
#include "cmds.h"
#include "capture/watch.h"

struct rec {
	struct cli *c;
	struct report *r;
	/* the capture (text: bpftrace's lines); its bt.clock's attached_ns
	 * is the monotonic time of "#attached", flushes the "#flushed" lines
	 * seen, in_print true while a flush's map entries are arriving (its
	 * clear is still to come) */
	struct capsrc src;
	struct rawcap raw;	/* --save-raw */
	uint64_t start_ns;
	bool cut;		/* bpftrace ended early, with samples */
	struct watch watch;	/* --watch-pid: stop once all have exited */
	bool targets_gone;	/* ...which they have */
	uint64_t watch_polled_ns;	/* monotonic: polled targets last read */
	struct loading_list loading;	/* snapshots taken while ld.so was
					 * still loading (loading.h) */
	/* CPU already used when record started: a process keeps its usage,
	 * and its reaped children's, across exec, so scripts/profile's shell
	 * (and the `bpftrace --version` it ran) would count as ours */
	double cpu0_self, cpu0_kids;
	bool memlock_said;	/* -v: bpftrace's RLIMIT_MEMLOCK line explained */
	uint64_t resume_at;	/* bt.clock.flushes to resume held[] at */
	struct perfside side;	/* mappings of every process, or of the
				 * --side-pid ones (ncpu 0: off) */
	uint64_t side_saved;	/* processes whose map came from it */
	bool in_first_sample;	/* first_sample() saves the map it takes */
};

/* "#pyhold PID" (bt/profile-python.bt): Python processes stopped at
 * their finalization, resumed once two flushes have named their frames
 * (the first may have begun before the stop), or at the end, an abort's
 * too (abort_cleanup(), in a signal handler: file-static) */
static int held[16];
static volatile sig_atomic_t nheld;



/* --watch-pid targets without a pidfd: /proc read this often at most */
#define WATCH_POLL_NS 200000000ULL

/* After each report_line() and report_end_input(): the snapshots the
 * report took to name a record's address (a library mapped after the
 * first one) go into the raw capture before that record, so that a
 * replay names those frames (report_opts' keep_refreshed). */
static void raw_refreshed(struct rec *x)
{
	int pid;
	uint32_t image;
	while (report_next_refreshed(x->r, &pid, &image))
		rawcap_due(&x->raw, report_session(x->r, NULL), pid, image);
}

/* After report_line(): held while a record is open, so that a snapshot
 * taken to name it goes before it (rawcap.h). */
static void raw_line(struct rec *x, const char *s, size_t len)
{
	raw_refreshed(x);
	rawcap_line(&x->raw, report_session(x->r, NULL), s, len,
		    report_between_records(x->r));
}

/* loading_check() callback: the fresh map goes into the raw capture. */
static void loading_saved(void *ctx, int pid, uint32_t image)
{
	struct rec *x = ctx;
	rawcap_maps(&x->raw, report_session(x->r, NULL), pid, image);
}

/* Snapshot again the loading processes that are due (loading.h); only
 * between two records, so that the raw capture's #maps block never splits
 * one. */
static void loading_due(struct rec *x)
{
	struct sym_session *ss = report_session(x->r, NULL);
	if (ss && report_between_records(x->r))
		loading_check(&x->loading, ss, sf_clock_ns(CLOCK_MONOTONIC),
			      loading_saved, x);
}

/* sym_exited_maps_fn: the side band's map of a process gone before its
 * first snapshot ("#pid" line, or its samples read first), or before a
 * refresh (a library mapped after a snapshot taken while ld.so loaded) */
static int side_exited_maps(void *ctx, int pid, uint32_t image, char **text,
			    size_t *len)
{
	struct rec *x = ctx;
	perfside_drain(&x->side);
	int ret = perfside_maps_text(&x->side, pid, image, text, len);
	x->side_saved += !ret;
	/* taken for a record being named: saved before it, as a refresh */
	if (!ret && !x->in_first_sample)
		rawcap_due(&x->raw, report_session(x->r, NULL), pid, image);
	return ret;
}

/* "#pid PID[:STACK] COMM": snapshot now, while the process is alive,
 * unless it has one (the line comes again after each flush).  PID is the
 * pid field of the records, which may carry an image (bt_parse.h).  A
 * process that has run exec since the sample (STACK is not its start of
 * stack any more) is not snapshotted: its map is another program's.  The
 * map goes into the raw capture before the "#pid" line, so a replay finds
 * a process without one as this does (report_map_unsaved()). */
static void first_sample(struct rec *x, const char *s, size_t len)
{
	struct protocol_pid pl;
	if (!protocol_pid_line(s, len, &pl))
		return;	/* the parser counts it as unparsable */
	int pid = (int)pl.pid;
	struct sym_session *ss = report_session(x->r, NULL);
	if (ss && sym_process_current(ss, pid, pl.image))
		return;	/* seen before a flush: its map is saved */
	x->in_first_sample = true;
	int gone = protocol_snapshot(ss, &pl);
	x->in_first_sample = false;
	if (gone) {
		report_map_unsaved(x->r, pl.pid, pl.image);
		return;
	}
	rawcap_maps(&x->raw, ss, pid, pl.image);
	loading_add(&x->loading, ss, pid, pl.image, true, pid == x->c->start_pid,
		    sf_clock_ns(CLOCK_MONOTONIC));
}

static void meta_line(struct rec *x, enum protocol_meta k, const char *v);

/* The duration counts from attach time ("#attached", printed by the
 * program's BEGIN probe, which runs once every probe is attached), not
 * from bpftrace's start-up. */
static void attached(struct rec *x)
{
	if (x->src.bt.clock.attached_ns)
		return;
	x->src.bt.clock.attached_ns = sf_clock_ns(CLOCK_MONOTONIC);
	if (x->c->start_pid)
		kill(x->c->start_pid, SIGCONT);
	/* a sign of life after bpftrace's seconds of start-up, in the
	 * words of the script that knows the target (scripts/profile:
	 * "sampling pid 1234 at 99 Hz for 5 s; Ctrl-C ends early") */
	const char *say = getenv("STACKFOLD_SAMPLING");
	if (say && *say && !x->c->quiet)
		fprintf(stderr, "stackfold: %s\n", say);
	/* the capture's start, for pprof's time_nanos: this line wins over
	 * the one written at set-up */
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, sf_clock_ns(CLOCK_REALTIME));
	meta_line(x, PROTOCOL_META_START_NS, buf);
}

#define PYHOLD "#pyhold "

static void py_hold(struct rec *x, const char *s, size_t len)
{
	uint64_t pid;
	if (!sf_parse_u64(s + strlen(PYHOLD), len - strlen(PYHOLD), &pid) ||
	    !pid || pid > INT32_MAX)
		return;
	if ((size_t)nheld == sizeof(held) / sizeof(held[0])) {
		kill((int)pid, SIGCONT);	/* no room: not held */
		return;
	}
	held[nheld] = (int)pid;
	nheld = nheld + 1;
	x->resume_at = x->src.bt.clock.flushes + 2;
}

static void py_resume(void)
{
	for (sig_atomic_t i = 0; i < nheld; i++)
		kill(held[i], SIGCONT);
	nheld = 0;
}

/* the sink's line: bpftrace's stdout */
static int out_line(void *ctx, const char *s, size_t len)
{
	struct rec *x = ctx;
	int in_print;
	switch (protocol_line(s, len)) {
	case PROTOCOL_PID:
		first_sample(x, s, len);
		break;
	case PROTOCOL_ATTACHED:
		attached(x);
		break;
	case PROTOCOL_FLUSHED:
		x->src.bt.clock.flushes++, x->src.bt.clock.in_print = false;
		report_python_flushed(x->r);	/* names: read again */
		if (nheld && x->src.bt.clock.flushes >= x->resume_at)
			py_resume();
		break;
	default:
		if (len > strlen(PYHOLD) && memcmp(s, PYHOLD, strlen(PYHOLD)) == 0)
			py_hold(x, s, len);
		if ((in_print = protocol_in_print(s, len)) >= 0)
			x->src.bt.clock.in_print = in_print;
		break;
	}
	int ret = report_line(x->r, s, len);
	raw_line(x, s, len);
	return ret;
}


/* bpftrace's stderr: losses are counted, noise dropped, the rest shown. */
static int err_line(void *ctx, const char *s, size_t len)
{
	struct rec *x = ctx;
	if (bt_side_kind(s, len, NULL) != BT_SIDE_NONE) {
		int ret = report_line(x->r, s, len);
		raw_line(x, s, len);
		return ret;
	}
	if (!bpftrace_noise(s, len))
		fprintf(stderr, "bpftrace: %.*s\n", (int)len, s);
	else if (x->c->verbose && !x->memlock_said) {
		/* its "ERROR: couldn't set RLIMIT_MEMLOCK" is not one */
		x->memlock_said = true;
		fprintf(stderr, "stackfold: bpftrace could not raise its "
			"RLIMIT_MEMLOCK (no CAP_SYS_RESOURCE; its message is "
			"left out): harmless since Linux 5.11, which charges "
			"BPF memory to the cgroup instead\n");
	}
	return 0;
}


static void countdown(struct rec *x, uint64_t elapsed_s)
{
	if (!x->c->countdown || !isatty(2))
		return;
	uint64_t left = x->c->seconds > elapsed_s ? x->c->seconds - elapsed_s : 0;
	/* counts arrive with each flush (every --flush s): until the first,
	 * none is shown rather than a 0 that is not one */
	if (x->c->seconds && x->src.bt.clock.flushes)
		fprintf(stderr, "\rstackfold: recording, %3" PRIu64 " s left, %" PRIu64
			" samples by the last flush (Ctrl-C to stop) ", left,
			report_counters(x->r)->samples);
	else if (x->c->seconds)
		fprintf(stderr, "\rstackfold: recording, %3" PRIu64
			" s left (Ctrl-C to stop) ", left);
	else
		fprintf(stderr, "\rstackfold: recording, %" PRIu64 " s (Ctrl-C to stop) ",
			elapsed_s);
}

/* Time after "#attached" to stop bpftrace with -D: the program's own
 * deadline ends sampling at exactly SECONDS; stop a moment later so the
 * last samples land.  0 without -D. */
static uint64_t stop_after_ns(const struct rec *x)
{
	return x->c->seconds ? x->c->seconds * 1000000000ULL + 100000000ULL : 0;
}

/* Time until the next thing the loop must do by itself (a countdown
 * tick, the -D deadline, a stop waiting for a safe moment, a watched pid
 * without a pidfd: looked at 5 times a second), or NULL: bpftrace's
 * output, signals and the watched pidfds wake ppoll() anyway.  Every
 * wake-up costs CPU, which a capture of minutes should not spend 5 times
 * a second for nothing. */
static struct timespec *next_wakeup(const struct rec *x, struct timespec *ts)
{
	uint64_t now = sf_clock_ns(CLOCK_MONOTONIC), wait = UINT64_MAX;
	const uint64_t s = 1000000000ULL;

	if (x->src.bt.stop_wanted && !x->src.bt.stop_sent)
		wait = 100000000ULL;
	if (x->src.bt.stop_sent && !x->src.bt.killed)
		wait = s;	/* to see it hung (capsrc_watchdog) */
	if (x->loading.n) {
		uint64_t due = loading_next_due(&x->loading);
		/* due inside a record: look again soon, without spinning */
		uint64_t w = due > now ? due - now :
			     report_between_records(x->r) ? 0 : 5000000ULL;
		if (w < wait)
			wait = w;
	}
	if (watch_polled(&x->watch) && wait > WATCH_POLL_NS)
		wait = WATCH_POLL_NS;
	if (x->src.bt.clock.attached_ns) {
		uint64_t el = now - x->src.bt.clock.attached_ns;
		if (x->c->countdown && isatty(2) && wait > s - el % s)
			wait = s - el % s;
		uint64_t end = stop_after_ns(x);
		if (end && !x->src.bt.stop_wanted)
			wait = end > el ? (end - el < wait ? end - el : wait) : 0;
	}
	if (wait == UINT64_MAX)
		return NULL;
	ts->tv_sec = (time_t)(wait / s);
	ts->tv_nsec = (long)(wait % s);
	return ts;
}

/* The one line saying that the targets' exit ended the capture. */
static void say_targets_gone(const struct rec *x)
{
	uint64_t at = x->src.bt.clock.attached_ns;
	if (at)
		fprintf(stderr, "%sstackfold: every target exited after %.1f s; "
			"stopping\n", x->c->countdown && isatty(2) ? "\n" : "",
			(double)(sf_clock_ns(CLOCK_MONOTONIC) - at) / 1e9);
	else
		fprintf(stderr, "stackfold: every target exited before bpftrace "
			"attached; stopping\n");
}

/* Stop once every --watch-pid target has exited (woken: the pidfds say
 * one has; the polled ones are looked at every WATCH_POLL_NS); say so when that
 * ends the capture before its -D deadline, or with none (with -- COMMAND
 * and no -D, the command's exit is the expected end). */
static void watch_targets(struct rec *x, bool woken)
{
	if (!x->watch.n || x->targets_gone)
		return;
	uint64_t now = sf_clock_ns(CLOCK_MONOTONIC);
	/* polled targets: /proc read at most 5 times a second, not at every
	 * chunk of bpftrace's output */
	if (woken || (watch_polled(&x->watch) &&
		      now - x->watch_polled_ns >= WATCH_POLL_NS)) {
		watch_check(&x->watch);
		x->watch_polled_ns = now;
	}
	if (watch_live(&x->watch))
		return;
	x->targets_gone = true;
	/* said, unless it is the end expected: a command started to run
	 * (--start-pid) until it exits, with no -D */
	if (!x->src.bt.stop_wanted && (x->c->seconds || !x->c->start_pid) &&
	    !x->c->quiet)
		say_targets_gone(x);
	capsrc_stop(&x->src);
}

/* The side band's ring fds (PERFSIDE_POLL_MAX at most: past that the
 * rings are still read at every wake-up), into pf.  Returns how many. */
#define PERFSIDE_POLL_MAX 64
static nfds_t side_pollfds(const struct rec *x, struct pollfd *pf)
{
	const int *fds;
	int n = perfside_fds(&x->side, &fds);
	n = n > PERFSIDE_POLL_MAX ? PERFSIDE_POLL_MAX : n;
	for (int i = 0; i < n; i++)
		pf[i] = (struct pollfd){ fds[i], POLLIN, 0 };
	return (nfds_t)n;
}

static int loop(struct rec *x)
{
	uint64_t last = (uint64_t)-1;
	sigset_t block, waitmask;
	sig_atomic_t seen = 0;	/* stopsig_count() when last acted on */

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	int st = 0;
	const struct bt_child *b = &x->src.bt;
	while (!capsrc_done(&x->src)) {
		struct pollfd pf[3 + PERFSIDE_POLL_MAX];
		capsrc_pollfds(&x->src, pf);
		pf[2] = (struct pollfd){ watch_fd(&x->watch), POLLIN, 0 };
		nfds_t npf = 3 + side_pollfds(x, pf + 3);
		struct timespec ts;
		/* Blocked from the check to the wait only: a signal landing
		 * in between ends ppoll at once, and the body (symbolizing a
		 * flush can take a while) sees every Ctrl-C as it comes. */
		sigprocmask(SIG_BLOCK, &block, &waitmask);
		int n = stopsig_count() != seen ? 0 :
			ppoll(pf, npf, next_wakeup(x, &ts), &waitmask);
		sigprocmask(SIG_SETMASK, &waitmask, NULL);
		seen = stopsig_count();
		if (stopsig_abort()) {
			st = EXIT_INTERRUPTED;
			break;
		}
		if (stopsig_count() || b->stop_wanted)
			capsrc_stop(&x->src);
		if (x->loading.n)
			loading_due(x);
		if (x->side.ncpu)
			perfside_drain(&x->side);
		uint64_t at = b->clock.attached_ns,
			 now = sf_clock_ns(CLOCK_MONOTONIC);
		uint64_t el = at ? (now - at) / 1000000000ULL : 0;
		if (stop_after_ns(x) && at && now - at >= stop_after_ns(x))
			capsrc_stop(&x->src);
		char where[256];
		if (capsrc_watchdog(&x->src, now, where, sizeof(where)))
			fprintf(stderr, "%sstackfold: bpftrace gave no output in "
				"%d s after its stop: killed (it waited in: %s)\n",
				x->c->countdown && isatty(2) ? "\n" : "",
				BT_STOP_GRACE_S, where[0] ? where : "unknown");
		watch_targets(x, pf[2].revents);
		if (el != last) {
			countdown(x, el);
			last = el;
		}
		if (n <= 0)
			continue;
		int ret = capsrc_read(&x->src, pf, false);
		if (ret == -E2BIG) {
			st = cmd_max_stacks(x->r, NULL);
			break;
		}
		if (ret) {	/* -ENOMEM, or a count past 2^63 */
			fprintf(stderr, "stackfold: %s\n", ret == -EOVERFLOW ?
				REPORT_OVERFLOW_MSG : "out of memory");
			st = ret == -EOVERFLOW ? EXIT_BADINPUT : EXIT_IO;
			break;
		}
	}
	if (!st && x->c->countdown && isatty(2))
		fputc('\n', stderr);
	return st;
}

static void meta_line(struct rec *x, enum protocol_meta k, const char *v)
{
	char line[4352];
	size_t n = protocol_meta_line(line, sizeof(line), k, v);
	if (n)
		out_line(x, line, n);
}

static void meta_begin(struct rec *x, int argc, char **argv)
{
	char buf[4096];
	struct utsname u;
	x->start_ns = sf_clock_ns(CLOCK_REALTIME);
	out_line(x, PROTOCOL_HEADER, strlen(PROTOCOL_HEADER));
	snprintf(buf, sizeof(buf), "%u", x->c->hz ? x->c->hz : 99);
	meta_line(x, PROTOCOL_META_HZ, buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, x->start_ns);
	meta_line(x, PROTOCOL_META_START_NS, buf);
	if (uname(&u) == 0) {
		meta_line(x, PROTOCOL_META_KERNEL, u.release);
		meta_line(x, PROTOCOL_META_HOST, u.nodename);
	}
	const char *v = getenv("STACKFOLD_BPFTRACE_VERSION");
	if (v)
		meta_line(x, PROTOCOL_META_BPFTRACE, v);
	else if (capsrc_version(argv, buf, sizeof(buf)) == 0)
		meta_line(x, PROTOCOL_META_BPFTRACE, buf);
	const char *cmd = getenv("STACKFOLD_CMDLINE");
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; !cmd && i < argc && off < sizeof(buf) - 1; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s",
					i ? " " : "", argv[i]);
	meta_line(x, PROTOCOL_META_CMDLINE, cmd ? cmd : buf);
}

/* How long samples were taken: attach to stop, at most the program's own
 * deadline (-D), which ends sampling in the kernel. */
static uint64_t capture_ns(const struct rec *x)
{
	uint64_t at = x->src.bt.clock.attached_ns, end = x->src.bt.stop_sent_ns ?
		x->src.bt.stop_sent_ns : sf_clock_ns(CLOCK_MONOTONIC);
	uint64_t d = at && end > at ? end - at : 0;
	uint64_t cap = (uint64_t)x->c->seconds * 1000000000ULL;
	return x->c->seconds && d > cap ? cap : d;
}

/* A second Ctrl-C while the outputs are written (stopsig.h): in the
 * signal handler, so async-signal-safe only. */
static void abort_cleanup(void)
{
	static const char msg[] = "\nstackfold: aborted; the outputs not yet "
				  "written are left as they were\n";
	atomic_unlink_open();
	py_resume();
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		return;
}

static int child_status(struct rec *x)
{
	int status = capsrc_wait(&x->src);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)
		return 0;
	char how[32];
	snprintf(how, sizeof(how), "%s %d",
		 WIFEXITED(status) ? "exit status" : "signal",
		 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	if (!report_counters(x->r)->samples) {
		fprintf(stderr, "stackfold: bpftrace failed (%s) and gave no samples\n",
			how);
		return EXIT_ENV;
	}
	/* What it printed is written; the samples it took since its last
	 * flush died with it: said, counted ("#meta ended", in the raw
	 * capture too), and the exit status says the capture is incomplete. */
	fprintf(stderr, "%sstackfold: bpftrace ended early (%s) after %.1f s: "
		"the samples since its last flush are lost\n",
		x->c->countdown && isatty(2) ? "\n" : "", how,
		(double)capture_ns(x) / 1e9);
	meta_line(x, PROTOCOL_META_ENDED, how);
	x->cut = true;
	return 0;
}

static double ru_cpu_s(const struct rusage *u)	/* user+sys seconds */
{
	return (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) +
	       (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec) / 1e6;
}

/* user+sys CPU seconds of who (RUSAGE_SELF or RUSAGE_CHILDREN), 0 if
 * unknown */
static double cpu_s(int who)
{
	struct rusage u;
	return getrusage(who, &u) ? 0 : ru_cpu_s(&u);
}

/* What the capture cost, so users (and make bench) can see it: CPU since
 * record started (cpu0_*).  The max RSS is the process's, which an exec
 * keeps too; a shell's is far below ours. */
static void print_cost(const struct rec *x)
{
	struct rusage self;
	if (!x->c->verbose || getrusage(RUSAGE_SELF, &self))
		return;
	fprintf(stderr, "stackfold: cpu: stackfold %.3f s, bpftrace %.3f s "
		"(user+sys); stackfold max rss %ld KiB\n",
		ru_cpu_s(&self) - x->cpu0_self,
		cpu_s(RUSAGE_CHILDREN) - x->cpu0_kids, self.ru_maxrss);
	if (x->side.ncpu)
		fprintf(stderr, "stackfold: side band: %" PRIu64 " records of %"
			PRIu64 " processes (%s), %" PRIu64 " lost, %" PRIu64
			" not applied; %" PRIu64 " exited processes' maps from "
			"it\n", x->side.records, x->side.maps.made,
			x->c->nside ? "the targets and their descendants" :
			"every process", x->side.lost, x->side.maps.dropped,
			x->side_saved);
}

static int finish(struct rec *x)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, capture_ns(x));
	meta_line(x, PROTOCOL_META_DURATION_NS, buf);
	/* the side band's losses: a counter of the outputs and the raw
	 * capture, as bpftrace's lost events are */
	if (x->side.ncpu)
		perfside_drain(&x->side);
	if (x->side.lost) {
		snprintf(buf, sizeof(buf), "%" PRIu64, x->side.lost);
		meta_line(x, PROTOCOL_META_SIDEBAND_LOST, buf);
	}
	struct report_input_stats st;
	int end = report_end_input(x->r, &st);
	raw_refreshed(x);
	if (!end && report_past_max_stacks(x->r))
		return cmd_max_stacks(x->r, NULL);
	if (end == -EOVERFLOW || end == -ENOMEM) {	/* kept entries not added */
		fprintf(stderr, "stackfold: %s\n", end == -ENOMEM ? "out of memory" :
			REPORT_OVERFLOW_MSG);
		return end == -ENOMEM ? EXIT_IO : EXIT_BADINPUT;
	}
	/* a failed --save-raw costs only itself, as any other output */
	int raw_st = 0;
	struct sf_err e = { "" };
	if (rawcap_commit(&x->raw, report_session(x->r, NULL), &e)) {
		fprintf(stderr, "stackfold: %s\n", e.msg);
		raw_st = EXIT_IO;
	}
	if (!report_counters(x->r)->samples) {
		cmd_summary(x->r, x->c, "recorded");
		fprintf(stderr, "stackfold: no samples recorded\n");
		return EXIT_BADINPUT;
	}
	int ret = cmd_write(x->r, x->c, NULL);
	/* storing the DWARF read (the index cache) is part of the cost */
	struct sym_session *ss = report_session(x->r, NULL);
	if (ss)
		sym_session_flush(ss);
	cmd_summary(x->r, x->c, "recorded");
	print_cost(x);
	return ret ? ret : raw_st ? raw_st : x->cut ? EXIT_ENV : 0;
}

/* A missing or read-only output directory is found now, not once the
 * capture is over and lost. */
static int check_outputs(const struct cli *c)
{
	struct out_dest outs[CLI_MAX_OUTPUTS];
	static char paths[CLI_MAX_OUTPUTS][4096];
	char dir[4096];
	cli_outputs(c, outs, paths);
	for (unsigned i = 0; i < c->nformats; i++) {
		if (!strcmp(paths[i], "-"))
			continue;
		snprintf(dir, sizeof(dir), "%s", paths[i]);
		char *sl = strrchr(dir, '/');
		if (sl)
			sl[sl == dir] = 0;	/* "/p": "/" */
		struct stat st;
		const char *d = sl ? dir : ".";
		if (stat(d, &st) || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)) ||
		    faccessat(AT_FDCWD, d, W_OK | X_OK, AT_EACCESS)) {
			fprintf(stderr, "stackfold: cannot write '%s': %s\n",
				paths[i], strerror(errno));
			return EXIT_IO;
		}
	}
	return 0;
}

/* The side band, before bpftrace starts: a process that exits before its
 * first sample is read then has its maps.  Without it (no CAP_PERFMON,
 * STACKFOLD_SIDEBAND=0), such a process is counted unsaved, as before.
 * STACKFOLD_SIDEBAND_PAGES=N: its ring's pages a CPU (the advice when
 * records were lost). */
static void side_open(struct rec *x)
{
	const char *env = getenv("STACKFOLD_SIDEBAND");
	const char *pg = getenv("STACKFOLD_SIDEBAND_PAGES");
	struct sf_err e = { "" };
	uint64_t pages = 0;
	if (env && !strcmp(env, "0"))
		return;
	if (pg && *pg && (!sf_parse_u64(pg, strlen(pg), &pages) ||
			  !perfside_pages_ok(pages))) {
		fprintf(stderr, "stackfold: STACKFOLD_SIDEBAND_PAGES=%s: a power "
			"of two up to %u wanted; 128 taken\n", pg,
			PERFSIDE_PAGES_MAX);
		pages = 0;
	}
	/* kept past the flush that names its samples (bpftrace prints
	 * them a flush or two after they were taken) */
	uint64_t keep = (uint64_t)(x->c->flush ? x->c->flush : 1) * 3 + 5;
	if (perfside_open(&x->side, x->c->side_pids, x->c->nside,
			  (unsigned)pages, keep * 1000000000ULL, &e)) {
		if (x->c->verbose)
			fprintf(stderr, "stackfold: %s: processes that exit "
				"before their first sample is read are not "
				"named\n", e.msg);
		return;
	}
	struct sym_session *ss = report_session(x->r, NULL);
	if (ss)
		sym_session_set_exited_maps(ss, side_exited_maps, x);
}

static int record_setup(struct rec *x, int argc, char **argv)
{
	struct sf_err e = { "" };
	int st = check_outputs(x->c);
	if (st)
		return st;
	/* live_snapshots: first_sample() counts */
	struct report_opts ro = {
		.so = &x->c->so, .lazy_snapshot = true,
		.offsets = x->c->oo.fold_flags & FOLD_OFFSETS,
		.keep_refreshed = true, .live_snapshots = true,
		.python_live = true, .max_stacks = x->c->max_stacks,
	};
	if (!(x->r = report_new(&ro)) || !report_session(x->r, &e)) {
		fprintf(stderr, "stackfold: %s\n", e.msg[0] ? e.msg : "out of memory");
		return EXIT_IO;
	}
	if (x->c->save_raw && rawcap_open(&x->raw, x->c->save_raw, &e)) {
		fprintf(stderr, "stackfold: %s\n", e.msg);
		return EXIT_IO;
	}
	report_begin_input(x->r, NULL);
	meta_begin(x, argc, argv);
	side_open(x);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct cli c;
	struct rec x = { .c = &c, .watch = { .epfd = -1 },
			 .cpu0_self = cpu_s(RUSAGE_SELF),
			 .cpu0_kids = cpu_s(RUSAGE_CHILDREN) };
	const struct capsrc_sink sink = { .ctx = &x, .line = out_line,
					  .err = err_line };
	capsrc_init(&x.src, "text", &sink);
	int st = cli_parse(&c, true, argc, argv);
	if (st >= 0)
		return st;
	if (c.ninputs == 0) {
		fprintf(stderr, "stackfold: record needs a bpftrace command after --\n");
		return EXIT_USAGE;
	}
	st = record_setup(&x, c.ninputs, c.inputs);
	if (st)
		goto out;
	/* before bpftrace starts: a pidfd opened now is exactly the target */
	const char *poll_env = getenv("STACKFOLD_WATCH_POLL");
	if (watch_open(&x.watch, c.watch_pids, c.nwatch,
		       poll_env && *poll_env && strcmp(poll_env, "0"))) {
		fprintf(stderr, "stackfold: out of memory\n");
		st = EXIT_IO;
		goto out;
	}
	/* a target gone already is one not found, as scripts/profile says */
	for (size_t i = 0; i < x.watch.n; i++)
		if (x.watch.t[i].gone) {
			fprintf(stderr, "stackfold: --watch-pid %d: no such process or thread\n",
				x.watch.t[i].id);
			st = EXIT_ENV;
		}
	if (st)
		goto out;
	stopsig_install();
	/* a closed stdout (the top table piped into a reader gone) is a write
	 * error for that output, not death: the files are still written */
	signal(SIGPIPE, SIG_IGN);
	x.src.bt.clock.period_ns = (uint64_t)c.flush * 1000000000ULL;
	if (capsrc_start(&x.src, c.inputs, false)) {
		fprintf(stderr, "stackfold: cannot start '%s': %s\n", c.inputs[0],
			strerror(errno));
		st = EXIT_ENV;
		goto out;
	}
	st = loop(&x);
	if (st) {	/* bpftrace is stopped here: nobody reads its pipes */
		capsrc_kill(&x.src);
		capsrc_wait(&x.src);
		if (st == EXIT_INTERRUPTED)
			fprintf(stderr, "\nstackfold: aborted, no output written\n");
		goto out;
	}
	st = child_status(&x);
	stopsig_exit_on_abort(abort_cleanup);
	if (stopsig_abort()) {	/* it came as bpftrace's output ended */
		abort_cleanup();
		st = EXIT_INTERRUPTED;
		goto out;
	}
	if (!st)
		st = finish(&x);
out:
	py_resume();
	perfside_close(&x.side);
	rawcap_abort(&x.raw);
	capsrc_release(&x.src);
	loading_release(&x.loading);
	watch_close(&x.watch);
	report_free(x.r);
	return st;
}
