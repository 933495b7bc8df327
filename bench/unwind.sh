#!/usr/bin/env bash
# bench/unwind.sh - --call-graph dwarf against perf's, in the same run:
#  1. fidelity: Debian's xz -9, gzip -9 and python3 (a busy loop), each
#     sampled for SECS s by scripts/profile --call-graph dwarf and by
#     `perf record -F 99 --call-graph dwarf` at the same time:
#     tests/tools/fidelity.py's figures (mean user depth, samples reaching
#     the entry, leaf TVD; targets 10%, 90%, 0.10);
#  2. capture cost per sample of those runs: the BPF program's run time
#     (bpf_stats: run_time_ns of the programs of that bpftrace, which
#     include the firings its filter rejects), bpftrace's and stackfold's
#     CPU (stackfold's "cpu:" line), against perf record's CPU (user+sys,
#     /usr/bin/time; the kernel's copying in the sampled task is in
#     neither);
#  3. short-lived processes: `(while :; do /bin/true; done)` under -a
#     for SHORT_SECS s, stackfold and `perf record --call-graph dwarf -a`
#     at the same time, twice: the side band on, then off
#     (STACKFOLD_SIDEBAND=0): true's samples unwound to the entry
#     (tests/tools/entryshare.py, samples inside execve or exit left out);
#  4. whole runs (WHOLE_SECS s, start-up and end included): Debian's xz
#     busy, the other CPUs busy with a loop; scripts/profile --call-graph
#     dwarf -p and then perf record --call-graph dwarf -p, one at a time,
#     each in a cpuacct cgroup of its own (every process it starts,
#     exited ones included) plus its BPF programs' run time; then what
#     bpftrace alone costs to start, run 2 s and stop a profile:hz:99 program
#     with no stack, with kstack (its fixed stack-id map) and with a
#     curtask field (kernel BTF), the floor any bpftrace capture pays;
#  5. post-processing: a 30 s system-wide capture (-a; UNWIND_SYS=-p:
#     only the two busy processes) with xz and python3 busy, taken by both
#     tools at once, then
#     each processed with a cold cache:
#     stackfold on its raw capture (unwinding and symbolizing) against
#     `perf script` and `perf report` on perf.data (CPU-s, /usr/bin/time).
# Needs root, bpftrace, perf, xz, gzip, python3.  Not a test: prints tables.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SECS=${UNWIND_SECS:-14}
WARM=${UNWIND_WARM:-6}	# steady state: from this many s after bpftrace started
SHORT_SECS=${UNWIND_SHORT_SECS:-5}	# 0: no short-lived part
SYS_SECS=${UNWIND_SYS_SECS:-30}	# 0: no post-processing part
WHOLE_SECS=${UNWIND_WHOLE_SECS:-30}	# 0: no whole-run part
# UNWIND_WORKLOADS="xz" runs fewer (""): none
W=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
kids=()
cleanup() {
	# the main shell's exit only (bash may run the EXIT trap in a
	# command substitution's subshell too)
	[ "$BASHPID" = "$$" ] || return 0
	sysctl -q -w kernel.bpf_stats_enabled="$old_stats"
	for k in "${kids[@]}"; do kill "$k" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "bench/unwind.sh: needs root" >&2; exit 3; }
for c in bpftrace perf bpftool xz gzip /usr/bin/python3; do
	command -v "$c" >/dev/null || { echo "bench/unwind.sh: needs $c" >&2; exit 3; }
done
sysctl -q -w kernel.bpf_stats_enabled=1
export STACKFOLD_CACHE_DIR=$W/cache
busy_py='x = 0
while True:
    x = (x * 31 + 7) % 1000003'

# start NAME: the workload, its pid in $WPID
start() {
	case $1 in
	xz) xz -9 -T1 </dev/urandom >/dev/null & ;;
	gzip) gzip -9 </dev/urandom >/dev/null & ;;
	python3) /usr/bin/python3 -c "$busy_py" & ;;
	esac
	WPID=$!
	kids+=("$WPID")
}

