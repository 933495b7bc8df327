#!/usr/bin/env bash
# t20-live: real captures with bpftrace (root): scripts/profile on the demo
# workload, on a pid, on a process that exits (and whose binary is deleted)
# during the capture, Ctrl-C, replay of a saved raw capture, -p ending
# once every target has exited, and -p TID sampling that thread alone.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
live_prereq "live capture" || exit 0
DEMO=$TOP/bin/demo
PROFILE=$TOP/scripts/profile
HZ=99

# within PCT% of EXPECTED?
near() {
	[ -n "$1" ] && [ -n "$2" ] && [ "$2" -gt 0 ] 2>/dev/null || return 1
	awk -v a="$1" -v e="$2" -v p="$3" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= e * p / 100) }'
}
# share (percent) of samples whose stack contains FRAME
share() { awk -v f=";$2(;| |$)" '{ t += $NF; if ((";" $0) ~ f) s += $NF } END { printf "%.1f", t ? 100 * s / t : 0 }' "$1"; }

# 1. scripts/profile -- COMMAND: every output, real names, known shares.
"$PROFILE" -d 4 -o "$T/demo" -- "$DEMO" 10 >"$T/demo.top" 2>"$T/demo.err"
rc=$?
check_eq "profile -- demo exits 0" 0 "$rc"
for s in folded svg pb.gz; do check "profile writes demo.$s" test -s "$T/demo.$s"; done
check "profile prints the top table" grep -q 'matrix_multiply' "$T/demo.top"
check "real names: demo;...;main;run;matrix_multiply" grep -q '^demo;.*main;run;matrix_multiply ' "$T/demo.folded"
# (the demo makes its read(2) itself, in a function with a frame pointer:
# through libc's read, which has none, the walk would skip load_zeros)
check "user and kernel frames in one stack, every user frame" \
	grep -q '^demo;.*main;run;load_zeros;raw_read;.*read_zero_\[k\] ' "$T/demo.folded"
mm=$(share "$T/demo.folded" matrix_multiply)
rd=$(share "$T/demo.folded" read_data)
if near "$mm" 70 12 && near "$rd" 15 35; then pass "shares match the design (matrix_multiply $mm%, read_data $rd%)"
else fail "shares match the design" "matrix_multiply $mm% (70), read_data $rd% (15)"; fi
check "no frame left unnamed in the demo's own code" bash -c "! grep -q 'demo+0x' '$T/demo.folded'"
# A pprof reader finds the same hottest function as the top table.
gtop=$(HOME=$T/home GOCACHE=$T/gocache go tool pprof -top -nodecount=3 "$T/demo.pb.gz" 2>"$T/gotop.err" |
	awk '/flat%/ { getline; print $NF; exit }')
ttop=$(awk 'NR > 2 && NF == 5 { print $5; exit }' "$T/demo.top")
check_eq "go tool pprof -top and the top table agree on the hottest function ($ttop)" "$ttop" "${gtop:-$(head -n 2 "$T/gotop.err")}"

# -U and -K: the user or the kernel frames alone, end to end.
"$PROFILE" -U -d 2 -f folded -o "$T/uonly" -- "$DEMO" 3 >/dev/null 2>"$T/uonly.err"
check "profile -U: user frames, no kernel frame" \
	bash -c "grep -q ';matrix_multiply ' '$T/uonly.folded' && ! grep -q '_\[k\]' '$T/uonly.folded'"
"$PROFILE" -K -d 2 -f folded -o "$T/konly" -- "$DEMO" 3 >/dev/null 2>"$T/konly.err"
check "profile -K: kernel frames, no user frame" \
	bash -c "grep -q 'read_zero_\[k\]' '$T/konly.folded' && ! grep -qE 'matrix_multiply|raw_read|load_zeros' '$T/konly.folded'"

# The defaults: -d 10 and -o profile (PREFIX.folded, .svg, .pb.gz in the
# current directory).
"$DEMO" 30 >/dev/null &
dflt=$!
mkdir -p "$T/defaults"
t0=$SECONDS
(cd "$T/defaults" && "$PROFILE" -p "$dflt" >/dev/null 2>"$T/defaults.err")
took=$((SECONDS - t0))
kill "$dflt" 2>/dev/null
wait "$dflt" 2>/dev/null
check "profile with no -o writes profile.folded, profile.svg, profile.pb.gz" \
	test -s "$T/defaults/profile.folded" -a -s "$T/defaults/profile.svg" -a -s "$T/defaults/profile.pb.gz"
check "profile with no -d samples for 10 s (took ${took} s)" test "$took" -ge 10 -a "$took" -lt 30
check "scripts/profile --help gives examples" bash -c "'$PROFILE' --help | grep -A3 '^Examples:' | grep -q 'scripts/profile -p 1234'"
# The wrapper's env(1) runs before the command is stopped: its start-up
# (1-2 ms, unnamed) is not sampled as the command's: at 2999 Hz it would
# show in every run.  (sh's last instructions between the resume and its
# exec still can be: a fraction of a millisecond.)
"$PROFILE" -F 2999 -d 2 -f folded -o "$T/envw" -- "$DEMO" 1 >/dev/null 2>"$T/envw.err"
check "profile -F 2999 -- COMMAND: samples" grep -q '^demo;' "$T/envw.folded"
check_eq "profile -- COMMAND: no stack of the wrapper's env(1)" "" "$(grep '^env[; ]' "$T/envw.folded" | head -n 3)"
# Nor is the sh wrapper after its resume: sampling begins at the
# command's exec.  Its own window is under a millisecond, so a stand-in sh
# runs the wrapper's script with a 2 s spin before the exec, which must
# not be sampled (sampled, it gives some 57 stacks; `sh;[unknown]` with sh).
mkdir -p "$T/slowsh"
cat >"$T/slowsh/sh" <<'EOF'
#!/bin/bash
exec /bin/bash -c "${2/; exec/; e=\$((SECONDS + 2)); while [ \$SECONDS -lt \$e ]; do :; done; exec}" "${@:3}"
EOF
chmod +x "$T/slowsh/sh"
PATH=$T/slowsh:$PATH "$PROFILE" -d 6 -f folded -o "$T/slowsh" -- "$DEMO" 1 >/dev/null 2>"$T/slowsh.err"
check "profile -- COMMAND, slow wrapper: samples" grep -q '^demo;' "$T/slowsh.folded"
check_eq "profile -- COMMAND: nothing sampled before the command's exec" "" \
	"$(grep -v '^demo;' "$T/slowsh.folded" | head -n 3)"

# The countdown (stderr a terminal: script(1) gives one) shows a sample
# count only once a flush has brought one, not "0 samples so far" up to
# the first flush (all of a default run).
script -qec "'$PROFILE' -d 3 -f folded -o '$T/cd' -- '$DEMO' 4" /dev/null >"$T/cd.tty" 2>&1
check "countdown: seconds left shown on a terminal" grep -aq 's left (Ctrl-C to stop)' "$T/cd.tty"
check_eq "countdown: no count before the first flush" "" "$(tr '\r' '\n' <"$T/cd.tty" | grep -a ' 0 samples' | head -n 2)"

