#!/usr/bin/env bash
# Lab 8: JIT code and perf maps.  Usage: labs/08-jit.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 08 "$@"

# Two runs of one tiny JIT: jit-nomap writes no perf map, jit-map writes
# /tmp/perf-PID.map (START SIZE NAME per generated function).
"$BUILD/jit" 0 &
nomap=$!
"$BUILD/jit" -m 0 &
map=$!
sleep 0.2
echo "== /tmp/perf-$map.map"
cat "/tmp/perf-$map.map" || lab_die "jit -m wrote no /tmp/perf-$map.map"
echo "== where the code is: an anonymous r-xp mapping (no file name)"
awk '$2 ~ /x/ && NF == 5' "/proc/$map/maps"

cpu_watch jit-nomap "$nomap"; cpu_watch jit-map "$map"	# CPU time, for labs/check
"$PROFILE" -p "$nomap,$map" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/jit" -f folded,svg
alive "$nomap" jit-nomap
alive "$map" jit-map
stop "$nomap" "$map"
rm -f "/tmp/perf-$map.map"
nonempty "$OUT/jit.folded" "the profile of the two JITs"

echo "== the hottest stacks of each"
for p in jit-nomap jit-map; do
	grep "^$p;" "$OUT/jit.folded" | sort -k2 -rn -t' ' | head -n 2
done