# burn: the other CPUs busy (the figures' condition), a loop on each that
# is not profiled; unburn: those loops stopped
burn() {
	burners=()
	for _ in $(seq 2 "$(nproc)"); do
		/usr/bin/python3 -c "$busy_py" &
		burners+=("$!")
		kids+=("$!")
	done
}
unburn() { for b in "${burners[@]}"; do kill "$b" 2>/dev/null || true; done; }

# bpf_ns BTPID: run_time_ns of the BPF programs bpftrace BTPID holds
bpf_ns() {
	local fd s=0 v
	for fd in /proc/"$1"/fd/*; do
		v=$(awk '/^run_time_ns:/ { print $2 }' "/proc/$1/fdinfo/${fd##*/}" 2>/dev/null) || continue
		[ -n "$v" ] && s=$((s + v))
	done
	echo "$s"
}

# cpu_ns PID: its threads' CPU time so far, in ns (schedstat: a clock
# tick, 10 ms, is too coarse for a process that wakes once a second)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
now() { awk '{ print $1 }' /proc/uptime; }

# watch PID OUT: while the bpftrace child of PID (stackfold record) runs,
# in steady state (from WARM s after it started: LLVM, attaching), a line
# "T BT SF BPF" each half second (seconds, CPU ns of bpftrace and of
# stackfold, run time of bpftrace's BPF programs in ns) into OUT
watch() {
	local bt="" v t0="" steady="" last
	for _ in $(seq 400); do
		# (the capture's: scripts/profile also runs `bpftrace --version`)
		bt=$(pgrep -P "$1" -f '^bpftrace .*-e ') && break
		sleep 0.05
	done
	[ -n "$bt" ] || return 0
	t0=$(now)
	while kill -0 "$bt" 2>/dev/null; do
		# (on again: another benchmark ending may have switched the
		# machine-wide statistics off)
		sysctl -q -w kernel.bpf_stats_enabled=1
		v=$(bpf_ns "$bt")
		last="$(now) $(cpu_ns "$bt") $(cpu_ns "$1") $v"
		kill -0 "$bt" 2>/dev/null || break	# (read while it ran)
		if [ -z "$steady" ] && awk -v w="$WARM" -v a="$t0" -v b="${last%% *}" 'BEGIN { exit !(b - a >= w) }'; then
			steady=1
		fi
		[ -n "$steady" ] && echo "$last" >>"$2"
		sleep 0.5
	done
}

printf '\n== fidelity and capture cost: %s, %s CPUs (%s), kernel %s, %s, %s, %s s each at 99 Hz\n' \
	"$(uname -n)" "$(nproc)" "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" \
	"$(uname -r)" "$(bpftrace --version)" "$(perf --version)" "$SECS"
printf '%-8s %-70s | %8s %8s %8s %8s %8s | %8s\n' workload "fidelity (stackfold/perf)" \
	"bpf us" "bpftr us" "sf us" "total us" "mean us" "perf us"
