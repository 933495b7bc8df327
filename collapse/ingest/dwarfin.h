/*
 * dwarfin.h - --call-graph dwarf samples into bpftrace records: each
 * complete sample (dwarfrec.h) is unwound (unwinder.h) and handed on
 * as a bt_record with raw user and kernel addresses, which the resolver
 * names as it names any other record.
 *
 * A stack whose copy ended before the stack did gets a "[truncated]"
 * root frame, one the unwinder could not follow to its end
 * "[unwind-error]"; both are counted (pf_counters), as are partial
 * samples.  Nothing prints or exits.
 */
#ifndef SF_DWARFIN_H
#define SF_DWARFIN_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest/bt_parse.h"
#include "ingest/dwarfrec.h"
#include "model/profile.h"
#include "symbolizer.h"
#include "unwinder.h"

struct dwarfin {
	struct dwrec *rec;
	struct unwinder *uw;	/* NULL until a session is had */
	/* the session (created on first use), the record sink, and the
	 * counters to add to; all the caller's */
	struct sym_session *(*session)(void *ctx);
	int (*record)(void *ctx, const struct bt_record *r);
	void *ctx;
	struct pf_counters *counters;
	struct bt_frame *frames;
	size_t fcap;
	struct uw_result res;
};

/* 0 or -ENOMEM. */
int dwarfin_init(struct dwarfin *d, struct sym_session *(*session)(void *),
		 int (*record)(void *, const struct bt_record *), void *ctx,
		 struct pf_counters *counters);
void dwarfin_release(struct dwarfin *d);
/* Is the line one of --call-graph dwarf's records?  (d may be zeroed:
 * not initialised yet.) */
bool dwarfin_wants(const struct dwarfin *d, const char *s, size_t len);
/* 0; 1 when the line is not a record after all (hand it on); <0
 * (-ENOMEM, the record sink's). */
int dwarfin_line(struct dwarfin *d, const char *s, size_t len, size_t line);
/* End of an input: held records assembled, open samples partial;
 * counters brought up to date.  0 or <0 as dwarfin_line(). */
int dwarfin_finish(struct dwarfin *d);

#endif
