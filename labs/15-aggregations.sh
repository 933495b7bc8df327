#!/usr/bin/env bash
# Lab 15: lhist, avg, min, max, stats.  Usage: labs/15-aggregations.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 15 "$@"
bin=$BUILD/latency

# One run of latency: two threads serve 400 requests through handle(),
# a fast one (1 ms) or a slow one (8 ms), 20-30% of them slow.  Each
# call timed from handle()'s entry (uprobe) to its return (uretprobe),
# per thread (tid), in microseconds, and summed up six ways.  latency
# waits for SIGUSR1, sent once bpftrace has attached, and prints what it
# measured itself.
"$bin" 400 $((20 + RANDOM % 11)) "$RANDOM" >"$OUT/latency.out" &
p=$!
"${BT[@]}" -e "
BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
uprobe:$bin:handle /pid == $p/ { @start[tid] = nsecs; }
uretprobe:$bin:handle /pid == $p && @start[tid]/ {
	\$us = (nsecs - @start[tid]) / 1000;
	@hist_us = hist(\$us);
	@lhist_us = lhist(\$us, 0, 10000, 500);
	@avg_us = avg(\$us);
	@min_us = min(\$us);
	@max_us = max(\$us);
	@stats_us = stats(\$us);
	delete(@start[tid]);
}
END { clear(@start); }
" >"$OUT/summaries.txt" 2>"$OUT/summaries.err" &
bt=$!
wait_attached "$bt" "$OUT/summaries.txt" || lab_die "bpftrace did not start: $(grep -v RLIMIT "$OUT/summaries.err" | head -n 3)"
kill -USR1 "$p"
wait "$p"
interrupt "$bt"
grep -v '^$' "$OUT/summaries.txt"
echo "latency says: $(cat "$OUT/latency.out")"
