/*
 * pidfilter.h - keep only some processes' samples (stackfold --pid, as
 * perf report --pid).
 */
#ifndef SF_PIDFILTER_H
#define SF_PIDFILTER_H

#include <stdint.h>

#include "model/profile.h"

/* Zero the count of every sample of p whose process is not one of
 * pids[0..n): its pid when known, else the "comm-PID" or "comm-PID/TID"
 * of its root frame (folded input written with --show-pid); a sample with
 * neither is left out too.  The samples left out are taken from
 * p->counters.samples and returned (the caller says how many). */
uint64_t profile_keep_pids(struct profile *p, const int *pids, unsigned n);

#endif
