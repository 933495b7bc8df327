#!/usr/bin/env bash
# Lab 16: run-queue latency, CPU saturation.  Usage: labs/16-runqueue.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 16 "$@"
bin=$BUILD/crowd

# One run of crowd: 4 spinning threads on one CPU (the last) for 2 s,
# and a thread that naps 1 ms at a time on the same CPU.  For every
# thread on the machine, the time from being put in a run queue (woken
# up, or preempted while still runnable) to running, in microseconds,
# by thread name and by CPU.  crowd waits for SIGUSR1, sent once
# bpftrace has attached, and prints what the scheduler counted for its
# threads (schedstat: time run, time waited, times switched in).
"$bin" 4 2 >"$OUT/crowd.out" &
p=$!
"${BT[@]}" -e "
BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
tracepoint:sched:sched_wakeup, tracepoint:sched:sched_wakeup_new { @qtime[args->pid] = nsecs; }
tracepoint:sched:sched_switch {
	if (args->prev_state == 0) { @qtime[args->prev_pid] = nsecs; }
	\$ns = @qtime[args->next_pid];
	if (\$ns) {
		\$us = (nsecs - \$ns) / 1000;
		@usecs[args->next_comm] = hist(\$us);
		@by_cpu[cpu] = avg(\$us);
		@wait_us[args->next_comm] = sum(\$us);
		@runs[args->next_comm] = count();
	}
	delete(@qtime[args->next_pid]);
}
END { clear(@qtime); }
" >"$OUT/waits.txt" 2>"$OUT/waits.err" &
bt=$!
wait_attached "$bt" "$OUT/waits.txt" || lab_die "bpftrace did not start: $(grep -v RLIMIT "$OUT/waits.err" | head -n 3)"
kill -USR1 "$p"
wait "$p"
interrupt "$bt"
# crowd's threads and the CPUs; every other thread's are in waits.txt
awk '/^@/ { on = $0 ~ /^@by_cpu|\[(spinner|napper)\]/ } on && !/^$/' "$OUT/waits.txt"
echo "crowd says:"
cat "$OUT/crowd.out"
