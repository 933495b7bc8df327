/* report_write.c - the report's outputs written (report_write() in
 * report.h): each to stdout or through an atomic file, every one tried
 * even after one failed. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ingest/report.h"
#include "base/atomic.h"

static int write_one(const struct report_output *o, const struct out_input *in,
		     const struct out_opts *oo, struct sf_err *err)
{
	if (strcmp(o->path, "-") == 0) {
		int ret = o->fmt->write(stdout, in, oo, err);
		if ((!ret && fflush(stdout) != 0) || (ret && ferror(stdout))) {
			int e = errno ? errno : EIO;	/* from the failed write */
			ret = sf_err_set(err, e, "write '<stdout>': %s", strerror(e));
		}
		return ret;
	}
	struct atomic_file af;
	int ret = atomic_open(&af, o->path, err);
	if (ret)
		return ret;
	ret = o->fmt->write(af.fp, in, oo, err);
	if (!ret)
		return atomic_commit(&af, err);
	if (!ferror(af.fp)) {
		atomic_abort(&af);
		return ret;
	}
	/* a write error: atomic_commit() names the path and the reason
	 * (ENOSPC...) from its final flush, and removes the temporary file */
	int cret = atomic_commit(&af, err);
	return cret ? cret : sf_err_set(err, EIO, "write '%s': write error",
					o->path);
}

/* Every output, also after one failed (a closed stdout must not cost the
 * files): the first failure is returned, with its message in err. */
static int write_all(const struct report_output *outs, unsigned nouts,
		     const struct out_input *in, const struct out_opts *oo,
		     struct sf_err *err)
{
	int first = 0;
	unsigned more = 0;
	for (unsigned i = 0; i < nouts; i++) {
		struct sf_err later = { "" };
		int ret = write_one(&outs[i], in, oo, first ? &later : err);
		more += ret && first;
		if (ret && !first)
			first = ret;
	}
	if (more) {	/* one message: the first failure, and how many more */
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof(err->msg) - n, " (and %u more "
			 "output%s not written)", more, more == 1 ? "" : "s");
	}
	return first;
}

int report_write(struct report *r, const struct report_output *outs,
		 unsigned nouts, const struct out_opts *oo, const struct fold *fold,
		 struct sf_err *err)
{
	struct fold own = { 0 };
	int ret = 0;
	r->prof.counters.losses_unknown = r->folded_inputs && !r->bt_inputs;
	if (r->sink.line && r->sink.total(r->sink.ctx) &&
	    !r->prof.counters.samples) {
		/* svg is the only output, from what the sink took */
		struct out_input in = { .counters = &r->prof.counters,
					.meta = &r->prof,
					/* a provenance line's rate and time */
					.prof = r->prof.meta.duration_nanos ?
						&r->prof : NULL };
		r->sink.source(r->sink.ctx, &in);
		return write_all(outs, nouts, &in, oo, err);
	}
	if (!fold) {
		ret = report_fold(r, oo->fold_flags, &own);
		if (ret == -EOVERFLOW)
			return sf_err_set(err, EOVERFLOW, REPORT_OVERFLOW_MSG);
		if (ret)
			return sf_err_set(err, ENOMEM, "out of memory");
		fold = &own;
	}
	/* folded-text input only: the writers work from the fold alone; no
	 * samples at all (a window of the continuous mode in which nothing
	 * ran): the profile, which has its time and counters */
	bool prof = r->prof.counters.samples || !fold->total ||
		    r->prof.meta.duration_nanos;
	struct out_input in = { .counters = &r->prof.counters,
				.prof = prof ? &r->prof : NULL,
				.meta = &r->prof, .fold = fold };
	if (r->diff_before)
		in.counters_before = &r->diff_before->prof.counters;
	ret = write_all(outs, nouts, &in, oo, err);
	fold_release(&own);
	return ret;
}
