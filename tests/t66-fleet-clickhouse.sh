#!/usr/bin/env bash
# t66-fleet-clickhouse: `stackfold continuous --push clickhouse://...`
# into a real ClickHouse (Debian's clickhouse-server, a private instance
# on a free loopback port), fed by a fake bpftrace so that every window is
# known.  Checks: two instances with different --host and --label values,
# queried per host, per label and together, equal to their local files
# (totals and the folded bytes of scripts/flame); the server stopped mid-run and started again,
# then a SIGKILLed stackfold restarted with windows queued, every window
# in the store exactly once; a retry after a lost journal line, and
# duplicated and uncommitted attempts, not counted twice; hostile names
# byte for byte; credentials from a file, none left in argv; the samples'
# layout (an attempt and an hour a row), a range starting inside an hour,
# and a store of the older layout refused in one line, then migrated as
# docs/fleet.md says.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"

ch_prereq "fleet clickhouse" || exit 0
ch_cleanup_on_exit
CH_LOG_QUERIES=1 ch_start "$T/ch" || { fail "fleet: clickhouse-server starts"; exit 0; }
ch_fake_bpftrace "$T/fake"
T0=$(( $(date +%s) - 60 ))

# wait_for N PATTERN FILE [SECONDS]: until FILE has N lines matching
wait_for() {
	local i
	for ((i = 0; i < ${4:-20} * 10; i++)); do
		[ "$(grep -c -- "$2" "$3" 2>/dev/null || :)" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# start DIR HOST [OPTION...]: stackfold continuous over the fake, pushing
# to the server; its pid in $cpid, its log in DIR.log
start() {	# DIR HOST [OPTIONS]: push to $PUSH_URL, else $CH_URL
	local dir=$1 host=$2
	shift 2
	"$STACKFOLD" continuous -o "$dir" --window 1 --host "$host" \
		--push "${PUSH_URL:-$CH_URL}" "$@" -- "$T/fake" 2>>"$dir.log" &
	cpid=$!
	cpids+=("$cpid")
}
stop() { kill -TERM "$cpid"; wait "$cpid"; }
sent() { cat "$1"/.push-*.sent 2>/dev/null | grep -c .; }
wait_sent() {	# DIR N: the journal says N windows delivered
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(sent "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
local_total() { cat "$1"/*.folded | folded_total /dev/stdin; }
# store_folded OUT [HOST]: stackfold query's folded output
store_folded() {
	"$STACKFOLD" query "$CH_URL" --from "$T0" --to $(( $(date +%s) + 60 )) \
		--by-pid ${2:+--host "$2"} -o "$1"
}
store_total() { store_folded "$T/st.folded" "${1:-}" && folded_total "$T/st.folded"; }
# windows in the store for HOST, and the committed attempts its samples
# have (one a window delivered once; a server killed between an attempt's
# samples and its commit leaves that attempt's rows, never read)
windows_of() { ch_sql "SELECT uniqExact(window_id) FROM stackfold.windows WHERE host = '$1'"; }
attempts_of() { ch_sql "SELECT uniqExact(attempt) FROM stackfold.samples WHERE host = '$1' AND attempt IN (SELECT attempt FROM stackfold.windows)"; }

# --- two hosts ---------------------------------------------------------------
FAKE_WINDOWS=4 start "$T/a" hA --label tier=web --label env=prod
pa=$cpid
FAKE_WINDOWS=3 start "$T/b" hB --label env=dev
cpid=$pa
wait_sent "$T/a" 4 && wait_sent "$T/b" 3
check_eq "two hosts: every window of hA delivered" 4 "$(sent "$T/a")"
check_eq "two hosts: every window of hB delivered" 3 "$(sent "$T/b")"
stop
cpid=${cpids[1]}
stop
ta=$(local_total "$T/a") tb=$(local_total "$T/b")
check_eq "hA: the store's samples equal the local files'" "$ta" "$(store_total hA)"
check_eq "hB: the store's samples equal the local files'" "$tb" "$(store_total hB)"
check_eq "both hosts together" $(( ta + tb )) "$(store_total)"
check_eq "hA: 4 windows in the store" 4 "$(windows_of hA)"
"$TOP/scripts/flame" "$T/a" --since 1h -f folded -o "$T/fa-dir" 2>/dev/null
"$TOP/scripts/flame" --from "$CH_URL" --since 1h --host hA -f folded -o "$T/fa-store" 2>/dev/null
check_diff "scripts/flame: the store gives the local merge's bytes (hA)" "$T/fa-dir.folded" "$T/fa-store.folded"
cat "$T"/a/*.folded "$T"/b/*.folded | "$STACKFOLD" -q -f folded -o "$T/both-dir.folded" /dev/stdin
# labels: each given one must be there, exactly (no prefix match)
label_total() {	# LABEL...: the store's samples of windows with them all
	local a=() l st=0
	for l in "$@"; do a+=(--label "$l"); done
	"$STACKFOLD" query "$CH_URL" --from "$T0" --to $(( $(date +%s) + 60 )) \
		"${a[@]}" -o "$T/lt.folded" 2>/dev/null || st=$?
	[ "$st" = 0 ] && folded_total "$T/lt.folded" || echo "exit $st"
}
check_eq "labels: kept sorted by key, the same in samples and windows" "env=prod,tier=web env=prod,tier=web" \
	"$(ch_sql "SELECT (SELECT any(labels) FROM stackfold.samples WHERE host = 'hA'), (SELECT any(labels) FROM stackfold.windows WHERE host = 'hA')" | tr '\t' ' ')"
check_eq "--label env=prod: hA's samples" "$ta" "$(label_total env=prod)"
check_eq "--label env=dev: hB's samples" "$tb" "$(label_total env=dev)"
check_eq "--label env=prod --label tier=web: both must match (hA)" "$ta" "$(label_total env=prod tier=web)"
check_eq "--label env=dev --label tier=web: no window has both (exit 2)" "exit 2" "$(label_total env=dev tier=web)"
check_eq "--label env=pro: a prefix is no match (exit 2)" "exit 2" "$(label_total env=pro)"
"$TOP/scripts/flame" --from "$CH_URL" --since 1h --label env=prod -f folded -o "$T/fl-store" 2>/dev/null
check_diff "scripts/flame --label env=prod: the bytes of hA's local merge" "$T/fa-dir.folded" "$T/fl-store.folded"
check_eq "--label without --push: usage error" 1 \
	"$("$STACKFOLD" continuous -o "$T/nolabel" --label env=x --check -- true 2>/dev/null; echo $?)"
check_eq "--label with a quote: usage error" 1 \
	"$("$STACKFOLD" query "$CH_URL" --from 1 --to 2 --label "env=a'b" 2>/dev/null; echo $?)"
store_folded "$T/both-store.folded"
check_diff "stackfold query: both hosts' merge, comm-PID frames" "$T/both-dir.folded" "$T/both-store.folded"

# --- the samples' layout, and a store made by older versions -------------------
check_eq "samples: a stack's rows of an hour adjacent, an attempt and an hour a row" \
	"host, hour, stack_id hour,host,attempt,stack_id,pid,tid,comm,labels,count" \
	"$(ch_sql "SELECT sorting_key, (SELECT arrayStringConcat(groupArray(name), ',') FROM system.columns WHERE database = 'stackfold' AND table = 'samples') FROM system.tables WHERE database = 'stackfold' AND name = 'samples'" | tr '\t' ' ')"
# the previous layout (a window_start and window_id a row): refused in
# one line, its windows kept waiting; the query says the same
ch_sql "CREATE DATABASE olddb"
ch_sql "CREATE TABLE olddb.samples (window_start DateTime, host String, window_id UInt64, attempt UInt64, stack_id UInt64, pid UInt32, tid UInt32, comm String, labels String, count UInt64) ENGINE = MergeTree() PARTITION BY toDate(window_start) ORDER BY (host, toStartOfHour(window_start), stack_id, window_start)"
ch_sql "INSERT INTO olddb.samples VALUES ($T0, 'hO', 7, 9, 1, 1, 0, 'x', '', 5)"
ch_sql "CREATE TABLE olddb.windows AS stackfold.windows"
ch_sql "INSERT INTO olddb.windows (window_id, attempt, window_start, host, stem, samples) VALUES (7, 9, $T0, 'hO', 'old', 5)"
FAKE_WINDOWS=2 PUSH_URL=${CH_URL%/*}/olddb start "$T/o" hO
wait_for 1 "store refused" "$T/o.log"
sleep 1.5	# a retry or two
stop
check_eq "an older layout: refused, nothing delivered" "0 1" "$(sent "$T/o") $(ch_sql "SELECT count() FROM olddb.samples")"
check_eq "an older layout: said in one line" 1 "$(grep -c 'olddb.samples has the layout of older versions (window_start and window_id in every row): not read or written; docs/fleet.md ("Migrating a store") says how to move it' "$T/o.log")"
"$STACKFOLD" query "${CH_URL%/*}/olddb" --from "$T0" --to $(( $(date +%s) + 60 )) -o "$T/old.folded" 2>"$T/old.err"
check_eq "an older layout: the query refused in one line (exit 4)" "4 1" "$? $(grep -c 'has the layout of older versions' "$T/old.err")"
# docs/fleet.md's migration, its statements as written
awk '/^## Migrating a store/ { on = 1 } on && /^```sql/ { s = 1; next } s && /^```/ { exit } s { sub(/--.*/, ""); printf "%s ", $0 }' "$TOP/docs/fleet.md" |
	tr ';' '\n' | sed 's/^ *//; s/ *$//' | grep . >"$T/migrate.sql"
check "the migration recipe has its statements" test "$(grep -c . "$T/migrate.sql")" -ge 3
while IFS= read -r st; do ch_sql "${st//DB./olddb.}" || fail "migration: $st"; done <"$T/migrate.sql"
FAKE_WINDOWS=1 PUSH_URL=${CH_URL%/*}/olddb start "$T/o" hO
wait_sent "$T/o" 3
stop
"$STACKFOLD" query "${CH_URL%/*}/olddb" --from "$T0" --to $(( $(date +%s) + 60 )) -o "$T/old.folded" 2>/dev/null
check_eq "migrated: this layout" "host, hour, stack_id" \
	"$(ch_sql "SELECT sorting_key FROM system.tables WHERE database = 'olddb' AND name = 'samples'")"
check_eq "migrated: the old rows and every queued window's samples, once" $(( $(local_total "$T/o") + 5 )) "$(folded_total "$T/old.folded")"

# --- the server stopped mid-run ---------------------------------------------
FAKE_WINDOWS=8 FAKE_GAP=0.6 start "$T/c" hC
wait_sent "$T/c" 2
ch_stop -KILL
wait_for 1 "store unreachable" "$T/c.log"
wait_for 6 " samples, " "$T/c.log"
ch_launch || fail "fleet: clickhouse-server starts again"
wait_sent "$T/c" 8
stop
check "server away: the log says so, and how many windows wait" grep -q "store unreachable.*windows\? wait" "$T/c.log"
check "server back: the log says the waiting windows were delivered" grep -q "store back after .*waiting windows\? delivered" "$T/c.log"
check_eq "server away: every window delivered" 8 "$(sent "$T/c")"
check_eq "server away: 8 windows in the store, each once" "8 8" "$(windows_of hC) $(attempts_of hC)"
check_eq "server away: the store's samples equal the local files'" "$(local_total "$T/c")" "$(store_total hC)"
# a range from hC's last window start (0.6 s apart): its hour
# holds the windows before too, the windows' exact starts leave them out
s2=$(ch_sql "SELECT toUInt32(max(window_start)) FROM stackfold.windows WHERE host = 'hC'")
want=0 left=0
while read -r st stem; do
	if [ "$st" -ge "$s2" ]; then want=$(( want + $(folded_total "$T/c/$stem.folded") )); else left=$((left + 1)); fi
done < <(ch_sql "SELECT toUInt32(window_start), stem FROM stackfold.windows WHERE host = 'hC' FORMAT TSV")
"$STACKFOLD" query "$CH_URL" --from "$s2" --to $(( $(date +%s) + 60 )) --host hC -o "$T/r2.folded" 2>/dev/null
check "a range inside an hour: windows of that hour before it ($left)" test "$left" -gt 0
check_eq "a range inside an hour: the samples of its windows' files only" "$want" "$(folded_total "$T/r2.folded")"

# --- stackfold killed with windows queued, restarted --------------------------
ch_stop -TERM
FAKE_WINDOWS=3 start "$T/d" hD
wait_for 3 " samples, " "$T/d.log"
kids=$(ps -o pid= --ppid "$cpid")
kill -KILL "$cpid"
wait "$cpid" 2>/dev/null
for k in $kids; do kill -KILL "$k" 2>/dev/null; done
check_eq "killed: nothing delivered while the server was away" 0 "$(sent "$T/d")"
ch_launch || fail "fleet: clickhouse-server starts again"
FAKE_WINDOWS=1 start "$T/d" hD
wait_sent "$T/d" 4
stop
check "restart: the queued windows are said" grep -q "3 windows from earlier runs wait" "$T/d.log"
check_eq "restart: 4 windows in the store, each once" "4 4" "$(windows_of hD) $(attempts_of hD)"
check_eq "restart: the store's samples equal the local files'" "$(local_total "$T/d")" "$(store_total hD)"

# --- retries ------------------------------------------------------------------
# a crash after the store acknowledged, before the journal line: the
# windows are sent again as retries, and found already there
rm "$T"/a/.push-*.sent
FAKE_WINDOWS=0 start "$T/a" hA
wait_sent "$T/a" 4
stop
check_eq "lost journal: hA's windows still once each" "4 4" "$(windows_of hA) $(attempts_of hA)"
check_eq "lost journal: hA's samples unchanged" "$ta" "$(store_total hA)"
# an insert whose answer was lost and that was sent again (a second
# committed attempt), and one that never committed (no windows row)
read -r w1 a1 < <(ch_sql "SELECT window_id, attempt FROM stackfold.windows WHERE host = 'hA' ORDER BY window_start, stem LIMIT 1 FORMAT TSV")
cols="hour, host, attempt, stack_id, pid, tid, comm, labels, count"
ch_sql "INSERT INTO stackfold.samples ($cols) SELECT hour, host, attempt + 1, stack_id, pid, tid, comm, labels, count FROM stackfold.samples WHERE attempt = $a1"
ch_sql "INSERT INTO stackfold.windows SELECT window_id, attempt + 1, window_start, start_ns, duration_ns, hz, host, kernel, stem, samples, map_dropped, over_total, stackid_errors, lost_events, map_full_warnings, captures_cut, unparsable_lines, incomplete_records, maps_unsaved, losses_unknown, labels FROM stackfold.windows WHERE window_id = $w1"
ch_sql "INSERT INTO stackfold.samples ($cols) SELECT hour, host, 42, stack_id, pid, tid, comm, labels, count FROM stackfold.samples WHERE attempt = $a1"
# and hB's rows again under hA's name: a host's samples are those of its
# own windows' committed attempts, whatever a row's host says
ch_sql "INSERT INTO stackfold.samples ($cols) SELECT hour, 'hA', attempt, stack_id, pid, tid, comm, labels, count FROM stackfold.samples WHERE host = 'hB'"
naive=$(ch_sql "SELECT sum(count) FROM stackfold.samples WHERE host = 'hA'")
check "retried inserts: the raw rows do hold the window three times, and hB's" test "$naive" -gt $(( ta + tb ))
check_eq "retried inserts, and hB's rows under hA: hA counted once, without hB's" "$ta" "$(store_total hA)"

# --- --max-age: the local files' only (store retention: t67) ----------------
old=$(( $(date +%s) - 3 * 86400 ))
ch_sql "INSERT INTO stackfold.samples ($cols) VALUES ($(( old / 3600 * 3600 )), 'hOld', 1, 1, 1, 0, 'x', '', 5)"
ch_sql "INSERT INTO stackfold.windows (window_id, attempt, window_start, host, stem) VALUES (1, 1, $old, 'hOld', 'old')"
FAKE_WINDOWS=1 start "$T/g" hG --max-age 2d
wait_sent "$T/g" 1
stop
check_eq "--max-age 2d: another host's day 3 days old stays in the store" 1 "$(ch_sql "SELECT count() FROM stackfold.samples WHERE host = 'hOld'")"
check_eq "--max-age 2d: today's windows stay" "4 1" "$(windows_of hA) $(windows_of hG)"

# --- hostile names --------------------------------------------------------------
cat >"$T/hostile" <<'SH'
#!/bin/bash
trap 'kill "$sleeper" 2>/dev/null; printf "\n@stackfold_total: 0\n"; exit 0' INT
echo "Attaching 4 probes..."
echo "#attached Tracing stacks"
printf '#pid 77 q\x27u"o\\te\n@stackfold[77, 77, q\x27u"o\\te, \n        we\x27ird"na\\me\x80\xff\t+12\n        main+30\n, ]: 5\n\n@stackfold_total: 5\n'
sleep 600 &
sleeper=$!
wait
SH
chmod +x "$T/hostile"
"$STACKFOLD" continuous -o "$T/h" --window 1 --host hH --push "$CH_URL" -- "$T/hostile" 2>"$T/h.log" &
cpid=$!
cpids+=("$cpid")
wait_sent "$T/h" 1
stop
want=$(LC_ALL=C grep -o "main;[^ ]*" "$T"/h/*.folded | head -1 | tr -d "\n" | od -An -tx1 | tr -d ' \n' | tr a-f A-F)
got=$(ch_sql "SELECT hex(arrayStringConcat(arraySlice(frames, 2), ';')) FROM stackfold.stacks WHERE has(frames, 'main') AND length(frames[3]) > 6 FORMAT TSV" | tr -d '\n')
check_eq "hostile names: the stored frames are the window's bytes" "$want" "$got"
check "hostile names: quotes, backslash and bytes 80 FF are among them" grep -q "27.*22.*5C.*80FF" <<<"$got"
"$TOP/scripts/flame" "$T/h" --since 1h -f folded -o "$T/fh-dir" 2>/dev/null
"$TOP/scripts/flame" --from "$CH_URL" --since 1h --host hH -f folded -o "$T/fh-store" 2>/dev/null
check_diff "hostile names: scripts/flame gives the same bytes from the store" "$T/fh-dir.folded" "$T/fh-store.folded"

# --- credentials -----------------------------------------------------------------
url=${CH_URL%/*}
url="clickhouse://fleet:wrong@${url#clickhouse://}/authdb"
FAKE_WINDOWS=1 "$STACKFOLD" continuous -o "$T/e" --window 1 --push "$url" -- "$T/fake" 2>"$T/e.log" &
cpid=$!
cpids+=("$cpid")
wait_for 1 "authentication failed" "$T/e.log"
check "a wrong password: the store's refusal is logged" grep -q "authentication failed (HTTP 401" "$T/e.log"
check "a password in the URL is blanked in argv (ps)" bash -c "tr '\0' ' ' </proc/$cpid/cmdline | grep -q 'fleet:xxxxx@' && ! grep -q wrong /proc/$cpid/cmdline"
stop
printf 'fleet:s3cret pass\n' >"$T/auth"
chmod 600 "$T/auth"
url="clickhouse://fleet@${url#*@}"
FAKE_WINDOWS=1 "$STACKFOLD" continuous -o "$T/e2" --window 1 --push "$url" --push-auth "$T/auth" -- "$T/fake" 2>"$T/e2.log" &
cpid=$!
cpids+=("$cpid")
wait_sent "$T/e2" 1
stop
check_eq "--push-auth: delivered as user fleet" 1 "$(ch_sql "SELECT count() FROM authdb.windows")"

# --- a stack row missing --------------------------------------------------------
# samples of hA's first window under a stack id that the stacks table
# lacks: kept as [missing stack], said, counted in --meta
ch_sql "INSERT INTO stackfold.samples ($cols) SELECT hour, host, attempt, 4242424242, pid, tid, comm, labels, 7 FROM stackfold.samples WHERE attempt IN (SELECT min(attempt) FROM stackfold.windows WHERE window_id = $w1) LIMIT 1"
"$STACKFOLD" query "$CH_URL" --from "$T0" --to $(( $(date +%s) + 60 )) --host hA \
	-o "$T/miss.folded" --meta "$T/miss.meta" 2>"$T/miss.err"
check_eq "a missing stack row: the query still succeeds" 0 $?
check_eq "a missing stack row: its samples are kept" $(( ta + 7 )) "$(folded_total "$T/miss.folded")"
check "a missing stack row: named [missing stack]" grep -qx '\[missing stack\] 7' "$T/miss.folded"
check "a missing stack row: said on stderr" \
	grep -q "^stackfold: query: .*: 7 samples of stacks missing from stackfold.stacks, shown as \[missing stack\]$" "$T/miss.err"
check "a missing stack row: counted in --meta" grep -q ' missing_stacks=7$' "$T/miss.meta"

# --- other days' stacks are not read ----------------------------------------
# stacks are stored again each day: a query reads its range's days only
# (query_log's read_rows), with the same answer
# query_rows OUT: stackfold query of hA into OUT; the rows it read
query_rows() {
	local t
	t=$(ch_sql "SELECT toUInt32(now())")	# the queries before ended by then
	sleep 1.1
	"$STACKFOLD" query "$CH_URL" --from "$T0" --to $(( $(date +%s) + 60 )) --host hA -o "$1"
	ch_sql "SYSTEM FLUSH LOGS"
	ch_sql "SELECT read_rows FROM system.query_log WHERE type = 2 AND event_time > toDateTime($t) AND query LIKE '%ANY LEFT JOIN%' ORDER BY event_time DESC LIMIT 1"
}
r1=$(query_rows "$T/days1.folded")
ch_sql "INSERT INTO stackfold.stacks SELECT today() - 3 - number % 30, cityHash64(number), ['other', 'day'] FROM numbers(30000)"
r2=$(query_rows "$T/days2.folded")
check "other days' stacks: the same answer" cmp -s "$T/days1.folded" "$T/days2.folded"
check "other days' stacks: not read ($r1 rows, then $r2 with 30,000 added)" \
	test -n "$r1" -a -n "$r2" -a "${r2:-0}" -lt $(( ${r1:-0} + 1000 ))
