#!/usr/bin/env bash
# Lab 5: user stacks and frame pointers.  Usage: labs/05-frame-pointers.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 05 "$@"

# One source, two -O2 builds (see labs/Makefile):
#   shares-fp    -fno-omit-frame-pointer
#   shares-nofp  -fomit-frame-pointer (gcc's default at -O2)
"$BUILD/shares-fp" 0 &
fp=$!
"$BUILD/shares-nofp" 0 &
nofp=$!

# Profile both at once, then split the result by process name.
cpu_watch shares-fp "$fp"; cpu_watch shares-nofp "$nofp"
"$PROFILE" -p "$fp,$nofp" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/both" -f folded
alive "$fp" shares-fp
alive "$nofp" shares-nofp
stop "$fp" "$nofp"
grep '^shares-fp;' "$OUT/both.folded" >"$OUT/fp.folded" || lab_die "no samples of shares-fp"
grep '^shares-nofp;' "$OUT/both.folded" >"$OUT/nofp.folded" || lab_die "no samples of shares-nofp"
"$STACKFOLD" -f svg --title "with frame pointers" "$OUT/fp.folded" >"$OUT/fp.svg"
"$STACKFOLD" -f svg --title "without frame pointers" "$OUT/nofp.folded" >"$OUT/nofp.svg"

echo "== with frame pointers: hottest stacks"
sort -k2 -rn -t' ' "$OUT/fp.folded" | head -n 5
echo "== without frame pointers: hottest stacks"
sort -k2 -rn -t' ' "$OUT/nofp.folded" | head -n 5
