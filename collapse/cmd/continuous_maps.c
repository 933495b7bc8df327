/* continuous_maps.c - stackfold continuous's second source: the windows
 * read from bpftrace's maps (capture/mapsrc.h) instead of its text, each
 * handed to the window's report as records and ended by its total. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/protocol.h"
#include "cmds.h"
#include "ingest/report.h"
#include "cmd/continuous_priv.h"

/* bt/continuous-python.bt's keys (the Python frames after the stacks)
 * are not a layout the maps source reads: the text is, said with -v; with
 * --source maps, a stop. */
static void cont_python_no_maps(struct cont *x)
{
	const char *why = "the Python frames' keys (--python) are read "
			  "from the text only";
	if (x->o.source == SOURCE_MAPS) {
		fprintf(stderr, "stackfold: --source maps: %s\n", why);
		x->fatal = EXIT_USAGE;
		cont_stop_child(x);
	} else if (x->o.verbose && !x->source_said) {
		fprintf(stderr, "stackfold: reading bpftrace's text, not its "
			"maps: %s\n", why);
	}
	x->source_said = true;
}

/* Take this run's maps once bpftrace has attached: the windows are read
 * from them from now on, bpftrace only marking them.  Refused: the text,
 * with one line saying why when the version's layout is known (its maps
 * were not as expected, or their fds not taken) or with -v (a version
 * without a known layout, or not told: the text is the way for it); with
 * --source maps, a stop. */
void cont_maps_start(struct cont *x)
{
	struct mapsrc_layout lay;
	struct sf_err err = { "" };
	const char *ks = getenv("STACKFOLD_MAPSRC_KEY_SIZE");	/* tests */
	if (x->o.source == SOURCE_TEXT || x->maps_on)
		return;
	if (x->py) {	/* its "#python" came before "#attached" */
		cont_python_no_maps(x);
		return;
	}
	int ret = mapsrc_layout_for(getenv("STACKFOLD_BPFTRACE_VERSION"), &lay, &err);
	bool known = !ret;
	if (!ret && ks)
		lay.key_size = (uint32_t)atoi(ks);
	if (!ret)
		ret = mapsrc_open(&x->ms, x->bt.pid, &lay, &err);
	if (!ret && (ret = mapsrc_set_reader(&x->ms, true, &err)))
		mapsrc_close(&x->ms);
	if (ret && x->o.source == SOURCE_MAPS) {
		fprintf(stderr, "stackfold: --source maps: %s\n", err.msg);
		x->fatal = EXIT_ENV;
		cont_stop_child(x);
		return;
	}
	if (ret) {
		if (!x->source_said && (known || x->o.verbose))
			fprintf(stderr, "stackfold: reading bpftrace's text, not its "
				"maps: %s\n", err.msg);
		x->source_said = true;
		return;
	}
	x->maps_on = true;
	cont_feed_source(x);
	x->maps_read_at = sf_clock_ns(CLOCK_MONOTONIC);
	if (x->o.verbose && !x->source_said)
		fprintf(stderr, "stackfold: reading bpftrace %s's maps directly\n",
			lay.version);
	x->source_said = true;
}

void cont_maps_stop(struct cont *x)
{
	if (x->maps_on)
		mapsrc_close(&x->ms);
	x->maps_on = false;
}

static int maps_record(void *ctx, const struct bt_record *rec)
{
	struct cont *x = ctx;
	if (cont_over_budget(x, protocol_own_map(rec->map, rec->map_len))) {
		x->ov_samples += rec->count;
		return 0;
	}
	int ret = report_record(&x->r, rec);
	if (ret == -ENOMEM || ret == -EOVERFLOW)	/* the entry not added */
		fprintf(stderr, "stackfold: %s (window %" PRIu64 " incomplete)\n",
			ret == -ENOMEM ? "out of memory" : REPORT_OVERFLOW_MSG,
			x->written + x->failed + 1);
	return 0;
}

/* Read the retired buffer into the window; line gets its total as the
 * line bpftrace would have printed.  Its length. */
static size_t maps_take(struct cont *x, char *line, size_t cap)
{
	struct mapsrc_window w;
	struct sf_err err = { "" };
	x->maps_read_at = sf_clock_ns(CLOCK_MONOTONIC);
	if (mapsrc_read(&x->ms, false, maps_record, x, &w, &err))
		fprintf(stderr, "stackfold: reading bpftrace's maps: %s\n", err.msg);
	report_stackid_errors(&x->r, w.stackid_errors);
	if (w.slept && !x->slept_said)
		fprintf(stderr, "stackfold: membarrier refused: waiting 20 ms for "
			"running probes at each window instead\n");
	x->slept_said |= w.slept;
	int n = snprintf(line, cap, "%s: %" PRIu64,
			 w.map == MAPSRC_MAIN_B ? PROTOCOL_OWN_TOTAL_SHORT "_b" :
			 PROTOCOL_OWN_TOTAL_SHORT, w.total);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* The window just marked, from the maps: its entries, then its total as
 * the line bpftrace would have printed, which ends it as in the text. */
int cont_maps_window(struct cont *x)
{
	char line[64];
	size_t n = maps_take(x, line, sizeof(line));
	x->bt.clock.flushes++;
	return cont_total_line(x, line, n);
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

void cont_maps_tick(struct cont *x)
{
	char line[64];
	if (!x->maps_on || x->ended || x->bt.stop_sent || !x->clk_start ||
	    sf_clock_ns(CLOCK_MONOTONIC) - x->maps_read_at < read_every_ns())
		return;
	size_t n = maps_take(x, line, sizeof(line));
	cont_sub_total(x, line, n);
}