# 2. -p PID on a running process.
"$DEMO" 30 &
dpid=$!
sleep 0.2
"$PROFILE" -p "$dpid" -d 3 -f folded -o "$T/pid" >/dev/null 2>"$T/pid.err"
check_eq "profile -p exits 0" 0 $?
check "profile -p: names" grep -q 'main;run;matrix_multiply' "$T/pid.folded"
# (a sample whose stacks bpftrace could not read, a stack-id error, is
# the process frame alone: "demo N")
check_eq "profile -p: only that process" "" "$(grep -v '^demo[; ]' "$T/pid.folded" | head -n 3)"
kill "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null

# 3. A process that exits mid-capture, its binary deleted while it runs:
#    symbolized from the maps saved at its first sample and the pinned file.
cc -O1 -g -fno-omit-frame-pointer -o "$T/exiter" "$TOP/tests/fixtures/live/exiter.c"
# started stopped and resumed once bpftrace is attached (--start-pid), so
# all of its CPU time is inside the capture
EXITER_STOP=1 "$T/exiter" 1.2 >"$T/exiter.cpu" &
epid=$!
sleep 0.2
rm -f "$T/exiter"
"$STACKFOLD" record -D 3 --start-pid "$epid" -f folded -o "$T/exit" --save-raw "$T/exit.raw" -- \
	env BPFTRACE_NO_USER_SYMBOLS=1 bpftrace "$TOP/bt/profile.bt" "$HZ" "$epid" 10 2>"$T/exit.err"
check_eq "record of an exiting process exits 0" 0 $?
check "exited and deleted binary still symbolized" grep -q 'main;exiter_hot_loop ' "$T/exit.folded"
n=$(folded_total "$T/exit.folded")
want=$(awk -v c="$(cat "$T/exiter.cpu")" -v hz="$HZ" 'BEGIN { printf "%d", c * hz }')
if near "$n" "$want" 30; then pass "exiting process: its samples are kept ($n for $want expected)"
else fail "exiting process: samples kept" "$n samples, expected $want (CPU $(cat "$T/exiter.cpu") s x $HZ Hz)"; fi

# 3b. Sample count: a CPU-bound thread gets HZ samples per CPU-second.  The
#     command starts when bpftrace is attached and prints the CPU time it
#     used, so the check holds however busy the machine is.
cc -O1 -g -fno-omit-frame-pointer -o "$T/counter" "$TOP/tests/fixtures/live/exiter.c"
"$PROFILE" -d 8 -f folded -o "$T/cnt" -- "$T/counter" 3 >"$T/cnt.cpu" 2>"$T/cnt.err"
got=$(folded_total "$T/cnt.folded")
want=$(awk -v c="$(tail -n 1 "$T/cnt.cpu")" -v hz="$HZ" 'BEGIN { printf "%d", c * hz }')
if near "$got" "$want" 15; then pass "sample count near HZ x CPU seconds ($got for $want expected)"
else fail "sample count near HZ x CPU seconds" "$got samples, expected $want (CPU $(tail -n 1 "$T/cnt.cpu") s x $HZ Hz)" "$(tail -n 3 "$T/cnt.err")"; fi

# 4. Replay of the saved raw capture gives the same folded stacks.
"$STACKFOLD" -q "$T/exit.raw" >"$T/replay.folded" 2>"$T/replay.err"
check "raw capture replays to the same profile (total)" test "$(folded_total "$T/replay.folded")" = "$n"

# 5. Conservation on a system-wide capture: samples taken (@stackfold_total)
#    = folded total + samples a full map dropped.
"$DEMO" 4 &
"$STACKFOLD" record -D 2 -f folded -o "$T/all" --save-raw "$T/all.raw" -- \
	env BPFTRACE_NO_USER_SYMBOLS=1 bpftrace "$TOP/bt/profile.bt" "$HZ" 0 10 2>"$T/all.err"
wait
taken=$(awk -F': ' '/^@stackfold_total(_a|_b)?:/ { s += $2 } END { print s + 0 }' "$T/all.raw")
got=$(folded_total "$T/all.folded")
dropped=$(sed -n 's/.* \([0-9]*\) samples dropped by a full map.*/\1/p' "$T/all.err")
check_eq "system-wide: taken = folded + dropped" "$taken" "$((got + ${dropped:-0}))"

# 6. Ctrl-C ends early and still writes every output.
# attached PID [SECONDS]: wait (30 s at most) until the bpftrace child of
# PID has attached its profile probe (a perf event per CPU, beside its
# output buffer's one per CPU), then SECONDS (default 1) more
attached() {
	local i bt n
	for ((i = 0; i < 300; i++)); do
		bt=$(bpftrace_of "$1") &&
			n=$(find "/proc/$bt/fd" -lname '*perf_event*' 2>/dev/null | wc -l) &&
			[ "$n" -ge $((2 * $(nproc))) ] && break
		sleep 0.1
	done
	sleep "${2:-1}"
}
# bpftrace_of PID: the bpftrace PID runs: its grandchild (scripts/profile,
# which waits for its record), else its child (stackfold record, or
# scripts/profile that exec'd it: started with SIGINT ignored)
bpftrace_of() {
	local c b
	{
		for c in $(pgrep -P "$1"); do pgrep -P "$c" -x bpftrace; done
		pgrep -P "$1" -x bpftrace
	} | while read -r b; do
		# not scripts/profile's own `bpftrace --version`, which runs
		# beside its argument checks (a child of it, as the capture's is
		# of record)
		tr '\0' ' ' <"/proc/$b/cmdline" 2>/dev/null | grep -q -- ' --version' ||
			{ echo "$b"; break; }
	done | grep .
}
# record_attached OUT: until the stackfold record writing OUT runs and its
# bpftrace has attached (then 1 s more)
record_attached() {
	local i rpid=""
	for ((i = 0; i < 100; i++)); do
		rpid=$(pgrep -f "stackfold[-a-z]* record .*$1") && break
		sleep 0.1
	done
	attached "$rpid" 1
}
# stopped_by SIG SECONDS NAME CMD...: CMD, in the background, gets SIG
# SECONDS after its bpftrace attached: it exits 0, $T/NAME.folded written.
# $dpid is a demo.
stopped_by() {
	local sig=$1 secs=$2 name=$3 pid
	shift 3
	"$@" >/dev/null 2>"$T/$name.err" &
	pid=$!
	attached "$pid" "$secs"
	kill -"$sig" "$pid"
	wait "$pid"
	check_eq "SIG$sig: exit 0" 0 $?
	check "SIG$sig: outputs written" grep -q 'matrix_multiply' "$T/$name.folded"
}
"$DEMO" 20 &
dpid=$!
stopped_by INT 1.5 int "$STACKFOLD" record -D 20 -f folded -o "$T/int" -- \
	env BPFTRACE_NO_USER_SYMBOLS=1 bpftrace "$TOP/bt/profile.bt" "$HZ" "$dpid" 10
kill "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null