burn
for wl in ${UNWIND_WORKLOADS-xz gzip python3}; do
	start "$wl"
	sleep 0.5
	: >"$W/watch"
	/usr/bin/time -f '%U %S' -o "$W/perf.time" perf record -q -F 99 -e cpu-clock --call-graph dwarf \
		-p "$WPID" -o "$W/$wl.data" -- sleep "$((SECS + 1))" >/dev/null 2>&1 &
	pr=$!
	"$TOP/scripts/profile" --call-graph dwarf -U -f folded -o "$W/$wl" -p "$WPID" -d "$SECS" \
		>/dev/null 2>"$W/$wl.err" </dev/null &
	sp=$!
	watch "$sp" "$W/watch"
	wait "$sp" || true
	wait "$pr" || true
	kill "$WPID" 2>/dev/null || true
	wait "$WPID" 2>/dev/null || true
	perf script -i "$W/$wl.data" -F comm,tid,ip,sym,dso --no-inline >"$W/$wl.perf" 2>/dev/null
	fig=$(python3 "$TOP/tests/tools/fidelity.py" "$W/$wl.folded" "$W/$wl.perf")
	n=$(awk '{ s += $NF } END { print s + 0 }' "$W/$wl.folded")
	np=$(grep -c '^[^[:space:]]' "$W/$wl.perf" || true)
	# BPF: all its run time over all samples.  bpftrace and stackfold:
	# their CPU per sample in steady state (CPU rate over the sample
	# rate), the median of 2 s spans: one-time work (the first kernel
	# stack makes bpftrace read /proc/kallsyms, ~0.1 CPU-s; stackfold
	# indexes each file once) lands in one span; the mean over the
	# whole steady state, which has it, is shown too
	awk -v w="$wl" -v f="$fig" -v n="$n" -v np="$np" -v s="$SECS" \
		-v p="$(awk '{ print $1 + $2 }' "$W/perf.time")" -v ps="$((SECS + 1))" '
		function median(a, k,   i, j, t) {
			for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return k ? (k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2) : 0 }
		NR == 1 { t0 = $1; b0 = $2; s0 = $3; ts = $1; bs = $2; ss = $3 }
		{ t1 = $1; b1 = $2; s1 = $3; bpf = $4
		  if ($1 - ts >= 2) { k++; rb[k] = ($2 - bs) / ($1 - ts); rs[k] = ($3 - ss) / ($1 - ts); ts = $1; bs = $2; ss = $3 } }
		END {
		n = n ? n : 1; np = np ? np : 1
		rate = n / s	# samples a second
		bt = median(rb, k) / 1e3 / rate; sf = median(rs, k) / 1e3 / rate
		win = (t1 - t0) * rate; win = win > 0 ? win : 1
		mean = bpf / 1e3 / n + ((b1 - b0) + (s1 - s0)) / 1e3 / win
		printf "%-8s %-70s | %8.1f %8.1f %8.1f %8.1f %8.1f | %8.1f\n", w, f, bpf / 1e3 / n,
			bt, sf, bpf / 1e3 / n + bt + sf, mean, p * 1e6 / np }' "$W/watch"
	grep -h 'stackfold: recorded\|ended early\|killed' "$W/$wl.err" | sed 's/^/         /' || true
done
unburn
echo "(the other CPUs busy with a loop not profiled; us per sample: BPF over the whole capture;"
echo " bpftrace and stackfold (schedstat CPU time) in steady state, from $WARM s after bpftrace"
echo " started: the median of 2 s spans; mean: BPF, bpftrace and stackfold over the whole steady"
echo " state, one-time work in it included (bpftrace reads /proc/kallsyms at the first kernel stack);"
echo " perf: perf record's CPU, start to end, over its"
echo " samples, without the kernel's copy of 8 KiB a sample in the sampled task, which no tool here sees)"

# short SIDEBAND: one run of the /bin/true loop under -a, stackfold (its
# side band SIDEBAND: 1 on, 0 off) and perf at the same time; a table row
short() {
	(while :; do /bin/true; done) &
	local loop=$! load
	kids+=("$loop")
	load=$(cut -d' ' -f1 /proc/loadavg)
	perf record -q -F 99 -e cpu-clock --call-graph dwarf -a -o "$W/short.data" \
		-- sleep "$((SHORT_SECS + 1))" >/dev/null 2>&1 &
	local pr=$!
	STACKFOLD_SIDEBAND=$1 "$TOP/scripts/profile" --call-graph dwarf -a -d "$SHORT_SECS" \
		-f folded -o "$W/short" >/dev/null 2>"$W/short.err" </dev/null || true
	wait "$pr" || true
	kill "$loop" 2>/dev/null || true
	wait "$loop" 2>/dev/null || true
	perf script -i "$W/short.data" -F comm,tid,ip,sym,dso --no-inline >"$W/short.perf" 2>/dev/null || true
	printf '%-9s %-32s %-32s %s\n' "$([ "$1" = 1 ] && echo on || echo off)" \
		"$(python3 "$TOP/tests/tools/entryshare.py" --folded "$W/short.folded" true)" \
		"$(python3 "$TOP/tests/tools/entryshare.py" --perf "$W/short.perf" true)" "$load"
}
if [ "$SHORT_SECS" != 0 ]; then
	printf '\n== short-lived processes: (while :; do /bin/true; done) under -a, %s s at 99 Hz, %s, %s CPUs\n' \
		"$SHORT_SECS" "$(uname -n)" "$(nproc)"
	echo "true's samples unwound to the entry (reached/total, samples in execve or exit left out)"
	printf '%-9s %-32s %-32s %s\n' "side band" "stackfold" "perf record, same run" "load (1 min)"
	short 1
	short 0
