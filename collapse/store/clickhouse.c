/*
 * clickhouse.c - see clickhouse.h.
 */
#include "store/clickhouse.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* A known-stacks set larger than this is forgotten (memory bound): its
 * stacks are sent again, and merge away. */
#define CH_KNOWN_MAX (1u << 20)
#define CH_TIMEOUT_S 30
/* Old partitions are looked for this often (seconds). */
#define CH_EXPIRE_EVERY 3600
/* Attempts of one window found repeated on the way, before giving up. */
#define CH_ATTEMPTS 3

/* samples: a row holds what only it knows; the window's exact start and
 * id are in windows, its committed attempt (random, one per window and
 * try) the key that joins them.  A stack's rows of an hour are adjacent
 * (stack_id, pid and comm repeat and compress to almost nothing), the
 * attempt column is what is left; a query's time range prunes by the
 * hour, its exact range is the windows' (where_samples).  docs/fleet.md:
 * the bytes per sample of each layout. */
static const char *const schema_sql[] = {
	"CREATE DATABASE IF NOT EXISTS %s",
	"CREATE TABLE IF NOT EXISTS %s.stacks (day Date, stack_id UInt64, "
	"frames Array(String)) ENGINE = ReplacingMergeTree() "
	"PARTITION BY day ORDER BY stack_id",
	"CREATE TABLE IF NOT EXISTS %s.samples (hour DateTime, host String, "
	"attempt UInt64, stack_id UInt64, pid UInt32, tid UInt32, "
	"comm String, labels String, count UInt64) "
	"ENGINE = MergeTree() PARTITION BY toDate(hour) "
	"ORDER BY (host, hour, stack_id)",
};
#define CH_SAMPLES_COLS "hour, host, attempt, stack_id, pid, tid, comm, " \
	"labels, count"
/* A column only the samples of older layouts have (a window_id a row). */
#define CH_OLD_COLUMN "window_id"

/* The windows table's columns before and after its loss counters (the
 * loss table's stored ones, model/losses.h), as "name Type". */
static const char *const win_head[] = {
	"window_id UInt64", "attempt UInt64", "window_start DateTime",
	"start_ns UInt64", "duration_ns UInt64", "hz UInt32", "host String",
	"kernel String", "stem String", "samples UInt64",
};
static const char *const win_tail[] = { "losses_unknown UInt8", "labels String" };
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* col ("name Type") after a comma unless first, its type only if types */
static void win_col(struct buf *b, const char *col, bool types, bool first)
{
	if (!first)
		buf_str(b, ", ");
	buf_add(b, col, types ? strlen(col) : strcspn(col, " "));
}

void ch_windows_columns(struct buf *b, bool types)
{
	char col[64];
	for (size_t i = 0; i < NELEM(win_head); i++)
		win_col(b, win_head[i], types, !i);
	for (int i = 0; i < WIN_NLOSS; i++) {
		snprintf(col, sizeof(col), "%s UInt64", win_loss_key(i));
		win_col(b, col, types, false);
	}
	for (size_t i = 0; i < NELEM(win_tail); i++)
		win_col(b, win_tail[i], types, false);
}

void ch_windows_schema(struct buf *b, const char *db)
{
	buf_printf(b, "CREATE TABLE IF NOT EXISTS %s.windows (", db);
	ch_windows_columns(b, true);
	buf_str(b, ") ENGINE = ReplacingMergeTree() PARTITION BY "
		"toDate(window_start) ORDER BY (host, window_start, window_id)");
}

int ch_store_init(struct ch_store *s, const struct store_url *u,
		  uint64_t max_age)
{
	*s = (struct ch_store){ .url = u, .max_age = max_age,
				.query_timeout_s = CH_TIMEOUT_S * 4 };
	s->known.valsz = 1;
	int ret = http_conn_init(&s->conn, u);
	s->conn.need_header = "X-ClickHouse-";	/* every answer of its has one */
	return ret;
}

void ch_store_release(struct ch_store *s)
{
	http_conn_release(&s->conn);
	u64map_release(&s->known);
}