# 7. Up-front checks fail with one line and exit 253 before touching files.
"$PROFILE" -p 999999999 -o "$T/nope" 2>"$T/err-nope"
check_eq "missing pid exits 253" 253 $?
check_eq "missing pid: one clear line" "profile: pid 999999999 not found" "$(cat "$T/err-nope")"
check "missing pid: no file written" bash -c "! ls '$T'/nope.* >/dev/null 2>&1"
# A zombie: gone at once, so the stop is sent right after bpftrace is
# forked; it must not land in stackfold's own handler, copied into the
# child before exec, where the capture would never end (-d and Ctrl-C
# neither).
python3 -c 'import os, time; p = os.fork(); p or os._exit(0); print(p, flush=True); time.sleep(60)' \
	>"$T/zomb.pid" &
zparent=$!
for ((i = 0; i < 100; i++)); do	# until the child is a zombie
	[ -s "$T/zomb.pid" ] && grep -q '^State:.*Z' "/proc/$(cat "$T/zomb.pid")/status" 2>/dev/null && break
	sleep 0.1
done
timeout -k 5 40 "$PROFILE" -p "$(cat "$T/zomb.pid")" -d 3 -f folded -o "$T/zomb" >/dev/null 2>"$T/zomb.err"
zrc=$?
kill "$zparent" 2>/dev/null
wait "$zparent" 2>/dev/null
check "-p a zombie: the capture ends, no hang (exit $zrc)" test "$zrc" != 124 -a "$zrc" != 137
check "-p a zombie: says the target exited" grep -q 'every target exited' "$T/zomb.err"
# The top table to a reader that has gone: that output fails (exit 254,
# said), every file is still written (SIGPIPE killed it after the first).
"$DEMO" 8 >/dev/null &
dpid=$!
"$PROFILE" -p "$dpid" -d 2 -o "$T/gone" 2>"$T/gone.err" | true
check_eq "stdout closed: exit 254" 254 "${PIPESTATUS[0]}"
check "stdout closed: says so" grep -q "write '<stdout>'" "$T/gone.err"
check "stdout closed: the files are written" test -s "$T/gone.folded" -a -s "$T/gone.svg" -a -s "$T/gone.pb.gz"
kill "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
"$PROFILE" -p 1 -F abc 2>/dev/null
check_eq "bad -F exits 251" 251 $?

# 8. A library mapped after the process's first sample (dlopen; ld.so
# still loading libc when -- COMMAND's first sample lands): the maps saved
# at the first sample miss it, so an address outside them takes a fresh
# snapshot of the same, still running, process.
cat >"$T/hotlib.c" <<'C'
void hot_in_dlopened_lib(volatile unsigned long *n)
{
	for (unsigned long i = 0; i < 400000000ul; i++)
		(*n)++;
}
C
cat >"$T/dl.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void spin_before_dlopen(void)
{
	volatile unsigned long n = 0;
	time_t end = time(0) + 2;
	while (time(0) < end)
		n++;
}
int main(int argc, char **argv)
{
	volatile unsigned long n = 0;
	int calls = argc > 2 ? atoi(argv[2]) : 0;	/* 0: forever */
	spin_before_dlopen();
	void *h = dlopen(argv[1], RTLD_NOW);
	void (*hot)(volatile unsigned long *) = h ? dlsym(h, "hot_in_dlopened_lib") : 0;
	if (!hot)
		return fprintf(stderr, "dlopen: %s\n", dlerror()), 1;
	for (int i = 0; !calls || i < calls; i++)
		hot(&n);
	return 0;
}
C
if cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -o "$T/libhot.so" "$T/hotlib.c" 2>"$T/dl-cc.err" &&
	cc -O0 -g -fno-omit-frame-pointer -o "$T/dl" "$T/dl.c" -ldl 2>>"$T/dl-cc.err"; then
	"$PROFILE" -d 4 -f folded -o "$T/dl" -- "$T/dl" "$T/libhot.so" >/dev/null 2>"$T/dl.err"
	check_eq "dlopen after the first sample: exit 0" 0 $?
	check "dlopen after the first sample: the library's function is named" \
		grep -q ';hot_in_dlopened_lib ' "$T/dl.folded"
	check "dlopen after the first sample: named before the dlopen too" \
		grep -q ';spin_before_dlopen' "$T/dl.folded"
	# the same, exiting before the end: its map was read again while it
	# ran young (collapse/cmd/loading.h), not only at the end.  The command
	# (forked, stopped, before bpftrace started: old by its start time
	# when bpftrace is slow) and a child it forks 2 s on.  The dlopen
	# comes 1-2 s in, when looks are 1.6 s apart: 16 calls (2.5 s or more)
	# outlive the look after it.
	"$PROFILE" -d 25 -f folded -o "$T/dlx" -- "$T/dl" "$T/libhot.so" 16 >/dev/null 2>"$T/dlx.err"
	check_eq "dlopen, then exit before the end: exit 0" 0 $?
	check "dlopen, then exit before the end: the library's function is named" \
		grep -q ';hot_in_dlopened_lib ' "$T/dlx.folded"
	check "dlopen, then exit before the end: the process did exit first" \
		grep -q 'every target exited' "$T/dlx.err"
	# shellcheck disable=SC2016 # expanded by that sh
	"$PROFILE" -d 27 -f folded -o "$T/dlc" -- sh -c 'sleep 2; "$0" "$1" 16; true' "$T/dl" "$T/libhot.so" \
		>/dev/null 2>"$T/dlc.err"
	check "dlopen in a child of the command, then exit before the end: named" \
		grep -q ';hot_in_dlopened_lib ' "$T/dlc.folded"
else
	fail "dlopen after the first sample: cc" "$(cat "$T/dl-cc.err")"
fi

# 8a. -- COMMAND follows descendants as perf record does, also deep ones: a
#    program 8 shells below the command (a build: make, sh, make, sh, cc).
cat >"$T/nest.sh" <<'SH'
#!/bin/sh
if [ "$1" -gt 0 ]; then "$0" $(($1 - 1)) "$2"; exit $?; fi
exec "$2" 2
SH
chmod +x "$T/nest.sh"
"$PROFILE" -d 10 -f folded -o "$T/nest" -- "$T/nest.sh" 8 "$DEMO" >/dev/null 2>"$T/nest.err"
check_eq "-- COMMAND 8 levels deep: exit 0" 0 $?
n=$(awk '/^demo;/ { s += $NF } END { print s + 0 }' "$T/nest.folded" 2>/dev/null)
check "-- COMMAND 8 levels deep: its samples are in (got ${n:-0})" test "${n:-0}" -gt 20
check "-- COMMAND 8 levels deep: named" grep -q '^demo;.*matrix_multiply' "$T/nest.folded"

# 8b. A JIT that maps its code after the command's last snapshot (V8's code
#    space comes after the libraries), the command gone before the end:
#    named from its perf map (node --perf-basic-prof), as JIT frames.
if command -v node >/dev/null 2>&1; then
	cat >"$T/hot.js" <<'JS'
function fibHot(n) { return n < 2 ? n : fibHot(n - 1) + fibHot(n - 2); }
const end = Date.now() + 2500;
let s = 0;
while (Date.now() < end) s += fibHot(20);
JS
	# (in $T: node leaves isolate-*.log files in its working directory)
	(cd "$T" && "$PROFILE" -d 8 -f folded -o "$T/node" -- node --perf-basic-prof "$T/hot.js" >/dev/null 2>"$T/node.err")
	check_eq "node JIT, gone by the end: exit 0" 0 $?
	jit=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); sub(/.*;/, "") } /fibHot/ { s += n } END { print s + 0 }' "$T/node.folded")
	all=$(folded_total "$T/node.folded")
	check "node JIT, gone by the end: the JIT's function named, most samples (got $jit of $all)" \
		test "$jit" -gt 0 -a $((jit * 2)) -gt "$all"
	check "node JIT, gone by the end: marked as JIT frames" grep -q 'fibHot[^;]*_\[j\]' "$T/node.folded"
	grep -l "$T/hot.js" /tmp/perf-*.map 2>/dev/null | xargs -r rm -f	# node leaves it
