#!/usr/bin/env bash
# Lab 4: sampling statistics.  Usage: labs/04-statistics.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 04 "$@"

# coin spends each 20 us slice in heads() with probability 1/4.  It is
# built without PIE, so heads() sits at the address nm prints.
# LAB_WORKLOAD=shares (question 3) samples shares instead, "heads" being
# matrix_multiply (70% by design): shares is PIE, so its address is the
# load address (/proc/PID/maps) plus nm's.  LAB_WINDOW_MS sets the window
# (default 100).
WIN=${LAB_WINDOW_MS:-100}
case "$WIN" in '' | *[!0-9]* | 0) lab_die "LAB_WINDOW_MS wants whole milliseconds, not '$WIN'" ;; esac
case "${LAB_WORKLOAD:-coin}" in
coin) bin=$BUILD/coin fn=heads; "$bin" 0 & ;;
shares) bin=$BUILD/shares fn=matrix_multiply; "$bin" 0 & ;;
*) lab_die "LAB_WORKLOAD is coin or shares, not '$LAB_WORKLOAD'" ;;
esac
coin=$!
read -r start size <<<"$(nm -S "$bin" | awk -v f="$fn" '$4 == f { print $1, $2 }')"
[ -n "$size" ] || lab_die "no $fn in $bin (nm -S): run make labs"
if [ "$fn" = matrix_multiply ]; then
	sleep 0.2
	base=$(awk -v b="$bin" '$6 == b && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$coin/maps")
	start=$(printf '%x' $((0x$base + 0x$start)))
fi
printf 'workload=%s\nwindow_ms=%s\n' "${LAB_WORKLOAD:-coin}" "$WIN" >>"$OUT/lab.env"

# Many short captures in one run: every WIN ms, print how many samples
# landed in heads() (@[1]) and elsewhere (@[0]), then start again.  Each
# window also says the CPU time the workload had had at its last sample
# (@cpu, the kernel's sum_exec_runtime, ns): labs/check compares each
# window's count with the rate times the CPU time it covers.
# CAPTURE_MARK: note coin's CPU time over the capture, for labs/check.
CAPTURE_MARK="coin $coin" capture "$LAB_SECONDS" "$OUT/windows.raw" "${BT[@]}" -e "
BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
profile:hz:$LAB_HZ /pid == $coin/ {
	@[reg(\"ip\") >= (uint64)0x$start && reg(\"ip\") < (uint64)0x$start + (uint64)0x$size] = count();
	@cpu = curtask->se.sum_exec_runtime;
}
interval:ms:$WIN { print(@); clear(@); print(@cpu); printf(\"window\\n\"); }
"
alive "$coin" "$(basename "$bin")"
stop "$coin"

# One line per window: number, heads samples, all samples.
awk '/^@\[1\]:/ { h = $2 } /^@\[[01]\]:/ { n += $2 }
     /^window$/ { if (n) print ++w, h + 0, n; h = n = 0 }' "$OUT/windows.raw" >"$OUT/windows.txt"
nonempty "$OUT/windows.txt" "the $WIN ms windows"

# Put 1, 2, 4 ... windows together: with k times the samples, the spread
# of heads' share from one group to the next should shrink by sqrt(k).
echo "window    groups  samples  heads share: mean  spread   binomial sqrt(p(1-p)/n)"
for k in 1 2 4 8 16 32; do
	awk -v k="$k" -v win="$WIN" '{ h += $2; n += $3 } NR % k == 0 { s[++g] = h / n; N += n; h = n = 0 }
	     END { if (g < 3) exit; for (i = 1; i <= g; i++) m += s[i] / g
	           for (i = 1; i <= g; i++) v += (s[i] - m) ^ 2 / (g - 1)
	           printf "%5d ms  %6d  %7.0f  %16.1f%%  %5.1f%%  %8.1f%%\n",
	                  k * win, g, N / g, 100 * m, 100 * sqrt(v), 100 * sqrt(m * (1 - m) / (N / g)) }' \
		"$OUT/windows.txt"
done | tee "$OUT/spread.txt"
