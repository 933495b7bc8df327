#!/usr/bin/env bash
# bench/fleet.sh - what the fleet store costs and gives (docs/fleet.md):
#   1. push cost: CPU of stackfold's push thread per window of 2,000
#      unique stacks, and the bytes sent, for a first window (every stack
#      new to the store) and for the windows after it (stacks known);
#   2. storage per sample in ClickHouse after merges, for a day of
#      windows of 10 hosts, twice: (a) synthetic rows generated in
#      ClickHouse (250 rows a window, ~2,000 samples, stacks from a pool
#      of 20,000 shared by every host, skewed as real profiles are);
#      (b) real-shaped: CAPTURE_S seconds of `scripts/continuous -a`
#      windows captured here at the start under a busy workload (a build
#      of this tree in a loop), pushed to the store by stackfold, then
#      replayed in ClickHouse for 24 h x 10 hosts (the captured windows in
#      turn, each host's window and attempt ids its own); and host0's day
#      of them in a table of the previous samples layout (a window_start
#      and window_id a row), side by side;
#   3. query latency: a flame graph of the synthetic 24 h x 10 hosts
#      (21.6 M rows) by `stackfold query` and scripts/flame --from, side
#      by side with scripts/flame DIR merging the same windows of one host
#      from files (8,640 windows; ten hosts would be ten times that);
#   4. a year of stacks, on the real-shaped day: the 24 h x 10 hosts
#      query's server CPU seconds (system.query_log) next to the bare
#      GROUP BY stack_id over the same rows, before and after YEAR_DAYS
#      (364) other days of the captured stacks are added; and host0's
#      query in both samples layouts (the previous one by the SQL the
#      previous reader sent).
# A private clickhouse-server (tests/clickhouse.sh) in a temporary
# directory.  Needs root and bpftrace (the capture).  Environment:
# STACKFOLD, PUSH_WINDOWS (30), YEAR_DAYS (364), CAPTURE_S (150), HOSTS
# (10: of the real-shaped day), SECTIONS ("1 2a 3 2b 4": which to run;
# 4 needs 2b, which runs when either is asked), BASE (a tree with another
# stackfold built: its query's server CPU beside this one's, in 3).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
STACKFOLD=${STACKFOLD:-$TOP/bin/stackfold}
PUSH_WINDOWS=${PUSH_WINDOWS:-30}
YEAR_DAYS=${YEAR_DAYS:-364}
CAPTURE_S=${CAPTURE_S:-150}
HOSTS=${HOSTS:-10}
SECTIONS=${SECTIONS:-1 2a 3 2b 4}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
die() { echo "fleet: $*" >&2; exit 1; }
command -v clickhouse-server >/dev/null || die "clickhouse-server not installed (scripts/install-deps --test)"
[ -x "$STACKFOLD" ] || die "$STACKFOLD is not built (run: make)"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-fleet.XXXXXX") || die mktemp
trap 'ch_stop -TERM; rm -rf "$work"' EXIT
t_start=$(date +%s.%N)
CH_LOG_QUERIES=1 ch_start "$work/ch" || die "clickhouse-server did not start"
t_ready=$(date +%s.%N)
DB=stackfold
export CH_SQL_TIMEOUT=900

echo "machine: $(uname -n), $(nproc) x $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), Linux $(uname -r); ClickHouse $(ch_sql 'SELECT version()'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'clickhouse-server start: %.2f s to ready\n' "$(echo "$t_ready - $t_start" | bc)"