/* POST sql (as the query parameter) with body. */
static int ch_post(struct ch_store *s, const char *sql, const struct buf *body,
		   struct sf_err *err)
{
	struct buf pq = { 0 };
	buf_str(&pq, "/?query=");
	http_urlencode(&pq, sql, strlen(sql));
	buf_add(&pq, "", 1);
	if (pq.oom)
		return sf_err_set(err, ENOMEM, "out of memory");
	int ret = http_post(&s->conn, pq.data, "application/octet-stream",
			    body ? body->data : NULL, body ? body->len : 0, NULL,
			    0, CH_TIMEOUT_S, err);
	buf_free(&pq);
	return ret;
}

/* SQL as the POST body (queries that read); an answer past max bytes
 * (0: HTTP_ANSWER_MAX, a query's rows) fails.  query: a reader's
 * (bounded by query_timeout_s), else the pusher's. */
static int ch_select(struct ch_store *s, const struct buf *sql,
		     struct buf *resp, size_t max, bool query,
		     struct sf_err *err)
{
	if (sql->oom)
		return sf_err_set(err, ENOMEM, "out of memory");
	long tmo = query ? s->query_timeout_s : CH_TIMEOUT_S;
	int ret = http_post(&s->conn, "/", "text/plain", sql->data, sql->len,
			    resp, max, tmo, err);
	if (ret == -ETIMEDOUT && query)
		sf_err_set(err, ETIMEDOUT, "%s:%u: no answer within %ld s",
			   s->url->host, s->url->port, tmo);
	return ret;
}

/* A few numbers of a "FORMAT TSV" answer (a count: a few bytes, and
 * all digits): 0, or -EBADMSG when the answer is anything else. */
#define CH_NUMS_MAX 256
static bool tsv_numbers(const char *p, const char *end, uint64_t *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		char *e;
		if (p >= end || *p < '0' || *p > '9')
			return false;
		errno = 0;
		v[i] = strtoull(p, &e, 10);
		if (errno || e >= end || *e != (i + 1 < n ? '\t' : '\n'))
			return false;
		p = e + 1;
	}
	return p == end;
}

static int ch_numbers(struct ch_store *s, const struct buf *sql, uint64_t *v,
		      unsigned n, struct sf_err *err)
{
	struct buf resp = { 0 };
	int ret = ch_select(s, sql, &resp, CH_NUMS_MAX, false, err);
	buf_add(&resp, "", 1);	/* strtoull stops there */
	if (!ret && resp.oom)
		ret = sf_err_set(err, ENOMEM, "out of memory");
	else if (!ret && !tsv_numbers(resp.data, resp.data + resp.len - 1, v, n))
		ret = sf_err_set(err, EBADMSG, "%s:%u: not a count: '%.40s'",
				 s->url->host, s->url->port, resp.data);
	buf_free(&resp);
	return ret;
}

static void sql_str(struct buf *b, const char *s);

/* Samples of an older layout (window_start and window_id in every row,
 * as CREATE TABLE IF NOT EXISTS kept them) are refused: -EMEDIUMTYPE and
 * one line saying how to move them.  A Distributed table has the
 * columns of its shards' tables, so a cluster is checked alike. */
int ch_layout(struct ch_store *s, struct sf_err *err)
{
	struct buf sql = { 0 };
	uint64_t old = 0;
	buf_str(&sql, "SELECT count() FROM system.columns WHERE database = ");
	sql_str(&sql, s->url->path);
	buf_str(&sql, " AND table = 'samples' AND name = '" CH_OLD_COLUMN
		"' FORMAT TSV");
	int ret = ch_numbers(s, &sql, &old, 1, err);
	buf_free(&sql);
	if (!ret && old)
		ret = sf_err_set(err, EMEDIUMTYPE, "%s.samples has the layout "
				 "of older versions (window_start and "
				 "window_id in every row): not read or written; "
				 "docs/fleet.md (\"Migrating a store\") says "
				 "how to move it", s->url->path);
	return ret;
}

