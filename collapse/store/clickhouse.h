/*
 * clickhouse.h - windows into ClickHouse, and flame graphs out of it,
 * through its HTTP interface (RowBinary both ways: names travel as bytes,
 * never escaped).  The schema (docs/fleet.md) is plain MergeTree SQL that
 * ClickHouse 18.16 and current releases both accept:
 *
 *   DB.stacks   (day, stack_id, frames Array(String))  ReplacingMergeTree:
 *               a stack once per day (a stack sent again merges away)
 *   DB.samples  (hour, host, attempt, stack_id, pid, tid, comm, labels,
 *               count)         one row per stack of a window, ordered by
 *               host, hour, stack_id; its window is the windows row of
 *               its attempt (a store of the older layouts, a window_start
 *               and window_id a row, is refused: ch_layout)
 *   DB.windows  (window_id, attempt, start, length, host, kernel, stem,
 *               samples, hz, the loss counters, labels) one row per window
 * labels is the pusher's "k=v,..." (store/labels.h), "" when none.
 *
 * Nothing twice: a window's samples go in one INSERT (one part: all or
 * nothing), tagged with a random attempt id; its windows row, inserted
 * after the samples were acknowledged and found in the store exactly once
 * (their rows and counts: an INSERT that something on the way repeated is
 * left uncommitted, and a fresh attempt sent), commits that attempt; the
 * windows row is then looked up.  Readers count, per window_id, the
 * samples of one committed attempt (the smallest), found by its attempt
 * alone (random: no two windows or tries share one), so an insert retried
 * after a lost answer, or after a crash before the spool's journal said
 * "delivered", never counts twice, and samples of an attempt that never
 * committed never count.  Every answer must carry ClickHouse's
 * X-ClickHouse-* headers: another server's 200 delivers nothing.
 *
 * Nothing here prints; errors are negative errno values with a text.
 */
#ifndef SF_STORE_CLICKHOUSE_H
#define SF_STORE_CLICKHOUSE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "store/http.h"
#include "store/labels.h"
#include "store/window.h"

/* The windows table's column list, "window_id, attempt, ..." (types:
 * "window_id UInt64, ..."), its loss columns the loss table's stored
 * counters in their order, appended to b (b->oom on ENOMEM). */
void ch_windows_columns(struct buf *b, bool types);
/* The windows table's CREATE TABLE in database db, appended to b. */
void ch_windows_schema(struct buf *b, const char *db);

struct ch_store {
	struct http_conn conn;
	const struct store_url *url;	/* not owned */
	bool schema_ok;		/* tables created (or found) */
	uint64_t max_age;	/* seconds (--push-max-age; 0 none): the days
				 * past it of the hosts delivered are deleted */
	long query_timeout_s;	/* bounds a query's answer (ch_query_*) */
	/* Lines about what the store did (a deletion, an attempt sent again),
	 * no '\n'; NULL: not said */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
	time_t expired_at;	/* last look for old partitions */
	struct u64map known;	/* stack ids sent on known_day */
	uint32_t known_day;
	uint64_t windows, rows, bytes;	/* delivered so far */
};

/* max_age: store retention, --push-max-age (0: none). */
int ch_store_init(struct ch_store *s, const struct store_url *u,
		  uint64_t max_age);
void ch_store_release(struct ch_store *s);
/* Create the database and tables when missing, then ch_layout().  0 or
 * negative errno. */
int ch_schema(struct ch_store *s, struct sf_err *err);
/* 0 when the samples table has this version's layout (or is missing);
 * -EMEDIUMTYPE, with the line to say, when it has an older one (it is
 * neither written nor read); else as http_post(). */
int ch_layout(struct ch_store *s, struct sf_err *err);
/* Deliver one window.  retry: an earlier attempt of it may have reached
 * the store (it is looked up first).  0 when the store holds it; else as
 * http_post() (-EACCES: authentication failed), -EBADMSG an answer that
 * is no count, -EAGAIN every attempt was found repeated. */
int ch_deliver(struct ch_store *s, const struct store_window *w, bool retry,
	       struct sf_err *err);

/* A flame-graph query: the windows starting in [from, to) (UTC seconds),
 * of one host or all (NULL), one comm or all, some pids or all, carrying
 * for each key of labels one of its values (NULL or none: any labels). */
struct ch_query {
	uint64_t from, to;
	const char *host, *comm;
	const struct labels *labels;
	const uint32_t *pids;
	unsigned npids;
	bool by_pid;		/* a row per pid (else pid 0: summed) */
};

/* Called once per stack (comm and frames; and pid with by_pid) with its
 * summed count; frames root first.  Nonzero stops the query with that
 * value. */
typedef int (*ch_row_fn)(void *ctx, const char *comm, size_t comm_len,
			 uint32_t pid, const struct win_frame *frames,
			 uint32_t nframes, uint64_t count);

/* Run q, the aggregation in ClickHouse.  Samples whose stack has no row
 * in the stacks table come as comm "[missing stack]" without frames, and
 * their count is added to *missing.  0, the callback's value, or a
 * negative errno. */
int ch_query_stacks(struct ch_store *s, const struct ch_query *q,
		    ch_row_fn fn, void *ctx, uint64_t *missing,
		    struct sf_err *err);
/* The windows q covers and their summed losses (loss[] as window.h). */
int ch_query_windows(struct ch_store *s, const struct ch_query *q,
		     uint64_t *nwindows, uint64_t *samples,
		     uint64_t loss[WIN_NLOSS], struct sf_err *err);

#endif
