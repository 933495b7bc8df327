/*
 * cmd_continuous.c - `stackfold continuous -o DIR [OPTIONS] -- bpftrace ARGS...`
 *
 * The long-running consumer behind scripts/continuous.  bpftrace
 * (bt/continuous.bt) aggregates stacks in the kernel and prints them every
 * window; each "@stackfold_total: N" line ends a window, which becomes one
 * profile: DIR/YYYYMMDDTHHMMSSZ.pb.gz (UTC window start), plus a .folded
 * sidecar with --folded (process frames comm-PID, what scripts/flame
 * merges).
 *
 * What stays across windows and what does not:
 *   - one symbolizer session (ELF indexes, kallsyms, memory-map
 *     snapshots), so a window costs lookups, not index builds; it is
 *     recycled once it has taken too many snapshots, because replaced
 *     snapshots are kept until the session is freed;
 *   - a fresh struct report per window, so a window's memory is bounded
 *     by its unique stacks and nothing grows with uptime;
 *   - an in-memory list of the files in DIR (scanned once at start), so
 *     retention costs no directory scan per window.
 *
 * Files are written to a temporary name, fsynced and renamed (base/atomic.h);
 * the .folded goes first and the .pb.gz last, so a window exists exactly
 * when its .pb.gz does.  At start, temporary files and a .folded without
 * its .pb.gz (a crash between the two renames) are removed.  A window
 * whose name is taken (a restart within the same second) gets a _NNN
 * suffix (_001, _002, ...: names sort in time order; '-N' of older
 * versions, which sorted before the unsuffixed name, is still read):
 * nothing is overwritten.  A failed write (disk full, directory
 * gone) costs that window only, with one line on stderr; older files are
 * kept and writing resumes when the fault clears.
 *
 * SIGINT/SIGTERM: forwarded once to bpftrace as SIGINT; it prints the
 * current (partial) window, which is written, and we exit 0.  A second
 * SIGINT kills bpftrace and exits 130 (a second SIGTERM does not, nor a
 * SIGINT sent again by the same process: see stopsig.h).  If bpftrace
 * exits on its own after having attached, it is restarted with a growing
 * delay: the partial window is lost, unless its END printed it ("#end":
 * it was stopped by a signal to it alone); if it never attached, we exit
 * 3.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/protocol.h"
#include "cmd/cli.h"
#include "cmd/cmd_common.h"
#include "cmd/continuous_opts.h"
#include "cmds.h"
#include "cmd/loading.h"
#include "capture/stopsig.h"
#include "model/losses.h"
#include "ingest/report.h"
#include "capture/watch.h"
#include "output/windir.h"
#include "cmd/continuous_priv.h"

/* ---- which processes to snapshot ----------------------------------- */