int ch_schema(struct ch_store *s, struct sf_err *err)
{
	char sql[1024];
	for (size_t i = 0; i < NELEM(schema_sql); i++) {
		snprintf(sql, sizeof(sql), schema_sql[i], s->url->path);
		int ret = ch_post(s, sql, NULL, err);
		if (ret)
			return ret;
	}
	struct buf win = { 0 };
	ch_windows_schema(&win, s->url->path);
	buf_add(&win, "", 1);
	int ret = win.oom ? sf_err_set(err, ENOMEM, "out of memory")
			  : ch_post(s, win.data, NULL, err);
	buf_free(&win);
	if (!ret)
		ret = ch_layout(s, err);
	s->schema_ok = !ret;
	return ret;
}

static uint32_t day_of(uint64_t sec)
{
	return (uint32_t)(sec / 86400);
}

/* The window's stacks not sent yet today: one row each. */
static void stacks_body(struct ch_store *s, const struct store_window *w,
			struct buf *b, uint64_t **added, size_t *nadded)
{
	uint32_t day = day_of((uint64_t)(w->start_ns / 1000000000U));
	if (day != s->known_day || s->known.n > CH_KNOWN_MAX) {
		u64map_release(&s->known);
		s->known.valsz = 1;
		s->known_day = day;
	}
	*added = calloc(w->nstacks + 1, sizeof(**added));
	*nadded = 0;
	if (!*added) {
		b->oom = true;
		return;
	}
	for (size_t i = 0; i < w->nstacks; i++) {
		const struct win_stack *k = &w->stacks[i];
		uint64_t id = k->stack_id ? k->stack_id : 1;
		bool dup = u64map_find(&s->known, id) != NULL;
		for (size_t j = 0; !dup && j < *nadded; j++)
			dup = (*added)[j] == id;
		if (dup)
			continue;
		(*added)[(*nadded)++] = id;
		buf_add(b, (unsigned char[]){ (unsigned char)day,
				     (unsigned char)(day >> 8) }, 2);
		buf_u64(b, k->stack_id);
		buf_uleb(b, k->nframes + 1);	/* comm first: the root */
		buf_rbstr(b, k->comm, k->comm_len);
		for (uint32_t f = 0; f < k->nframes; f++)
			buf_rbstr(b, w->frames[k->frame0 + f].s,
				  w->frames[k->frame0 + f].len);
	}
}

/* The start of w's UTC hour: its samples' hour. */
static uint32_t hour_of(const struct store_window *w)
{
	return (uint32_t)(w->start_ns / 1000000000U / 3600 * 3600);
}

static void samples_body(const struct store_window *w, uint64_t attempt,
			 struct buf *b)
{
	uint32_t hour = hour_of(w);
	const char *labels = w->labels ? w->labels : "";
	for (size_t i = 0; i < w->nstacks; i++) {
		const struct win_stack *k = &w->stacks[i];
		buf_u32(b, hour);
		buf_rbstr(b, w->host, strlen(w->host));
		buf_u64(b, attempt);
		buf_u64(b, k->stack_id);
		buf_u32(b, k->pid);
		buf_u32(b, 0);		/* tid: the .folded has none */
		buf_rbstr(b, k->comm, k->comm_len);
		buf_rbstr(b, labels, strlen(labels));
		buf_u64(b, k->count);
	}
}

static void window_body(const struct store_window *w, uint64_t attempt,
			struct buf *b)
{
	buf_u64(b, w->id);
	buf_u64(b, attempt);
	buf_u32(b, (uint32_t)(w->start_ns / 1000000000ULL));
	buf_u64(b, w->start_ns);
	buf_u64(b, w->duration_ns);
	buf_u32(b, w->hz);
	buf_rbstr(b, w->host, strlen(w->host));
	buf_rbstr(b, w->kernel, strlen(w->kernel));
	buf_rbstr(b, w->stem, strlen(w->stem));
	buf_u64(b, w->total);
	for (int i = 0; i < WIN_NLOSS; i++)
		buf_u64(b, w->loss[i]);
	buf_u8(b, w->losses_unknown);
	buf_rbstr(b, w->labels ? w->labels : "", w->labels ? strlen(w->labels) : 0);
}

/* Whether a committed attempt of w is in the store. */
static int committed(struct ch_store *s, const struct store_window *w,
		     bool *yes, struct sf_err *err)
{
	struct buf sql = { 0 };
	uint64_t n = 0;
	buf_printf(&sql, "SELECT count() FROM %s.windows WHERE window_id = %"
		   PRIu64 " AND window_start = toDateTime(%" PRIu64 ") FORMAT TSV",
		   s->url->path, w->id, (uint64_t)(w->start_ns / 1000000000U));
	int ret = ch_numbers(s, &sql, &n, 1, err);
	*yes = !ret && n;
	buf_free(&sql);
	return ret;
}

