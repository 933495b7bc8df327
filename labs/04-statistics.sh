#!/usr/bin/env bash
# Lab 4: sampling statistics.  Usage: labs/04-statistics.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 04 "$@"

# coin spends each 20 us slice in heads() with probability 1/4.  It is
# built without PIE, so heads() sits at the address nm prints.
read -r start size <<<"$(nm -S "$BUILD/coin" | awk '$4 == "heads" { print $1, $2 }')"
[ -n "$size" ] || lab_die "no heads in $BUILD/coin (nm -S): run make labs"
"$BUILD/coin" 0 &
coin=$!

# Many short captures in one run: every 100 ms, print how many samples
# landed in heads() (@[1]) and elsewhere (@[0]), then start again.
capture "$LAB_SECONDS" "$OUT/windows.raw" "${BT[@]}" -e "
BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
profile:hz:$LAB_HZ /pid == $coin/ {
	@[reg(\"ip\") >= (uint64)0x$start && reg(\"ip\") < (uint64)0x$start + (uint64)0x$size] = count();
}
interval:ms:100 { print(@); clear(@); printf(\"window\\n\"); }
"
alive "$coin" coin
stop "$coin"

# One line per 100 ms window: number, heads samples, all samples.
awk '/^@\[1\]:/ { h = $2 } /^@\[[01]\]:/ { n += $2 }
     /^window$/ { if (n) print ++w, h + 0, n; h = n = 0 }' "$OUT/windows.raw" >"$OUT/windows.txt"
nonempty "$OUT/windows.txt" "the 100 ms windows"

# Put 1, 2, 4 ... windows together: with k times the samples, the spread
# of heads' share from one group to the next should shrink by sqrt(k).
echo "window    groups  samples  heads share: mean  spread   binomial sqrt(p(1-p)/n)"
for k in 1 2 4 8 16 32; do
	awk -v k="$k" '{ h += $2; n += $3 } NR % k == 0 { s[++g] = h / n; N += n; h = n = 0 }
	     END { if (g < 3) exit; for (i = 1; i <= g; i++) m += s[i] / g
	           for (i = 1; i <= g; i++) v += (s[i] - m) ^ 2 / (g - 1)
	           printf "%5d ms  %6d  %7.0f  %16.1f%%  %5.1f%%  %8.1f%%\n",
	                  k * 100, g, N / g, 100 * m, 100 * sqrt(v), 100 * sqrt(m * (1 - m) / (N / g)) }' \
		"$OUT/windows.txt"
done | tee "$OUT/spread.txt"
