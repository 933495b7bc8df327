/*
 * source.h - a capture source: where `stackfold record` and `stackfold
 * continuous` take their samples from, behind one table of operations.
 *
 * Both sources run bpftrace as a child (child.h) and read its text; they
 * differ in where the sample entries come from:
 *   "text"  bpftrace's printed maps, every line handed on (src_text.c);
 *   "maps"  bt/continuous.bt's maps read through bpf(2) at each window
 *           mark and every MAPS_READ_MS between (mapsrc.h, src_maps.c),
 *           bpftrace printing only its directives; where the maps cannot
 *           be read, the text as above.
 * A front-end picks one by name (capsrc_init(): the one place a source is
 * chosen), polls capsrc_pollfds(), and gets what the source reads through
 * the callbacks of its struct capsrc_sink: protocol lines (directives and
 * map entries, protocol.h), bpftrace's stderr lines, records read without
 * text, each buffer's total and the source's loss counts.  It tells the
 * source the protocol's moments it acts on (capsrc_attached(),
 * capsrc_mark(), capsrc_tick()).  A new source is one src_<name>.c
 * defining a struct capsrc_ops, and its row in source.c.
 *
 * Nothing here prints or exits: what a source has to say goes to the
 * sink's note(), its refusals come back as -errno and a message.
 */
#ifndef SF_CAPTURE_SOURCE_H
#define SF_CAPTURE_SOURCE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "capture/child.h"
#include "ingest/bt_parse.h"

/* Where a source's findings go; ctx is the front-end's.  A non-zero
 * result of line, err, record or total ends the read and is returned by
 * capsrc_read() (or capsrc_mark()).  Callbacks a source never calls may be
 * NULL: "text" calls line and err only, "maps" every one. */
struct capsrc_sink {
	void *ctx;
	/* a line of bpftrace's stdout: a directive or a map entry */
	int (*line)(void *ctx, const char *s, size_t len);
	/* a line of bpftrace's stderr: losses, errors, noise */
	int (*err)(void *ctx, const char *s, size_t len);
	/* a map entry read without text; pointers valid during the call */
	int (*record)(void *ctx, const struct bt_record *r);
	/* a buffer's total after its entries, as the line bpftrace would
	 * have printed ("@stackfold_t: N"); ends: at a window's mark, the
	 * window ends with it (else a read between marks) */
	int (*total)(void *ctx, const char *s, size_t len, bool ends);
	/* samples lost where the source read them (stack ids that failed) */
	void (*stackid_errors)(void *ctx, uint64_t n);
	/* something to tell the user, one line without "stackfold: " */
	void (*note)(void *ctx, const char *msg);
};

struct capsrc;

/* One source: what it does at each step of a run (capsrc_* below say
 * when each is called).  An operation left NULL does what the text source
 * does: read (every line handed on), nothing at the others. */
struct capsrc_ops {
	const char *name;
	/* the entries may come as records, not text: a capture whose keys
	 * only the text parser reads (bt/continuous-python.bt's Python
	 * frames) is not for it */
	bool records;
	/* the source's state made (capsrc_init()): 0 or -ENOMEM */
	int (*init)(struct capsrc *s);
	/* hand on what revents (of capsrc_pollfds()'s two fds) says is
	 * ready: stderr first when err_first */
	int (*read)(struct capsrc *s, const struct pollfd *pf, bool err_first);
	/* bpftrace attached: take what the source reads beyond the text */
	int (*attached)(struct capsrc *s, struct sf_err *err);
	/* a window's closing mark was handed on: read the window */
	int (*mark)(struct capsrc *s);
	/* at every turn of the front-end's loop */
	void (*tick)(struct capsrc *s, uint64_t now, bool window_open);
	/* bpftrace reaped or abandoned: let go of what attached() took */
	void (*detach)(struct capsrc *s);
	/* the source's state freed (capsrc_release()) */
	void (*release)(struct capsrc *s);
};

