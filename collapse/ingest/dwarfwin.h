/*
 * dwarfwin.h - assemble the samples of one flush of bt/profile-dwarf.bt's
 * maps into whole samples (dwsample.h's struct dw_sample).
 *
 * A flush prints one set's maps, each sorted by key, in any order:
 *   @stackfold_du_X[CPU, SEQ]: (KEY, TID, MODE, NCHUNKS, FLAGS, LEN,
 *                               COMM0, COMM1, REG0, ..., REG16)
 *   @stackfold_dk_X[CPU, SEQ]:      then the kernel frames, one a line
 *   @stackfold_dw_X[CPU, SEQ, INDEX]: (WORD0, ..., WORD47)
 *   @stackfold_dn_X: N             samples taken in the flush
 * and "#flushed" ends it (X is the set: a, b or c; at bpftrace's exit
 * every set prints, and the end of input ends them).  A sample is
 * complete when its header, each of its chunks and (taken in the kernel)
 * its kernel stack came.  Every sample not emitted is partial, counted:
 * the counts taken (@stackfold_dn_X) less the samples emitted, so a
 * sample split across flushes or dropped by a full map counts once; an
 * input without counts gets the samples seen incomplete (a record of no
 * header, a header missing records).
 *
 * Memory: one flush's records (bounded by bpftrace's map sizes; past
 * DWWIN_MAX_RECORDS, what is held is assembled early).  Nothing prints or
 * exits.
 */
#ifndef SF_DWARFWIN_H
#define SF_DWARFWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/protocol.h"
#include "ingest/dwsample.h"

#define DWWIN_PREFIX PROTOCOL_DWARF_MAPS
#define DWWIN_MAX_RECORDS (1u << 18)
/* A flush's @stackfold_dn_X is one set's samples since the last flush:
 * past 2^32 (100 kHz on 1024 CPUs for 40 s) it is no count but a forged
 * or garbled line ("-1" reads as 2^64-1): counted as a bad line, not
 * added (the partial samples said stay what the capture can have). */
#define DWWIN_TAKEN_MAX ((uint64_t)UINT32_MAX)

struct dwwin;

/* sample() as dwrec_new()'s; counters are the caller's, added to. */
struct dwwin *dwwin_new(int (*sample)(void *ctx, const struct dw_sample *s),
			void *ctx, struct dwrec_counters *counters);
void dwwin_free(struct dwwin *w);	/* NULL is fine */
/* Does the window want this line: one of its maps' lines, any line while
 * a kernel stack is open, "#flushed" while records are held? */
bool dwwin_wants(const struct dwwin *w, const char *s, size_t len);
/* Feed a line it wants: 0; 1 when it was not the window's after all (it
 * ended a kernel stack: hand it on); <0 (-ENOMEM, the callback's). */
int dwwin_line(struct dwwin *w, const char *s, size_t len, size_t line);
/* Assemble and emit what is held (end of a flush, end of input). */
int dwwin_flush(struct dwwin *w);
/* The partial samples so far (see above); 0 for NULL. */
uint64_t dwwin_partial(const struct dwwin *w);

#endif
