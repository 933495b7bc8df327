/* report_view.c - the report as the writers read it (report_view() in
 * report.h): what the SVG sink took, or a fold with the profile, its
 * metadata and its losses. */
#include <errno.h>
#include <stdbool.h>

#include "ingest/report_priv.h"

/* svg is the only output, from what the sink took */
static void sink_view(struct report *r, struct out_input *in)
{
	*in = (struct out_input){ .counters = &r->prof.counters,
				  .meta = &r->prof,
				  /* a provenance line's rate and time */
				  .prof = r->prof.meta.duration_nanos ?
					  &r->prof : NULL };
	r->sink.source(r->sink.ctx, in);
}

int report_view(struct report *r, unsigned fold_flags, const struct fold *fold,
		struct report_view *v, struct sf_err *err)
{
	*v = (struct report_view){ 0 };
	r->prof.counters.losses_unknown = r->folded_inputs && !r->bt_inputs;
	if (r->sink.line && r->sink.total(r->sink.ctx) &&
	    !r->prof.counters.samples) {
		sink_view(r, &v->in);
		return 0;
	}
	if (!fold) {
		int ret = report_fold(r, fold_flags, &v->own);
		if (ret == -EOVERFLOW)
			return sf_err_set(err, EOVERFLOW, REPORT_OVERFLOW_MSG);
		if (ret)
			return sf_err_set(err, ENOMEM, "out of memory");
		fold = &v->own;
	}
	/* folded-text input only: the writers work from the fold alone; no
	 * samples at all (a window of the continuous mode in which nothing
	 * ran): the profile, which has its time and counters */
	bool prof = r->prof.counters.samples || !fold->total ||
		    r->prof.meta.duration_nanos;
	v->in = (struct out_input){ .counters = &r->prof.counters,
				    .prof = prof ? &r->prof : NULL,
				    .meta = &r->prof, .fold = fold };
	if (r->diff_before)
		v->in.counters_before = &r->diff_before->prof.counters;
	return 0;
}

void report_view_release(struct report_view *v)
{
	fold_release(&v->own);
}
