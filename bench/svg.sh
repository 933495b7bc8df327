#!/usr/bin/env bash
# bench/svg.sh - how fast and how big `stackfold -f svg` is (a benchmark,
# not a test: it prints figures and never fails on them).
#
#   bench/svg.sh                      # synthetic input, 230,000 lines
#   LINES=20000 bench/svg.sh          # smaller synthetic input
#   INPUT=capture.txt bench/svg.sh    # a real capture (bpftrace text or
#                                     # folded), e.g. made with
#     bpftrace -e 'profile:hz:999 { @[kstack, ustack] = count(); }' \
#         -c 'sleep 20' > capture.txt
#   FLAMEGRAPH_PL=/path/flamegraph.pl bench/svg.sh   # compare with it
#
# The synthetic input comes from bench/gen_folded.awk (deep stacks through
# fixed call graphs, see its header; its lines unsorted) and is cached in
# $TMPDIR.  Reported: best of RUNS (5) wall and CPU time of the whole
# command on those stacks in stackfold's order (a capture's folded output:
# streamed, also as stdin; from a pipe: a frame tree), as given, sorted by
# sort(1), and
# with a second output (through a fold); the writer alone
# (tests/tools/svg_driver.c, CPU time inside out_svg_write), max RSS, and
# SVG sizes at our default minwidth (0.1% of the total) and at
# flamegraph.pl's (0.1 px).
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
LINES=${LINES:-230000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench-svg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

make -s all >/dev/null
if [ -n "${INPUT:-}" ]; then
	in=$INPUT
else
	in=${TMPDIR:-/tmp}/stackfold-bench-svg-$LINES.folded
	if [ ! -s "$in" ]; then
		echo "generating $in ..." >&2
		awk -v lines="$LINES" -v seed=1 -f bench/gen_folded.awk >"$in.tmp"
		mv "$in.tmp" "$in"
	fi
fi
LDLIBS=$(make -s -C "${TOP:-.}" print-ldlibs)
# shellcheck disable=SC2086 # LDLIBS is a list of -l flags
cc -std=gnu11 -O2 -D_GNU_SOURCE -I. -Icollapse -Isymbolizer -o "$tmp/driver" \
	tests/tools/svg_driver.c .output/libstackfold.a $LDLIBS

# best-of-RUNS "wall cpu rss_kb" of a command writing to $tmp/out; times
# from bash's `time` (ms resolution), RSS from /usr/bin/time
best() {
	local i best_wall="" line t
	for ((i = 0; i < RUNS; i++)); do
		t=$( { TIMEFORMAT='%3R %3U %3S'; time /usr/bin/time -f '%M' -o "$tmp/rss" \
			"$@" >"$tmp/out" 2>/dev/null; } 2>&1)
		line=$(awk -v t="$t" -v rss="$(cat "$tmp/rss")" 'BEGIN {
			split(t, a, " "); printf "%.3f %.3f %d\n", a[1], a[2] + a[3], rss }')
		if [ -z "$best_wall" ] || awk -v a="${line%% *}" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
			best_wall=${line%% *}
			echo "$line" >"$tmp/best"
		fi
	done
	cat "$tmp/best"
}

lines=$(wc -l <"$in")
mb=$(awk -v b="$(wc -c <"$in")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "input: $in ($lines lines, $mb MiB)"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# The same stacks as stackfold writes them (sorted frame by frame, as a
# capture's folded output is): that file is laid out while it is read.
bin/stackfold -f folded "$in" >"$tmp/ours.folded" 2>/dev/null
read -r wall cpu rss <<<"$(best bin/stackfold -f svg "$tmp/ours.folded")"
size=$(wc -c <"$tmp/out")
xmllint --noout "$tmp/out" && ok=valid || ok=INVALID
echo "stackfold -f svg, stackfold's order (streamed):"
echo "                             wall ${wall} s  cpu ${cpu} s  max RSS $((rss / 1024)) MiB  svg $size bytes ($ok)"
read -r wall01 cpu01 rss01 <<<"$(best bin/stackfold -f svg --minwidth 0.1px "$tmp/ours.folded")"
size01=$(wc -c <"$tmp/out")
cp "$tmp/out" "$tmp/ours01.svg"
echo "  --minwidth 0.1px:          wall ${wall01} s  cpu ${cpu01} s  max RSS $((rss01 / 1024)) MiB  svg $size01 bytes"
# shellcheck disable=SC2016 # expanded by the inner sh
read -r swall scpu srss <<<"$(best sh -c 'cat "$2" | "$1" -f svg' sh bin/stackfold "$tmp/ours.folded")"
echo "  the same from a pipe (a frame tree; 'cat' included):"
echo "                             wall ${swall} s  cpu ${scpu} s  max RSS $((srss / 1024)) MiB"
read -r uwall ucpu urss <<<"$(best bin/stackfold -f svg "$in")"
echo "the input as given (unsorted: read again into a frame tree):"
echo "                             wall ${uwall} s  cpu ${ucpu} s  max RSS $((urss / 1024)) MiB"
LC_ALL=C sort "$in" >"$tmp/bytewise.folded"
read -r bwall bcpu brss <<<"$(best bin/stackfold -f svg "$tmp/bytewise.folded")"
echo "sorted by sort(1) (FlameGraph's order: streamed until a split frame, then a tree):"
echo "                             wall ${bwall} s  cpu ${bcpu} s  max RSS $((brss / 1024)) MiB"
read -r fwall fcpu frss <<<"$(best bin/stackfold -f svg,folded -o "$tmp/both" "$in")"
echo "svg and folded of the unsorted input (through a fold, which sorts every line):"
echo "                             wall ${fwall} s  cpu ${fcpu} s  max RSS $((frss / 1024)) MiB"

case $(head -c 4096 "$in") in
*'@['*) ;;	# bpftrace text: the driver reads folded only
*)
	w=$(SVG_DRIVER_TIME=1 "$tmp/driver" "$in" 2>&1 >/dev/null | sed -n 's/.*wall, \([0-9.]*\) s cpu/\1/p')
	w01=$(SVG_DRIVER_TIME=1 "$tmp/driver" --minwidth 0.1px "$in" 2>&1 >/dev/null | sed -n 's/.*wall, \([0-9.]*\) s cpu/\1/p')
	echo "out_svg_write alone (cpu):   ${w} s default, ${w01} s at 0.1px"
	;;
esac

if [ -n "${FLAMEGRAPH_PL:-}" ]; then
	fin=$in
	case $(head -c 4096 "$in") in *'@['*)
		bin/stackfold -f folded "$in" >"$tmp/in.folded" 2>/dev/null
		fin=$tmp/in.folded ;;
	esac
	read -r pwall pcpu prss <<<"$(RUNS=1 best perl "$FLAMEGRAPH_PL" "$fin")"
	psize=$(wc -c <"$tmp/out")
	echo "flamegraph.pl (0.1 px):      wall ${pwall} s  cpu ${pcpu} s  max RSS $((prss / 1024)) MiB  svg $psize bytes"
	awk -v p="$pcpu" -v o="$cpu01" -v ps="$psize" -v os="$size01" 'BEGIN {
		printf "speed-up (cpu, same 0.1 px): %s   size ours/theirs: %.2f (%s)\n",
			(o > 0 ? sprintf("%.1fx", p / o) : "(ours under 1 ms)"), os / ps,
			(os <= ps ? "no larger" : "LARGER") }'
fi