/* The store holds attempt's samples of w exactly once (their rows and
 * counts), before its windows row commits it: an INSERT repeated on the
 * way (by a proxy, or a transport's resend) is never committed. */
static int attempt_whole(struct ch_store *s, const struct store_window *w,
			 uint64_t attempt, bool *whole, struct sf_err *err)
{
	struct buf sql = { 0 };
	uint64_t v[2] = { 0, 0 };
	buf_printf(&sql, "SELECT count(), sum(count) FROM %s.samples WHERE "
		   "host = ", s->url->path);
	sql_str(&sql, w->host);
	buf_printf(&sql, " AND hour = toDateTime(%" PRIu32 ") AND attempt = %"
		   PRIu64 " FORMAT TSV", hour_of(w), attempt);
	int ret = ch_numbers(s, &sql, v, 2, err);
	*whole = !ret && v[0] == w->nstacks && v[1] == w->total;
	if (!ret && !*whole)
		sf_err_set(err, EAGAIN, "window %s: the store holds %" PRIu64
			   " rows (%" PRIu64 " samples) of attempt %016" PRIx64
			   ", %zu (%" PRIu64 ") were sent: not committed, sent "
			   "again", w->stem, v[0], v[1], attempt, w->nstacks,
			   w->total);
	buf_free(&sql);
	return ret;
}

static int insert(struct ch_store *s, const char *table, const char *cols,
		  const struct buf *body, struct sf_err *err)
{
	if (body->oom)
		return sf_err_set(err, ENOMEM, "out of memory");
	char sql[1024];
	snprintf(sql, sizeof(sql), "INSERT INTO %s.%s (%s) FORMAT RowBinary",
		 s->url->path, table, cols);
	int ret = ch_post(s, sql, body, err);
	if (!ret)
		s->bytes += body->len;
	return ret;
}

/* s as a ClickHouse string literal. */
static void sql_str(struct buf *b, const char *s)
{
	buf_add(b, "'", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			buf_printf(b, "\\x%02X", c);
		else
			buf_add(b, s, 1);
	}
	buf_add(b, "'", 1);
}

static void say(struct ch_store *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s->log)
		s->log(s->log_ctx, line);
}

/* Store retention (--push-max-age): this host's windows and samples of
 * the days wholly past max_age are deleted (ALTER TABLE ... DELETE WHERE
 * host = ...: other hosts' rows are never touched), looked for at most
 * hourly, and what goes is said first.  The stacks table is shared by
 * every host: its old days are the store's to drop (docs/fleet.md). */
/* " WHERE host = H AND col < cut" (col: a table's time column) */
static void where_host_before(struct buf *b, const char *host,
			      const char *col, uint64_t cut)
{
	buf_str(b, " WHERE host = ");
	sql_str(b, host);
	buf_printf(b, " AND %s < toDateTime(%" PRIu64 ")", col, cut);
	buf_add(b, "", 1);
}

