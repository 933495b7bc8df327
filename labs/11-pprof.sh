#!/usr/bin/env bash
# Lab 11: pprof and differential flame graphs.  Usage: labs/11-pprof.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 11 "$@"
command -v go >/dev/null || lab_die "go is not installed (apt-get install golang-go)"

# Before: shares as in lab 3 (matrix_multiply 14 ms of each round, 20 ms on average).
# After: an "optimized" matrix_multiply, 4 ms a round (second argument).
for run in before:14 after:4; do
	"$BUILD/shares" 0 "${run#*:}" &
	work=$!
	cpu_watch "${run%:*}" "$work"
	"$PROFILE" -p "$work" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/${run%:*}" -f folded,pprof
	alive "$work" shares
	stop "$work"
done
nonempty "$OUT/before.folded" "the profile before"
nonempty "$OUT/after.folded" "the profile after"

# pprof's own view of one profile (go tool pprof -http=:8080 -no_browser FILE
# serves the same on http://localhost:8080/ui/: flame graph, source, graph).
go tool pprof -top -nodecount=12 "$OUT/before.pb.gz" 2>&1 | tee "$OUT/before.pprof-top.txt"

# What changed: after minus before, per function.
go tool pprof -top -nodecount=12 -normalize -diff_base="$OUT/before.pb.gz" "$OUT/after.pb.gz" 2>&1 |
	tee "$OUT/diff.pprof-top.txt"

# The same as a differential flame graph: widths from after, colour by
# change (red grew, blue shrank).
"$STACKFOLD" -f svg --diff "$OUT/before.folded" "$OUT/after.folded" >"$OUT/diff.svg"