struct capsrc {
	const struct capsrc_ops *ops;
	struct capsrc_sink sink;
	/* The bpftrace run.  The front-end keeps bt.clock (stop_clock in
	 * child.h: period_ns, attached_ns, flushes, in_print) and reads the
	 * stop state (stop_wanted, stop_sent, stop_sent_ns, killed); the
	 * rest is the source's. */
	struct bt_child bt;
	bool err_nonblock;	/* bt.err.fd does not block: capsrc_drain_err() */
	bool records;		/* entries come as records, not lines */
	bool ended;		/* "#end" seen in this run (src_maps.c: the
				 * lines after it are bpftrace's exit echo) */
	/* capsrc_attached()'s refusal: said even without -v (the source
	 * could have read, and did not) */
	bool refusal_loud;
	char version[32];	/* the layout read ("0.17.0"), when records */
	void *priv;		/* the source's own state */
};

/* The source NAME ("text", "maps") with sink: 0, or -EINVAL for a name no
 * source has, -ENOMEM.  s is zeroed first; release with capsrc_release(). */
int capsrc_init(struct capsrc *s, const char *name,
		const struct capsrc_sink *sink);
void capsrc_release(struct capsrc *s);

/* Start a run of bpftrace (argv; err_nonblock: its stderr read without
 * blocking, see capsrc_drain_err()).  The run's state starts afresh.  0,
 * or -1 with errno. */
int capsrc_start(struct capsrc *s, char **argv, bool err_nonblock);

/* The fds to wait on: pf[0] bpftrace's stdout, pf[1] its stderr (-1 once
 * at end of file).  Returns 2. */
int capsrc_pollfds(const struct capsrc *s, struct pollfd pf[2]);

/* Read what pf's revents say is ready, handing it to the sink.  0, the
 * sink's first non-zero result, or -ENOMEM. */
int capsrc_read(struct capsrc *s, const struct pollfd pf[2], bool err_first);

/* Read what bpftrace's stderr holds now, when it does not block (a
 * window's stack-id errors come there before its total line on stdout). */
int capsrc_drain_err(struct capsrc *s);

/* "#attached" was handed on: 0, s->records telling whether the entries
 * come as records from now on; else -errno and err says why the source
 * reads the text instead (its maps not as expected, or not taken:
 * refusal_loud when the version's layout is known). */
int capsrc_attached(struct capsrc *s, struct sf_err *err);

/* "#window T" closing a window was handed on: a source reading records
 * hands the window on now, ended by its total.  0 or the sink's result. */
int capsrc_mark(struct capsrc *s);

/* At every turn of the loop, now CLOCK_MONOTONIC ns: a stopped bpftrace
 * nudged (bt_child_nudge()), and one hung killed: true, and where it
 * waited in where (bt_child_kill_hung()). */
bool capsrc_watchdog(struct capsrc *s, uint64_t now, char *where, size_t n);
/* At every turn of the loop: the source's own reads between marks
 * (window_open: a window has begun). */
void capsrc_tick(struct capsrc *s, uint64_t now, bool window_open);

/* Ask bpftrace to stop (bt_child_stop()): call again until bt.stop_sent. */
void capsrc_stop(struct capsrc *s);
/* Both of bpftrace's pipes have reached end of file. */
bool capsrc_done(const struct capsrc *s);
/* SIGKILL bpftrace (abandoned on an error). */
void capsrc_kill(struct capsrc *s);
/* Reap bpftrace and let go of what the source took: its wait status
 * (bt_child_wait()). */
int capsrc_wait(struct capsrc *s);

/* bpftrace's version line for argv (bt_child_version()). */
int capsrc_version(char *const *argv, char *buf, size_t n);

/* The operations of the sources (src_text.c, src_maps.c); the text ones
 * are what any source does for an operation it leaves NULL. */
extern const struct capsrc_ops capsrc_text_ops;
extern const struct capsrc_ops capsrc_maps_ops;
/* The text source's read with bpftrace's stdout lines given to out (a
 * source that looks at them before the sink does). */
int capsrc_text_read(struct capsrc *s, const struct pollfd *pf,
		     bool err_first, bt_line_fn out, void *ctx);

#endif