elif [ "${CI:-}" = true ]; then
	fail "node JIT, gone by the end" "node not installed"
else
	skip "node JIT, gone by the end" "node not installed"
fi

# 9. bt/profile.bt and bt/continuous.bt keep user and kernel stacks in one
#    stack-id map: bpftrace 0.17 makes one map per stack mode and depth,
#    each 131072 entries of 127 frames (133 MB of kernel memory, 0.2 CPU-s
#    to create here), so ustack and kstack share the perf mode.
#    bt/continuous.bt has one per buffer (@stackfold_b's 126 deep), which
#    the map reader empties after each window; scripts/continuous makes it
#    one for the text (t47 checks that).
if ! plain_run_only "the stack-id maps bpftrace creates (no stackfold in it)"; then
	:
elif command -v strace >/dev/null 2>&1; then
	"$DEMO" 12 >/dev/null &	# user stacks to sample
	dpid=$!
	for bt in profile continuous; do
		BPFTRACE_NO_USER_SYMBOLS=1 timeout -s INT 7 strace -f -e trace=bpf -o "$T/$bt.strace" \
			bpftrace "$TOP/bt/$bt.bt" "$HZ" 0 10 >"$T/$bt-one-map.out" 2>&1
		n=$(grep -c 'BPF_MAP_CREATE.*BPF_MAP_TYPE_STACK_TRACE' "$T/$bt.strace")
		want=1
		[ "$bt" = continuous ] && want=2
		check_eq "bt/$bt.bt creates $want stack-id map(s): user and kernel share" "$want" "$n"
		check "bt/$bt.bt with one map: user frames print as raw addresses" \
			grep -qE '^	[0-9a-f]{6,16} 0x[0-9a-f]+ \(\[unknown\]\)$' "$T/$bt-one-map.out"
	done
	kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
elif [ "${CI:-}" = true ]; then
	fail "bt/*.bt create one stack-id map" "strace not installed"
else
	skip "bt/*.bt create one stack-id map" "strace not installed"
fi

# 10. scripts/profile gives glibc's huge-page malloc tunable to stackfold and
#     bpftrace, never to the profiled COMMAND (its malloc is what is measured).
# shellcheck disable=SC2016 # expanded by that sh
"$PROFILE" -d 2 -f folded -o "$T/envcmd" -- sh -c 'env >"$1"; exec "$2" 1' sh "$T/cmd.env" "$DEMO" \
	>/dev/null 2>"$T/envcmd.err"
check "profile -- COMMAND: the command ran" test -s "$T/cmd.env"
check "profile -- COMMAND: no GLIBC_TUNABLES given to it" \
	bash -c "! grep -q 'glibc.malloc.hugetlb' '$T/cmd.env'"
"$PROFILE" -d 3 -f folded -o "$T/envbt" -a >/dev/null 2>&1 &
ppid=$!
btenv=""
# the capture's bpftrace is a child of stackfold record, which scripts/profile
# runs and waits for; its own `bpftrace --version` exits at once
for _ in $(seq 50); do
	b=$(bpftrace_of "$ppid")
	if [ -n "$b" ] && btenv=$(tr '\0' '\n' 2>/dev/null <"/proc/$b/environ") &&
		[ -n "$btenv" ]; then
		break
	fi
	sleep 0.1
done
wait "$ppid"
case $btenv in
*glibc.malloc.hugetlb=1*) pass "profile -a: bpftrace runs with glibc.malloc.hugetlb=1" ;;
*) fail "profile -a: bpftrace runs with glibc.malloc.hugetlb=1" "environ: $(printf '%s' "$btenv" | grep GLIBC)" ;;
esac

# 11. -- COMMAND keeps the caller's stdin and default SIGINT (not a script
#     job's /dev/null and ignored SIGINT); SIGTERM to the script, or
#     timeout(1) (which signals the whole group), ends the capture with every
#     output written and nothing left running.
# shellcheck disable=SC2016 # expanded by that sh
seq 1 7 | "$PROFILE" -d 5 -f folded -o "$T/stdin" -- sh -c 'wc -l >"$1"; grep SigIgn /proc/self/status >>"$1"' sh "$T/stdin.out" \
	>/dev/null 2>&1
check_eq "profile -- COMMAND: the command reads the caller's stdin" 7 "$(head -n 1 "$T/stdin.out")"
ign=$(awk '/SigIgn/ { print $2 }' "$T/stdin.out")
check "profile -- COMMAND: SIGINT and SIGQUIT not ignored by the command (SigIgn $ign)" \
	test $(( 0x${ign:-6} & 6 )) = 0
# The stops below are the script's and record's signal handling, the same
# code as at -d: under the sanitizers they would cost CI some 90 s more.
if plain_run_only "signals to scripts/profile -- COMMAND, make flame"; then
"$PROFILE" -d 30 -f folded -o "$T/term" -- "$DEMO" 40 >/dev/null 2>"$T/term.err" &
ppid=$!
sleep 4
kill -TERM "$ppid"
wait "$ppid"
check_eq "SIGTERM to profile -- COMMAND: exit 0" 0 $?
check "SIGTERM to profile -- COMMAND: outputs written" grep -q 'matrix_multiply' "$T/term.folded"
sleep 0.5
check_eq "SIGTERM to profile -- COMMAND: no capture or command left running" "" \
	"$(pgrep -f "stackfold[-a-z]* record.*$T/term|$DEMO 40" || true)"
# SIGHUP (the terminal closed) ends it as SIGTERM does: it must not kill
# the script at once and leave the capture running, orphaned.
"$PROFILE" -d 30 -f folded -o "$T/chup" -- "$DEMO" 40 >/dev/null 2>"$T/chup.err" &
ppid=$!
sleep 4
kill -HUP "$ppid"
wait "$ppid"
check_eq "SIGHUP to profile -- COMMAND: exit 0, outputs written" "0 yes" \
	"$? $(grep -q 'matrix_multiply' "$T/chup.folded" && echo yes)"
sleep 0.5
check_eq "SIGHUP to profile -- COMMAND: no capture or command left running" "" \
	"$(pgrep -f "stackfold[-a-z]* record.*$T/chup|$DEMO 40" || true)"
# A second SIGINT from another process aborts, as in the other modes
# (not turned into a SIGTERM for record, which never aborts).
# env --default-signal: SIGINT as at a terminal, not ignored as by a job
# of a script (or of a test run started in the background), where the
# script's trap cannot be set.  The first output is a FIFO nobody reads,
# so the second SIGINT surely comes while the outputs are written.
# Under the sanitizers this case failed in 2 of 2 local .ci/run runs (the
# abort never reached record: its outputs were written once the FIFO was
# read), while it passed alone and in a t10-t20 sanitized run; the cause
# is not found.  It runs in the plain suite; under SANITIZE=1 it is said
# skipped, not passed.
if [ "${SANITIZE:-}" = 1 ]; then
	skip "two SIGINTs from other processes to profile -- COMMAND" "flaky under the sanitizers, cause not found; run by the plain suite"
