/* report_access.c - the report's results and the few counts a front-end
 * adds to them (report.h, "Results"), so that front-ends do not reach
 * into struct report. */
#include "ingest/report_priv.h"

#include "model/pidfilter.h"

const struct profile *report_profile(const struct report *r)
{
	return &r->prof;
}

const struct pf_counters *report_counters(const struct report *r)
{
	return &r->prof.counters;
}

uint64_t report_input_lines(const struct report *r)
{
	return r->in.lines;
}

bool report_is_capture(const struct report *r)
{
	return r->capture;
}

uint64_t report_max_stacks(const struct report *r)
{
	return r->max_stacks;
}

unsigned report_perfscript_flags(const struct report *r)
{
	return r->perfscript_flags;
}

bool report_past_max_stacks(const struct report *r)
{
	return r->max_stacks && report_unique_stacks(r) > r->max_stacks;
}

struct sym_session *report_session_made(const struct report *r)
{
	return r->sym;
}

void report_keep_pids(struct report *r, const int *pids, unsigned n)
{
	r->prof.counters.other_pids += profile_keep_pids(&r->prof, pids, n);
}

void report_default_hz(struct report *r, uint64_t hz)
{
	if (!r->prof.meta.hz)
		r->prof.meta.hz = hz;
}

void report_count_mem_overflow(struct report *r, uint64_t n)
{
	r->prof.counters.mem_overflow += n;
}

void report_count_unparsable(struct report *r)
{
	r->prof.counters.unparsable_lines++;
}

struct out_sink *report_sink(struct report *r)
{
	return &r->sink;
}

uint64_t *report_sink_mostly_unknown(struct report *r)
{
	return &r->sink_mostly_unknown;
}

bool report_has_sink(const struct report *r)
{
	return r->sink.line != NULL;
}

void report_detach_sink(struct report *r)
{
	r->sink = (struct out_sink){ 0 };
}

void report_set_diff_before(struct report *r, const struct report *before)
{
	r->diff_before = before;
}

/* every input of r, and of the --diff before input, folded text */
bool report_all_folded(const struct report *r)
{
	const struct report *b = r->diff_before;
	return r->folded_inputs && r->folded_inputs == r->inputs &&
	       (!b || (b->folded_inputs && b->folded_inputs == b->inputs));
}
