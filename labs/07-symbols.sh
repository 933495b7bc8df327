#!/usr/bin/env bash
# Lab 7: symbolization.  Usage: labs/07-symbols.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 07 "$@"

# Four builds of one program (labs/Makefile), differing only in where
# their symbols are:
echo "== where the symbols are"
for v in sym strip dbglink buildid; do
	printf '%-16s .symtab: %-3s  ' "shares-$v" \
		"$(readelf -S "$BUILD/shares-$v" | grep -q ' .symtab' && echo yes || echo no)"
	readelf -n "$BUILD/shares-$v" | awk '/Build ID/ { printf "build-id %.12s...  ", $3 }'
	readelf -p .gnu_debuglink "$BUILD/shares-$v" 2>/dev/null |
		awk '/\]/ { printf "debuglink %s", $NF; exit }'
	echo
done
find "$BUILD/debug" "$BUILD/.debug" -type f -name '*.debug'

pids=""
for v in sym strip dbglink buildid; do
	"$BUILD/shares-$v" 0 &
	pids="$pids${pids:+,}$!"
done

# STACKFOLD_DEBUG_DIRS adds a debug root (like /usr/lib/debug) where
# .build-id/xx/yyyy.debug files are looked up.
STACKFOLD_DEBUG_DIRS=$BUILD/debug \
	"$PROFILE" -p "$pids" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/symbols" -f folded,svg
IFS=, read -ra pid_list <<<"$pids"
stop "${pid_list[@]}"

echo "== the hottest frame of each build"
for v in sym strip dbglink buildid; do
	grep "^shares-$v;" "$OUT/symbols.folded" | sort -k2 -rn -t' ' | head -n 1
done
