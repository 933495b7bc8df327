/*
 * continuous_priv.h - the state of `stackfold continuous` (cmd_continuous.c)
 * and the directory functions it calls (continuous_dir.c).  Private to
 * those two files.
 */
#ifndef SF_CONTINUOUS_PRIV_H
#define SF_CONTINUOUS_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/source.h"
#include "capture/watch.h"
#include "cmd/continuous_opts.h"
#include "cmd/loading.h"
#include "pyoffsets.h"
#include "ingest/report.h"
#include "output/windir.h"
#include "store/spool.h"

/* A session is replaced once it holds this many snapshots (those of quiet
 * pids and replaced ones are freed between windows; pids snapshotted past
 * the per-window cap are not in the memo and stay until then). */
#define SNAPS_PER_SESSION 4096
/* ... or once our resident memory passes this (ELF indexes of programs
 * long gone, e.g. on a build machine), at most every RSS_RECYCLE_MIN
 * windows so a big working set does not cost a reload per window.  The
 * target is 64 MiB at the peak: this leaves room for the indexes one
 * window may load (libclang-cpp's is 15 MB). */
#define RSS_RECYCLE_BYTES (40ULL << 20)
#define RSS_RECYCLE_MIN 6
/* /proc reads per window are capped (a fork storm must not turn into a
 * snapshot storm); pids beyond it are snapshotted lazily when resolved. */
#define SNAPS_PER_WINDOW 1024
/* A process whose name has not changed is re-snapshotted only this often
 * (windows): reading /proc/PID/maps and opening its files is most of what
 * a window costs.  An exec shows as a new name; a dlopen waits for the
 * refresh; a pid not seen for this long is forgotten. */
#define REFRESH_WINDOWS 6
#define COALESCE_MS 20
/* At exit, the queued windows are delivered for at most this long; the
 * rest wait on disk for the next start. */
#define PUSH_GRACE_S 5
#define RESTART_MAX_S 60
/* bpftrace never clears its stack maps: once their buckets are taken, new
 * stacks fail ("failed to look up stack id") and a churning machine loses
 * more stacks every hour.  A fresh bpftrace starts with empty maps, at the
 * price of its start-up (about 0.15 s of CPU and 1 s without samples on a
 * 2-CPU VM), so it is restarted when a window loses more than this share
 * of its stacks, at most once per STACKMAP_RESTART_MIN windows. */
#define STACKMAP_LOSS_PCT 5
#define STACKMAP_MIN_SAMPLES 200
#define STACKMAP_RESTART_MIN 30

/* What the last snapshot of a pid was taken of. */
struct seen {
	int pid;
	uint32_t image;		/* the image last snapshotted */
	uint32_t comm_hash;
	uint32_t snap_window, seen_window;	/* cont.win_no then */
};