else
	mkdir -p "$T/cint"
	mkfifo "$T/cint/p.folded"
	echo old >"$T/cint/p.svg"
	env --default-signal=INT "$PROFILE" -d 30 -f folded,svg -o "$T/cint/p" -- "$DEMO" 40 \
		>/dev/null 2>"$T/cint.err" &
	ppid=$!
	record_attached "$T/cint/p"
	cbt=$(bpftrace_of "$ppid")
	env kill -INT "$ppid"
	# the second once the capture is over (bpftrace gone: the outputs are
	# being written), and well past the script's 0.5 s in which two SIGINTs
	# are one request: under load a kill(1) can take that long to start, and
	# a fixed 1 s between the two was once read as one request
	for ((i = 0; i < 150; i++)); do kill -0 "$cbt" 2>/dev/null || break; sleep 0.1; done
	sleep 1
	env kill -INT "$ppid"
	reap "$ppid" >"$T/cint.rc"
	# (a hang ends here: the FIFO read, the capture's end written)
	[ -p "$T/cint/p.folded" ] && timeout 2 cat "$T/cint/p.folded" >/dev/null 2>&1
	check_eq "two SIGINTs from other processes to profile -- COMMAND: aborted (130), nothing written, the previous run's file kept as .old" \
		"130 old no" "$(cat "$T/cint.rc") $(cat "$T/cint/p.svg.old") $(test -e "$T/cint/p.svg" && echo yes || echo no)"
	grep -q . "$T/cint.rc" && [ "$(cat "$T/cint.rc")" != 130 ] && sed 's/^/    cint.err: /' "$T/cint.err"
	sleep 0.5
	check_eq "two SIGINTs to profile -- COMMAND: no capture or command left running" "" \
		"$(pgrep -f "stackfold[-a-z]* record.*$T/cint|$DEMO 40" || true)"
fi
timeout 12 "$PROFILE" -d 30 -f folded -o "$T/tmo" -- "$DEMO" 40 >/dev/null 2>"$T/tmo.err"
check_eq "timeout 12 profile: ends (124), not aborted by the group's second SIGTERM" 124 $?
check "timeout 12 profile: outputs written" grep -q 'matrix_multiply' "$T/tmo.folded"
# timeout -s INT (the bpftrace idiom): SIGINT to the script, then to its
# process group; one stop, outputs written (the two are not Ctrl-C twice,
# which would abort the capture)
timeout -s INT 12 "$PROFILE" -d 30 -f folded -o "$T/tmoi" -- "$DEMO" 40 >/dev/null 2>"$T/tmoi.err"
check_eq "timeout -s INT 12 profile -- COMMAND: ends (124), outputs written" "124 yes" \
	"$? $(grep -q 'matrix_multiply' "$T/tmoi.folded" 2>/dev/null && echo yes)"
check "timeout -s INT 12 profile -- COMMAND: not aborted" bash -c "! grep -q aborted '$T/tmoi.err'"
# ... the same, deterministic: two SIGINTs 50 ms apart, as timeout sends
# them (to the script, then its group) when the script sees both
env --default-signal=INT "$PROFILE" -d 30 -f folded -o "$T/int2" -- "$DEMO" 40 >/dev/null 2>"$T/int2.err" &
ppid=$!
record_attached "$T/int2"
kill -INT "$ppid"
sleep 0.05
kill -INT "$ppid"
reap "$ppid" >"$T/int2.rc"
check_eq "two SIGINTs 50 ms apart to profile -- COMMAND: one stop (exit 0), outputs written" "0 yes" \
	"$(cat "$T/int2.rc") $(grep -q 'matrix_multiply' "$T/int2.folded" 2>/dev/null && echo yes)"
sleep 0.5
check_eq "timeout 12 profile: nothing left running" "" "$(pgrep -f "stackfold[-a-z]* record.*$T/tmo|$DEMO 40" || true)"
# SIGHUP (the terminal closed) stops as SIGTERM does: the outputs are
# written (it killed stackfold with none, and left --save-raw's temporary)
"$DEMO" 30 >/dev/null &
dpid=$!
stopped_by HUP 1.5 hup "$PROFILE" -p "$dpid" -d 30 -f folded -o "$T/hup"
# ... but not under nohup (SIGHUP ignored when it starts): it goes on
(trap '' HUP; exec "$PROFILE" -p "$dpid" -d 6 -f folded -o "$T/nohup" >/dev/null 2>&1) &
ppid=$!
attached "$ppid"
kill -HUP "$ppid"
sleep 1
check "SIGHUP ignored at start (nohup): the capture goes on" kill -0 "$ppid"
wait "$ppid"
check_eq "SIGHUP ignored at start (nohup): exit 0 at -d" 0 $?
kill "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
# -d ends a command that ignores SIGTERM too: SIGKILL 5 s on (profile
# waited for it as long as it ran)
start=$(date +%s)
# shellcheck disable=SC2016 # expanded by that sh
"$PROFILE" -d 2 -f folded -o "$T/ign" -- sh -c 'trap "" TERM; exec "$0" 60' "$DEMO" >/dev/null 2>"$T/ign.err"
took=$(( $(date +%s) - start ))
check "-d with a command that ignores SIGTERM: ends (took $took s)" test "$took" -lt 25
check "-d with a command that ignores SIGTERM: outputs written" grep -q 'matrix_multiply' "$T/ign.folded"
check_eq "-d with a command that ignores SIGTERM: not left running" "" "$(pgrep -f "$DEMO 60" || true)"

# The README's first command: make flame (the bundled demo), its stdout the
# top table alone (no make "Nothing to be done" line before it).
make -C "$TOP" --no-print-directory flame SECONDS=2 OUT="$T/mf" >"$T/mf.out" 2>"$T/mf.err"
check_eq "make flame: exit 0, stdout opens with the sample count" "0 yes" \
	"$? $(head -n 1 "$T/mf.out" | grep -Eqx '[0-9]+ samples' && echo yes)"
check "make flame: folded, SVG and pprof written, with the demo's names" \
	bash -c "grep -q 'main;run;matrix_multiply' '$T/mf.folded' && test -s '$T/mf.svg' -a -s '$T/mf.pb.gz'"
fi

# 12. Bad arguments are found before the capture: exit 251 (usage) or 254
#     (outputs cannot be written), one line, in well under a capture's time.
# -- a shell builtin: exec cannot run it, so it is refused before the
# capture (`command -v` finds it; it would fail after bpftrace's start-up,
# exit 2)
"$PROFILE" -o "$T/builtin" -- cd /tmp >/dev/null 2>"$T/builtin.err"
check_eq "-- BUILTIN: exit 253, one line, before the capture" \
	"253|profile: command 'cd' not found or not executable" "$?|$(cat "$T/builtin.err")"