fi

# shellcheck source=bench/cgrun.sh
. "$TOP/bench/cgrun.sh"
# cg_run LABEL COMMAND...: COMMAND in a cgroup of its own (cgrun.sh), to
# its end; appends "LABEL cpu_ns bpf_ns" to $W/whole
cg_run() {
	local label=$1
	shift
	cg_start unwind "$W/cg.log" "$@"
	cg_finish || true
	echo "$label $CG_CPU_NS $CG_BPF_NS" >>"$W/whole"
}
if [ "$WHOLE_SECS" != 0 ] && [ -d "$CG_ROOT" ]; then
	printf '\n== whole runs: Debian xz -9 -T1 busy, -p, %s s at 99 Hz, the other CPUs busy, %s, %s CPUs\n' \
		"$WHOLE_SECS" "$(uname -n)" "$(nproc)"
	burn
	start xz
	sleep 0.5
	: >"$W/whole"
	cg_run stackfold "$TOP/scripts/profile" --call-graph dwarf -p "$WPID" -d "$WHOLE_SECS" -f folded -o "$W/whole"
	cg_run perf perf record -q -F 99 -e cpu-clock --call-graph dwarf -p "$WPID" -o "$W/whole.data" -- sleep "$WHOLE_SECS"
	ns=$(awk '{ s += $NF } END { print s + 0 }' "$W/whole.folded" 2>/dev/null || echo 0)
	np=$(perf report -i "$W/whole.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
	# (ended by its own exit(): a SIGINT during bpftrace's start-up can be
	# lost, and it then runs on)
	for prog in '@[cpu] = count();' '@[kstack] = count();' '@[curtask->mm->start_stack] = count();'; do
		cg_run "bpftrace:$prog" timeout -k 5 60 bpftrace -e "profile:hz:99 { $prog } interval:s:2 { exit(); }"
	done
	kill "$WPID" 2>/dev/null || true
	unburn
	awk -v ns="$ns" -v np="${np:-0}" '
		{ c = $(NF - 1) / 1e9; b = $NF / 1e9; l = $0; sub(/ [0-9]+ [0-9]+$/, "", l) }
		l == "stackfold" { sf = c + b; printf "%-58s %7.3f CPU-s + BPF %6.3f s = %7.3f (%d samples, %.0f us a sample)\n", "scripts/profile --call-graph dwarf", c, b, sf, ns, ns ? sf * 1e6 / ns : 0 }
		l == "perf" { pf = c; printf "%-58s %7.3f CPU-s                  = %7.3f (%d samples, %.0f us a sample)\n", "perf record --call-graph dwarf", c, c, np, np ? c * 1e6 / np : 0 }
		l ~ /^bpftrace:/ { sub(/^bpftrace:/, "", l); printf "  bpftrace alone, profile:hz:99 { %-40s } 2 s: %7.3f CPU-s\n", l, c + b }
		END { if (pf > 0) printf "whole run, stackfold / perf record: %.2fx (per sample %.2fx)\n", sf / pf, (ns && np) ? (sf / ns) / (pf / np) : 0 }' "$W/whole"
fi

[ "$SYS_SECS" = 0 ] && exit 0	# UNWIND_SYS_SECS=0: no post-processing part
printf '\n== post-processing a %s s capture of xz and python3, both busy (%s), cold cache\n' "$SYS_SECS" "${UNWIND_SYS:--a}"
start xz
start python3
sleep 0.5
# the whole machine, as a user's `-a` would be; UNWIND_SYS=-p: the two
# busy processes only (on a shared machine other users' processes vary
# from run to run)
if [ "${UNWIND_SYS:--a}" = -p ]; then
	who=(-p "${kids[-2]},${kids[-1]}") pwho=(-p "${kids[-2]},${kids[-1]}")
else
	who=(-a) pwho=(-a)
fi
perf record -q "${pwho[@]}" -F 99 -e cpu-clock --call-graph dwarf -o "$W/sys.data" -- sleep "$((SYS_SECS + 1))" >/dev/null 2>&1 &
pr=$!
timeout -s INT "$((SYS_SECS + 120))" "$TOP/scripts/profile" --call-graph dwarf "${who[@]}" -d "$SYS_SECS" -f folded \
	-o "$W/sys" --save-raw "$W/sys.raw" >/dev/null 2>"$W/sys.err" </dev/null || true
wait "$pr" || true
for k in "${kids[@]}"; do kill "$k" 2>/dev/null || true; done
grep -h 'stackfold: recorded\|ended early\|killed' "$W/sys.err" || true
rm -rf "$W/cache" || true
sync
echo 3 >/proc/sys/vm/drop_caches
/usr/bin/time -f '%U %S' -o "$W/sf.time" "$TOP/bin/stackfold" -q -f folded -o "$W/replay.folded" "$W/sys.raw" 2>/dev/null || true
echo 3 >/proc/sys/vm/drop_caches
/usr/bin/time -f '%U %S' -o "$W/ps.time" perf script -i "$W/sys.data" >/dev/null 2>&1 || true
sfs=$(awk '{ print $1 + $2 }' "$W/sf.time") pss=$(awk '{ print $1 + $2 }' "$W/ps.time")
n=$(awk '{ s += $NF } END { print s + 0 }' "$W/replay.folded")
printf '%-44s %8.3f CPU-s  (%s samples, %s bytes of capture)\n' "stackfold (unwind + symbolize + fold)" \
	"$sfs" "$n" "$(stat -c %s "$W/sys.raw")"
printf '%-44s %8.3f CPU-s  (%s bytes of perf.data)\n' "perf script (perf's own capture)" "$pss" \
	"$(stat -c %s "$W/sys.data")"
awk -v a="$sfs" -v b="$pss" 'BEGIN { if (a > 0) printf "perf script / stackfold: %.1fx\n", b / a }'
# perf report, the other way users read a DWARF capture: a call-graph
# tree (the folded output's equivalent), cold as above
echo 3 >/proc/sys/vm/drop_caches
/usr/bin/time -f '%U %S' -o "$W/pr.time" perf report -i "$W/sys.data" --stdio -g caller --no-children >/dev/null 2>&1 || true
prs=$(awk '{ print $1 + $2 }' "$W/pr.time")
printf '%-44s %8.3f CPU-s\n' "perf report --stdio -g caller (the same data)" "$prs"
awk -v a="$sfs" -v b="$prs" 'BEGIN { if (a > 0) printf "perf report / stackfold: %.1fx\n", b / a }'
# the same again with the index cache warm (page cache too): what a sample
# costs once the files are indexed (unwinding, naming, folding)
/usr/bin/time -f '%U %S' -o "$W/sfw.time" "$TOP/bin/stackfold" -q -f folded -o "$W/replay2.folded" "$W/sys.raw" 2>/dev/null || true
awk -v n="$n" '{ printf "%-44s %8.3f CPU-s  (%.1f us a sample, start-up included)\n", "stackfold again, warm cache", $1 + $2, ($1 + $2) * 1e6 / (n ? n : 1) }' "$W/sfw.time"
