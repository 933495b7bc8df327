#!/usr/bin/env bash
# Lab 18: Python functions in the flame graph.  Usage: labs/18-python.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 18 "$@"

# Debian's python3 (3.11) runs the lab's program; --python needs its
# debug info (python3.11-dbg) for the interpreter's offsets.
PY=/usr/bin/python3
"$STACKFOLD" pyoffsets "$PY" >/dev/null || lab_die "no Python frames without python3.11-dbg: apt-get install python3.11-dbg"
"$PY" "$LABS/18-python.py" &
py=$!
cpu_watch python "$py"

# Before: the native stacks only, as any profiler walks them.
"$PROFILE" -p "$py" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/before" -f folded,svg
alive "$py" python
# After: the same process with --python, its Python frames named.
"$PROFILE" --python -p "$py" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/after" -f folded,svg
alive "$py" python
stop "$py"
nonempty "$OUT/before.folded" "the native profile"
nonempty "$OUT/after.folded" "the --python profile"

# The top of each: before, the interpreter's loop; after, the functions.
"$STACKFOLD" -f top "$OUT/before.folded" | head -n 8 | tee "$OUT/before.top"
"$STACKFOLD" -f top "$OUT/after.folded" | head -n 8 | tee "$OUT/after.top"
