/*
 * loss_places_test.c - every place that names a loss counter takes the
 * name from the loss table (collapse/model/losses.c): a window store's
 * keys and ClickHouse columns, the advice said after a run, the raw
 * capture's "#meta" keys.  Run by tests/t11-units.sh; prints one "ok
 * NAME" or "FAIL NAME: why" per check and exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/protocol.h"
#include "model/losses.h"
#include "store/clickhouse.h"
#include "store/window.h"

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
	failed |= !ok;
}

/* The stored places are 1..LOSS_NSTORED, each once: a counter given a
 * place past them, or one place twice, would be lost or stored twice. */
static void stored_places(void)
{
	int seen[256] = { 0 };
	static char why[160];
	why[0] = 0;
	for (int i = 0; i < LOSS_N; i++) {
		unsigned p = loss_table[i].stored;
		if (p && (p > LOSS_NSTORED || seen[p]++))
			snprintf(why, sizeof(why), "%s: place %u taken or past "
				 "LOSS_NSTORED %d", loss_table[i].key, p,
				 LOSS_NSTORED);
	}
	for (unsigned p = 1; p <= LOSS_NSTORED && !why[0]; p++)
		if (!seen[p])
			snprintf(why, sizeof(why), "no counter at place %u", p);
	check(!why[0], "the stored counters fill places 1..LOSS_NSTORED", why);
}

/* The windows table of a store made before: its columns as they were;
 * a new stored counter goes after maps_unsaved. */
static const char old_schema[] =
	"CREATE TABLE IF NOT EXISTS db.windows (window_id UInt64, "
	"attempt UInt64, window_start DateTime, start_ns UInt64, "
	"duration_ns UInt64, hz UInt32, host String, kernel String, "
	"stem String, samples UInt64, map_dropped UInt64, over_total UInt64, "
	"stackid_errors UInt64, lost_events UInt64, map_full_warnings UInt64, "
	"captures_cut UInt64, unparsable_lines UInt64, "
	"incomplete_records UInt64, maps_unsaved UInt64, losses_unknown UInt8, "
	"labels String) "
	"ENGINE = ReplacingMergeTree() PARTITION BY toDate(window_start) "
	"ORDER BY (host, window_start, window_id)";
static const char old_insert[] =
	"window_id, attempt, window_start, start_ns, duration_ns, hz, host, "
	"kernel, stem, samples, map_dropped, over_total, stackid_errors, "
	"lost_events, map_full_warnings, captures_cut, unparsable_lines, "
	"incomplete_records, maps_unsaved, losses_unknown, labels";

/* b's text, terminated (NULL on ENOMEM) */
static const char *text(struct buf *b)
{
	buf_add(b, "", 1);
	return b->oom ? NULL : (const char *)b->data;
}

static void clickhouse(void)
{
	struct buf s = { 0 }, c = { 0 };
	ch_windows_schema(&s, "db");
	ch_windows_columns(&c, false);
	const char *st = text(&s), *ct = text(&c);
	check(st && !strcmp(st, old_schema),
	      "ClickHouse windows table: the columns of existing stores",
	      st ? st : "ENOMEM");
	check(ct && !strcmp(ct, old_insert),
	      "ClickHouse windows INSERT: the columns of existing stores",
	      ct ? ct : "ENOMEM");
	static char why[160];
	why[0] = 0;
	for (int i = 0; st && i < LOSS_N; i++) {
		char col[80];
		snprintf(col, sizeof(col), ", %s UInt64,", loss_table[i].key);
		if (!strstr(st, col) != !loss_table[i].stored)
			snprintf(why, sizeof(why), "%s: stored %u, column%s",
				 loss_table[i].key, loss_table[i].stored,
				 strstr(st, col) ? "" : " missing");
	}
	check(!why[0], "a counter is a column exactly when the table stores it",
	      why);
	buf_free(&s);
	buf_free(&c);
}

/* Window keys: the stored counters' keys, in their places. */
static void window_keys(void)
{
	static char why[160];
	why[0] = 0;
	for (int i = 0; i < LOSS_N; i++) {
		unsigned p = loss_table[i].stored;
		if (p && p <= WIN_NLOSS && strcmp(win_loss_key((int)p - 1),
						  loss_table[i].key))
			snprintf(why, sizeof(why), "place %u: %s, not %s", p,
				 win_loss_key((int)p - 1), loss_table[i].key);
	}
	check(!why[0] && WIN_NLOSS == LOSS_NSTORED,
	      "a window's loss keys are the stored counters'", why);
}

/* Each "#meta" key a counter names is the protocol's, and the protocol's
 * counts (lost, stackid_errors, sideband_lost) each add to a counter. */
static void meta_keys(void)
{
	static char why[160];
	why[0] = 0;
	for (int i = 0; i < LOSS_N; i++) {
		const char *m = loss_table[i].meta;
		if (m && protocol_meta_key(m, strlen(m)) == PROTOCOL_META_UNKNOWN)
			snprintf(why, sizeof(why), "%s: #meta %s unknown to "
				 "the protocol", loss_table[i].key, m);
	}
	const enum protocol_meta counts[] = { PROTOCOL_META_LOST,
					      PROTOCOL_META_STACKID_ERRORS,
					      PROTOCOL_META_SIDEBAND_LOST };
	for (size_t i = 0; i < 3; i++) {
		const char *n = protocol_meta_name(counts[i]);
		if (loss_by_meta(n, strlen(n)) == LOSS_N)
			snprintf(why, sizeof(why), "#meta %s adds to no counter",
				 n);
	}
	check(!why[0], "#meta keys: the protocol's and the table's agree", why);
	check(loss_by_meta("lost", 4) == LOSS_LOST_EVENTS &&
	      loss_by_meta("stackid_errors", 14) == LOSS_STACKID_ERRORS &&
	      loss_by_meta("sideband_lost", 13) == LOSS_SIDEBAND_LOST &&
	      loss_by_meta("hz", 2) == LOSS_N,
	      "#meta lost, stackid_errors, sideband_lost add to their counters", "");
}

/* Every advice is some counter's, and all of them come in their order,
 * each once. */
static void advice(void)
{
	struct pf_counters c;
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < LOSS_N; i++)
		*loss_ptr(&c, (enum loss_id)i) = 1;
	const char *l[LOSS_ADVICE_N];
	size_t n = loss_advice(&c, l, LOSS_ADVICE_N);
	check(n == LOSS_ADVICE_N - 1 && !strncmp(l[0], "the BPF map", 11) &&
	      !strncmp(l[n - 1], "lines that are not", 18),
	      "every advice is a counter's, in order, once", n ? l[0] : "none");
	memset(&c, 0, sizeof(c));
	c.map_full_warnings = 1;
	c.incomplete_records = 2;
	n = loss_advice(&c, l, LOSS_ADVICE_N);
	check(n == 2 && !strncmp(l[0], "the BPF map", 11) &&
	      !strncmp(l[1], "lines that are not", 18),
	      "a counter sharing an advice says it", n ? l[0] : "none");
	check(loss_advice(&c, l, 1) == 1, "advice, at most max lines", "");
}

int main(void)
{
	stored_places();
	clickhouse();
	window_keys();
	meta_keys();
	advice();
	return failed;
}
