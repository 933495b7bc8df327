/*
 * process.h - process snapshots (internal to symbolizer/).
 *
 * Implements sym_process_snapshot() and the lookups from symbolizer.h,
 * plus the pid table that savedmaps.c (sym_process_load_maps(),
 * sym_process_write_maps()) fills too; the types live in
 * symbolizer_priv.h.
 *
 */
#ifndef SF_PROCESS_H
#define SF_PROCESS_H

#include "symbolizer_priv.h"

/* A new snapshot of pid's image, empty; NULL when out of memory. */
struct sym_process *process_new(int pid, uint32_t image);
/* Insert p into the pid table, retiring an older snapshot of the same pid
 * and image: 0 or -ENOMEM (p not taken). */
int process_put(struct sym_session *s, struct sym_process *p);
void process_free(struct sym_session *s, struct sym_process *p);
/* Attach files to p's mappings.  bids: expected build-id per mapping
 * (saved text) or NULL (live).  0 or a negative errno. */
int process_attach_files(struct sym_session *s, struct sym_process *p,
			 const char *const *bids);
/* p's JIT perf map path (/tmp/perf-NSPID.map): 0 or -ENOMEM. */
int process_set_pm_path(struct sym_session *s, struct sym_process *p);
/* Warn once about p's malformed maps lines; at: where saved text came
 * from (NULL: /proc/PID/maps, or unknown). */
void process_warn_bad_lines(struct sym_session *s, struct sym_process *p,
			    const char *what, const struct sym_origin *at);

#endif
