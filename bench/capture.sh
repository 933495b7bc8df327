#!/usr/bin/env bash
# bench/capture.sh - what a capture costs, with every CPU busy (bin/demo on
# each CPU), measured here, side by side:
#  1. capture design: in-kernel aggregation (bt/profile.bt: one map entry
#     per unique stack, printed every 10 s) against printing every sample
#     (printf per sample), both at 99 Hz for SECS seconds: bpftrace's own CPU
#     in steady state (from /proc, after start-up) plus the BPF programs' run
#     time (kernel.bpf_stats_enabled), as CPU-seconds and share of the machine;
#  2. a 30-second system-wide capture through scripts/profile with a
#     cold symbol cache, CAPTURE_RUNS times (3): stackfold's CPU
#     (post-processing, snapshots included), bpftrace's (start-up
#     included) and the whole command's (the wrapper too); the same as on a
#     machine without libc6-dbg (its build-id directory hidden in a private
#     mount namespace: `make flame` does not install it);
#  3. bpftrace's fixed cost: one-liners that sample for one second, or
#     none, then exit (parsing, LLVM, BTF, attaching), the floor of any
#     capture's CPU; and, seen with strace -T, what creating its stack-id
#     maps takes (bpftrace 0.17 sizes them itself: 131072 entries of 127
#     frames, whatever BPFTRACE_MAP_KEYS_MAX says).
# Needs root and bpftrace.  Not a test: prints tables.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SECS=${CAPTURE_SECS:-20}
RUNS=${CAPTURE_RUNS:-3}
W=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -q -w kernel.bpf_stats_enabled="$old_stats"
	pkill -f "$TOP/bin/demo" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "bench/capture.sh: needs root" >&2; exit 3; }
tck=$(getconf CLK_TCK)
ncpu=$(nproc)

busy() { for _ in $(seq "$ncpu"); do "$TOP/bin/demo" "$1" >/dev/null & done; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
bpf_ns() {	# total run time of perf_event BPF programs
	bpftool prog show 2>/dev/null | awk '/perf_event/ { for (i = 1; i <= NF; i++) if ($i == "run_time_ns") s += $(i + 1) } END { printf "%.0f\n", s }'
}

# measure NAME PROGRAM: steady-state cost of one bpftrace program
measure() {
	local name=$1 prog=$2 pid t0 t1 b0 b1
	sysctl -q -w kernel.bpf_stats_enabled=1
	BPFTRACE_NO_USER_SYMBOLS=1 BPFTRACE_MAP_KEYS_MAX=65536 \
		bpftrace -e "$prog" >"$W/$name.out" 2>/dev/null &
	pid=$!
	sleep 4	# start-up (LLVM) is not steady state
	t0=$(cpu_ticks "$pid") b0=$(bpf_ns)
	sleep "$SECS"
	t1=$(cpu_ticks "$pid") b1=$(bpf_ns)
	kill -INT "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v n="$name" -v t="$(( t1 - t0 ))" -v tck="$tck" -v b="$(( b1 - b0 ))" \
		-v s="$SECS" -v c="$ncpu" -v sz="$(stat -c %s "$W/$name.out")" 'BEGIN {
		u = t / tck; k = b / 1e9
		printf "%-26s %9.3f %9.3f %9.3f %8.3f%% %10d\n", n, u, k, u + k,
			100 * (u + k) / (s * c), sz }'
}

busy $((SECS * 2 + 50))
sleep 1
printf '\n== capture design: %s, %s CPUs (%s), %s s at 99 Hz, all CPUs busy\n' \
	"$(uname -n)" "$ncpu" "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" "$SECS"
printf '%-26s %9s %9s %9s %9s %10s\n' mode "user cpu" "bpf cpu" "total s" "machine" "out bytes"
measure "aggregate in kernel" 'profile:hz:99 /pid != 0/ { @s[pid, tid, comm, ustack, kstack(perf)] = count(); @t = count(); } interval:s:10 { print(@s); clear(@s); }'
measure "print every sample" 'profile:hz:99 /pid != 0/ { printf("%d %d %s %s %s\n", pid, tid, comm, ustack, kstack(perf)); }'

