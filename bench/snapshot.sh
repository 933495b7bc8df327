#!/usr/bin/env bash
# bench/snapshot.sh - CPU of one process snapshot (what `stackfold
# continuous` does for every new process: collapse/capture/protocol.c),
# for this tree and, with BASE=DIR, another built tree side by side in
# the same run (bench/snapshot.c linked against each tree's
# .output/libstackfold.a).  The processes snapshotted are PROCS
# /bin/sleep processes (a small C program on libc, as the programs of a
# build), each snapshotted ROUNDS times, in R alternating runs per tree;
# prints the median CPU microseconds per snapshot, and the snapshots that
# failed (0 expected).
# USAGE: [BASE=DIR] [PROCS=8] [ROUNDS=500] [R=5] bench/snapshot.sh
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
PROCS=${PROCS:-8} ROUNDS=${ROUNDS:-500} R=${R:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench-snap.XXXXXX") || exit 2
pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
read -ra LDLIBS <<<"$(make -s -C "$TOP" print-ldlibs)"
trees=("$TOP")
[ -n "${BASE:-}" ] && trees+=("$BASE")
for i in "${!trees[@]}"; do
	t=${trees[i]}
	[ -f "$t/.output/libstackfold.a" ] || { echo "snapshot: $t is not built (make)" >&2; exit 2; }
	cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$t" -I"$t/symbolizer" -o "$W/snap$i" \
		"$TOP/bench/snapshot.c" "$t/.output/libstackfold.a" "${LDLIBS[@]}" || exit 2
done
for _ in $(seq "$PROCS"); do
	/bin/sleep 600 &
	pids+=($!)
done
sleep 0.3
echo "machine: $(nproc) x $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), Linux $(uname -r); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$PROCS processes x $ROUNDS rounds, median of $R runs (CPU us per snapshot):"
for _ in $(seq "$R"); do
	for i in "${!trees[@]}"; do
		"$W/snap$i" "$ROUNDS" "${pids[@]}" >>"$W/out$i" || exit 2
	done
done
for i in "${!trees[@]}"; do
	sort -n -k4 "$W/out$i" | awk -v t="${trees[i]}" -v r="$R" '
		NR == int((r + 1) / 2) { med = $4 } $6 != 0 { bad += $6 }
		END { printf "  %-30s %8.1f us  (failed %d)\n", t, med, bad }'
done