# -p given twice: the lists add up (the last one does not win)
"$PROFILE" -p 999999999 -p $$ -o "$T/twop" >/dev/null 2>"$T/twop.err"
check_eq "-p twice: both lists (the missing pid found)" "253|profile: pid 999999999 not found" \
	"$?|$(cat "$T/twop.err")"
args_case() {	# WANT_RC NAME ARGS...
	local want=$1 name=$2 t0
	shift 2
	t0=$(date +%s)
	"$PROFILE" "$@" >/dev/null 2>"$T/args.err"
	check_eq "profile $name: exit $want at once, one line" "$want 1 0" \
		"$? $(wc -l <"$T/args.err") $(( $(date +%s) - t0 > 2 ))"
}
args_case 251 "-f ''" -a -d 3 -f ''
args_case 251 "-f ,"  -a -d 3 -f ,
args_case 251 "-U -K" -a -d 3 -U -K
args_case 251 "-d ''" -a -d ''
args_case 251 "-o DIR/" -a -d 3 -o "$T/"
args_case 251 "-o - with several outputs" -a -d 3 -o -
args_case 254 "-o in a missing directory" -a -d 3 -o "$T/no/such/dir/x"
"$PROFILE" -F 099 -d 2 -f folded -o "$T/f099" -- "$DEMO" 3 >/dev/null 2>"$T/f099.err"
check_eq "-F 099 is 99 Hz (not octal): exit 0" 0 $?
check "-F 099: no shell error" bash -c "! grep -q 'base\|unbound' '$T/f099.err'"

# 13. -- COMMAND at 999 Hz: the first samples land while ld.so is still
#     mapping libc (and in sh and env before the command's exec), so the
#     maps saved then lack libc; the command has exited by the time the
#     samples are read.  The exec is seen (#pid again) and a snapshot that
#     lacks the libraries is taken again 20 ms later: libc's frames are
#     named or module+offset, [unknown] stays under 5% of the samples.
for i in 1 2 3; do
	"$PROFILE" -F 999 -d 5 -f folded -o "$T/f999-$i" -- "$DEMO" 2 >/dev/null 2>&1
	read -r unk all < <(awk '{ n += $NF } /^demo;\[unknown\]/ { u += $NF } END { print u + 0, n + 0 }' "$T/f999-$i.folded")
	check "-F 999 -- COMMAND, run $i: the command's root frames named ($unk of $all [unknown])" \
		test "$all" -gt 400 -a $(( unk * 20 )) -lt "$all"
done

# 14. -- COMMAND follows the command's children (as perf record does): a
#     shell that runs two busy demos and waits gets their samples: up to
#     HZ x 3 s x 2 CPUs (the shell itself sleeps).  On a loaded machine the
#     demos get less CPU in their 3 s, so the floor is a second of CPU, which
#     only children's samples can make.
# shellcheck disable=SC2016 # expanded by that sh
"$PROFILE" -d 5 -f folded -o "$T/kids" -- sh -c '"$1" 3 & "$1" 3; wait' sh "$DEMO" >/dev/null 2>"$T/kids.err"
kids=$(awk '/^demo;/ { n += $NF } END { print n + 0 }' "$T/kids.folded")
check "-- COMMAND: its children's samples are in ($kids in demo, want > $HZ)" \
	test "$kids" -gt "$HZ"

# 15. An exec during the capture: samples taken before it are read after it
#     (one flush at the end), when the process maps the second program.  Two
#     non-PIE programs with the same code at the same addresses, different
#     names: each image's samples must carry its own names (the key's pid
#     field carries the image, and each image's map is saved).  Replaying the
#     raw capture gives the same.
for w in alpha beta; do
	cc -O1 -g -fno-omit-frame-pointer -fno-pie -no-pie -DWORK=${w}_work \
		-o "$T/exec_$w" "$TOP/tests/fixtures/live/execimg.c"
done
check "execimg: both programs have their work function at one address" \
	test "$(nm "$T/exec_alpha" | awk '/ alpha_work$/ { print $1 }')" = \
	"$(nm "$T/exec_beta" | awk '/ beta_work$/ { print $1 }')"
# shellcheck disable=SC2016 # expanded by that sh
sh -c 'kill -STOP $$; exec "$@"' sh "$T/exec_alpha" 1 "$T/exec_beta" &
ipid=$!
"$STACKFOLD" record -D 6 --start-pid "$ipid" --watch-pid "$ipid" -f folded -o "$T/img" \
	--save-raw "$T/img.raw" -- env BPFTRACE_NO_USER_SYMBOLS=1 \
	bpftrace "$TOP/bt/profile.bt" "$HZ" "$ipid" 10 2>"$T/img.err"
check_eq "exec: record exits 0" 0 $?
wait "$ipid"
check_eq "exec: the programs ran" 0 $?
"$STACKFOLD" -f folded -o "$T/img-replay.folded" "$T/img.raw" 2>/dev/null
# "A B WRONG": samples of exec_alpha in alpha_work, of exec_beta in
# beta_work, and of either in the other's function
img_counts() {
	awk '/^exec_alpha;.*;alpha_work( |;|$)/ { a += $NF }
	     /^exec_beta;.*;beta_work( |;|$)/ { b += $NF }
	     /^exec_alpha;.*beta_work|^exec_beta;.*alpha_work/ { w += $NF }
	     END { print a + 0, b + 0, w + 0 }' "$1"
}
for f in img img-replay; do
	read -r a b wrong < <(img_counts "$T/$f.folded")
	check "exec ($f): the first program's samples named from it ($a in exec_alpha;...;alpha_work)" test "$a" -gt $((HZ / 2))
	check "exec ($f): the second program's samples named from it ($b in exec_beta;...;beta_work)" test "$b" -gt $((HZ / 2))
	check_eq "exec ($f): no sample named from the other program" 0 "$wrong"
done

# 16. bt/profile.bt forgets which pids it has marked at every flush, so its
#     @stackfold_seen map never fills (past the key limit every sample of a
#     new pid would print "#pid", and stackfold record would snapshot it);
#     stackfold record snapshots a process and image once all the same.
"$DEMO" 30 &
dpid=$!
sleep 0.2
"$STACKFOLD" record -D 4 --flush 1 -f folded -o "$T/seen" --save-raw "$T/seen.raw" -- \
	env BPFTRACE_NO_USER_SYMBOLS=1 bpftrace "$TOP/bt/profile.bt" "$HZ" "$dpid" 1 2>"$T/seen.err"
check_eq "seen: record exits 0" 0 $?
kill "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
npid=$(grep -c '^#pid ' "$T/seen.raw")
check "seen: the process is marked again after each flush ($npid #pid lines in 4 flushes)" test "$npid" -ge 3
check_eq "seen: its map is saved once" 1 "$(grep -c '^#maps ' "$T/seen.raw")"
check "seen: still named" grep -q '^demo;.*main;run;matrix_multiply ' "$T/seen.folded"