static struct seen *seen_slot(struct seen *tab, size_t cap, int pid)
{
	size_t i = (size_t)sf_hash_u64((uint64_t)pid) & (cap - 1);
	while (tab[i].pid && tab[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

/* Rebuild the memo with room to grow.  With forget (between windows only:
 * a window's profile points into the snapshots), the pids gone quiet are
 * left out and lose their snapshots, and the others those of the images
 * before their last exec. */
static int seen_rebuild(struct cont *x, size_t want, bool forget)
{
	size_t cap = 64;
	while (cap < want * 2)
		cap *= 2;
	struct seen *tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < x->seen_cap; i++) {
		const struct seen *e = &x->seen[i];
		if (e->pid && (!forget ||
			       x->win_no - e->seen_window <= REFRESH_WINDOWS)) {
			*seen_slot(tab, cap, e->pid) = *e;
			n++;
			if (forget)	/* the programs it ran before an exec */
				x->ss_freed += sym_process_forget_older(
					x->ss, e->pid, e->image);
		} else if (e->pid) {
			x->ss_freed += sym_process_forget(x->ss, e->pid);
		}
	}
	free(x->seen);
	x->seen = tab;
	x->seen_cap = cap;
	x->nseen = n;
	return 0;
}

/* Once a window, after its profile is released: forget the pids gone
 * quiet and free the snapshots that re-snapshots replaced, so a fork storm
 * of short-lived processes costs no memory once they are quiet; store the
 * DWARF units read in the window and let go of the debug sections. */
static void seen_sweep(struct cont *x)
{
	x->ss_freed += sym_session_drop_retired(x->ss);
	sym_session_flush(x->ss);
	if (x->seen_cap)
		seen_rebuild(x, x->nseen + 1, true);
}

/* True when pid needs a (new) snapshot; the memo is updated. */
static bool needs_snapshot(struct cont *x, int pid, uint32_t image,
			   const char *comm, size_t len)
{
	uint32_t h = (uint32_t)sf_hash_bytes(comm, len, 0);
	if ((x->nseen + 1) * 2 > x->seen_cap &&
	    seen_rebuild(x, x->nseen + 1, false))
		return true;	/* no memo: snapshot, as without one */
	struct seen *e = seen_slot(x->seen, x->seen_cap, pid);
	bool fresh = e->pid == pid && e->image == image && e->comm_hash == h &&
		     x->win_no - e->snap_window < REFRESH_WINDOWS;
	if (!e->pid)
		x->nseen++;
	if (!fresh)
		*e = (struct seen){ .pid = pid, .image = image, .comm_hash = h,
				    .snap_window = x->win_no };
	e->seen_window = x->win_no;
	return !fresh;
}

/* Make pid's memo entry stale: its next "#pid" line takes a snapshot. */
static void memo_stale(struct cont *x, int pid)
{
	if (!x->seen_cap)
		return;
	struct seen *e = seen_slot(x->seen, x->seen_cap, pid);
	if (e->pid == pid)
		e->snap_window = x->win_no - REFRESH_WINDOWS;
}

/* ---- one window ------------------------------------------------------- */

static void feed(struct cont *x, const char *s, size_t len)
{
	int ret = report_line(x->r, s, len);
	if (ret == -ENOMEM || ret == -EOVERFLOW)	/* the entry not added */
		fprintf(stderr, "stackfold: %s (window %" PRIu64 " incomplete)\n",
			ret == -ENOMEM ? "out of memory" : REPORT_OVERFLOW_MSG,
			x->written + x->failed + 1);
}

static void feed_meta(struct cont *x, enum protocol_meta k, const char *v)
{
	char line[4352];
	size_t n = protocol_meta_line(line, sizeof(line), k, v);
	if (n)
		feed(x, line, n);
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The bpftrace version the windows carry, with "; source maps" when its
 * maps are read directly (text, as before, says nothing more). */
void cont_feed_source(struct cont *x)
{
	char buf[256];
	const char *v = getenv("STACKFOLD_BPFTRACE_VERSION");
	if (!x->src.records) {
		if (v)
			feed_meta(x, PROTOCOL_META_BPFTRACE, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%s; source maps", v ? v : "bpftrace");
	feed_meta(x, PROTOCOL_META_BPFTRACE, buf);
}

static int window_begin(struct cont *x)
{
	char buf[64];
	/* one session for every window: a window costs lookups, not index
	 * loads */
	/* live_snapshots: its own snapshots, no #maps fed */
	struct report_opts ro = { .lazy_snapshot = true, .live_snapshots = true };
	if (!(x->r = report_new_session(x->ss, &ro)))
		return -ENOMEM;
	cont_python_window(x);
	x->win_records = 0;
	x->overflow = x->ov_skipping = false;
	/* A window's outputs (fold, pprof) take up to about twice what its
	 * stacks took to read: reading gets a third of what the budget
	 * leaves above the memory held between windows. */
	uint64_t base = x->o.max_mem ? rss_bytes() : 0;
	x->mem_mark = base < x->o.max_mem ? base + (x->o.max_mem - base) / 3 : 0;
	x->ov_samples = x->ov_entries = 0;
	x->nsnap = 0;
	x->snap_skipped = 0;
	report_begin_input(x->r, NULL);
	feed(x, PROTOCOL_HEADER, strlen(PROTOCOL_HEADER));
	snprintf(buf, sizeof(buf), "%u", x->o.hz);
	feed_meta(x, PROTOCOL_META_HZ, buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, x->win_start_ns);
	feed_meta(x, PROTOCOL_META_START_NS, buf);
	if (x->host[0])
		feed_meta(x, PROTOCOL_META_HOST, x->host);
	if (x->kernel[0])
		feed_meta(x, PROTOCOL_META_KERNEL, x->kernel);
	cont_feed_source(x);
	const char *v = getenv("STACKFOLD_CMDLINE");
	feed_meta(x, PROTOCOL_META_CMDLINE, v ? v : "stackfold continuous");
	return 0;
}

static void window_release(struct cont *x)
{
	report_free(x->r);	/* leaves the borrowed session alone */
	x->r = NULL;
	if (x->overflow)	/* a window at the budget: give it back */
		malloc_trim(0);
}

static int write_file(struct cont *x, const struct out_format *fmt,
		      const char *path, const struct fold *f, struct sf_err *e)
{
	struct out_opts oo = { .fold_flags = FOLD_PID };
	struct out_dest out = { fmt, path };
	return cmd_write_to(x->r, &out, 1, &oo, f, e);
}

/* .folded first, .pb.gz last: the .pb.gz is the window's commit mark. */
static int write_outputs(struct cont *x, const char *stem, struct sf_err *e)
{
	char pb[4096], fo[4096];
	windir_path(&x->dir, pb, sizeof(pb), stem, ".pb.gz");
	windir_path(&x->dir, fo, sizeof(fo), stem, ".folded");
	struct fold f = { 0 };
	int fb = fold_build(&f, report_profile(x->r), FOLD_PID);
	if (fb) {
		fold_release(&f);
		return sf_err_set(e, -fb, "%s", fb == -EOVERFLOW ?
				  REPORT_OVERFLOW_MSG : "out of memory");
	}
	int ret = 0;
	if (x->o.folded)
		ret = write_file(x, out_format_find("folded"), fo, &f, e);
	if (!ret)
		ret = write_file(x, out_format_find("pprof"), pb, &f, e);
	if (ret && x->o.folded)
		unlink(fo);
	fold_release(&f);
	return ret;
}

/* Write, retrying once after re-creating DIR (it may have been deleted). */
static int write_window(struct cont *x, const char *stem, struct sf_err *e)
{
	int ret = write_outputs(x, stem, e);
	if (ret == -ENOENT && sf_mkdir_p(x->o.dir, 0755) == 0)
		ret = write_outputs(x, stem, e);
	return ret;
}

static void log_written(struct cont *x, const char *stem, uint64_t bytes,
			uint64_t removed, const char *warn)
{
	const struct pf_counters *k = report_counters(x->r);
	char losses[1024];
	bool loss = report_losses(x->r, losses, sizeof(losses)) ||
		    x->snap_skipped || k->maps_unsaved;
	if (x->o.quiet && !loss && !warn[0])
		return;
	fprintf(stderr, "stackfold: %s: %" PRIu64 " samples, %zu stacks, %"
		PRIu64 " KiB%s", stem, k->samples, report_profile(x->r)->nsamples - 1,
		(bytes + 1023) / 1024, losses);
	if (x->snap_skipped)
		fprintf(stderr, "; %" PRIu64 " new processes over the snapshot cap",
			x->snap_skipped);
	if (k->maps_unsaved)
		fprintf(stderr, "; %" PRIu64 " %s", k->maps_unsaved,
			loss_word(LOSS_MAPS_UNSAVED, k->maps_unsaved));
	if (removed)
		fprintf(stderr, "; %" PRIu64 " old window%s removed", removed,
			removed == 1 ? "" : "s");
	fprintf(stderr, "%s\n", warn);
}


static bool session_full(struct cont *x)
{
	struct sym_stats st;
	sym_session_stats(x->ss, &st);
	if (st.processes - x->ss_snaps0 - x->ss_freed >= SNAPS_PER_SESSION)
		return true;
	return x->win_no - x->ss_window >= RSS_RECYCLE_MIN &&
	       rss_bytes() > RSS_RECYCLE_BYTES;
}

/* A full session is replaced (the memo with it: every process is
 * snapshotted again at its next "#pid" line, which for the next window
 * comes after this window's total line). */
static void session_recycle(struct cont *x)
{
	if (!session_full(x))
		return;
	struct sym_session *ns = sym_session_new(&x->o.so, NULL);
	if (!ns)
		return;		/* keep the old one: bigger beats broken */
	sym_session_free(x->ss);
	malloc_trim(0);		/* give the freed indexes back */
	x->ss = ns;
	x->ss_snaps0 = 0;
	x->ss_freed = 0;
	x->ss_window = x->win_no;
	loading_clear(&x->loading);	/* the old session's processes */
	if (x->seen)
		memset(x->seen, 0, x->seen_cap * sizeof(*x->seen));
	x->nseen = 0;
}

/* The symbolizer's warnings (each text once per session) ride on the
 * window's line: "; warning: TEXT (and N more)", or "" when none. */
static void take_warnings(struct cont *x, char *buf, size_t n)
{
	const char *w = sym_session_next_warning(x->ss);
	buf[0] = 0;
	if (!w)
		return;
	int len = snprintf(buf, n, "; warning: %s", w);
	unsigned more = 0;
	while (sym_session_next_warning(x->ss))
		more++;
	if (more && len > 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, " (and %u more)", more);
}

static void stackmap_check(struct cont *x)
{
	const struct pf_counters *k = report_counters(x->r);
	uint64_t n = k->samples + report_dropped(x->r);
	if (x->src.bt.stop_sent || n < STACKMAP_MIN_SAMPLES ||
	    k->stackid_errors * 100 <= n * STACKMAP_LOSS_PCT ||
	    x->win_no < x->refresh_after)
		return;
	x->refresh = true;
	x->refresh_after = x->win_no + STACKMAP_RESTART_MIN;
	fprintf(stderr, "stackfold: %" PRIu64 " stack-id errors in %" PRIu64
		" samples (bpftrace's stack maps fill up: it never clears them); "
		"restarting bpftrace\n", k->stackid_errors, n);
}

/* Release the window and begin the next one at now; ret: window_end()'s
 * result so far, returned when it is an error. */
static int window_next(struct cont *x, uint64_t now, int ret)
{
	x->win_no++;
	window_release(x);
	seen_sweep(x);
	session_recycle(x);
	x->win_start_ns = now;
	return ret ? ret : window_begin(x);
}

/* End the window: write it (unless it is an empty tail at EOF), start the
 * next one at `now`.  Returns 0 or -ENOMEM. */
static int window_end(struct cont *x, bool at_eof)
{
	uint64_t now = sf_clock_ns(CLOCK_REALTIME);
	uint64_t dur = now - x->win_start_ns;
	char buf[32];
	if (x->clk_start && x->clk_end > x->clk_start) {
		/* when the samples were taken, not when we read them */
		dur = x->clk_end - x->clk_start;
		now = x->win_start_ns + dur;
		x->clk_start = x->clk_end;
	}
	x->clk_end = 0;
	snprintf(buf, sizeof(buf), "%" PRIu64, dur);
	feed_meta(x, PROTOCOL_META_DURATION_NS, buf);
	struct report_input_stats st;
	int ret = report_end_input(x->r, &st);
	char warn[SF_ERRLEN + 64];
	take_warnings(x, warn, sizeof(warn));
	if (!ret && !(at_eof && !x->win_records) && !x->fatal &&
	    (x->fatal = cont_check_dir(x))) {
		x->failed++;	/* its line said why; we stop */
	} else if (!ret && !(at_eof && !x->win_records)) {
		char stem[WINDIR_STEM_MAX];
		time_t t = (time_t)(x->win_start_ns / 1000000000ULL);
		struct sf_err e = { "" };
		bool named = windir_name(&x->dir, t, stem);
		if (!named)
			sf_err_set(&e, EEXIST, "every name of its second is taken");
		if (!named || write_window(x, stem, &e)) {
			x->failed++;
			fprintf(stderr, "stackfold: window %s not written: %s (%"
				PRIu64 " window%s lost so far)%s\n", stem, e.msg,
				x->failed, x->failed == 1 ? "" : "s", warn);
			cont_log_removed(cont_retention(x, false));
		} else {
			uint64_t bytes;
			x->written++;
			ret = windir_add(&x->dir, stem, t, &bytes);
			spool_notify(x->spool, stem);
			log_written(x, stem, bytes, cont_retention(x, true), warn);
		}
		stackmap_check(x);
	}
	return window_next(x, now, ret);
}

/* ---- bpftrace's output ------------------------------------------------ */

/* "#pid PID[:STACK] COMM": the process's first sample in this window (PID
 * may carry an image, STACK tells an exec since the sample: bt_parse.h). */
static void first_sample(struct cont *x, const char *s, size_t len)
{
	struct protocol_pid pl;
	if (!protocol_pid_line(s, len, &pl))
		return;
	int pid = (int)pl.pid;
	/* fresh in the memo, and still the process snapshotted (a reused
	 * pid with the same comm and image is another) */
	if (!needs_snapshot(x, pid, pl.image, pl.comm, pl.comm_len) &&
	    sym_process_current(x->ss, pid, pl.image))
		return;
	if (x->nsnap >= SNAPS_PER_WINDOW) {
		x->snap_skipped++;
		memo_stale(x, pid);	/* tried again next window */
		return;
	}
	x->nsnap++;
	if (protocol_snapshot(x->ss, &pl))
		report_map_unsaved(x->r, pl.pid, pl.image);	/* gone */
	else
		loading_add(&x->loading, x->ss, pid, pl.image, false, false,
			    sf_clock_ns(CLOCK_MONOTONIC));
}

static int err_line(void *ctx, const char *s, size_t len);

/* A window's stack-id errors come on stderr before its total line on
 * stdout: read them now (the fd does not block), so that they count in
 * that window.  One read takes the whole pipe: it asks for at least its
 * capacity (64 KiB, never enlarged). */
static int drain_err(struct cont *x)
{
	return capsrc_drain_err(&x->src);
}

/* A line of an entry not added (x->ov_skipping): its last ("]: N", after
 * the stacks) adds N to the overflow. */
static void overflow_line(struct cont *x, const char *s, size_t len)
{
	const char *p = memmem(s, len, "]: ", 3);
	uint64_t n;
	if (!p || (p != s && memcmp(s, ", ]: ", 5) != 0))
		return;
	p += 3;
	if (sf_parse_u64(p, (size_t)(s + len - p), &n)) {
		x->ov_samples += n;
		x->ov_skipping = false;
	}
}

bool cont_over_budget(struct cont *x, int own)
{
	x->win_records++;
	if (!x->overflow && x->o.max_mem && !(x->win_records & 255) &&
	    rss_bytes() > x->mem_mark)
		x->overflow = true;
	if (!x->overflow)
		return false;
	x->ov_map = own;
	x->ov_entries++;
	return true;
}

/* The overflow as one entry of the window's map, named [overflow] (comm
 * and frame), so the window's samples still sum to its total and the
 * outputs show the weight; counted as mem_overflow. */
static void overflow_feed(struct cont *x)
{
	char line[160];
	if (!x->ov_samples)
		return;
	int n = snprintf(line, sizeof(line), "%s[0, 0, [overflow]\\x00\\x00"
			 "\\x00\\x00\\x00\\x00, ", x->ov_map == 1 ?
			 PROTOCOL_OWN_MAP "_b" : PROTOCOL_OWN_MAP);
	feed(x, line, (size_t)n);
	feed(x, "        [overflow]", 18);
	n = snprintf(line, sizeof(line), ", ]: %" PRIu64, x->ov_samples);
	feed(x, line, (size_t)n);
	report_count_mem_overflow(x->r, x->ov_samples);
	x->ov_samples = 0;
	x->ov_skipping = false;
}

void cont_sub_total(struct cont *x, const char *s, size_t len)
{
	overflow_feed(x);
	feed(x, s, len);
}

int cont_total_line(struct cont *x, const char *s, size_t len)
{
	if (drain_err(x))
		return -ENOMEM;
	overflow_feed(x);
	feed(x, s, len);
	/* At exit bpftrace prints every keyless map again (as 0): an empty
	 * window after the stop, or after "#end" (bpftrace stopped by someone
	 * else), is that echo, not a window. */
	if ((x->src.bt.stop_sent || x->ended) && !x->win_records)
		return 0;
	return window_end(x, false);
}

/* Sampling starts now: the first window of a run starts here, not when
 * bpftrace was started (its compile takes seconds). */
static void attached(struct cont *x)
{
	char buf[32];
	if (x->win_records || x->clk_start)
		return;
	x->win_start_ns = sf_clock_ns(CLOCK_REALTIME);
	snprintf(buf, sizeof(buf), "%" PRIu64, x->win_start_ns);
	feed_meta(x, PROTOCOL_META_START_NS, buf);
}

/* The probe's clock now as CLOCK_REALTIME: bpftrace's nsecs is
 * CLOCK_MONOTONIC (bpf_ktime_get_ns()). */
static uint64_t probe_to_real(uint64_t mono)
{
	uint64_t r = sf_clock_ns(CLOCK_REALTIME), m = sf_clock_ns(CLOCK_MONOTONIC);
	return mono > m ? r : r - (m - mono);
}

/* "#window T": bt/continuous.bt's clock at a window boundary (BEGIN, each
 * interval, END), printed before that window's entries.  The first of a
 * run starts the window; each later one ends the window being printed,
 * which window_end() names and times from it, however late we read it (a
 * stopped or starved stackfold). */
static void window_mark(struct cont *x, const char *s, size_t len)
{
	uint64_t t;
	const char *p = s + 8;
	if (!sf_parse_u64(p, len - 8, &t) || !t)
		return;
	if (x->clk_start) {
		x->clk_end = t;
		return;
	}
	if (x->win_records)
		return;	/* samples before any boundary: read-time clock */
	char buf[32];
	x->clk_start = t;
	x->win_start_ns = probe_to_real(t);
	snprintf(buf, sizeof(buf), "%" PRIu64, x->win_start_ns);
	feed_meta(x, PROTOCOL_META_START_NS, buf);
}

/* the sink's line: bpftrace's stdout */
static int out_line(void *ctx, const char *s, size_t len)
{
	struct cont *x = ctx;
	switch (protocol_line(s, len)) {
	case PROTOCOL_PYTHON:
		cont_python_line(x, s, len);
		return 0;
	case PROTOCOL_PID:
		first_sample(x, s, len);
		return 0;
	case PROTOCOL_ATTACHED:
		x->ever_attached = true;
		x->src.bt.clock.attached_ns = sf_clock_ns(CLOCK_MONOTONIC);
		attached(x);
		cont_source_attached(x);
		return 0;
	case PROTOCOL_WINDOW: {
		bool ends = x->clk_start;
		window_mark(x, s, len);
		return ends ? capsrc_mark(&x->src) : 0;
	}
	case PROTOCOL_END:
		x->ended = true;
		return 0;
	case PROTOCOL_TOTAL:
		x->src.bt.clock.flushes++;
		return cont_total_line(x, s, len);
	default:
		break;
	}
	/* bt/continuous.bt double-buffers: windows alternate between
	 * @stackfold and @stackfold_b, with totals @stackfold_total and
	 * @stackfold_total_b, which the parser holds against them */
	int own = protocol_own_entry(s, len);
	if ((own == 2 || own == 1) && cont_over_budget(x, own)) {
		x->ov_skipping = true;
		return 0;
	}
	if (x->ov_skipping) {
		overflow_line(x, s, len);
		return 0;
	}
	feed(x, s, len);
	return 0;
}


/* bpftrace's stderr: losses go to the window; other lines are shown
 * until it has attached (start-up errors), then only kept for the log
 * line of an unexpected exit, so a chatty bpftrace cannot flood the log. */
static int err_line(void *ctx, const char *s, size_t len)
{
	struct cont *x = ctx;
	if (bt_side_kind(s, len, NULL) != BT_SIDE_NONE) {
		feed(x, s, len);
		return 0;
	}
	if (bpftrace_noise(s, len) || !len)
		return 0;
	x->err_lines++;
	snprintf(x->last_err, sizeof(x->last_err), "%.*s", (int)len, s);
	if (!x->src.bt.clock.attached_ns)	/* start-up errors, of every run */
		fprintf(stderr, "bpftrace: %.*s\n", (int)len, s);
	return 0;
}


/* ---- the child -------------------------------------------------------- */


/* Ask bpftrace to stop (it prints the window on SIGINT), once it is
 * between windows: a stop in the middle of a window's print would lose its
 * total line or the whole print.  Called again until sent. */
void cont_stop_child(struct cont *x)
{
	x->src.bt.clock.in_print = x->win_records > 0;
	capsrc_stop(&x->src);
}

/* How long pump() may wait for bpftrace: a second, or until a loading
 * process is due. */
static int poll_ms(const struct cont *x)
{
	uint64_t due = loading_next_due(&x->loading), now;
	if (x->src.bt.stop_wanted && !x->src.bt.stop_sent)
		return 50;	/* until it is safe to stop */
	if (due == UINT64_MAX)
		return 1000;
	now = sf_clock_ns(CLOCK_MONOTONIC);
	return due <= now ? 0 : due - now >= 1000000000ULL ? 1000 :
	       (int)((due - now + 999999) / 1000000);
}

/* Every --watch-pid target gone: stop, as stackfold record does (a pid
 * reused later is another process, not to be profiled as the target).
 * Looked at once a second at most. */
static void watch_targets(struct cont *x)
{
	uint64_t now = sf_clock_ns(CLOCK_MONOTONIC);
	if (!x->watch.n || x->src.bt.stop_sent || x->targets_gone ||
	    now - x->watch_at < 1000000000ULL)
		return;
	x->watch_at = now;
	if (watch_check(&x->watch))
		return;
	fprintf(stderr, "stackfold: every --watch-pid target has exited; stopping\n");
	x->targets_gone = true;
	cont_stop_child(x);
}

/* Read bpftrace until both pipes close.  0, or EXIT_INTERRUPTED / EXIT_IO. */
static int pump(struct cont *x)
{
	const struct bt_child *b = &x->src.bt;
	while (!capsrc_done(&x->src)) {
		struct pollfd pf[2];
		capsrc_pollfds(&x->src, pf);
		int n = poll(pf, 2, poll_ms(x));
		if (stopsig_abort())
			return EXIT_INTERRUPTED;
		if (x->fatal)
			return x->fatal;
		if (stopsig_count() || x->refresh || b->stop_wanted)
			cont_stop_child(x);	/* sent once */
		watch_targets(x);
		char where[256];
		if (capsrc_watchdog(&x->src, sf_clock_ns(CLOCK_MONOTONIC), where,
				    sizeof(where)))
			fprintf(stderr, "stackfold: bpftrace gave no output in %d s "
				"after its stop: killed (it waited in: %s)\n",
				BT_STOP_GRACE_S, where[0] ? where : "unknown");
		if (x->loading.n)
			loading_check(&x->loading, x->ss,
				      sf_clock_ns(CLOCK_MONOTONIC), NULL, NULL);
		capsrc_tick(&x->src, sf_clock_ns(CLOCK_MONOTONIC), x->clk_start);
		if (n <= 0)
			continue;
		/* bpftrace writes a window as many small writes: once one has
		 * begun, let them gather (the pipe holds 1 MiB) so a window
		 * costs a few wake-ups rather than one per write.  Between
		 * windows there is no wait: a "#pid" line is a process to
		 * snapshot before it exits (unless this window's snapshots
		 * are used up: then a fork storm costs no wake-up a line).
		 * Read from the maps, a window has no print to gather. */
		if (!b->stop_sent &&
		    ((x->win_records && !x->src.records) || x->nsnap >= SNAPS_PER_WINDOW))
			poll(NULL, 0, COALESCE_MS);
		/* stderr first (and drain_err() at the total line) */
		if (capsrc_read(&x->src, pf, true)) {
			fprintf(stderr, "stackfold: out of memory\n");
			return EXIT_IO;
		}
	}
	return 0;
}

static void describe_exit(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(buf, n, "signal %d", WTERMSIG(status));
}

/* Sleep up to `secs`, cut short by a signal.  True when stopped. */
static bool backoff(unsigned secs)
{
	for (unsigned i = 0; i < secs * 10 && !stopsig_count(); i++)
		poll(NULL, 0, 100);
	return stopsig_count() != 0;
}

/* One run of bpftrace.  Returns -1 to restart it, else an exit status. */
static int run_once(struct cont *x, unsigned *delay)
{
	x->ended = false;
	x->clk_start = x->clk_end = 0;
	x->last_err[0] = 0;
	x->err_lines = 0;
	if (capsrc_start(&x->src, x->o.argv, true)) {
		fprintf(stderr, "stackfold: cannot start '%s': %s\n", x->o.argv[0],
			strerror(errno));
		return EXIT_ENV;
	}
	uint64_t windows0 = x->written + x->failed;
	int st = pump(x);
	if (st) {
		capsrc_kill(&x->src);
		capsrc_wait(&x->src);
		if (st == EXIT_INTERRUPTED)
			fprintf(stderr, "stackfold: aborted, window in progress lost\n");
		return st;
	}
	int status = capsrc_wait(&x->src);
	/* bpftrace that died on its own (not stopped: its END did not print
	 * the rest), or that was killed hung after its stop, may have died
	 * while it printed the window: what came of it is part of a window,
	 * not written (said lost below) */
	bool killed = x->src.bt.killed && !x->ended;
	bool died = (!x->src.bt.stop_sent && !x->ended) || killed;
	if (x->r && x->win_records && died &&
	    window_next(x, sf_clock_ns(CLOCK_REALTIME), 0)) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	}
	if (x->r && x->win_records && !died && window_end(x, true)) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	}
	if (x->fatal)
		return x->fatal;
	if (killed && x->src.bt.stop_sent) {
		x->cut_short++;
		fprintf(stderr, "stackfold: the samples of the window in progress "
			"are lost\n");
	}
	if (x->refresh && !stopsig_count() && !x->targets_gone) {
		x->refresh = false;
		x->win_start_ns = sf_clock_ns(CLOCK_REALTIME);
		return -1;	/* at once: no backoff, nothing failed */
	}
	if (x->src.bt.stop_sent)
		return EXIT_OK;
	char how[64];
	describe_exit(status, how, sizeof(how));
	if (x->written + x->failed > windows0 + 1)
		*delay = 1;	/* it ran for a while: a fresh crash */
	if (!x->ever_attached) {	/* the program or the machine: say so */
		fprintf(stderr, "stackfold: bpftrace failed before attaching (%s)\n", how);
		return EXIT_ENV;
	}
	if (!x->src.bt.clock.attached_ns) {	/* a restart that died young */
		fprintf(stderr, "stackfold: bpftrace failed before attaching (%s%s%s); "
			"restarting in %u s\n", how, x->last_err[0] ? ": " : "",
			x->last_err, *delay);
	} else if (x->ended) {	/* stopped by someone else: its END printed all */
		fprintf(stderr, "stackfold: bpftrace exited (%s) after printing "
			"the window in progress; restarting in %u s\n", how,
			*delay);
	} else {	/* what its map held since the last print died with it */
		x->cut_short++;
		fprintf(stderr, "stackfold: bpftrace exited (%s%s%s): the samples "
			"of the window in progress are lost; restarting in %u s\n",
			how, x->last_err[0] ? ": " : "", x->last_err, *delay);
	}
	if (x->targets_gone)	/* it died as the stop waited: no restart */
		return EXIT_OK;
	if (backoff(*delay))
		return stopsig_abort() ? EXIT_INTERRUPTED : EXIT_OK;
	*delay = *delay * 2 > RESTART_MAX_S ? RESTART_MAX_S : *delay * 2;
	x->win_start_ns = sf_clock_ns(CLOCK_REALTIME);
	return -1;
}

/* ---- set-up ----------------------------------------------------------- */

/* Pinned files are kept open by the session: use the hard fd limit. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int setup(struct cont *x)
{
	struct sf_err e = { "" };
	x->dir.dir = x->o.dir;
	int rc = sf_mkdir_p(x->o.dir, 0755);
	if (rc) {
		fprintf(stderr, "stackfold: cannot create '%s': %s\n", x->o.dir,
			strerror(-rc));
		return EXIT_IO;
	}
	if ((rc = cont_take_lock(x)) || (rc = cont_hold_program(x)) || (rc = cont_scan_dir(x)))
		return rc;
	cont_log_removed(cont_retention(x, false));	/* limits apply from the start */
	if ((rc = push_cli_start(&x->o.push, x->o.dir, NULL, &x->spool)))
		return rc;
	raise_nofile();
	x->ss = sym_session_new(&x->o.so, &e);
	if (!x->ss) {
		fprintf(stderr, "stackfold: %s\n", e.msg[0] ? e.msg : "out of memory");
		return EXIT_IO;
	}
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(x->host, sizeof(x->host), "%s",
			 x->o.host ? x->o.host : u.nodename);
		snprintf(x->kernel, sizeof(x->kernel), "%s", u.release);
	}
	x->win_start_ns = sf_clock_ns(CLOCK_REALTIME);
	if (window_begin(x)) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	}
	stopsig_install();
	signal(SIGPIPE, SIG_IGN);
	if (watch_open(&x->watch, x->o.watch_pids, x->o.nwatch, false)) {
		fprintf(stderr, "stackfold: out of memory\n");
		return EXIT_IO;
	}
	return 0;
}

