#!/usr/bin/env bash
# Lab 3: reading a flame graph.  Usage: labs/03-flame-graph.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 03 "$@"

# shares runs until stopped (argument 0); scripts/profile starts it, samples
# it for LAB_SECONDS, stops it, and writes shares.folded, .svg and .pb.gz.
"$PROFILE" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/shares" -f folded,svg,pprof \
	-- "$BUILD/shares" 0
nonempty "$OUT/shares.folded" "the profile of shares"

# The top table: self and total (inclusive) share of each function.
"$STACKFOLD" -f top "$OUT/shares.folded" | tee "$OUT/shares.top"
