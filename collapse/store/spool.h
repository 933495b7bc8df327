/*
 * spool.h - pushing `stackfold continuous`'s windows to stores, off the
 * window-writing path: one thread delivers, the writer only says which
 * window is new (spool_notify(): a lock and a copy of its name).
 *
 * The window files are the spool.  Per store, DIR/.push-HASH.sent (HASH
 * of the store's URL) lists the windows it acknowledged, one name a line,
 * appended and fdatasynced after each; at start it is compacted to the
 * windows still on disk, and every window in DIR that it does not list is
 * queued, oldest first.  A store that does not answer is tried again with
 * a growing delay (1 s doubling to 60 s) and the queue waits; windows
 * that retention (--max-size, --max-age) removes before their delivery
 * are dropped from it and counted.  Memory: the queue holds names only,
 * at most the windows on disk; one window at a time is read.
 *
 * A window whose delivery may have reached the store (no answer, or a
 * crash before the journal line) is sent as a retry, which the store
 * deduplicates (clickhouse.h; Pyroscope has no such key: see pyroscope.h).
 * A journal that cannot be written (a full disk) does not stop the
 * pushing: its lines are tried again at each delivery, and the failures
 * counted in the log.
 *
 * A window is sent with the labels of the run that wrote it, not of the
 * run that sends it: DIR/.push-labels records each run's labels from the
 * newest window at its start (spool.c).
 *
 * At the stop, a request still under way when the grace ends is
 * abandoned (whatever the store does: a hang is no longer a wait).
 *
 * Log lines (store gone, windows waiting, delivered) go to the log
 * callback, from the spool's thread.  Nothing here prints.
 */
#ifndef SF_STORE_SPOOL_H
#define SF_STORE_SPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "store/http.h"

#define SPOOL_MAX_TARGETS 8

struct spool;

struct spool_opts {
	const char *dir;		/* the windows' directory */
	const char *host;		/* NULL: each window's own */
	const char *labels;		/* NULL or "k=v,..." (labels.h): on the
					 * windows this run writes */
	uint64_t store_max_age;		/* seconds, 0: none (--push-max-age:
					 * this host's rows in ClickHouse) */
	const struct store_url *urls;	/* copied */
	unsigned nurls;
	void (*log)(void *ctx, const char *line);	/* one line, no '\n' */
	void *log_ctx;
};

/* Start the thread (after the directory is scanned and cleaned).  NULL
 * with err filled on failure. */
struct spool *spool_start(const struct spool_opts *o, struct sf_err *err);
/* A window was written (its .pb.gz renamed into place). */
void spool_notify(struct spool *s, const char *stem);
/* Deliver what can be delivered within grace_s seconds, then stop the
 * thread and free everything.  What is still queued stays on disk for the
 * next start.  NULL is fine. */
void spool_stop(struct spool *s, unsigned grace_s);

#endif
