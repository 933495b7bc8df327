#!/usr/bin/env bash
# t66-fleet-live: scripts/continuous --push for real (bpftrace, 2 s
# windows, bin/demo burning CPU, -p) into a private clickhouse-server: each
# window arrives with the sample total of its local files, and a
# scripts/flame of the range from the store is the one from the
# directory, byte for byte.  Needs root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"

live_prereq "fleet live" || exit 0
ch_prereq "fleet live" || exit 0
[ -x "$TOP/bin/demo" ] || { fail "fleet live: bin/demo is built (make demo)"; exit 0; }
cleanup() {
	[ -n "${demo:-}" ] && kill "$demo" 2>/dev/null
	[ -n "${cpid:-}" ] && kill -KILL "$cpid" 2>/dev/null
	ch_stop -TERM
	[ -n "${KEEP:-}" ] && cp -r "$T" "$KEEP"; rm -rf "$T"
}
trap cleanup EXIT
ch_start "$T/ch" || { fail "fleet live: clickhouse-server starts"; exit 0; }
"$TOP/bin/demo" 0 >/dev/null &
demo=$!
W=$T/w
# -p, not -a: the whole machine holds other tests' hostile files (FIFOs
# named as debug files...), which are not this test's subject
"$TOP/scripts/continuous" -p "$demo" --window 2 -o "$W" --host live1 --push "$CH_URL" 2>"$T/log" &
cpid=$!
for ((i = 0; i < 300; i++)); do
	[ "$(find "$W" -name '*.pb.gz' 2>/dev/null | wc -l)" -ge 3 ] && break
	kill -0 "$cpid" 2>/dev/null || break
	sleep 0.1
done
kill -TERM "$cpid"
wait "$cpid"
check_eq "live: scripts/continuous --push exits 0 on SIGTERM" 0 "$?"
cpid=""
n=$(find "$W" -name '*.pb.gz' | wc -l)
check "live: at least 3 windows written" test "$n" -ge 3
sent=$(cat "$W"/.push-*.sent 2>/dev/null | grep -c .)
check_eq "live: every window acknowledged by the store (its journal)" "$n" "$sent"
# per window: STEM TOTAL, from the files and from the store
for fo in "$W"/*.folded; do
	s=${fo##*/}
	echo "${s%.folded} $(folded_total "$fo")"
done | sort >"$T/local"
# (a window without samples has a windows row and no samples rows)
ch_sql "SELECT attempt, sum(count) FROM stackfold.samples GROUP BY attempt FORMAT TSV" >"$T/per-attempt"
ch_sql "SELECT stem, min(attempt) FROM stackfold.windows GROUP BY stem FORMAT TSV" |
	awk -F '\t' 'NR == FNR { n[$1] = $2; next } { print $1, n[$2] + 0 }' "$T/per-attempt" - |
	sort >"$T/store"
check_diff "live: each window's samples in the store equal its local file's" "$T/local" "$T/store"
"$TOP/scripts/flame" "$W" --since 1h -f folded -o "$T/dir" 2>/dev/null
"$TOP/scripts/flame" --from "$CH_URL" --since 1h -f folded -o "$T/store" 2>/dev/null
check_diff "live: scripts/flame from the store == from the directory" "$T/dir.folded" "$T/store.folded"
check "live: demo's frames are in it" grep -q "matrix_multiply" "$T/store.folded"
