/*
 * dwarfrec.h - assemble --call-graph dwarf's records into whole samples:
 * bt/profile-dwarf.bt's flushed maps (dwarfwin.h), and the per-sample
 * records (#U header, #K kernel stack, #W stack words) that raw captures
 * of earlier versions hold.
 *
 * Records of different CPUs interleave in bpftrace's output; one CPU's
 * stay in order.  A sample is complete only when its header, its kernel
 * stack (samples taken in the kernel) and every one of its chunks came,
 * in order, with its CPU and sequence number; anything else (a lost perf
 * event dropped a record) makes it partial: counted, never emitted.
 *
 * Memory: one open sample per CPU.  Nothing prints or exits.
 */
#ifndef SF_DWARFREC_H
#define SF_DWARFREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/dwsample.h"

struct dwrec;

/* sample(): a complete sample, valid during the call; <0 stops with that
 * error. */
struct dwrec *dwrec_new(int (*sample)(void *ctx, const struct dw_sample *s),
			void *ctx);
void dwrec_free(struct dwrec *d);	/* NULL is fine */
/* Is this line one of the records (or inside a #K block)? */
bool dwrec_wants(const struct dwrec *d, const char *s, size_t len);
/* Feed one such line; line is its number.  0; 1 when the line was not a
 * record after all (it ended a flushed kernel stack: hand it on); or <0
 * (-ENOMEM, the callback's). */
int dwrec_line(struct dwrec *d, const char *s, size_t len, size_t line);
/* End of input: held flushed records assembled, samples still open
 * partial.  0 or the callback's error. */
int dwrec_finish(struct dwrec *d);
const struct dwrec_counters *dwrec_counters(struct dwrec *d);
#endif
