#!/usr/bin/env bash
# Lab 10: off-CPU time.  Usage: labs/10-offcpu.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 10 "$@"

# waiters: threads that sleep, wait for a lock and wait for a pipe.
"$BUILD/waiters" 0 &
pid=$!

# bt/offcpu.bt: time each thread spends blocked, by stack, in nanoseconds.
capture "$LAB_SECONDS" "$OUT/offcpu.txt" bpftrace "$TOP/bt/offcpu.bt" "$pid"
alive "$pid" waiters
stop "$pid"

# -q: stackfold's summary would call the nanoseconds "samples".
"$STACKFOLD" -q "$OUT/offcpu.txt" >"$OUT/offcpu.folded"
nonempty "$OUT/offcpu.folded" "the off-CPU stacks"
"$STACKFOLD" -q -f svg --countname ns --colors io --title "Off-CPU time" \
	"$OUT/offcpu.folded" >"$OUT/offcpu.svg"

# Seconds blocked per thread (the first frame is the thread's name).
awk '{ split($1, f, ";"); t[f[1]] += $NF }
     END { for (c in t) printf "%-10s %6.2f s off-CPU\n", c, t[c] / 1e9 }' \
	"$OUT/offcpu.folded" | sort | tee "$OUT/per-thread.txt"