# 17. -p stops once its target has exited (as perf record -p does), with
#     every output written and a one-line note; -d 30 would be 30 s.  The
#     process runs 5 s from its start, so it is sampled even when bpftrace
#     is slow to attach on a busy machine.
cc -O1 -g -fno-omit-frame-pointer -o "$T/ender" "$TOP/tests/fixtures/live/exiter.c"
"$T/ender" 5 >/dev/null &
epid=$!
t0=$(date +%s)
"$PROFILE" -p "$epid" -d 30 -f folded,svg,pprof -o "$T/ends" >/dev/null 2>"$T/ends.err"
rc=$? took=$(( $(date +%s) - t0 ))
wait "$epid" 2>/dev/null
check_eq "-p PID that exits: exit 0" 0 "$rc"
check "-p PID that exits: stops soon after it (${took} s of -d 30)" test "$took" -le 15
for s in folded svg pb.gz; do check "-p PID that exits: ends.$s written" test -s "$T/ends.$s"; done
check "-p PID that exits: its samples are in" grep -q '^ender;.*exiter_hot_loop ' "$T/ends.folded"
check "-p PID that exits: one line says why it stopped" \
	grep -qE '^stackfold: every target exited after [0-9.]+ s; stopping$' "$T/ends.err"

# 18. -p A,B: A exits early, the capture goes on until B is gone too.  The
#     watch's /proc polling fallback (kernels without pidfd) is used here
#     (STACKFOLD_WATCH_POLL); the pidfd path ran in 15.
"$T/ender" 6 >/dev/null &
apid=$!
"$DEMO" 60 >/dev/null &
bpid=$!
STACKFOLD_WATCH_POLL=1 "$PROFILE" -p "$apid,$bpid" -d 40 -f folded -o "$T/two" >/dev/null 2>"$T/two.err" &
ppid=$!
wait "$apid" 2>/dev/null
sleep 2
if kill -0 "$ppid" 2>/dev/null; then pass "-p A,B: goes on after A exits"
else fail "-p A,B: goes on after A exits" "$(cat "$T/two.err")"; fi
kill "$bpid" 2>/dev/null
t0=$(date +%s)
for _ in $(seq 150); do kill -0 "$ppid" 2>/dev/null || break; sleep 0.1; done
took=$(( $(date +%s) - t0 ))
wait "$ppid"
check_eq "-p A,B: exit 0" 0 $?
check "-p A,B: stops soon after B is gone too (${took} s)" test "$took" -le 10
check "-p A,B: A's samples are in" grep -q '^ender;.*exiter_hot_loop ' "$T/two.folded"
check "-p A,B: B's samples are in" grep -q '^demo;.*matrix_multiply ' "$T/two.folded"
wait "$bpid" 2>/dev/null

# 19. -p TID, a thread that is not its process's main thread: bpftrace's
#     pid is the process's, so it is sampled by its tid, alone, with a
#     note; the capture ends when that thread exits (the process runs on).
#     The tids are read from the pprof output's tid labels.
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"
cc -O1 -g -fno-omit-frame-pointer -o "$T/tt" "$TOP/tests/fixtures/live/twothreads.c" -lpthread
"$T/tt" 30 6 >"$T/tt.tid" &
ttpid=$!
for _ in $(seq 50); do [ -s "$T/tt.tid" ] && break; sleep 0.1; done
tid=$(cat "$T/tt.tid")
# the thread with its process: the process's every thread, and the note
# says so (not "that thread only")
check_eq "-p PID,TID of PID: the note says every thread is sampled" \
	"profile: $tid is a thread of process $ttpid, which is given too: sampling all of $ttpid's threads" \
	"$(bash -c '. "$1/scripts/pids.sh"; pid_filter "$2,$3" profile; printf %s "$PID_NOTES"' sh "$TOP" "$ttpid" "$tid")"
t0=$(date +%s)
"$PROFILE" -p "$tid" -d 30 -f folded,pprof -o "$T/thr" >/dev/null 2>"$T/thr.err"
rc=$? took=$(( $(date +%s) - t0 ))
check_eq "-p TID: exit 0" 0 "$rc"
check "-p TID: one line says only that thread is sampled" \
	grep -qx "profile: $tid is a thread of process $ttpid: sampling that thread only" "$T/thr.err"
check "-p TID: samples recorded" test "$(folded_total "$T/thr.folded")" -gt 0
check "-p TID: every sample is of that thread (comm tt-second)" \
	bash -c "test -s '$T/thr.folded' && ! grep -qv '^tt-second[; ]' '$T/thr.folded'"
