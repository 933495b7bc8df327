#!/usr/bin/env bash
# t65-continuous-disk: a full disk under scripts/continuous.  Windows go to
# a small tmpfs; once it is filled, every window must cost exactly one
# clear error line (ENOSPC), leave no temporary file, and leave the older
# windows intact; when space returns, writing resumes by itself.  Then
# bpftrace is SIGKILLed: it is restarted and windows continue.  Needs
# root (mount) and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"

live_prereq "continuous disk full" || exit 0
pprof_tools_build || exit 0
[ -x "$TOP/bin/demo" ] || { fail "continuous disk: bin/demo is built (make demo)"; exit 0; }

D=$T/disk
W=$D/windows
mkdir -p "$D"
if ! mount -t tmpfs -o size=512k stackfold-t65 "$D"; then
	fail "continuous disk: mount a tmpfs"
	exit 0
fi
cpid=""
cleanup() {
	[ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null
	kill "$demo" 2>/dev/null
	wait 2>/dev/null
	umount "$D" 2>/dev/null || umount -l "$D"
	rm -rf "$T"
}
trap cleanup EXIT

"$TOP/bin/demo" 0 >/dev/null &
demo=$!
written() { grep -c ': [0-9]* samples, ' "$T/log"; }
failed() { grep -c ' not written: ' "$T/log"; }
# wait_until CMD N SECONDS: until $(CMD) >= N
wait_until() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$($1)" -ge "$2" ] && return 0
		kill -0 "$cpid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

: >"$T/log"
"$TOP/scripts/continuous" -p "$demo" --window 1 --folded -o "$W" 2>>"$T/log" &
cpid=$!
if wait_until written 2 30; then pass "disk: windows before the disk fills"; else
	fail "disk: windows before the disk fills" "$(tail -5 "$T/log")"; exit 0; fi

# --- full --------------------------------------------------------------------
dd if=/dev/zero of="$D/fill" bs=4k 2>/dev/null
(cd "$W" && sha1sum ./*Z.pb.gz ./*Z.folded) >"$T/sums.before"
f0=$(failed)
sleep 3.5
f1=$(failed)
nfail=$((f1 - f0))
if [ "$nfail" -ge 2 ] && [ "$nfail" -le 5 ]; then
	pass "disk full: one error line per window ($nfail in 3.5 s of 1 s windows)"
else
	fail "disk full: one error line per window" "$nfail lines in 3.5 s" "$(tail -5 "$T/log")"
fi
dup=$(grep -o 'window [^ ]* not written' "$T/log" | sort | uniq -d)
check_eq "disk full: no window logged twice" "" "$dup"
line=$(grep ' not written: ' "$T/log" | tail -n 1)
case $line in
*"No space left on device"*"lost so far)"*) pass "disk full: the line names the cause and counts losses" ;;
*) fail "disk full: the line names the cause and counts losses" "$line" ;;
esac
check_eq "disk full: no temporary file left" "" "$(find "$W" -name '*.tmp.*')"
check "disk full: older windows intact" sh -c "cd '$W' && sha1sum -c --quiet '$T/sums.before'"
check "disk full: still running" kill -0 "$cpid"

# --- space returns -------------------------------------------------------------
rm -f "$D/fill"
w0=$(written)
if wait_until written $((w0 + 2)) 10; then pass "disk back: writing resumes"; else
	fail "disk back: writing resumes" "$(tail -5 "$T/log")"; fi
newest=$(find "$W" -name '*Z.pb.gz' -o -name '*Z_*.pb.gz' | sort | tail -n 1)
res=$("$PPROF_CHECK" "$newest" 2>&1)
case $res in
"ok samples="*" total=$(folded_total "${newest%.pb.gz}.folded")") pass "disk back: new window valid, total == .folded" ;;
*) fail "disk back: new window valid, total == .folded" "$res" ;;
esac

# --- bpftrace dies under it ----------------------------------------------------
bt=$(pgrep -P "$cpid" bpftrace)
kill -KILL "$bt"
w0=$(written)
if wait_until written $((w0 + 2)) 30; then pass "bpftrace killed: restarted, windows continue"; else
	fail "bpftrace killed: restarted, windows continue" "$(tail -5 "$T/log")"; fi
check "bpftrace killed: one line says so, and that the window in progress is lost" \
	grep -q 'bpftrace exited (signal 9): the samples of the window in progress are lost; restarting in 1 s' "$T/log"

kill -TERM "$cpid"
wait "$cpid"
check_eq "disk: SIGTERM exits 0 after the faults" 0 "$?"
cpid=""
# (as many as said lost: one more can fail after f1 was read, while the
# disk is freed)
check "disk: the closing line counts the lost windows" grep -q "stopped: .* written, $(failed) lost" "$T/log"

# --- the limits apply from the start, also to the only window ------------------
# A full disk holding one window past --max-age: it is removed at start
# (it stayed, as the newest window, and every window was lost).
# (the old window fills the disk but for the pages of the program)
rm -rf "$W" "$D/fill"
W2=$D/w2
mkdir -p "$W2"
avail=$(( $(stat -f -c '%a * %S' "$D") ))
room=$(( ($(wc -c <"$TOP/bt/continuous.bt") + 4095) / 4096 * 4096 ))
# (its program: one copy, written under a temporary name; twice that, for
# a margin)
room=$((room * 2))
head -c $((avail - room)) /dev/zero >"$W2/20200101T000000Z.pb.gz" 2>/dev/null
# start_until_window LOG ARGS...: scripts/continuous ARGS in the
# background (its pid in cpid, its log in LOG), until it logs a window
start_until_window() {
	local log=$1 i
	shift
	: >"$log"
	"$TOP/scripts/continuous" "$@" 2>>"$log" &
	cpid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q ': [0-9]* samples, ' "$log" && break
		sleep 0.1
	done
}
stop_continuous() { kill -TERM "$cpid"; wait "$cpid"; cpid=""; }
start_until_window "$T/log2" -p "$demo" --window 1 --max-age 1h -o "$W2"
stop_continuous
check "limits at start: the old window past --max-age is removed" test ! -e "$W2/20200101T000000Z.pb.gz"
check "limits at start: says so" grep -q 'removed 1 window past --max-age or --max-size' "$T/log2"
check "limits at start: windows are written" grep -q ': [0-9]* samples, ' "$T/log2"

# A restart (the service's Restart=) on a disk full again: its program is
# in place and unchanged, so it is not written again, and the limits at
# start make room (rewriting it first would fail with exit 4, again every
# 5 s for good).
avail=$(( $(stat -f -c '%a * %S' "$D") ))
head -c "$avail" /dev/zero >"$W2/20200101T000000Z.pb.gz" 2>/dev/null
start_until_window "$T/log2b" -p "$demo" --window 1 --max-age 1h -o "$W2"
# a second profiler on the same directory: refused, nothing touched
prog_id() { stat -c '%i %y' "$W2/.continuous.bt"; }
before=$(prog_id)
"$TOP/scripts/continuous" -p "$demo" --window 1 -o "$W2" >/dev/null 2>"$T/log2c"
check_eq "a second profiler on one directory: exit 4, one line" \
	"4|continuous: another profiler writes to '$W2' (its lock: $W2/.lock)" "$?|$(cat "$T/log2c")"
stop_continuous
check "restart on a full disk: the old window removed" test ! -e "$W2/20200101T000000Z.pb.gz"
check "restart on a full disk: windows are written" grep -q ': [0-9]* samples, ' "$T/log2b"
check_eq "a second profiler: the first's program not rewritten" "$before" "$(prog_id)"
# --max-age keeps a window dated in the future (the clock stepped back)
: >"$W2/20991231T000000Z.pb.gz"
start_until_window "$T/log2d" -p "$demo" --window 1 --max-age 1d -o "$W2"
stop_continuous
check "--max-age: a window dated in the future is kept" test -e "$W2/20991231T000000Z.pb.gz"
rm -f "$W2/20991231T000000Z.pb.gz"

# --- no room for its program: exit 4, nothing cut put in place ------------------
W3=$D/w3
mkdir -p "$W3"
avail=$(( $(stat -f -c '%a * %S' "$D") ))
head -c "$avail" /dev/zero >"$D/fill" 2>/dev/null
"$TOP/scripts/continuous" -p "$demo" --window 1 -o "$W3" >/dev/null 2>"$T/log3"
check_eq "no room for its program: exit 4" 4 $?
check "no room for its program: says so" grep -q "cannot write '.*' in '$W3'" "$T/log3"
check_eq "no room for its program: no program file left (its lock only)" ".lock" "$(ls -A "$W3")"
rm -f "$D/fill"