static void expire(struct ch_store *s, const char *host)
{
	time_t now = time(NULL);
	if (!s->max_age || now - s->expired_at < CH_EXPIRE_EVERY)
		return;
	s->expired_at = now;
	/* a day's start: the samples' hours before it are the windows' */
	uint64_t cut = ((uint64_t)now - s->max_age) / 86400 * 86400;
	const char *db = s->url->path;
	struct sf_err e = { "" };
	struct buf where[2] = { { 0 } }, sql = { 0 };	/* samples, windows */
	uint64_t v[2] = { 0, 0 }, rows = 0;
	where_host_before(&where[0], host, "hour", cut);
	where_host_before(&where[1], host, "window_start", cut);
	buf_printf(&sql, "SELECT count(), uniqExact(window_id) FROM %s.windows%s "
		   "FORMAT TSV", db, where[1].data);
	int ret = where[0].oom || where[1].oom ? -ENOMEM
					       : ch_numbers(s, &sql, v, 2, &e);
	buf_free(&sql);
	buf_printf(&sql, "SELECT count() FROM %s.samples%s FORMAT TSV", db,
		   where[0].data);
	if (!ret)
		ret = ch_numbers(s, &sql, &rows, 1, &e);
	if (!ret && (v[0] || rows)) {
		char day[32];
		time_t t = (time_t)cut;
		struct tm tm;
		strftime(day, sizeof(day), "%Y-%m-%d", gmtime_r(&t, &tm));
		say(s, "push %s: store retention (--push-max-age): deleting host "
		    "'%s''s %" PRIu64 " window%s (%" PRIu64 " sample rows) from "
		    "before %s UTC", s->url->text, host, v[1], v[1] == 1 ? "" : "s",
		    rows, day);
		for (int i = 0; !ret && i < 2; i++) {
			buf_free(&sql);
			buf_printf(&sql, "ALTER TABLE %s.%s DELETE%s", db,
				   i ? "windows" : "samples", where[i].data);
			buf_add(&sql, "", 1);
			ret = sql.oom ? -ENOMEM : ch_post(s, sql.data, NULL, &e);
		}
	}
	if (ret)
		say(s, "push %s: store retention: %s", s->url->text,
		    e.msg[0] ? e.msg : strerror(-ret));
	buf_free(&where[0]);
	buf_free(&where[1]);
	buf_free(&sql);
}

/* The windows row (body): its columns the loss table's too. */
static int insert_window(struct ch_store *s, const struct buf *body,
			 struct sf_err *err)
{
	struct buf cols = { 0 };
	ch_windows_columns(&cols, false);
	buf_add(&cols, "", 1);
	int ret = cols.oom ? sf_err_set(err, ENOMEM, "out of memory")
			   : insert(s, "windows", (const char *)cols.data, body, err);
	buf_free(&cols);
	return ret;
}

/* One attempt: the stacks, the samples, checked whole, and the windows
 * row that commits them, checked there. */
static int deliver_attempt(struct ch_store *s, const struct store_window *w,
			   uint64_t attempt, struct sf_err *err)
{
	struct buf stacks = { 0 }, rows = { 0 }, win = { 0 };
	uint64_t *added = NULL;
	size_t nadded = 0;
	bool yes = true;
	stacks_body(s, w, &stacks, &added, &nadded);
	samples_body(w, attempt, &rows);
	window_body(w, attempt, &win);
	int ret = 0;
	if (nadded)
		ret = insert(s, "stacks", "day, stack_id, frames", &stacks, err);
	if (!ret && w->nstacks)
		ret = insert(s, "samples", CH_SAMPLES_COLS, &rows, err);
	if (!ret && w->nstacks && !(ret = attempt_whole(s, w, attempt, &yes, err)) &&
	    !yes)
		ret = -EAGAIN;
	if (!ret)
		ret = insert_window(s, &win, err);
	if (!ret && !(ret = committed(s, w, &yes, err)) && !yes)
		ret = sf_err_set(err, EIO, "window %s: no windows row in the store "
				 "after its INSERT", w->stem);
	/* the stacks are in the store once their insert was acknowledged */
	for (size_t i = 0; !ret && nadded && i < nadded; i++)
		if (!u64map_slot(&s->known, added[i], &yes))
			break;
	free(added);
	buf_free(&stacks);
	buf_free(&rows);
	buf_free(&win);
	return ret;
}

/* A new attempt id: random (two pushers, or two runs, never share one). */
static uint64_t new_attempt(const struct store_window *w)
{
	uint64_t attempt;
	if (getrandom(&attempt, sizeof(attempt), 0) != sizeof(attempt))
		attempt = sf_clock_ns(CLOCK_MONOTONIC) ^ w->id;
	return attempt;
}

int ch_deliver(struct ch_store *s, const struct store_window *w, bool retry,
	       struct sf_err *err)
{
	int ret;
	bool done = false;
	if (!s->schema_ok && (ret = ch_schema(s, err)))
		return ret;
	if (retry && ((ret = committed(s, w, &done, err)) || done))
		return ret;
	/* an attempt found repeated is left uncommitted: a fresh one */
	for (int i = 0; i < CH_ATTEMPTS; i++) {
		ret = deliver_attempt(s, w, new_attempt(w), err);
		if (ret != -EAGAIN)
			break;
		say(s, "push %s: %s", s->url->text, err->msg);
	}
	if (!ret) {
		s->windows++;
		s->rows += w->nstacks;
		expire(s, w->host);
	}
	return ret;
}

