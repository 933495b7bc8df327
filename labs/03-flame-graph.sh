#!/usr/bin/env bash
# Lab 3: reading a flame graph.  Usage: labs/03-flame-graph.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 03 "$@"

# shares runs until stopped (argument 0).  scripts/profile samples it for
# LAB_SECONDS and writes shares.folded, .svg and .pb.gz.  (With -- COMMAND
# instead of -p PID, it starts the command and profiles it until it exits.)
# cpu_watch notes the CPU time shares has had, for labs/check.
"$BUILD/shares" 0 &
shares=$!
cpu_watch shares "$shares"
"$PROFILE" -p "$shares" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/shares" -f folded,svg,pprof
alive "$shares" shares
stop "$shares"
nonempty "$OUT/shares.folded" "the profile of shares"

# The top table: self and total (inclusive) share of each function.
"$STACKFOLD" -f top "$OUT/shares.folded" | tee "$OUT/shares.top"
