#!/usr/bin/env bash
# tests/tools/snapshot-outputs.sh OUTDIR - run bin/stackfold (or
# $STACKFOLD) over every input fixture (bpftrace text, folded text, raw
# captures) under the default options and a handful of others, and write
# each run's outputs (folded/top on stdout, pprof and SVG bytes, stderr,
# exit code) under OUTDIR, one file per output.  A refactoring that must
# not change behaviour is checked by snapshotting before and after and
# comparing: diff -r BEFORE AFTER.
#
# Runs happen in a scratch directory with the fixtures linked as fx/ and
# outputs written to out/, so the paths that appear in messages are the
# same from any checkout.  The symbol cache is a fresh directory per run.
set -u
[ $# -eq 1 ] || { echo "usage: tests/tools/snapshot-outputs.sh OUTDIR" >&2; exit 2; }
TOP=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
SF=${STACKFOLD:-$TOP/bin/stackfold}
[ -x "$SF" ] || { echo "snapshot: $SF missing (run make)" >&2; exit 2; }
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 2
ln -s "$TOP/tests/fixtures" fx
export STACKFOLD_CACHE_DIR=$W/cache TZ=UTC LC_ALL=C

# snap NAME ARGS...: stdout, stderr, exit code, and every file in out/.
snap() {
	local name=$1 f
	shift
	rm -rf out && mkdir out
	"$SF" "$@" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr" </dev/null
	echo $? >"$OUT/$name.rc"
	for f in out/*; do
		[ -e "$f" ] && mv "$f" "$OUT/$name.${f#out/}"
	done
}

INPUTS=$(cd fx && ls bt/*.txt pprof/*.txt pprof/*.folded svg/*.folded)
OPTS=("" "-p" "--tid" "-U" "-K" "--offsets" "--no-comm" "-d" "--lines")
for in in $INPUTS; do
	id=${in//\//_}
	for o in "${OPTS[@]}"; do
		oid=${o// /}
		# shellcheck disable=SC2086 # the options are words
		snap "$id$oid.text" $o "fx/$in"
		# shellcheck disable=SC2086
		snap "$id$oid.all" $o -f folded,top,svg,pprof --no-gzip -o out/p "fx/$in"
	done
	snap "$id.gz" -f pprof -o out/p "fx/$in"
	snap "$id.top5" -f top --top 5 "fx/$in"
done

# The SVG writer's options, from the golden fixtures' argument files.
for a in fx/svg/*.args; do
	base=${a%.args}
	mapfile -t args <"$a"
	snap "svgargs_$(basename "$base")" -f svg -o out/g "${args[@]}" "$base.folded"
done
snap svgdiff -f svg --diff -o out/d fx/svg/order.folded fx/svg/diff.folded
snap svgdiff2 -f svg --diff -o out/d fx/svg/basic.folded fx/svg/lang.folded
cp "$OUT/pprof_capture.txt.gz.p" capture.pb.gz && snap comments comments capture.pb.gz
snap stdin-empty fx/bt/only-attaching.txt
snap missing fx/does-not-exist

# symbolize on fixture binaries built here (gcc output is deterministic).
# The scratch directory's name is mapped out of the debug info.
map=-fdebug-prefix-map=$W=/snapshot
gcc -O2 -g "$map" -o inl fx/sym/inl.c && g++ -O2 -g "$map" -o cxx fx/sym/cxx.cc || exit 2
for b in inl cxx; do
	# every function's start and start + 3
	nm "$b" | awk '$2 ~ /^[tT]$/ { print $1 }' | sort | while read -r a; do
		printf '%s 0x%x\n%s 0x%x\n' "$b" "0x$a" "$b" $((0x$a + 3))
	done >"$b.addrs"
	for o in "" "--no-demangle" "--no-dwarf" "--no-cache"; do
		# shellcheck disable=SC2086
		"$SF" symbolize $o <"$b.addrs" >"$OUT/symbolize_$b$o.stdout" 2>"$OUT/symbolize_$b$o.stderr"
		echo $? >"$OUT/symbolize_$b$o.rc"
	done
done
echo "snapshot: $(find "$OUT" -type f | wc -l) files in $OUT"
