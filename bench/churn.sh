#!/usr/bin/env bash
# bench/churn.sh - `stackfold continuous -a` on a machine that keeps
# starting short programs (tests/fixtures/live/churn.c: each spins MS ms
# in churn_work(), back to back), for MS in 8 and 30.  Each process must be snapshotted
# (its /proc/PID/maps read) before it exits, or its user frames cannot be
# named; a snapshot taken while ld.so is still loading is taken again
# 20 ms later (collapse/cmd/loading.h).  Prints, per MS:
#   named    share of the program's samples whose stack names main
#   unsaved  processes (any) that exited before their map was read
#   cpu_s    stackfold's own CPU seconds over the run (bpftrace not counted)
# Needs root and bpftrace.  About 32 s a run.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SF=${STACKFOLD:-$TOP/bin/stackfold}
W=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench-churn.XXXXXX")
trap 'rm -rf "$W"' EXIT
cc -O2 -fno-omit-frame-pointer -o "$W/churn" "$TOP/tests/fixtures/live/churn.c"
for ms in 8 30; do
	d=$W/w$ms
	STACKFOLD=$SF timeout 32 "$TOP/scripts/continuous" -o "$d" --window 5 --folded >"$d.log" 2>&1 &
	cont=$!
	sleep 5	# bpftrace attached
	"$W/churn" run 22 "$ms" &
	sleep 21
	sf=$(pgrep -f "^$SF continuous -o $d " | head -1)
	ticks=$(sed 's/.*) //' "/proc/$sf/stat" | awk '{ print $12 + $13 }')
	wait "$cont" || true
	cat "$d"/*.folded 2>/dev/null | awk -v ms="$ms" -v t="$ticks" -v hz="$(getconf CLK_TCK)" \
		-v u="$(grep -o '[0-9]* process[es]* exited before' "$d.log" | awk '{ n += $1 } END { print n + 0 }')" '
		/^churn-[0-9]+;/ { all += $NF; if ($1 ~ /;main(;|$)/) m += $NF }
		END { printf "churn_%dms named %.1f%% of %d samples, unsaved %d, cpu_s %.2f\n",
			ms, all ? 100 * m / all : 0, all, u, t / hz }'
done
