#!/usr/bin/env bash
# bench/collapse.sh - collapse throughput on a large symbolized bpftrace text
# capture, against stackcollapse-bpftrace.pl (FlameGraph) on the same file
# when $FLAMEGRAPH_DIR points at a FlameGraph checkout (it is not packaged in
# Debian).  Throughput is CPU time (user+sys), as the issue states it.
# Not a test: prints a table.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SF=${STACKFOLD:-$TOP/bin/stackfold}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
MB=${COLLAPSE_MB:-60}

# A real capture: every CPU busy with the demo, @[ustack, kstack, comm] at
# 999 Hz (symbolized by bpftrace), then repeated to about $MB MB (several
# prints of a map are valid bpftrace output).
if [ "$(id -u)" = 0 ] && command -v bpftrace >/dev/null; then
	for _ in $(seq "$(nproc)"); do "$TOP/bin/demo" 7 & done
	bpftrace -e 'profile:hz:999 { @[ustack, kstack, comm] = count(); } interval:s:5 { exit(); }' \
		>"$W/one.txt" 2>/dev/null
	wait
	src="real 5 s capture at 999 Hz"
else
	cp "$TOP/tests/fixtures/bt/ustack-kstack.txt" "$W/one.txt"
	src="fixture (not root)"
fi
cp "$W/one.txt" "$W/big.txt"
while [ "$(stat -c %s "$W/big.txt")" -lt $((MB * 1024 * 1024)) ]; do
	cat "$W/big.txt" "$W/big.txt" >"$W/big2.txt"
	mv "$W/big2.txt" "$W/big.txt"
done
size=$(stat -c %s "$W/big.txt")
lines=$(wc -l <"$W/big.txt")

# run CMD...: prints "cpu_seconds max_rss_kib" (best of 3 runs by CPU)
run() {
	local best="" rss=0
	for _ in 1 2 3; do
		/usr/bin/time -f '%U %S %M' -o "$W/t" "$@" >"$W/out" 2>/dev/null
		read -r u s m <"$W/t"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
		if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$c; rss=$m; fi
	done
	echo "$best $rss"
}

read -r sf_cpu sf_rss < <(run "$SF" -q --no-cache "$W/big.txt")
"$SF" -q --no-cache "$W/big.txt" >"$W/sf.folded"
printf '\n== collapse: %s, %s MB, %d lines (%s)\n' "$(uname -n)" "$((size / 1048576))" "$lines" "$src"
printf '%-28s %10s %12s %12s\n' tool "cpu s" "MB/s (cpu)" "max rss KiB"
mbs() { awk -v s="$size" -v c="$1" 'BEGIN { printf "%.0f", (c > 0 ? s / 1048576 / c : 0) }'; }
printf '%-28s %10s %12s %12s\n' "stackfold" "$sf_cpu" "$(mbs "$sf_cpu")" "$sf_rss"
if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -x "$FLAMEGRAPH_DIR/stackcollapse-bpftrace.pl" ]; then
	read -r pl_cpu pl_rss < <(run "$FLAMEGRAPH_DIR/stackcollapse-bpftrace.pl" "$W/big.txt")
	printf '%-28s %10s %12s %12s\n' "stackcollapse-bpftrace.pl" "$pl_cpu" "$(mbs "$pl_cpu")" "$pl_rss"
	awk -v a="$pl_cpu" -v b="$sf_cpu" 'BEGIN { printf "stackfold is %.1fx the throughput of stackcollapse-bpftrace.pl\n", a / b }'
else
	echo "(set FLAMEGRAPH_DIR to a FlameGraph checkout to compare with stackcollapse-bpftrace.pl)"
fi
# memory grows with unique stacks, not input size: half the input, same RSS
head -c $((size / 2)) "$W/big.txt" >"$W/half.txt"
read -r _ half_rss < <(run "$SF" -q --no-cache "$W/half.txt")
echo "max rss on half the input: $half_rss KiB (full: $sf_rss KiB)"
