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
# .build-id/xx/yyyy.debug files are looked up.  STACKFOLD_CACHE_DIR, a
# new empty directory: stackfold caches each file's symbol index by
# build-id, and a cached index keeps the names after the debug file is
# gone; an empty cache makes it look for every debug file again.
cache=$(mktemp -d)
STACKFOLD_DEBUG_DIRS=$BUILD/debug STACKFOLD_CACHE_DIR=$cache \
	"$PROFILE" -p "$pids" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/symbols" -f folded,svg
rm -rf "$cache"
IFS=, read -ra pid_list <<<"$pids"
for p in "${pid_list[@]}"; do alive "$p" "shares-*"; done
stop "${pid_list[@]}"
nonempty "$OUT/symbols.folded" "the profile of the four builds"

echo "== the hottest frame of each build"
for v in sym strip dbglink buildid; do
	grep "^shares-$v;" "$OUT/symbols.folded" | sort -k2 -rn -t' ' | head -n 1
done

# shares-strip's offsets, named through shares-sym: the same code (only
# data and build-ids differ), with symbols.  FILE:LINE is the line of the
# address (for a caller: of its return address, just after the call).
echo "== shares-strip's hottest stack, offset by offset"
grep '^shares-strip;' "$OUT/symbols.folded" | sort -k2 -rn -t' ' | head -n 1 | cut -d' ' -f1 |
	tr ';' '\n' | sed -n 's/^shares-strip+\(0x[0-9a-f]*\)$/\1/p' | while read -r a; do
		printf '%-8s %s\n' "$a" "$(echo "$BUILD/shares-sym $a" | "$STACKFOLD" symbolize --no-cache |
			sed 's|.*/||' | paste -sd' ')"
	done | tee "$OUT/offsets.txt"
echo "== where those functions start (nm -n shares-sym)"
nm -n "$BUILD/shares-sym" | awk '$3 == "main" || $3 == "run" || $3 == "matrix_multiply"'