check "-p TID: its function is in" grep -q 'second_thread_loop' "$T/thr.folded"
pb_decode "$T/thr.pb.gz" >"$T/thr.pb.txt" 2>"$T/thr.pb.err"
# tid labels: the string_table index of "tid" (first pass), then the num
# of every label with that key (second pass)
tids=$(awk 'NR == FNR { if ($1 == "string_table:") { if ($2 == "\"tid\"") k = n; n++ } next }
	/^ *key: / { key = $2 } /^ *num: / && key == k { print $2 }' "$T/thr.pb.txt" "$T/thr.pb.txt" | sort -u)
check_eq "-p TID: every pprof sample's tid label is $tid" "$tid" "$tids"
check "-p TID: ends when that thread exits, the process running on (${took} s)" \
	test "$took" -le 15 -a -d "/proc/$ttpid"
kill "$ttpid" 2>/dev/null
wait "$ttpid" 2>/dev/null

# 20. -p checks every id before anything starts: one missing, exit 253.
"$PROFILE" -p "$$,999999999" -o "$T/nope2" 2>"$T/err-nope2"
check_eq "-p PID,MISSING exits 253, one line" "253 profile: pid 999999999 not found" "$? $(cat "$T/err-nope2")"

# 21. A one-liner's return address that bpftrace named "SYM+0": the call
# was the last instruction of the function before SYM (a noreturn call),
# and bpftrace does not look up address - 1, so SYM is the wrong name.
# stackfold looks the address up itself when it can: in the process's map
# (user) or kallsyms (kernel), and does not print SYM.
cat >"$T/nr.c" <<'CEOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline, noreturn)) void spin_forever(int s)
{ time_t e = time(0) + s; for (;;) { for (int i = 0; i < 1000000; i++) sink += i; if (time(0) >= e) exit(0); } }
__attribute__((noinline)) void caller_fn(int s) { spin_forever(s); }
__attribute__((noinline)) void next_fn(void) { sink++; }
int main(int c, char **v) { if (c > 5) next_fn(); caller_fn(atoi(v[1])); }
CEOF
cc -O1 -g -fno-omit-frame-pointer -falign-functions=1 -o "$T/nr" "$T/nr.c"
# (the call ends caller_fn and next_fn starts right after it)
"$T/nr" 12 &
nrpid=$!
timeout -k 5 40 bpftrace -e "profile:hz:$HZ /pid == $nrpid/ { @[pid, ustack(perf)] = count(); } interval:s:2 { exit(); }" \
	>"$T/nr.txt" 2>/dev/null
check "SYM+0: bpftrace named the return address next_fn+0" grep -q ' next_fn+0 (' "$T/nr.txt"
"$STACKFOLD" -q "$T/nr.txt" >"$T/nr.folded" 2>/dev/null
kill "$nrpid" 2>/dev/null
wait "$nrpid" 2>/dev/null
check "SYM+0: named caller_fn from the process's map" grep -q ';main;caller_fn;spin_forever [0-9]' "$T/nr.folded"
check_eq "SYM+0: next_fn never named" "" "$(grep next_fn "$T/nr.folded" | head -n 2)"
# kernel: a symbol of kallsyms and the one before it, by hand
read -r ka kn pn < <(sort /proc/kallsyms | grep -v '\[' |
	awk 'NR > 1000 && $2 ~ /^[tT]$/ && pt ~ /^[tT]$/ && $1 != pa && $1 !~ /^0+$/ && pn !~ /^__pfx_/ && $3 !~ /^__pfx_/ { print $1, $3, pn; exit }
	     { pt = $2; pa = $1; pn = $3 }')
printf '@[\n\tffffffffa0000000 leaf_fn+5\n\t%s %s+0\n]: 3\n' "$ka" "$kn" >"$T/knr.txt"
"$STACKFOLD" -q "$T/knr.txt" >"$T/knr.folded" 2>/dev/null
check_eq "SYM+0, kernel: named from kallsyms at address - 1 ($kn -> $pn)" "${pn}_[k];leaf_fn_[k] 3" "$(cat "$T/knr.folded")"

# 22. Two processes, one pid (a pid_max wrap; here clone3's set_tid), both
#     having run one exec since their fork: the two programs of section 15,
#     same addresses, other names.  Each must be named from its own map (the
#     image carries the process's start time: with the exec count alone
#     the second would take the first's names).
#     (clone3's set_tid needs Linux 5.5 and CAP_SYS_ADMIN: where it fails,
#     the section says so and is skipped.)
if ! cc -O1 -o "$T/reusepid" "$TOP/tests/fixtures/live/reusepid.c" 2>"$T/reusepid.cc"; then
	fail "pid reused: build reusepid.c" "$(tail -3 "$T/reusepid.cc")"
else
	"$PROFILE" -d 10 -f folded -o "$T/reuse" -- "$T/reusepid" "$T/exec_alpha" 1 "$T/exec_beta" 1 \
		>/dev/null 2>"$T/reuse.err"
	rc=$?
fi
if [ ! -x "$T/reusepid" ]; then
	:	# failed above
elif grep -q '^reusepid: clone3' "$T/reuse.err"; then
	skip "pid reused" "$(grep '^reusepid: clone3' "$T/reuse.err")"
else
	check_eq "pid reused: the capture exits 0" 0 "$rc"
	read -r _ rp1 rp2 < <(grep '^reusepid: ' "$T/reuse.err")
	check "pid reused: the second process had the first one's pid (${rp1:-?} ${rp2:-?})" \
		test -n "${rp1:-}" -a "${rp1:-}" = "${rp2:-x}"
	read -r a b wrong < <(img_counts "$T/reuse.folded")
	check "pid reused: the first process named from its program ($a in exec_alpha;...;alpha_work)" test "$a" -gt $((HZ / 2))
	check "pid reused: the second process named from its program ($b in exec_beta;...;beta_work)" test "$b" -gt $((HZ / 2))
	check_eq "pid reused: no sample named from the other program" 0 "$wrong"
fi

# 23. A library dlopen'd by a process older than 2 s (not watched while
#     loading) after its first snapshot: the live run names it through a
#     fresh snapshot, and that snapshot goes into the raw capture before
#     the records named from it, so a replay after the process has exited
#     names them too (unsaved, they would be [unknown]).  The
#     --start-pid process, resumed once bpftrace is attached, makes the GO
#     file; the program loads the library 1.5 s later.
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -DPLUG -o "$T/libplug.so" "$TOP/tests/fixtures/live/dlplug.c"
cc -O1 -g -fno-omit-frame-pointer -o "$T/dlplug" "$TOP/tests/fixtures/live/dlplug.c" -ldl
rm -f "$T/plug.go"
"$T/dlplug" "$T/libplug.so" "$T/plug.go" 30 &
ppid=$!
sleep 2.5
# shellcheck disable=SC2016 # expanded by that sh
sh -c 'kill -STOP $$; touch "$1"' sh "$T/plug.go" &
gopid=$!
"$STACKFOLD" record -D 8 --flush 2 --start-pid "$gopid" -f folded -o "$T/plug" \
	--save-raw "$T/plug.raw" -- env BPFTRACE_NO_USER_SYMBOLS=1 \
	bpftrace "$TOP/bt/profile.bt" "$HZ" "$ppid" 2 2>"$T/plug.err"
check_eq "dlopen late: record exits 0" 0 $?
# (the --start-pid process stays stopped if bpftrace never attached)
kill "$ppid" 2>/dev/null
kill -KILL "$gopid" 2>/dev/null
wait "$ppid" "$gopid" 2>/dev/null
live=$(awk '/;plug_inner( |;|$)/ { n += $NF } END { print n + 0 }' "$T/plug.folded")
check "dlopen late: the live run names the library's function ($live in plug_inner)" test "$live" -gt "$HZ"
"$STACKFOLD" -f folded -o "$T/plug-replay.folded" "$T/plug.raw" 2>/dev/null
replay=$(awk '/;plug_inner( |;|$)/ { n += $NF } END { print n + 0 }' "$T/plug-replay.folded")
check_eq "dlopen late: the replay, the process gone, names it as the live run did" "$live" "$replay"
check "dlopen late: the raw capture holds the library's map" grep -q 'libplug\.so' "$T/plug.raw"

# 24. Two programs mapped at one path and address, without a build-id: one
#     replaced while its old version still runs (a deploy; Go binaries are
#     static, non-PIE and have no GNU build-id by default).  Each process
#     is named from its own file: their mappings are not one in the
#     profile, and no process shows the other program's names.
for v in alpha beta; do
	printf 'static volatile unsigned long n;\n__attribute__((noinline)) void %s_spin(void) { for (;;) n++; }\nint main(void) { %s_spin(); return 0; }\n' "$v" "$v" >"$T/$v.c"
	cc -O1 -fno-omit-frame-pointer -no-pie -fno-pie -Wl,--build-id=none -o "$T/$v" "$T/$v.c"
done
mkdir -p "$T/same"
cp "$T/alpha" "$T/same/prog"
"$T/same/prog" &
pa=$!
cp "$T/beta" "$T/same/prog.new" && mv "$T/same/prog.new" "$T/same/prog"
"$T/same/prog" &
pb=$!
"$STACKFOLD" record -D 4 --show-pid -f folded -o "$T/sameout" -- env BPFTRACE_NO_USER_SYMBOLS=1 \
	bpftrace "$TOP/bt/profile.bt" "$HZ" 0 2 2>"$T/same.err"
check_eq "one path, two programs: record exits 0" 0 $?
kill "$pa" "$pb" 2>/dev/null
wait "$pa" "$pb" 2>/dev/null
same_n() { awk -v p="prog-$1;" -v f="$2" 'index($0, p) == 1 && index($0, f) { n += $NF } END { print n + 0 }' "$T/sameout.folded"; }
check "one path, two programs: the old one's samples name alpha_spin ($(same_n "$pa" alpha_spin))" \
	test "$(same_n "$pa" alpha_spin)" -gt "$HZ"
check "one path, two programs: the new one's name beta_spin ($(same_n "$pb" beta_spin))" \
	test "$(same_n "$pb" beta_spin)" -gt "$HZ"
check_eq "one path, two programs: neither shows the other's function" "0 0" \
	"$(same_n "$pa" beta_spin) $(same_n "$pb" alpha_spin)"