struct cont {
	struct continuous_opts o;
	struct sym_session *ss;	/* shared by every window */
	uint64_t ss_snaps0;	/* stats.processes when ss was created */
	uint64_t ss_freed;	/* snapshots freed since */
	uint32_t ss_window;	/* win_no when ss was created */
	struct report *r;	/* the window's; NULL between windows */
	uint64_t win_start_ns;	/* CLOCK_REALTIME */
	/* The probe's clock (CLOCK_MONOTONIC ns, "#window T" lines) at the
	 * window's start and at its end once printed; 0 when not told (a
	 * program without those lines: then the times are when we read). */
	uint64_t clk_start, clk_end;
	uint64_t win_records;	/* stack entries read in this window */
	struct seen *seen;	/* pid memo, open addressing, 0 = empty */
	size_t nseen, seen_cap;	/* cap: a power of 2 or 0 */
	uint32_t win_no;	/* windows ended so far */
	uint64_t nsnap;		/* snapshots taken in this window */
	uint64_t snap_skipped;
	/* the capture source (capture/source.h: bpftrace's text, or its maps
	 * with --source maps or auto); its bt.clock's attached_ns is the
	 * monotonic time of "#attached", flushes the total lines (windows
	 * printed whole) */
	struct capsrc src;
	bool ever_attached;
	bool ended;		/* "#end": its END printed the last window */
	int fatal;		/* an exit status: stop now (check_dir()) */
	struct loading_list loading;	/* snapshots taken while ld.so was
					 * still loading (loading.h) */
	bool refresh;		/* restart bpftrace for fresh stack maps */
	bool targets_gone;	/* every --watch-pid target has exited */
	uint32_t refresh_after;	/* no such restart before this win_no */
	char last_err[256];	/* bpftrace's last stderr line */
	uint64_t err_lines;
	struct windir dir;	/* DIR's windows */
	int lock_fd;		/* DIR/.lock, flock()ed; -1 before */
	dev_t dir_dev;		/* DIR as locked: a DIR removed or replaced */
	ino_t dir_ino;		/* since is another */
	int prog_fd;		/* the bpftrace program in DIR, kept open */
	char prog_arg[32];	/* "/dev/fd/N": its name for bpftrace */
	uint64_t written, failed;
	/* --max-memory: once the window's reading has taken its share of
	 * the budget, its further entries are not added but counted into
	 * one [overflow] entry of their map, fed before the total line */
	bool overflow;
	uint64_t mem_mark;	/* RSS at which the window overflows */
	bool ov_skipping;	/* in an entry not added */
	int ov_map;		/* protocol_own_map() of the entries skipped */
	uint64_t ov_samples, ov_entries;
	uint64_t cut_short;	/* windows whose samples since bpftrace's last
				 * print died with it (count unknown) */
	char host[256], kernel[256];
	struct watch watch;	/* the --watch-pid targets */
	uint64_t watch_at;	/* monotonic ns of the last look at them */
	struct spool *spool;	/* --push: delivers the windows written */
	bool source_said;	/* -v: the source's choice said once */
	/* bt/continuous-python.bt's "#python" offsets: one namer for the
	 * whole run (its code objects' names cached per process across
	 * windows, checked again in each), lent to every window's report */
	struct pyframes *py;
	uint64_t py_off[PY_OFF_COUNT];
};


/* continuous_python.c: Python frames (docs/python.md). */
/* A "#python V..." line (protocol_line()'s PROTOCOL_PYTHON): the namer
 * made, or kept when the offsets are a restarted bpftrace's same ones.
 * A malformed one is counted in the window as unparsable. */
void cont_python_line(struct cont *x, const char *s, size_t len);
/* A window's report begins: the namer lent to it. */
void cont_python_window(struct cont *x);
void cont_python_release(struct cont *x);

/* continuous_dir.c: each returns 0 or an exit status, its line said. */
/* Index DIR's windows, removing what a crash left half-written. */
int cont_scan_dir(struct cont *x);
/* Take DIR/.lock (DIR reached through no other user's link). */
int cont_take_lock(struct cont *x);
/* --check: an existing DIR must be one cont_take_lock() would take. */
int cont_check_existing_dir(const char *dir);
/* DIR removed or replaced: made, locked and indexed again. */
int cont_check_dir(struct cont *x);
/* bpftrace's program kept in DIR: held open, given as /dev/fd/N. */
int cont_hold_program(struct cont *x);
/* Windows past --max-size/--max-age removed: how many. */
uint64_t cont_retention(struct cont *x, bool keep_newest);
void cont_log_removed(uint64_t n);

/* cmd_continuous.c, shared with continuous_source.c. */
/* The window's "bpftrace" metadata (its version; "source maps" when read
 * from the maps). */
void cont_feed_source(struct cont *x);
/* A window's total line: the window ends.  0 or an exit status. */
int cont_total_line(struct cont *x, const char *s, size_t len);
/* One more entry of the window (own: protocol_own_entry()'s 1 or 2):
 * true when the window is past --max-memory's mark, the entry then to be
 * counted in the [overflow] stack (the caller adds its samples to
 * x->ov_samples), not added.  Checks the RSS every 256 entries. */
bool cont_over_budget(struct cont *x, int own);
/* A total read in mid-window (the map source's reads between marks):
 * given to the window as bpftrace would have printed it, its overflow
 * first, without ending the window. */
void cont_sub_total(struct cont *x, const char *s, size_t len);
/* Ask bpftrace to end (SIGINT). */
void cont_stop_child(struct cont *x);

/* continuous_source.c: the capture source's sink and its words. */
/* The source --source names, its sink taking what it reads into the
 * window (out, err: bpftrace's lines): capsrc_init()'s result. */
int cont_source_init(struct cont *x, bt_line_fn out, bt_line_fn err);
/* bpftrace attached: the source takes what it reads beyond the text (or
 * says why not; with --source maps, a stop). */
void cont_source_attached(struct cont *x);

#endif