# cpu_s CMD...: the server CPU seconds (query_log: the query threads'
# OSCPUVirtualTimeMicroseconds) of the queries that CMD ran, the least of
# 3 runs
cpu_s() {
	local i t c b=""
	for i in 1 2 3; do
		t=$(ch_sql "SELECT toUInt32(now())")	# the runs before ended by then
		sleep 1.1
		"$@" >/dev/null 2>&1 || return 1
		ch_sql "SYSTEM FLUSH LOGS"
		c=$(ch_sql "SELECT sum(ProfileEvents.Values[indexOf(ProfileEvents.Names, 'OSCPUVirtualTimeMicroseconds')]) / 1e6
			FROM system.query_log WHERE type = 2 AND event_time > toDateTime($t)
			AND query NOT LIKE '%system.query_log%' AND query NOT LIKE 'SYSTEM %'")
		if [ -z "$b" ] || [ "$(echo "$c < $b" | bc)" = 1 ]; then b=$c; fi
	done
	printf '%.2f\n' "$b"
}

# --- 0. real windows, captured once --------------------------------------------
# CAPTURE_S seconds of scripts/continuous -a (10 s windows) pushed to the
# database "capture", while a copy of this tree is built in a loop
mkdir -p "$work/src"
git -C "$TOP" archive HEAD | tar -x -C "$work/src" || die "cannot copy the tree for the workload"
( while [ ! -e "$work/stop" ]; do make -s -C "$work/src" clean >/dev/null 2>&1; make -s -j"$(nproc)" -C "$work/src" >/dev/null 2>&1; done ) &
busy=$!
STACKFOLD=$STACKFOLD timeout -s INT "$CAPTURE_S" "$TOP/scripts/continuous" -a -q -o "$work/cap" --window 10 \
	--push "${CH_URL%/*}/capture" 2>"$work/cap.log"
touch "$work/stop"; wait "$busy"	# the build under way ends
# the whole windows (not the first or last, cut by the start and stop),
# by their committed attempts (a samples row's window)
cap_ids=$(ch_sql "SELECT groupArray(a) FROM (SELECT min(attempt) AS a, any(window_start) AS t FROM capture.windows WHERE duration_ns > 9500000000 GROUP BY window_id ORDER BY t)")
ncap=$(ch_sql "SELECT length($cap_ids)")
[ "${ncap:-0}" -ge 2 ] || die "the capture gave ${ncap:-no} whole windows (log: $(tail -2 "$work/cap.log"))"
read -r cap_rows cap_samples < <(ch_sql "SELECT count(), sum(count) FROM capture.samples WHERE has($cap_ids, attempt) FORMAT TSV")

if want 1; then
# --- 1. push cost ------------------------------------------------------------
# a canned window of 2,000 unique stacks, 20 frames deep, 3 processes
awk 'BEGIN {
	srand(7)
	for (s = 0; s < 2000; s++) {
		pid = 100 + s % 3
		if (s % 3 == 0 || s < 3) printf "#pid %d app%d\n", pid, pid
		printf "@stackfold[%d, %d, app%d, \n", pid, pid, pid
		for (d = 0; d < 20; d++)
			printf "        fn_%d_%d+%d\n", d, (d < 6 ? s % (d + 2) : int(rand() * 500)), 4 * d
		printf ", ]: %d\n", 1 + s % 2
	}
	print ""
}' >"$work/window.txt"
total=$(awk '/^, \]: / { s += $3 } END { print s }' "$work/window.txt")
cat >"$work/fake" <<SH
#!/bin/bash
trap 'kill "\$sleeper" 2>/dev/null; printf "\n@stackfold_total: 0\n"; exit 0' INT
echo "#attached"
for ((i = 0; i < \$1; i++)); do cat "$work/window.txt"; echo "@stackfold_total: $total"; sleep 0.2; done
sleep 600 & sleeper=\$!
wait
SH
chmod +x "$work/fake"
push_run() {	# N: windows; prints "CPU_MS_PER_WINDOW BYTES_PER_WINDOW"
	rm -rf "$work/w"
	"$STACKFOLD" continuous -q -o "$work/w" --window 1 --push "$CH_URL" -- "$work/fake" "$1" 2>"$work/push.log" &
	local p=$! i
	for ((i = 0; i < 600; i++)); do
		[ "$(cat "$work"/w/.push-*.sent 2>/dev/null | grep -c .)" -ge "$1" ] && break
		sleep 0.1
	done
	kill -TERM "$p"
	wait "$p"
	awk -v n="$1" '/push: .* ms of CPU/ { for (i = 1; i <= NF; i++) if ($i == "ms") { cpu = $(i - 1); break } }
		/bytes of request bodies/ { for (i = 1; i <= NF; i++) if ($i == "bytes") b = $(i - 1) }
		END { sub(/^\(/, "", cpu); printf "%.2f %.0f\n", cpu / n, b / n }' "$work/push.log"
}
ch_sql "DROP DATABASE IF EXISTS $DB"
read -r cpu1 bytes1 < <(push_run 1)
read -r cpun bytesn < <(push_run "$PUSH_WINDOWS")
folded_bytes=$(find "$work/w" -name '*.folded' -printf '%s\n' | head -1)
echo
echo "1. push cost, a window of 2,000 unique stacks (20 frames), ClickHouse on loopback:"
printf '   first window (every stack new):  %6.2f ms CPU of the push thread, %8d bytes sent\n' "$cpu1" "$bytes1"
printf '   %d windows, stacks known after the first: %6.2f ms CPU and %d bytes a window\n' "$PUSH_WINDOWS" "$cpun" "$bytesn"
printf '   (the window'"'"'s .folded file: %d bytes; at one window per 10 s, %.4f%% of one CPU)\n' "$folded_bytes" "$(echo "$cpun / 10000 * 100" | bc -l)"

else	# the schema as stackfold creates it (the capture made it)
	ch_sql "CREATE DATABASE IF NOT EXISTS $DB"
	for t in stacks samples windows; do ch_sql "CREATE TABLE $DB.$t AS capture.$t"; done
fi

# --- 2./3. a day of 10 hosts ------------------------------------------------------
DAY0=$(( $(date -u +%s) / 86400 * 86400 - 86400 ))	# yesterday, 00:00 UTC
# the schema as stackfold creates it, emptied (today's partitions: the
# generated day is yesterday)
from=$DAY0 to=$(( DAY0 + 86400 ))
# the bare GROUP BY stack_id over the day's rows: what summing alone costs,
# beside the query (3 and 4)
bare_sql="SELECT stack_id, sum(count) FROM $DB.samples WHERE hour >= toDateTime($from) AND hour < toDateTime($to) GROUP BY stack_id FORMAT RowBinary"
today=$(date -u +%F)
for t in stacks samples windows; do
	ch_sql "ALTER TABLE $DB.$t DROP PARTITION '$today'"
done
if want 2a || want 3; then
POOL=20000 ROWS=250
# stacks_sql FIRST DAYS: the pool's stacks once for each of DAYS days,
# from the generated day minus FIRST back
stacks_sql() {
	echo "INSERT INTO $DB.stacks SELECT toDate($DAY0) - intDiv(number, $POOL), cityHash64(number % $POOL),
	arrayConcat([concat('app', toString(number % $POOL % 40))],
		arrayMap(i -> concat('mod', toString(i), '_fn', toString(intDiv(number % $POOL, greatest(1, intDiv($POOL, toUInt64(pow(2, i + 1))))) % 997)), range(toUInt64(8 + number % $POOL % 23))))
	FROM (SELECT number + $(( $1 * POOL )) AS number FROM numbers($(( $2 * POOL ))))"
}
t0=$(date +%s.%N)
ch_sql "$(stacks_sql 0 1)"
ch_sql "INSERT INTO $DB.samples (hour, host, attempt, stack_id, pid, tid, comm, labels, count)
	SELECT toDateTime($DAY0 + intDiv(10 * w, 3600) * 3600), concat('host', toString(h)), cityHash64(h, w, 1),
	       cityHash64(k), toUInt32(1000 + k % 40), 0, concat('app', toString(k % 40)), '', 1 + intHash64(number + 1) % 15
	FROM (SELECT number, intDiv(number, $ROWS * 8640) AS h, intDiv(number, $ROWS) % 8640 AS w,
	             toUInt64(pow((intHash64(number) % 1000000) / 1000000, 3) * $POOL) AS k
	      FROM numbers(10 * 8640 * $ROWS))"
ch_sql "INSERT INTO $DB.windows (window_id, attempt, window_start, start_ns, duration_ns, hz, host, kernel, stem, samples)
	SELECT cityHash64(h, w), cityHash64(h, w, 1), toDateTime($DAY0 + 10 * w), ($DAY0 + 10 * w) * 1000000000, 10000000000, 99,
	       concat('host', toString(h)), 'generated', toString(w), 0
	FROM (SELECT intDiv(number, 8640) AS h, number % 8640 AS w FROM numbers(86400))"
for t in stacks samples windows; do ch_sql "OPTIMIZE TABLE $DB.$t FINAL"; done
t1=$(date +%s.%N)
rows=$(ch_sql "SELECT count() FROM $DB.samples")
samples=$(ch_sql "SELECT sum(count) FROM $DB.samples")
ch_sql "SELECT table, sum(rows), sum(bytes_on_disk) FROM system.parts WHERE database = '$DB' AND active GROUP BY table ORDER BY table FORMAT TSV" >"$work/parts"
disk=$(awk '{ s += $3 } END { print s }' "$work/parts")
echo
printf '2a. storage, synthetic rows: 24 h x 10 hosts generated and merged in %.0f s: %s rows, %s samples\n' "$(echo "$t1 - $t0" | bc)" "$rows" "$samples"
awk '{ printf "   %-8s %10d rows %12d bytes on disk\n", $1, $2, $3 }' "$work/parts"
printf '   %.2f bytes per sample, %.2f bytes per row, all tables after OPTIMIZE FINAL\n' \
	"$(echo "$disk / $samples" | bc -l)" "$(echo "$disk / $rows" | bc -l)"

# --- 3. query latency -------------------------------------------------------------
# the server's CPU seconds so far (utime+stime of every thread)
ch_cpu() { awk -v t="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); split($0, f, " "); printf "%.2f\n", (f[12] + f[13]) / t }' "/proc/$CH_PID/stat"; }
best() {	# "WALL CPU": best wall seconds of 3 runs of CMD, and the server's CPU seconds in that run
	local i b="" s e d c0 c1 c=""
	for i in 1 2 3; do
		c0=$(ch_cpu)
		s=$(date +%s.%N); "$@" >/dev/null 2>&1 || return 1; e=$(date +%s.%N)
		c1=$(ch_cpu)
		d=$(echo "$e - $s" | bc)
		if [ -z "$b" ] || [ "$(echo "$d < $b" | bc)" = 1 ]; then b=$d c=$(echo "$c1 - $c0" | bc); fi
	done
	echo "$b $c"
}
read -r q_all q_all_cpu < <(best "$STACKFOLD" query "$CH_URL" --from "$from" --to "$to" -o "$work/all.folded")
read -r q_one q_one_cpu < <(best "$STACKFOLD" query "$CH_URL" --from "$from" --to "$to" --host host0 --by-pid -o "$work/h0-store.folded")
until_t=$(date -u -d "@$to" +%FT%TZ)
read -r f_all _ < <(best "$TOP/scripts/flame" --from "$CH_URL" --since 1d --until "$until_t" -f svg -o "$work/all")
# the same with the server and the client at nice -15: this VM is shared
# by other jobs (see the load average); this is closer to the machine alone
for t in /proc/"$CH_PID"/task/*; do renice -n -15 -p "${t##*/}" >/dev/null; done
read -r n_all n_all_cpu < <(best nice -n -15 "$STACKFOLD" query "$CH_URL" --from "$from" --to "$to" -o "$work/all-nice.folded")
read -r nf_all _ < <(best nice -n -15 "$TOP/scripts/flame" --from "$CH_URL" --since 1d --until "$until_t" -f svg -o "$work/all-nice")
for t in /proc/"$CH_PID"/task/*; do renice -n 0 -p "${t##*/}" >/dev/null; done
# host0's windows as files: one .folded each (and a .pb.gz, which
# scripts/flame needs beside it)
printf 'gen-1;a 1\n' | "$STACKFOLD" -q -f pprof -o "$work/one.pb.gz" /dev/stdin
mkdir -p "$work/dir"
ch_sql "SELECT toUInt32(window_start) AS ws, concat(comm, '-', toString(pid), ';', arrayStringConcat(arraySlice(frames, 2), ';')), count
	FROM (SELECT stack_id, pid, comm, count, window_start FROM $DB.samples ANY INNER JOIN
		(SELECT attempt, window_start FROM $DB.windows WHERE host = 'host0') USING attempt WHERE host = 'host0')
	ANY INNER JOIN (SELECT stack_id, any(frames) AS frames FROM $DB.stacks GROUP BY stack_id) USING stack_id
	ORDER BY ws FORMAT TSV" |
	awk -F '\t' -v d="$work/dir" '$1 != last { if (f) close(f); f = d "/" strftime("%Y%m%dT%H%M%SZ", $1, 1) ".folded"; last = $1 }
		{ print $2 " " $3 > f }'
