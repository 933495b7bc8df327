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
# Id of the perf_event BPF program (type 7) that process PID holds open:
# /proc/PID/fdinfo of a bpf-prog file descriptor names it.
prog_id() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = anon_inode:bpf-prog ] || continue
		awk '$1 == "prog_type:" { t = $2 } $1 == "prog_id:" { id = $2 }
		     END { if (t == 7) print id }' "/proc/$1/fdinfo/${fd##*/}"
	done | head -n 1
}
# run_time_ns and run_cnt of BPF program ID.
prog_stats() {
	bpftool prog show id "$1" | awk '{ for (i = 1; i < NF; i++)
		if ($i == "run_time_ns" || $i == "run_cnt") v[$i] = $(i + 1) }
		END { printf "%.0f %.0f\n", v["run_time_ns"], v["run_cnt"] }'
}

# emitted PID: the value of bpftrace PID's @emitted counter now (a per-CPU
# BPF map, AT_emitted; bpftool prints each CPU's 8 bytes, little-endian).
emitted() {
	local fd id line n=0 b
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = anon_inode:bpf-map ] || continue
		id=$(awk '$1 == "map_id:" { print $2 }' "/proc/$1/fdinfo/${fd##*/}")
		bpftool map show id "$id" | grep -q ' name AT_emitted ' || continue
		while read -r line; do
			b=$(awk '{ for (i = NF; i > 3; i--) printf "%s", $i }' <<<"$line")
			n=$((n + 16#$b))
		done < <(bpftool map dump id "$id" | grep '^value (CPU')
	done
	echo "$n"
}
# printed FILE: the samples printed so far, one "sample" line each.
printed() { grep -c '^sample ' "$1" || true; }

# measure MODE PROGRAM [VAR=VALUE...]: run PROGRAM (with those variables
# in its environment) for LAB_SECONDS after it attached (its BEGIN banner
# is what lib.sh's wait_attached waits for).  Write to OUT/MODE.stats,
# over those LAB_SECONDS: the probe's runs, bpftrace's CPU time, the BPF
# program's run time, the samples emitted (in-kernel counter @emitted)
# and printed; and over the whole run: emitted, printed, and what
# bpftrace said it lost.
measure() {
	local mode=$1 prog=$2 pid id t0 t1 s0 s1 c0 c1 e0 e1 p0 p1
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
	id=$(prog_id "$pid")
	[ -n "$id" ] || lab_die "cannot find bpftrace's BPF program in /proc/$pid/fdinfo"
	t0=$(cpu_ns "$pid"); read -r s0 c0 < <(prog_stats "$id"); e0=$(emitted "$pid"); p0=$(printed "$OUT/$mode.txt")
	sleep "$LAB_SECONDS"
	t1=$(cpu_ns "$pid"); read -r s1 c1 < <(prog_stats "$id"); e1=$(emitted "$pid"); p1=$(printed "$OUT/$mode.txt")
	alive "$work" shares
	interrupt "$pid"
	printf 'mode=%s seconds=%s runs=%s bpftrace_cpu_ns=%s bpf_run_ns=%s emitted=%s printed=%s' \
		"$mode" "$LAB_SECONDS" "$((c1 - c0))" "$((t1 - t0))" "$((s1 - s0))" "$((e1 - e0))" "$((p1 - p0))" >"$OUT/$mode.stats"
	printf ' emitted_total=%s printed_total=%s lost_total=%s\n' \
		"$(awk '/^@emitted: / { print $2 }' "$OUT/$mode.txt")" "$(printed "$OUT/$mode.txt")" \
		"$(awk '/^Lost/ { s += $2 } END { print s + 0 }' "$OUT/$mode.txt")" >>"$OUT/$mode.stats"
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
# Per mode, over the measured seconds: probe runs; BPF time per run;
# bpftrace's CPU time per sample emitted and per sample it printed; then
# what became of every sample of the run.
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       m = v["mode"]; n = (v["runs"] > 0) ? v["runs"] : 1; e = (v["emitted"] > 0) ? v["emitted"] : 1
       printf "%-13s %6d runs  BPF %5.2f us/run  bpftrace %7.1f ms CPU: %6.1f us/sample emitted",
         m, v["runs"], v["bpf_run_ns"] / n / 1e3, v["bpftrace_cpu_ns"] / 1e6, v["bpftrace_cpu_ns"] / e / 1e3
       if (m != "aggregate")
         printf ", %6.1f us/sample printed\n%13s emitted %d, printed %d (%d%%), reported lost %d, never printed %d\n",
           (v["printed"] > 0) ? v["bpftrace_cpu_ns"] / v["printed"] / 1e3 : 0, "",
           v["emitted_total"], v["printed_total"], 100 * v["printed_total"] / ((v["emitted_total"] > 0) ? v["emitted_total"] : 1),
           v["lost_total"], v["emitted_total"] - v["printed_total"] - v["lost_total"]
       else printf "\n"
       bpf[m] = v["bpf_run_ns"] / n }
     END { if (bpf["aggregate"] > 0)
             printf "BPF time per run, printf / aggregate: %.1fx\n", bpf["printf"] / bpf["aggregate"] }' \
	"$OUT/overhead.txt" | tee "$OUT/summary.txt"
