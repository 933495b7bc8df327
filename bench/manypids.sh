#!/usr/bin/env bash
# bench/manypids.sh - memory and CPU per sampled process: raw captures of
# 1,000 and 10,000 processes, each with its own saved map of a program and
# libc and one sample (tests/tools/manypids.sh), folded with a cold symbol
# cache.  Prints, per N, the max RSS (KiB) and user+sys CPU seconds (best
# of 3 runs), then the RSS a process adds (the slope between the two).
# Needs no root.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SF=${STACKFOLD:-$TOP/bin/stackfold}
W=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench-manypids.XXXXXX")
trap 'rm -rf "$W"' EXIT
cc -O1 -g -o "$W/prog" "$TOP/tests/fixtures/sym/inl.c"
declare -A rss
for n in 1000 10000; do
	"$TOP/tests/tools/manypids.sh" "$W/prog" "$n" >"$W/cap$n"
	best_rss="" best_cpu=""
	for _ in 1 2 3; do
		/usr/bin/time -f '%M %U %S' -o "$W/t" "$SF" -q --no-cache -f folded -o "$W/out" "$W/cap$n"
		read -r r u s <"$W/t"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$best_rss" ] || [ "$r" -lt "$best_rss" ]; then best_rss=$r; fi
		if [ -z "$best_cpu" ] || awk -v a="$c" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then best_cpu=$c; fi
	done
	rss[$n]=$best_rss
	echo "manypids_$n max_rss_kib $best_rss cpu_s $best_cpu"
done
echo "manypids rss_per_process_kib $(awk -v a="${rss[1000]}" -v b="${rss[10000]}" 'BEGIN { printf "%.1f", (b - a) / 9000 }')"