for f in "$work"/dir/*.folded; do cp "$work/one.pb.gz" "${f%.folded}.pb.gz"; done
nfiles=$(find "$work/dir" -name '*.folded' | wc -l)
dir_bytes=$(du -sb "$work/dir" | cut -f1)
since=$(( ( $(date -u +%s) - from ) / 3600 + 1 ))h
read -r f_dir _ < <(best "$TOP/scripts/flame" "$work/dir" --since "$since" -f folded --keep-pid -o "$work/h0-dir")
"$STACKFOLD" -q -f folded -o "$work/h0-store-sorted.folded" "$work/h0-store.folded"
same=no
cmp -s "$work/h0-dir.folded" "$work/h0-store-sorted.folded" && same=yes
echo
echo "3. a flame graph of 24 h (best of 3 runs, wall seconds; load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs):"
printf '   stackfold query, 10 hosts, %s rows summed by ClickHouse:  %6.2f s (server CPU %.2f s)\n' "$rows" "$q_all" "$q_all_cpu"
printf '   scripts/flame --from clickhouse://, 10 hosts, SVG:         %6.2f s\n' "$f_all"
printf '   the same two at nice -15 (server and client):             %6.2f s (server CPU %.2f s), %.2f s\n' "$n_all" "$n_all_cpu" "$nf_all"
printf '   stackfold query --by-pid, host0 only:                      %6.2f s (server CPU %.2f s)\n' "$q_one" "$q_one_cpu"
printf '   scripts/flame DIR, host0 only (%d window files, %d MB):   %6.2f s\n' "$nfiles" $(( dir_bytes / 1000000 )) "$f_dir"
printf '   (ten hosts from files: ten such directories, about %.0f s)\n' "$(echo "$f_dir * 10" | bc)"
echo "   host0 from the store and from the files, same folded bytes: $same"
# the query's server CPU against the bare GROUP BY stack_id over the same
# rows (what summing alone costs), and BASE's stackfold's query (another
# build, e.g. the one before a change), least of 3 each
s_q=$(cpu_s "$STACKFOLD" query "$CH_URL" --from "$from" --to "$to" -o "$work/all.folded")
s_b=$(cpu_s ch_sql "$bare_sql")
printf '   server CPU (query_log, least of 3): stackfold query %.2f s, the bare GROUP BY stack_id %.2f s (%.2fx)\n' \
	"$s_q" "$s_b" "$(echo "$s_q / $s_b" | bc -l)"
if [ -n "${BASE:-}" ]; then
	s_base=$(cpu_s "$BASE/bin/stackfold" query "$CH_URL" --from "$from" --to "$to" -o "$work/all-base.folded")
	same_b=no
	cmp -s "$work/all.folded" "$work/all-base.folded" && same_b=yes
	printf '   BASE (%s): stackfold query %.2f s (%.2fx the bare); the same folded bytes: %s\n' \
		"$BASE" "$s_base" "$(echo "$s_base / $s_b" | bc -l)" "$same_b"
fi

fi

if want 2b || want 4; then
# --- 2b. real-shaped windows ---------------------------------------------------------
# the generated day's rows out; the captured windows replayed instead:
# window w of host h is captured window (w + 7h) mod ncap, under its own
# window and attempt ids; its stacks are the captured ones, stored as the
# pusher stores them (under the day of the window)
for t in stacks samples windows; do ch_sql "ALTER TABLE $DB.$t DROP PARTITION '$(date -u -d "@$DAY0" +%F)'"; done
# replay_sql H FIRST COUNT: host h's windows FIRST..FIRST+COUNT-1
replay_sql() {
	echo "INSERT INTO $DB.samples (hour, host, attempt, stack_id, pid, tid, comm, labels, count)
	SELECT toDateTime($DAY0 + intDiv(10 * w, 3600) * 3600), concat('host', toString(h)), cityHash64(h, w, 1), stack_id, pid, tid, comm, labels, count
	FROM (SELECT toUInt64($1) AS h, number + $2 AS w, toUInt64((w + 7 * h) % $ncap) AS k FROM numbers($3))
	ALL INNER JOIN (SELECT toUInt64(indexOf($cap_ids, attempt) - 1) AS k, stack_id, pid, tid, comm, labels, count
		FROM capture.samples WHERE has($cap_ids, attempt)) USING k"
}
t0=$(date +%s.%N)
for ((h = 0; h < HOSTS; h++)); do
	for ((w = 0; w < 8640; w += 1440)); do ch_sql "$(replay_sql "$h" "$w" 1440)" || die "replay failed"; done
done
ch_sql "INSERT INTO $DB.windows (window_id, attempt, window_start, start_ns, duration_ns, hz, host, kernel, stem, samples)
	SELECT cityHash64(h, w), cityHash64(h, w, 1), toDateTime($DAY0 + 10 * w), ($DAY0 + 10 * w) * 1000000000, 10000000000, 99,
	       concat('host', toString(h)), 'replayed', toString(w), 0
	FROM (SELECT intDiv(number, 8640) AS h, number % 8640 AS w FROM numbers($HOSTS * 8640))"
ch_sql "INSERT INTO $DB.stacks SELECT toDate($DAY0), stack_id, any(frames) FROM capture.stacks GROUP BY stack_id"
for t in stacks samples windows; do ch_sql "OPTIMIZE TABLE $DB.$t FINAL"; done
t1=$(date +%s.%N)
# host0's day in the previous layout (each row its window's start and id,
# ordered by host, hour, stack_id, start), for comparison
ch_sql "CREATE DATABASE old"
ch_sql "CREATE TABLE old.samples (window_start DateTime, host String, window_id UInt64, attempt UInt64, stack_id UInt64, pid UInt32, tid UInt32, comm String, labels String, count UInt64)
	ENGINE = MergeTree() PARTITION BY toDate(window_start) ORDER BY (host, toStartOfHour(window_start), stack_id, window_start)" || die "previous layout table"
ch_sql "INSERT INTO old.samples SELECT window_start, host, window_id, attempt, stack_id, pid, tid, comm, labels, count
	FROM $DB.samples ANY INNER JOIN (SELECT attempt, window_start, window_id FROM $DB.windows WHERE host = 'host0') USING attempt WHERE host = 'host0'"
ch_sql "OPTIMIZE TABLE old.samples FINAL"
# and in this layout, alone too (the same rows: bytes side by side)
ch_sql "CREATE DATABASE cur"
ch_sql "CREATE TABLE cur.samples AS $DB.samples"
ch_sql "INSERT INTO cur.samples SELECT * FROM $DB.samples WHERE host = 'host0'"
ch_sql "OPTIMIZE TABLE cur.samples FINAL"
cur_disk=$(ch_sql "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'cur' AND table = 'samples' AND active")
for t in stacks windows; do ch_sql "CREATE TABLE old.$t AS $DB.$t"; ch_sql "INSERT INTO old.$t SELECT * FROM $DB.$t"; done
rows=$(ch_sql "SELECT count() FROM $DB.samples")
samples=$(ch_sql "SELECT sum(count) FROM $DB.samples")
ch_sql "SELECT table, sum(rows), sum(bytes_on_disk) FROM system.parts WHERE database = '$DB' AND active GROUP BY table ORDER BY table FORMAT TSV" >"$work/parts"
disk=$(awk '{ s += $3 } END { print s }' "$work/parts")
# bytes a row of samples by column: old, cur (host0)
colbytes() { ch_sql "SELECT name, round(data_compressed_bytes / (SELECT count() FROM $1.samples), 2) FROM system.columns
	WHERE database = '$1' AND table = 'samples' ORDER BY name FORMAT TSV"; }
h0_rows=$(ch_sql "SELECT count() FROM old.samples")
h0_samples=$(ch_sql "SELECT sum(count) FROM old.samples")
old_disk=$(ch_sql "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'old' AND table = 'samples' AND active")
new_all=$(ch_sql "SELECT sum(data_compressed_bytes) FROM system.columns WHERE database = '$DB' AND table = 'samples'")
echo
printf '2b. storage, real-shaped: %d whole windows captured (%s rows, %s samples: %.0f rows and %.2f samples a row a window), replayed as 24 h x %d hosts in %.0f s: %s rows, %s samples\n' \
	"$ncap" "$cap_rows" "$cap_samples" "$(echo "$cap_rows / $ncap" | bc -l)" "$(echo "$cap_samples / $cap_rows" | bc -l)" "$HOSTS" "$(echo "$t1 - $t0" | bc)" "$rows" "$samples"
awk '{ printf "   %-8s %10d rows %12d bytes on disk\n", $1, $2, $3 }' "$work/parts"
printf '   %.2f bytes per sample, %.2f bytes per row, all tables after OPTIMIZE FINAL\n' \
	"$(echo "$disk / $samples" | bc -l)" "$(echo "$disk / $rows" | bc -l)"
printf '   host0 samples alone, previous layout (window_start, window_id a row): %.2f bytes per sample, %.2f per row (this layout, %d hosts: %.2f, %.2f)\n' \
	"$(echo "$old_disk / $h0_samples" | bc -l)" "$(echo "$old_disk / $h0_rows" | bc -l)" "$HOSTS" \
	"$(echo "$new_all / $samples" | bc -l)" "$(echo "$new_all / $rows" | bc -l)"
printf '   host0 samples alone, this layout: %.2f bytes per sample, %.2f per row (%.2fx fewer than the previous layout)\n' \
	"$(echo "$cur_disk / $h0_samples" | bc -l)" "$(echo "$cur_disk / $h0_rows" | bc -l)" "$(echo "$old_disk / $cur_disk" | bc -l)"
echo "   bytes a row by column (compressed), previous layout / this layout:"
join -a 1 -a 2 -e - -o 0,1.2,2.2 <(colbytes old) <(colbytes cur) | awk '{ printf "     %-13s %6s %6s\n", $1, $2, $3 }'

# --- 4. a year of stacks ------------------------------------------------------------
# on the real-shaped day
year_case() {	# "QUERY_CPU BARE_CPU"
	echo "$(cpu_s "$STACKFOLD" query "$CH_URL" --from "$from" --to "$to" -o "$work/year.folded")" \
		"$(cpu_s ch_sql "$bare_sql")"
}
read -r y0_q y0_b < <(year_case)
# host0 in both layouts, with the day's stacks: the previous reader's
# SQL over the previous layout, stackfold query over this one (server
# CPU), and the stacks' sums of both readers' filters compared
prev_sql() {	# SELECT: the previous reader's samples part for host0
	echo "SELECT stack_id, toUInt32(0) AS p, sum(count) AS c FROM old.samples
		WHERE window_start >= toDateTime($from) AND window_start < toDateTime($to) AND host = 'host0'
		AND attempt IN (SELECT min(attempt) FROM old.windows WHERE window_start >= toDateTime($from)
			AND window_start < toDateTime($to) AND host = 'host0' GROUP BY window_id) GROUP BY stack_id"
}
o_q=$(cpu_s ch_sql "SELECT p, c, frames FROM ($(prev_sql)) ANY LEFT JOIN (SELECT stack_id, any(frames) AS frames FROM old.stacks
	WHERE day >= toDate($from) AND day <= toDate($(( to - 1 ))) GROUP BY stack_id) USING stack_id FORMAT RowBinary")
n_q=$(cpu_s "$STACKFOLD" query "$CH_URL" --from "$from" --to "$to" --host host0 -o "$work/n.folded")
ch_sql "SELECT stack_id, c FROM ($(prev_sql)) ORDER BY stack_id FORMAT TSV" >"$work/o.sums"
ch_sql "SELECT stack_id, sum(count) FROM $DB.samples WHERE hour >= toDateTime($from) AND hour < toDateTime($to) AND host = 'host0'
	AND attempt IN (SELECT min(attempt) FROM $DB.windows WHERE window_start >= toDateTime($from) AND window_start < toDateTime($to)
		AND host = 'host0' GROUP BY window_id) GROUP BY stack_id ORDER BY stack_id FORMAT TSV" >"$work/n.sums"
same_o=no
[ -s "$work/o.sums" ] && cmp -s "$work/o.sums" "$work/n.sums" && same_o=yes
t0=$(date +%s.%N)
# the captured stacks again under each of YEAR_DAYS days before, 30 days an INSERT
for ((d = 1; d <= YEAR_DAYS; d += 30)); do
	ch_sql "INSERT INTO $DB.stacks SELECT toDate($DAY0) - d, stack_id, frames FROM $DB.stacks
		CROSS JOIN (SELECT toUInt16(number + $d) AS d FROM numbers($(( YEAR_DAYS - d + 1 < 30 ? YEAR_DAYS - d + 1 : 30 )))) WHERE day = toDate($DAY0)"
done
t1=$(date +%s.%N)
ystacks=$(ch_sql "SELECT count() FROM $DB.stacks")
read -r y1_q y1_b < <(year_case)
echo
printf '4. real-shaped, a year of stacks: %d other days added in %.0f s (%s stack rows); 24 h x %d hosts, server CPU seconds (query_log), least of 3:\n' \
	"$YEAR_DAYS" "$(echo "$t1 - $t0" | bc)" "$ystacks" "$HOSTS"
printf '   %-32s %8s %8s\n' "" "query" "bare GROUP BY stack_id"
printf '   %-32s %8.2f %8.2f  (%.2fx)\n' "stacks of the day only" "$y0_q" "$y0_b" "$(echo "$y0_q / $y0_b" | bc -l)"
printf '   %-32s %8.2f %8.2f  (%.2fx)\n' "with a year of stacks" "$y1_q" "$y1_b" "$(echo "$y1_q / $y1_b" | bc -l)"
printf '   host0 alone (day'"'"'s stacks): previous layout, its reader'"'"'s SQL %.2f, this layout, stackfold query %.2f server CPU s; the same sums by stack: %s\n' "$o_q" "$n_q" "$same_o"

fi
