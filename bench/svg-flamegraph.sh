#!/usr/bin/env bash
# bench/svg-flamegraph.sh - `stackfold -f svg` against flamegraph.pl on
# FlameGraph's own example (example-perf-stacks, a 10 s `perf record -a
# -g` of a JVM and wrk), scaled to about 222,000 folded lines (a
# benchmark, not a test: it prints figures and never fails on them).
#
#   FLAMEGRAPH_DIR=/path/to/FlameGraph bench/svg-flamegraph.sh
#
# FlameGraph is not a Debian package: give a checkout of it (it has
# flamegraph.pl, stackcollapse-perf.pl and example-perf-stacks.txt.gz);
# without one this says so and is skipped.  The example is collapsed by
# stackcollapse-perf.pl (710 lines, 1,315 samples) and copied until LINES,
# then sorted as FlameGraph's pipeline sorts: "repeated", each line again
# (the same stacks, more samples: the example's 1,139 boxes), and
# "leaves", copy k's leaf frames renamed NAME_k (the same call paths, more
# distinct stacks, as a longer capture of the same machine).  Both draw with flamegraph.pl's defaults
# (1200 px, frames under 0.1 px left out): the boxes each drew are counted
# (stackfold draws a run of [unknown] frames as one box: a few fewer).
# Reported: CPU seconds (user + system, bash's `time`), best of RUNS (5)
# for stackfold, one run of flamegraph.pl, and the ratio.
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
LINES=${LINES:-222000}
fg=${FLAMEGRAPH_DIR:-}
if [ -z "$fg" ] || [ ! -r "$fg/flamegraph.pl" ] || [ ! -r "$fg/example-perf-stacks.txt.gz" ]; then
	echo "bench/svg-flamegraph.sh: FLAMEGRAPH_DIR (a FlameGraph checkout) not given; skipped"
	exit 0
fi
make -s all >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench-svgfg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

zcat "$fg/example-perf-stacks.txt.gz" | perl "$fg/stackcollapse-perf.pl" >"$tmp/example.folded"
n=$(wc -l <"$tmp/example.folded")
copies=$(((LINES + n - 1) / n))
# scale MODE: the example x copies, sorted; MODE repeated: each line again
# (the same stacks, more samples: the example's boxes); leaves: copy k's
# leaf frames renamed NAME_k (more distinct stacks, narrower leaves)
scale() {
	awk -v copies="$copies" -v mode="$1" '{ lines[NR] = $0 }
	END {
		for (k = 0; k < copies; k++)
			for (i = 1; i <= NR; i++) {
				l = lines[i]
				if (k && mode == "leaves") {	# the last frame, before " COUNT"
					sp = match(l, / [0-9]+$/)
					l = substr(l, 1, sp - 1) "_" k substr(l, sp)
				}
				print l
			}
	}' "$tmp/example.folded" | LC_ALL=C sort
}
echo "machine: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# cpu CMD...: CPU seconds of one run, its output in $tmp/out
cpu() {
	local t
	t=$( { TIMEFORMAT='%3U %3S'; time "$@" >"$tmp/out" 2>/dev/null; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.3f\n", a[1] + a[2] }'
}
boxes() { grep -c '<title>' "$1"; }

for mode in repeated leaves; do
	scale "$mode" >"$tmp/in.folded"
	echo "input ($mode): the example's $n folded lines x $copies: $(wc -l <"$tmp/in.folded") lines, $(awk '{ s += $NF } END { print s }' "$tmp/in.folded") samples"
	best=""
	for ((i = 0; i < RUNS; i++)); do
		c=$(cpu bin/stackfold -f svg "$tmp/in.folded")
		if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$c; fi
	done
	cp "$tmp/out" "$tmp/ours.svg"
	pl=$(cpu perl "$fg/flamegraph.pl" "$tmp/in.folded")
	cp "$tmp/out" "$tmp/theirs.svg"
	printf '  stackfold -f svg: %7s CPU-s (best of %s)  %5s boxes  %s bytes\n' "$best" "$RUNS" "$(boxes "$tmp/ours.svg")" "$(wc -c <"$tmp/ours.svg")"
	printf '  flamegraph.pl:    %7s CPU-s (one run)    %5s boxes  %s bytes\n' "$pl" "$(boxes "$tmp/theirs.svg")" "$(wc -c <"$tmp/theirs.svg")"
	awk -v p="$pl" -v o="$best" 'BEGIN {
		if (o > 0) printf "  stackfold is %.1fx cheaper (CPU)\n", p / o
		else print "  stackfold under 1 ms" }'
done
