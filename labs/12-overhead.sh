#!/usr/bin/env bash
# Lab 12: profiling the profiler.  Usage: labs/12-overhead.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 12 "$@"
command -v bpftool >/dev/null || lab_die "bpftool is not installed (apt-get install bpftool)"

HZ8=997		# a high rate, so per-sample costs add up to something visible

# A busy process to sample.
"$BUILD/shares" 0 &
work=$!

# The kernel times BPF programs only when kernel.bpf_stats_enabled=1 (the
# timing itself costs a little).  Turn it on, and put back the old value
# however this script ends.
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q -w kernel.bpf_stats_enabled="$old_stats"; lab_cleanup' EXIT
sysctl -q -w kernel.bpf_stats_enabled=1

# CPU time of a process, all threads, in ns (first field of schedstat).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
# The same in clock ticks, as ps counts it: user and system time, fields
# 14 and 15 of /proc/PID/stat (after the name in parentheses).
cpu_ticks() { sed 's/.*) //' /proc/"$1"/stat | awk '{ print $12 + $13 }'; }
# prog_id PID: the id of the perf_event BPF program (type 7) that process
# PID holds open; map_id PID NAME: the id of its BPF map NAME.  The
# fdinfo of a bpf-prog or bpf-map file descriptor names it.
prog_id() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = anon_inode:bpf-prog ] || continue
		awk '$1 == "prog_type:" { t = $2 } $1 == "prog_id:" { id = $2 }
		     END { if (t == 7) print id }' "/proc/$1/fdinfo/${fd##*/}"
	done | head -n 1
}
map_id() {
	local fd id
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = anon_inode:bpf-map ] || continue
		id=$(awk '$1 == "map_id:" { print $2 }' "/proc/$1/fdinfo/${fd##*/}")
		bpftool map show id "$id" | grep -q " name $2 " && { echo "$id"; return; }
	done
}
# counter ID: the value of the per-CPU counter map ID now (bpftrace's
# @emitted, AT_emitted; bpftool prints each CPU's 8 bytes, little-endian).
counter() {
	local line n=0 b
	while read -r line; do
		b=$(awk '{ for (i = NF; i > 3; i--) printf "%s", $i }' <<<"$line")
		n=$((n + 16#$b))
	done < <(bpftool map dump id "$1" | grep '^value (CPU')
	echo "$n"
}
# printed FILE: the samples printed so far, one "sample" line each.
printed() { grep -c '^sample ' "$1" || true; }

# reading WHEN PID PROG MAP FILE: append to OUT/MODE.readings what every
# figure is at the start or end (WHEN) of the measured window, each as
# read: the wall clock before and after the readings, bpftrace's CPU time
# (schedstat, and ps's ticks), the workload's CPU time, bpftool's line
# for the BPF program (run_time_ns, run_cnt: every run, whichever process
# it sampled), the @emitted counter, the printed lines.  labs/check works
# the .stats line out again from these.
reading() {
	{	echo "reading $1"
		echo "wall_before_ns $(date +%s%N)"
		echo "work_cpu_ns $(cpu_ns "$work")"
		echo "emitted $(counter "$4")"
		echo "bpftrace_cpu_ns $(cpu_ns "$2")"
		echo "bpftrace_ticks $(cpu_ticks "$2") $(getconf CLK_TCK)"
		bpftool prog show id "$3" | head -n 1 | sed 's/^/bpftool /'
		echo "printed $(printed "$5")"
		echo "wall_after_ns $(date +%s%N)"
	} >>"${5%.txt}.readings"
}

# stats MODE: OUT/MODE.stats from OUT/MODE.readings and OUT/MODE.txt:
# over the window between the two readings (its length: from the middle
# of one reading to the middle of the other), the probe's runs, the BPF
# run time, bpftrace's CPU time (and ps's ticks), the workload's CPU
# time, the samples emitted and printed; then, over the whole run, the
# samples emitted, printed and reported lost.
stats() {
	awk -v m="$1" -f "$LABS/overhead-stats.awk" "$OUT/$1.readings" >"$OUT/$1.stats"
	printf ' emitted_total=%s printed_total=%s lost_total=%s\n' \
		"$(awk '/^@emitted: / { print $2 }' "$OUT/$1.txt")" "$(printed "$OUT/$1.txt")" \
		"$(awk '/^Lost/ { s += $2 } END { print s + 0 }' "$OUT/$1.txt")" >>"$OUT/$1.stats"
}

# measure MODE PROGRAM [VAR=VALUE...]: run PROGRAM (with those variables
# in its environment), and read its figures (reading) once it has settled
# and again LAB_SECONDS later; then stop it and work out OUT/MODE.stats.
measure() {
	local mode=$1 prog=$2 pid id map
	rm -f "$OUT/$mode.readings"
	env "${@:3}" bpftrace -e "$prog" >"$OUT/$mode.txt" 2>"$OUT/$mode.err" &
	pid=$!
	wait_attached "$pid" "$OUT/$mode.txt" ||
		lab_die "bpftrace did not start: $(cat "$OUT/$mode.err")"
	sleep 1		# let it settle: startup (LLVM, loading) is not what we measure
	# nor is filling the symbol cache: in the printf modes, wait for the
	# first printed sample (at most 10 s)
	for _ in $(seq 100); do
		[ "$mode" = aggregate ] || [ "$(printed "$OUT/$mode.txt")" -gt 0 ] && break
		sleep 0.1
	done
	id=$(prog_id "$pid") map=$(map_id "$pid" AT_emitted)
	[ -n "$id" ] || lab_die "cannot find bpftrace's BPF program in /proc/$pid/fdinfo"
	[ -n "$map" ] || lab_die "cannot find bpftrace's @emitted map in /proc/$pid/fdinfo"
	reading start "$pid" "$id" "$map" "$OUT/$mode.txt"
	sleep "$LAB_SECONDS"
	reading end "$pid" "$id" "$map" "$OUT/$mode.txt"
	alive "$work" shares
	interrupt "$pid"
	stats "$mode"
}

# 1. Aggregate in the kernel: one map entry per unique stack, printed once.
#    (@emitted, the same counter as below, so both programs do the same.)
measure aggregate "BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
	profile:hz:$HZ8 /pid == $work/ { @emitted = count(); @[tid, ustack, kstack] = count(); }"
# 2. Print every sample: each goes through the perf ring buffer to bpftrace,
#    which formats (and symbolizes) it in user space.  @emitted counts, in
#    the kernel, the samples sent; each printed one starts with "sample".
printf_prog="BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
	profile:hz:$HZ8 /pid == $work/ {
		@emitted = count();
		printf(\"sample %d\\n%s%s\\n\", tid, ustack, kstack);
	}"
measure printf "$printf_prog"
# 3. The same, with bpftrace's user symbol cache on.  bpftrace 0.17 keeps
#    it off when address space randomization is on (it is, by default), so
#    every user frame of every sample is looked up afresh.
measure printf-cached "$printf_prog" BPFTRACE_CACHE_USER_SYMBOLS=1

cat "$OUT/aggregate.stats" "$OUT/printf.stats" "$OUT/printf-cached.stats" >"$OUT/overhead.txt"
# Per mode, over its measured window: how long it was and how much CPU
# the workload had (printing every sample takes CPU from it); the probe's
# runs (at every CPU, 997 a second, whatever runs there) and the samples
# emitted (those of the workload: the work that counts); the BPF time and
# bpftrace's CPU time per sample emitted (and printed); then what became
# of every sample of the run.  Last, the ratios between the modes.
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       m = v["mode"]; e = (v["emitted"] > 0) ? v["emitted"] : 1; p = (v["printed"] > 0) ? v["printed"] : 1
       printf "%-13s window %.2f s, shares on a CPU %.2f s; %d probe runs, %d samples emitted\n", m,
         v["window_ns"] / 1e9, v["work_cpu_ns"] / 1e9, v["runs"], v["emitted"]
       printf "%13s BPF %.1f ms, %.2f us a sample; bpftrace %.1f ms CPU, %.1f us a sample", "",
         v["bpf_run_ns"] / 1e6, v["bpf_run_ns"] / e / 1e3, v["bpftrace_cpu_ns"] / 1e6, v["bpftrace_cpu_ns"] / e / 1e3
       if (m != "aggregate")
         printf " (%.1f us a sample printed)\n%13s emitted %d, printed %d (%d%%), reported lost %d, never printed %d\n",
           v["bpftrace_cpu_ns"] / p / 1e3, "",
           v["emitted_total"], v["printed_total"], 100 * v["printed_total"] / ((v["emitted_total"] > 0) ? v["emitted_total"] : 1),
           v["lost_total"], v["emitted_total"] - v["printed_total"] - v["lost_total"]
       else printf "\n"
       bpf[m] = v["bpf_run_ns"] / e; cpu[m] = v["bpftrace_cpu_ns"] / e; pr[m] = v["bpftrace_cpu_ns"] / p }
     END { if (bpf["aggregate"] > 0 && cpu["aggregate"] > 0)
             printf "printf / aggregate, a sample emitted: BPF time %.2fx, bpftrace CPU %.0fx\n",
               bpf["printf"] / bpf["aggregate"], cpu["printf"] / cpu["aggregate"]
           if (pr["printf-cached"] > 0)
             printf "printf / printf-cached, bpftrace CPU a sample printed: %.1fx\n", pr["printf"] / pr["printf-cached"] }' \
	"$OUT/overhead.txt" | tee "$OUT/summary.txt"
