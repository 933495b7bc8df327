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

# measure MODE PROGRAM [VAR=VALUE...]: run PROGRAM (with those variables
# in its environment) for LAB_SECONDS after it attached (its BEGIN banner
# is what lib.sh's wait_attached waits for); write MODE's bpftrace CPU
# time, BPF run time, and the samples emitted (the in-kernel counter
# @emitted) and printed ("sample" lines) to OUT/MODE.stats.
measure() {
	local mode=$1 prog=$2 pid id t0 t1 s0 s1
	env "${@:3}" bpftrace -e "$prog" >"$OUT/$mode.txt" 2>"$OUT/$mode.err" &
	pid=$!
	wait_attached "$pid" "$OUT/$mode.txt" ||
		lab_die "bpftrace did not start: $(cat "$OUT/$mode.err")"
	sleep 1		# let it settle: startup (LLVM, loading) is not what we measure
	id=$(prog_id "$pid")
	[ -n "$id" ] || lab_die "cannot find bpftrace's BPF program in /proc/$pid/fdinfo"
	t0=$(cpu_ns "$pid"); read -r s0 c0 < <(prog_stats "$id")
	sleep "$LAB_SECONDS"
	t1=$(cpu_ns "$pid"); read -r s1 c1 < <(prog_stats "$id")
	alive "$work" shares
	interrupt "$pid"
	printf 'mode=%s seconds=%s runs=%s bpftrace_cpu_ns=%s bpf_run_ns=%s lost=%s emitted=%s printed=%s\n' \
		"$mode" "$LAB_SECONDS" "$((c1 - c0))" "$((t1 - t0))" "$((s1 - s0))" \
		"$(awk '/^Lost/ { s += $2 } END { print s + 0 }' "$OUT/$mode.txt")" \
		"$(awk '/^@emitted: / { print $2 }' "$OUT/$mode.txt")" \
		"$(grep -c '^sample ' "$OUT/$mode.txt")" >"$OUT/$mode.stats"
}

# 1. Aggregate in the kernel: one map entry per unique stack, printed once.
measure aggregate "BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
	profile:hz:$HZ8 /pid == $work/ { @[tid, ustack, kstack] = count(); }"
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
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       n = v["runs"] > 0 ? v["runs"] : 1
       printf "%-13s %6d runs  bpftrace %7.1f ms CPU (%6.1f us/run)  BPF %6.1f ms (%5.2f us/run)",
         v["mode"], v["runs"], v["bpftrace_cpu_ns"] / 1e6, v["bpftrace_cpu_ns"] / n / 1e3,
         v["bpf_run_ns"] / 1e6, v["bpf_run_ns"] / n / 1e3
       if (v["mode"] != "aggregate")
         printf "  emitted %d printed %d lost %d", v["emitted"], v["printed"], v["lost"]
       printf "\n"
       bpf[v["mode"]] = v["bpf_run_ns"] / n }
     END { if (bpf["aggregate"] > 0)
             printf "BPF time per run, printf / aggregate: %.1fx\n", bpf["printf"] / bpf["aggregate"] }' \
	"$OUT/overhead.txt" | tee "$OUT/summary.txt"