int cmd_continuous(int argc, char **argv)
{
	struct cont x = { .watch = { .epfd = -1 }, .lock_fd = -1,
			  .prog_fd = -1 };
	int st = continuous_opts_parse(&x.o, argc, argv);
	if (st >= 0)
		return st;
	if (x.o.check)	/* scripts/continuous, before it touches DIR */
		return cont_check_existing_dir(x.o.dir);
	if (cont_source_init(&x, out_line, err_line)) {
		fprintf(stderr, "stackfold: out of memory\n");
		capsrc_release(&x.src);
		return EXIT_IO;
	}
	x.src.bt.clock.period_ns = (uint64_t)x.o.window * 1000000000ULL;
	st = setup(&x);
	for (unsigned delay = 1; !st;) {
		int r = run_once(&x, &delay);
		if (r != -1) {	/* -1: restart bpftrace */
			st = r;
			break;
		}
	}
	/* -q: only when something was lost, a problem to log */
	if ((!x.o.quiet && x.written) || x.failed + x.cut_short)
		fprintf(stderr, "stackfold: stopped: %" PRIu64 " window%s written, %"
			PRIu64 " lost, %" PRIu64 " cut short by a bpftrace exit\n",
			x.written, x.written == 1 ? "" : "s", x.failed, x.cut_short);
	spool_stop(x.spool, PUSH_GRACE_S);
	if (x.r)
		window_release(&x);
	cont_python_release(&x);	/* after the report that borrowed it */
	capsrc_release(&x.src);
	free(x.seen);
	windir_release(&x.dir);
	loading_release(&x.loading);
	sym_session_free(x.ss);
	watch_close(&x.watch);
	if (x.prog_fd >= 0)
		close(x.prog_fd);
	if (x.lock_fd >= 0)
		close(x.lock_fd);
	return st;
}
