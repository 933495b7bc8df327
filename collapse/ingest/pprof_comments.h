/*
 * pprof_comments.h - what stackfold writes into a pprof profile's comments
 * ("samples=N lost_events=N ... " and "bpftrace=V kernel=K host=H
 * cmdline=C", the command line last: it holds blanks), read back as
 * fields: the one reading of them, for pprof input, a continuous window's
 * store and whoever else needs the counters of a written profile.
 *
 * Loss counters are the loss table's keys (model/losses.h); a counter
 * said more than once adds up (saturating), one said "unknown" is marked,
 * not counted.  The first host, kernel, bpftrace and cmdline given win.
 * The strings point into the decoded profile's string table: valid while
 * the profile is.  Nothing allocates, nothing fails.
 */
#ifndef SF_PPROF_COMMENTS_H
#define SF_PPROF_COMMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/losses.h"

struct pprof_str {
	const char *s;		/* NULL: not said */
	size_t len;
};

struct pprof_comments {
	uint64_t samples;		/* samples= */
	uint64_t loss[LOSS_N];		/* by enum loss_id */
	bool unknown[LOSS_N];		/* the counter said "unknown" */
	struct pprof_str host, kernel, bpftrace, cmdline;
};

struct Perftools__Profiles__Profile;

/* Every comment of pp, into c (zeroed first). */
void pprof_comments_parse(struct pprof_comments *c,
			  const struct Perftools__Profiles__Profile *pp);

#endif
