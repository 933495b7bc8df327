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

/* The window just marked, from the maps: its entries, then its total as
 * the line bpftrace would have printed, which ends it as in the text. */
int cont_maps_window(struct cont *x)
{
	struct mapsrc_window w;
	struct sf_err err = { "" };
	char line[64];
	if (mapsrc_read(&x->ms, false, maps_record, x, &w, &err))
		fprintf(stderr, "stackfold: reading bpftrace's maps: %s\n", err.msg);
	report_stackid_errors(&x->r, w.stackid_errors);
	if (w.slept && !x->slept_said)
		fprintf(stderr, "stackfold: membarrier refused: waiting 20 ms for "
			"running probes at each window instead\n");
	x->slept_said |= w.slept;
	int n = snprintf(line, sizeof(line), "%s: %" PRIu64,
			 w.map == MAPSRC_MAIN_B ? PROTOCOL_OWN_TOTAL_SHORT "_b" :
			 PROTOCOL_OWN_TOTAL_SHORT, w.total);
	x->bt.clock.flushes++;
	return cont_total_line(x, line, (size_t)n);
}
