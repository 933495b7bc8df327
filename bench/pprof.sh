#!/usr/bin/env bash
# bench/pprof.sh [CAPTURE] - what pprof output costs.
#
# Without CAPTURE, records 30 s system-wide (stackfold record + bt/profile.bt
# at 99 Hz) while a mixed load runs (compilers, gzip, shell loops), keeping
# the raw capture.  Then, on that capture:
#   cpu   in-process (tests/tools/pprof_bench.c, min of 20 runs): CPU of
#         out_pprof_write on the loaded profile, i.e. what -f pprof adds to
#         post-processing (target < 20 ms); also the whole-process
#         difference `-f folded,pprof` minus `-f folded` (min of RUNS runs,
#         noisier), with a warm symbol cache and with a cold one (a fresh
#         cache dir a run: names-only folded reads no line tables)
#   size  .pb.gz bytes against the gzipped folded text of the same profile
#         (gzip -6 and -9; the old target was .pb.gz <= 1.5 x), and where
#         they go: "pb_part_FIELD N RAW GZ" per top-level field of the
#         profile (tests/tools/pprof_check.c --sizes: count, wire bytes,
#         those bytes gzipped on their own), and "pb_addresses" (locations
#         with an address, user and kernel).
#         The folded text is one line per stack and names only; the profile
#         has, as the issue asks, one Location per address with its mapping
#         (a library in N processes is N mappings and N locations per
#         sampled instruction), line numbers, file names, mangled names and
#         pid/tid/comm labels per sample, so 1.5 x is out of reach.
#         Measured on two 30 s system-wide captures (~7400 samples, ~4950
#         written locations, ~450 mappings): 2.78-2.81 x (the address-less
#         writer before it was 2.40-2.44 x, per-address in first-use order
#         3.26-3.34 x); the location, sample and string sections each
#         weigh more than a third of the folded text.
# Needs root and bpftrace only to record.  Prints one "name value" per line.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SF=${STACKFOLD:-$TOP/bin/stackfold}
W=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench-pprof.XXXXXX")
trap 'rm -rf "$W"' EXIT
RUNS=${RUNS:-5}

load() {	# a mix of processes with varied stacks, until killed
	while :; do cc -O2 -c -o "$W/x.o" -x c - <"$TOP/collapse/output/out_pprof.c" \
		-I"$TOP" -I"$TOP/collapse" -I"$TOP/symbolizer" -I"$TOP/.output/gen" 2>/dev/null || true; done &
	while :; do tar cf - /usr/lib/x86_64-linux-gnu 2>/dev/null | gzip -1 >/dev/null; done &
	while :; do sort -R /usr/share/dict/words >/dev/null 2>&1 || seq 200000 | sort -R >/dev/null; done &
	wait
}

cap=${1:-}
if [ -z "$cap" ]; then
	cap=$W/capture.raw
	load &
	loadpid=$!
	ver=$(bpftrace --version | sed -n 's/^bpftrace v\{0,1\}\([0-9][0-9.]*\).*/\1/p')
	prog=$W/profile.bt
	cp "$TOP/bt/profile.bt" "$prog"
	if [ "$(printf '%s\n0.18\n' "$ver" | sort -V | head -n1)" = 0.18 ]; then
		sed -i 's/ustack(perf),/ustack(raw),/' "$prog"
	else
		export BPFTRACE_NO_USER_SYMBOLS=1
	fi
	"$SF" record -q -F 99 -D 30 -f folded -o "$W/rec.folded" --save-raw "$cap" \
		-- bpftrace "$prog" 99 0 10
	pkill -P "$loadpid" 2>/dev/null || true
	kill "$loadpid" 2>/dev/null || true
	wait 2>/dev/null || true
fi

B=$TOP/.output
LDLIBS=$(make -s -C "${TOP:-.}" print-ldlibs)
# shellcheck disable=SC2086 # LDLIBS is a list of -l flags
cc -std=gnu11 -O2 -D_GNU_SOURCE -I"$TOP" -I"$TOP/collapse" -I"$TOP/symbolizer" -I"$B/gen" \
	-o "$W/pprof_bench" "$TOP/tests/tools/pprof_bench.c" "$B/libstackfold.a" \
	$LDLIBS

cpu_ms() {	# [--cold] ARGS: min user+sys ms over RUNS runs of stackfold ARGS
	local best="" t cold="" c
	[ "$1" = --cold ] && { cold=1; shift; }
	for _ in $(seq "$RUNS"); do
		c=()
		[ -n "$cold" ] && c=(--cache-dir "$(mktemp -d "$W/cache.XXXXXX")")
		t=$( { TIMEFORMAT='%3U %3S'; time "$SF" -q "${c[@]}" "$@" >/dev/null 2>&1; } 2>&1 |
			awk '{ printf "%d", ($1 + $2) * 1000 }')
		[ -n "$cold" ] && rm -rf "${c[1]}"
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}

# cold symbol cache: folded reads no line tables, pprof does
cold_a=$(cpu_ms --cold -f folded -o "$W/a.folded" "$cap")
cold_b=$(cpu_ms --cold -f folded,pprof -o "$W/b" "$cap")
"$SF" -q -f folded -o "$W/warm.folded" "$cap" 2>/dev/null	# warm the symbol cache
a=$(cpu_ms -f folded -o "$W/a.folded" "$cap")
b=$(cpu_ms -f folded,pprof -o "$W/b" "$cap")
"$SF" -q -f pprof -o "$W/p.pb.gz" "$cap"
pb=$(stat -c %s "$W/p.pb.gz")
g6=$(gzip -6 -c "$W/a.folded" | wc -c)
g9=$(gzip -9 -c "$W/a.folded" | wc -c)
cc -std=gnu11 -O2 -I"$B/gen" -o "$W/pprof_check" "$TOP/tests/tools/pprof_check.c" \
	"$B/gen/model/profile.pb-c.c" -lprotobuf-c -lz
"$W/pprof_bench" "$cap" "$W/bench.pb.gz" "$W/bench.folded" 20 2>/dev/null
echo "folded_lines $(wc -l <"$W/a.folded")"
echo "folded_bytes $(stat -c %s "$W/a.folded")"
echo "cpu_ms_folded_cold_cache $cold_a"
echo "cpu_ms_folded_pprof_cold_cache $cold_b"
echo "cpu_ms_folded $a"
echo "cpu_ms_folded_pprof $b"
echo "cpu_ms_pprof_added_whole_process $((b - a))"
echo "pb_gz_bytes $pb"
echo "folded_gzip6_bytes $g6"
echo "folded_gzip9_bytes $g9"
awk -v p="$pb" -v g="$g6" 'BEGIN { printf "size_ratio_vs_gzip6 %.2f\n", p / g }'
awk -v p="$pb" -v g="$g9" 'BEGIN { printf "size_ratio_vs_gzip9 %.2f\n", p / g }'
"$W/pprof_check" --sizes --addresses "$W/p.pb.gz" | awk '
	$1 == "size" { n = $3; r = $4; z = $5; sub(/n=/, "", n); sub(/raw=/, "", r); sub(/gz=/, "", z)
		if ($2 == "total") print "pb_part_total - " $3 " " $4; else print "pb_part_" $2, n, r, z }
	$1 == "addresses" { print "pb_" $0 }' | sed 's/raw=//; s/gz=//'
if [ -n "${KEEP:-}" ]; then cp "$cap" "$KEEP"; echo "capture_saved $KEEP"; fi
