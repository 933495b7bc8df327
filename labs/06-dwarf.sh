#!/usr/bin/env bash
# Lab 6: unwinding without frame pointers.  Usage: labs/06-dwarf.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 06 "$@"
"$PROFILE" --help 2>&1 | grep -q -- '--call-graph' ||
	lab_die "scripts/profile has no --call-graph option yet (this lab needs --call-graph dwarf)"
command -v perf >/dev/null || lab_die "perf is not installed (apt-get install linux-perf)"

# The two builds of lab 5: with and without frame pointers.
"$BUILD/shares-fp" 0 &
fp=$!
"$BUILD/shares-nofp" 0 &
nofp=$!

# 1. Frame pointers (bpftrace's ustack), both at once, split by name.
"$PROFILE" -p "$fp,$nofp" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/both" -f folded
grep '^shares-fp;' "$OUT/both.folded" >"$OUT/fp.folded" || true
grep '^shares-nofp;' "$OUT/both.folded" >"$OUT/nofp.folded" || true

# 2. DWARF: copy the top of the stack at each sample, unwind it afterwards
#    with the binary's call frame information (.eh_frame).
"$PROFILE" --call-graph dwarf -p "$nofp" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/dwarf" -f folded

# 3. The same with perf: perf record copies 8 KiB of stack per sample.
perf record -q --call-graph dwarf -F "$LAB_HZ" -p "$nofp" -o "$OUT/perf.data" -- sleep "$LAB_SECONDS"
alive "$fp" shares-fp
alive "$nofp" shares-nofp
stop "$fp" "$nofp"
# perf script prints each sample's frames leaf first: fold them root first.
perf script -i "$OUT/perf.data" -F comm,ip,sym 2>/dev/null |
	awk 'function done() { if (st != "") c[comm ";" st]++; st = "" }
	     /^[^ \t]/ { done(); comm = $1; next }
	     NF >= 2 { s = $2; sub(/\+0x.*/, "", s); st = (st == "" ? s : s ";" st) }
	     END { done(); for (k in c) print k, c[k] }' >"$OUT/perf.folded"
for f in fp nofp dwarf perf; do nonempty "$OUT/$f.folded" "$f.folded"; done

echo "== share of stacks that reach main"
for f in fp nofp dwarf perf; do
	awk -v f="$f" '{ all += $NF } $1 ~ /(^|;)main(;|$)/ { m += $NF }
	     END { printf "%-6s %5.1f%% of %d samples\n", f, 100 * m / all, all }' "$OUT/$f.folded"
done | tee "$OUT/main-share.txt"
echo "== what perf stored per sample"
n=$(awk '{ s += $NF } END { print s }' "$OUT/perf.folded")
printf 'perf.data: %d bytes for %d samples: %d bytes a sample\n' \
	"$(stat -c %s "$OUT/perf.data")" "$n" "$(( $(stat -c %s "$OUT/perf.data") / n ))" | tee "$OUT/perf-size.txt"
