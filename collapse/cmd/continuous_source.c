/* continuous_source.c - stackfold continuous's capture source
 * (capture/source.h): which one --source names, the sink that takes what
 * it reads into the window in progress, and the words for its choice. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/protocol.h"
#include "cmds.h"
#include "ingest/report.h"
#include "cmd/continuous_priv.h"

/* An entry read from the maps: added, or counted into the overflow past
 * --max-memory's mark, as its text would have been. */
static int src_record(void *ctx, const struct bt_record *rec)
{
	struct cont *x = ctx;
	if (cont_over_budget(x, protocol_own_map(rec->map, rec->map_len))) {
		x->ov_samples += rec->count;
		return 0;
	}
	int ret = report_record(x->r, rec);
	if (ret == -ENOMEM || ret == -EOVERFLOW)	/* the entry not added */
		fprintf(stderr, "stackfold: %s (window %" PRIu64 " incomplete)\n",
			ret == -ENOMEM ? "out of memory" : REPORT_OVERFLOW_MSG,
			x->written + x->failed + 1);
	return 0;
}

/* A read's total: at a mark it ends the window, as bpftrace's total line
 * does; between marks it is given to the window in progress. */
static int src_total(void *ctx, const char *s, size_t len, bool ends)
{
	struct cont *x = ctx;
	if (!ends) {
		cont_sub_total(x, s, len);
		return 0;
	}
	x->src.bt.clock.flushes++;
	return cont_total_line(x, s, len);
}

static void src_stackid_errors(void *ctx, uint64_t n)
{
	struct cont *x = ctx;
	report_stackid_errors(x->r, n);
}

static void src_note(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "stackfold: %s\n", msg);
}

int cont_source_init(struct cont *x, bt_line_fn out, bt_line_fn err)
{
	const struct capsrc_sink sink = {
		.ctx = x, .line = out, .err = err, .record = src_record,
		.total = src_total, .stackid_errors = src_stackid_errors,
		.note = src_note,
	};
	return capsrc_init(&x->src, x->o.source == SOURCE_TEXT ? "text" : "maps",
			   &sink);
}

/* The source reads the text only: said with a reason, always when loud,
 * else with -v; with --source maps, a stop (st its exit status). */
static void src_refused(struct cont *x, bool loud, int st, const char *why)
{
	if (x->o.source == SOURCE_MAPS) {
		fprintf(stderr, "stackfold: --source maps: %s\n", why);
		x->fatal = st;
		cont_stop_child(x);
	} else if ((loud || x->o.verbose) && !x->source_said) {
		fprintf(stderr, "stackfold: reading bpftrace's text, not its "
			"maps: %s\n", why);
	}
	x->source_said = true;
}

/* bpftrace attached: a source that reads records takes what it reads
 * now.  bt/continuous-python.bt's keys (the Python frames after the
 * stacks) are not a layout it reads: the text is, said with -v; with
 * --source maps, a stop.  Once records come: the window's metadata says
 * so, and -v which version's layout. */
void cont_source_attached(struct cont *x)
{
	struct sf_err err = { "" };
	if (x->src.records)
		return;
	if (x->py && x->src.ops->records) {	/* "#python" came first */
		src_refused(x, false, EXIT_USAGE, "the Python frames' keys "
			    "(--python) are read from the text only");
		return;
	}
	if (capsrc_attached(&x->src, &err)) {
		src_refused(x, x->src.refusal_loud, EXIT_ENV, err.msg);
		return;
	}
	if (!x->src.records)
		return;
	cont_feed_source(x);
	if (x->o.verbose && !x->source_said)
		fprintf(stderr, "stackfold: reading bpftrace %s's maps directly\n",
			x->src.version);
	x->source_said = true;
}