printf '\n== 30 s system-wide capture at 99 Hz, all CPUs busy, cold symbol cache (%s runs)\n' "$RUNS"
printf '%-4s %12s %12s %12s %12s   (CPU-s; targets: stackfold < 0.1, all < 0.35)\n' \
	run stackfold bpftrace "both" "whole cmd"
for r in $(seq "$RUNS"); do
	pkill -f "$TOP/bin/demo" 2>/dev/null || true
	busy 45
	sleep 1
	# the whole command: scripts/profile's shell and checks, bpftrace
	# (start-up included) and stackfold (post-processing)
	STACKFOLD_CACHE_DIR=$W/cache$r /usr/bin/time -f 'whole %U %S' -o "$W/sys.time" \
		"$TOP/scripts/profile" -v -a -d 30 -f folded -o "$W/sys" >/dev/null 2>"$W/sys.err" </dev/null ||
		echo "capture failed: $(cat "$W/sys.err")"
	[ "$r" = 1 ] && { grep 'stackfold: recorded' "$W/sys.err" || true; }
	sed -n 's/.*cpu: stackfold \([0-9.]*\) s, bpftrace \([0-9.]*\) s.*/\1 \2/p' "$W/sys.err" |
		awk -v r="$r" -v w="$(awk '{ print $2 + $3 }' "$W/sys.time")" \
		'{ printf "%-4s %12.3f %12.3f %12.3f %12.3f\n", r, $1, $2, $1 + $2, w }'
done
if command -v unshare >/dev/null 2>&1 && [ -d /usr/lib/debug/.build-id ]; then
	pkill -f "$TOP/bin/demo" 2>/dev/null || true
	busy 45
	sleep 1
	STACKFOLD_CACHE_DIR=$W/cache2 unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug/.build-id && exec "$@"' sh \
		"$TOP/scripts/profile" -v -a -d 30 -f folded -o "$W/nodbg" >/dev/null 2>"$W/nodbg.err" </dev/null ||
		echo "capture failed: $(cat "$W/nodbg.err")"
	printf '\n== the same without libc6-dbg (its debug files hidden)\n'
	grep 'stackfold: cpu' "$W/nodbg.err" || true
fi
pkill -f "$TOP/bin/demo" 2>/dev/null || true

# one_liner NAME PROGRAM: user+sys CPU of a bpftrace run, start to exit
one_liner() {
	/usr/bin/time -f "%U %S" -o "$W/time" bpftrace -e "$2" >/dev/null 2>&1 || true
	awk -v n="$1" '{ printf "%-44s %6.2f CPU-s\n", n, $1 + $2 }' "$W/time"
}
printf '\n== bpftrace %s alone, start to exit (machine idle)\n' "$(bpftrace --version 2>/dev/null | awk '{ print $2 }')"
one_liner "BEGIN { exit(); }" 'BEGIN { exit(); }'
one_liner "1 s of @[kstack] = count() at 99 Hz" 'profile:hz:99 { @[kstack] = count(); } interval:s:1 { exit(); }'
one_liner "1 s of @[ustack, kstack] = count() at 99 Hz" 'profile:hz:99 { @[ustack, kstack] = count(); } interval:s:1 { exit(); }'
if command -v strace >/dev/null 2>&1; then
	strace -f -T -e trace=bpf -o "$W/strace" bpftrace -e \
		'profile:hz:99 { @[ustack, kstack] = count(); } interval:s:1 { exit(); }' >/dev/null 2>&1 || true
	awk '/BPF_MAP_CREATE/ && /BPF_MAP_TYPE_STACK_TRACE/ {
		n++; t = $NF; gsub(/[<>]/, "", t); s += t
		if (match($0, /value_size=[0-9]+/)) v = substr($0, RSTART + 11, RLENGTH - 11)
		if (match($0, /max_entries=[0-9]+/)) e = substr($0, RSTART + 12, RLENGTH - 12) }
		END { if (n) printf "%-44s %6.2f CPU-s (%d maps of %d x %d bytes: %.0f MB)\n",
			"creating its stack-id maps (strace -T)", s, n, e, v, n * e * v / 1e6 }' "$W/strace"
fi