/* ---- queries ------------------------------------------------------------ */

/* The windows' WHERE: time range, host and labels. */
static void where_windows(struct buf *b, const struct ch_query *q)
{
	buf_printf(b, " WHERE window_start >= toDateTime(%" PRIu64 ") AND "
		   "window_start < toDateTime(%" PRIu64 ")", q->from, q->to);
	if (q->host) {
		buf_str(b, " AND host = ");
		sql_str(b, q->host);
	}
	/* each key's, whole: one of its values (sorted: they are adjacent) */
	for (unsigned i = 0; q->labels && i < q->labels->n; i++) {
		const char *kv = q->labels->kv[i], *prev = i ? q->labels->kv[i - 1] : "";
		size_t kl = strcspn(kv, "=");
		bool same = i && strcspn(prev, "=") == kl && !memcmp(prev, kv, kl);
		buf_str(b, same ? " OR " : " AND (");
		buf_str(b, "has(splitByChar(',', labels), ");
		sql_str(b, kv);
		buf_str(b, ")");
		const char *next = i + 1 < q->labels->n ? q->labels->kv[i + 1] : "";
		if (!(strcspn(next, "=") == kl && !memcmp(next, kv, kl)))
			buf_str(b, ")");
	}
}

/* The samples of one committed attempt (the smallest) per window of
 * where_windows: the attempt picks the windows exactly (time, host,
 * labels); the hours and the host only prune what is read. */
static void where_samples(struct buf *b, const struct ch_query *q,
			  const char *db)
{
	buf_printf(b, " WHERE hour >= toDateTime(%" PRIu64 ") AND hour < "
		   "toDateTime(%" PRIu64 ")", q->from / 3600 * 3600, q->to);
	if (q->host) {
		buf_str(b, " AND host = ");
		sql_str(b, q->host);
	}
	if (q->comm) {
		buf_str(b, " AND comm = ");
		sql_str(b, q->comm);
	}
	for (unsigned i = 0; i < q->npids; i++)
		buf_printf(b, "%s%u", i ? ", " : " AND pid IN (", q->pids[i]);
	if (q->npids)
		buf_str(b, ")");
	buf_printf(b, " AND attempt IN (SELECT min(attempt) FROM %s.windows", db);
	where_windows(b, q);
	buf_str(b, " GROUP BY window_id)");
}

/* The stacks' WHERE: the days of the windows in [from, to).  A window's
 * stacks are stored under its own UTC day (stacks_body), so the other
 * days' partitions are never read. */
static void where_stack_days(struct buf *b, const struct ch_query *q)
{
	uint64_t last = q->to > q->from ? q->to - 1 : q->from;
	const uint64_t day[2] = { day_of(q->from), day_of(last) };
	char d[2][16];
	for (int i = 0; i < 2; i++) {
		time_t t = (time_t)(day[i] * 86400);
		struct tm tm;
		strftime(d[i], sizeof(d[i]), "%Y-%m-%d", gmtime_r(&t, &tm));
	}
	buf_printf(b, " WHERE day >= '%s' AND day <= '%s'", d[0], d[1]);
}

/* A row whose stack_id has no row in stacks (the LEFT JOIN's empty
 * frames): its samples are kept under this name and counted. */
#define MISSING_STACK "[missing stack]"

