/*
 * src_maps.c - the maps capture source: bpftrace (bt/continuous.bt) runs
 * as for the text source and prints its directives, but once it has
 * attached its maps are taken (mapsrc.h) and read by us: each window at
 * its closing "#window" mark, and every MAPS_READ_MS between marks, each
 * entry handed on as a record and each read closed by its total.  Maps not
 * as expected: the text is read, as by the text source.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/mapsrc.h"
#include "capture/protocol.h"
#include "capture/source.h"

/* Between marks, the maps are read again once this long has passed since
 * the last read, into the window in progress, so that each buffer's stack
 * map holds a quarter second of stacks, not a window's: collisions grow
 * with the square of the stacks a map holds (under churn, 10 s windows:
 * 0.4-0.6% of samples read once a window, 0.1% once a second, 0.03% every
 * 250 ms, for the same CPU within noise). */
#define MAPS_READ_MS 250

struct maps_state {
	struct mapsrc ms;	/* taken while s->records */
	uint64_t read_at;	/* CLOCK_MONOTONIC ns of the last read */
	bool slept_said;	/* no membarrier: said once */
};

static int maps_init(struct capsrc *s)
{
	s->priv = calloc(1, sizeof(struct maps_state));
	return s->priv ? 0 : -ENOMEM;
}

static void maps_release(struct capsrc *s)
{
	free(s->priv);
	s->priv = NULL;
}

static void maps_detach(struct capsrc *s)
{
	struct maps_state *m = s->priv;
	if (s->records)
		mapsrc_close(&m->ms);
	s->records = false;
}

/* bpftrace's stdout, before the sink has it */
static int maps_line(void *ctx, const char *l, size_t len)
{
	struct capsrc *s = ctx;
	/* after "#end", bpftrace's exit echo of the maps it left for us */
	if (s->records && s->ended)
		return 0;
	if (protocol_line(l, len) == PROTOCOL_END)
		s->ended = true;
	return s->sink.line(s->sink.ctx, l, len);
}

static int maps_read_fds(struct capsrc *s, const struct pollfd *pf,
			 bool err_first)
{
	return capsrc_text_read(s, pf, err_first, maps_line, s);
}

/* Take this run's maps: the windows are read from them from now on,
 * bpftrace only marking them.  refusal_loud when the version's layout is
 * known (its maps were not as expected, or their fds not taken); a
 * version without one, or not told, takes the text quietly. */
static int maps_attached(struct capsrc *s, struct sf_err *err)
{
	struct maps_state *m = s->priv;
	struct mapsrc_layout lay;
	const char *ks = getenv("STACKFOLD_MAPSRC_KEY_SIZE");	/* tests */
	if (s->records)
		return 0;
	int ret = mapsrc_layout_for(getenv("STACKFOLD_BPFTRACE_VERSION"), &lay, err);
	s->refusal_loud = !ret;
	if (!ret && ks)
		lay.key_size = (uint32_t)atoi(ks);
	if (!ret)
		ret = mapsrc_open(&m->ms, s->bt.pid, &lay, err);
	if (!ret && (ret = mapsrc_set_reader(&m->ms, true, err)))
		mapsrc_close(&m->ms);
	if (ret)
		return ret;
	s->records = true;
	snprintf(s->version, sizeof(s->version), "%s", lay.version);
	m->read_at = sf_clock_ns(CLOCK_MONOTONIC);
	return 0;
}

static void maps_note(struct capsrc *s, const char *msg)
{
	if (s->sink.note)
		s->sink.note(s->sink.ctx, msg);
}

/* Read the retired buffer: its entries to the sink; line gets its total
 * as the line bpftrace would have printed.  Its length. */
static size_t maps_take(struct capsrc *s, char *line, size_t cap)
{
	struct maps_state *m = s->priv;
	struct mapsrc_window w;
	struct sf_err err = { "" };
	char msg[SF_ERRLEN + 64];
	m->read_at = sf_clock_ns(CLOCK_MONOTONIC);
	if (mapsrc_read(&m->ms, false, s->sink.record, s->sink.ctx, &w, &err)) {
		snprintf(msg, sizeof(msg), "reading bpftrace's maps: %s", err.msg);
		maps_note(s, msg);
	}
	s->sink.stackid_errors(s->sink.ctx, w.stackid_errors);
	if (w.slept && !m->slept_said)
		maps_note(s, "membarrier refused: waiting 20 ms for running "
			  "probes at each window instead");
	m->slept_said |= w.slept;
	int n = snprintf(line, cap, "%s: %" PRIu64,
			 w.map == MAPSRC_MAIN_B ? PROTOCOL_OWN_TOTAL_SHORT "_b" :
			 PROTOCOL_OWN_TOTAL_SHORT, w.total);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* The window just marked: its entries, then its total, which ends it as
 * in the text. */
static int maps_mark(struct capsrc *s)
{
	char line[64];
	if (!s->records)
		return 0;
	size_t n = maps_take(s, line, sizeof(line));
	return s->sink.total(s->sink.ctx, line, n, true);
}

/* MAPS_READ_MS, or $STACKFOLD_MAPS_READ_MS (bench/churn.sh compares) */
static uint64_t read_every_ns(void)
{
	static uint64_t ns;
	const char *e = getenv("STACKFOLD_MAPS_READ_MS");
	if (!ns)
		ns = (e && atoi(e) > 0 ? (uint64_t)atoi(e) : MAPS_READ_MS) * 1000000ULL;
	return ns;
}

static void maps_tick(struct capsrc *s, uint64_t now, bool window_open)
{
	struct maps_state *m = s->priv;
	char line[64];
	if (!s->records || s->ended || s->bt.stop_sent || !window_open ||
	    now - m->read_at < read_every_ns())
		return;
	size_t n = maps_take(s, line, sizeof(line));
	s->sink.total(s->sink.ctx, line, n, false);
}

const struct capsrc_ops capsrc_maps_ops = {
	.name = "maps",
	.records = true,
	.init = maps_init,
	.read = maps_read_fds,
	.attached = maps_attached,
	.mark = maps_mark,
	.tick = maps_tick,
	.detach = maps_detach,
	.release = maps_release,
};