static int parse_rows(const struct buf *resp, ch_row_fn fn, void *ctx,
		      uint64_t *missing, struct sf_err *err)
{
	struct rbread r = { (const unsigned char *)resp->data,
			    (const unsigned char *)resp->data + resp->len };
	struct win_frame *fr = NULL;
	size_t cap = 0;
	int ret = 0;
	while (!ret && r.p < r.end) {
		uint32_t pid;
		uint64_t count, n;
		if (!rb_u32(&r, &pid) || !rb_u64(&r, &count) || !rb_uleb(&r, &n) ||
		    n > (size_t)(r.end - r.p)) {
			ret = sf_err_set(err, EBADMSG, "ClickHouse's answer is cut short");
			break;
		}
		if (!n) {
			sf_sat_addto(missing, count);
			ret = fn(ctx, MISSING_STACK, strlen(MISSING_STACK), pid,
				 NULL, 0, count);
			continue;
		}
		if (sf_grow((void **)&fr, &cap, n + 1, sizeof(*fr))) {
			ret = sf_err_set(err, ENOMEM, "out of memory");
			break;
		}
		for (uint64_t i = 0; i < n && !ret; i++) {
			size_t len;
			if (!rb_str(&r, &fr[i].s, &len))
				ret = sf_err_set(err, EBADMSG, "ClickHouse's answer is cut short");
			fr[i].len = (uint32_t)len;
		}
		if (!ret)	/* frames[0] is the comm */
			ret = fn(ctx, fr[0].s, fr[0].len, pid, fr + 1,
				 (uint32_t)n - 1, count);
	}
	free(fr);
	return ret;
}

int ch_query_stacks(struct ch_store *s, const struct ch_query *q,
		    ch_row_fn fn, void *ctx, uint64_t *missing,
		    struct sf_err *err)
{
	const char *db = s->url->path;
	struct buf sql = { 0 }, resp = { 0 };
	/* a stack holds its comm: summed by stack alone (one UInt64 key:
	 * several times faster than with pid) unless pids are kept */
	const char *pid = q->by_pid ? "pid" : "toUInt32(0)";
	int ret = ch_layout(s, err);
	if (ret)
		return ret;
	buf_printf(&sql, "SELECT p, c, frames FROM (SELECT stack_id, %s AS p, "
		   "sum(count) AS c FROM %s.samples", pid, db);
	where_samples(&sql, q, db);
	/* LEFT: a sample whose stack row is missing is kept, not dropped */
	buf_printf(&sql, " GROUP BY stack_id%s) ANY LEFT JOIN "
		   "(SELECT stack_id, any(frames) AS frames FROM %s.stacks",
		   q->by_pid ? ", p" : "", db);
	where_stack_days(&sql, q);
	buf_str(&sql, " GROUP BY stack_id) USING stack_id FORMAT RowBinary");
	ret = ch_select(s, &sql, &resp, 0, true, err);
	if (!ret)
		ret = resp.oom ? sf_err_set(err, ENOMEM, "out of memory")
			       : parse_rows(&resp, fn, ctx, missing, err);
	buf_free(&sql);
	buf_free(&resp);
	return ret;
}

int ch_query_windows(struct ch_store *s, const struct ch_query *q,
		     uint64_t *nwindows, uint64_t *samples,
		     uint64_t loss[WIN_NLOSS], struct sf_err *err)
{
	struct buf sql = { 0 }, resp = { 0 };
	buf_str(&sql, "SELECT count(), sum(samples)");
	for (int i = 0; i < WIN_NLOSS; i++)
		buf_printf(&sql, ", sum(%s)", win_loss_key(i));
	buf_str(&sql, " FROM (SELECT window_id, any(samples) AS samples");
	for (int i = 0; i < WIN_NLOSS; i++)
		buf_printf(&sql, ", any(%s) AS %s", win_loss_key(i),
			   win_loss_key(i));
	buf_printf(&sql, " FROM %s.windows", s->url->path);
	where_windows(&sql, q);
	buf_str(&sql, " GROUP BY window_id) FORMAT RowBinary");
	/* one row of 2 + WIN_NLOSS numbers */
	int ret = ch_select(s, &sql, &resp, 8 * (2 + WIN_NLOSS), true, err);
	struct rbread r = { (const unsigned char *)resp.data,
			    (const unsigned char *)resp.data + resp.len };
	if (!ret && (!rb_u64(&r, nwindows) || !rb_u64(&r, samples)))
		ret = sf_err_set(err, EBADMSG, "ClickHouse's answer is cut short");
	for (int i = 0; !ret && i < WIN_NLOSS; i++)
		if (!rb_u64(&r, &loss[i]))
			ret = sf_err_set(err, EBADMSG, "ClickHouse's answer is cut short");
	buf_free(&sql);
	buf_free(&resp);
	return ret;
}
