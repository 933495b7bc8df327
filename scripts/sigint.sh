# shellcheck shell=bash
# sigint.sh - sourced by labs/lib.sh and tests/tools/bt_timeout: stop a
# bpftrace as Ctrl-C does (it prints its maps, then exits), without the
# races of a plain `kill -INT`.
#
# bpftrace 0.17 installs its SIGINT handler at the end of its start-up,
# which takes seconds on a busy machine.  A SIGINT that comes earlier
# kills it before it prints (SIGINT at its default) or is lost (ignored,
# as in a background job), and bpftrace then runs on; on a loaded machine
# one sent later can be missed too.  Once bpftrace has taken one it no
# longer catches the signal, and a second would kill it before it prints:
# so a SIGINT is sent again only while bpftrace still catches it.

# sigint_ready PID: PID catches SIGINT (bit 2 of SigCgt).
sigint_ready() {
	local cgt
	cgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$cgt" ] && (( 0x$cgt & 2 ))
}

# sigint_wait_ready PID: wait (at most 60 s) until PID catches SIGINT.
# Returns 0 when it does, 1 when PID exited first, 2 after 60 s.
sigint_wait_ready() {
	local i
	for ((i = 0; i < 600; i++)); do
		sigint_ready "$1" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	sigint_ready "$1" && return 0
	return 2
}

# (Every step may fail as PID exits: the callers run under set -e.)
#
# sigint_send PID WHO: SIGINT to PID now, and again every 2 s while PID
# still catches it (a lost one: said on stderr, WHO first); SIGTERM 60 s
# on, SIGKILL 10 s after that.  Returns once PID is gone; run it in the
# background and `wait PID` for PID's status (short sleeps: no long-lived
# child keeps the caller's pipes open after PID is gone).
sigint_send() {
	local pid=$1 who=$2 i
	kill -INT "$pid" 2>/dev/null || true
	for ((i = 1; i <= 700; i++)); do
		sleep 0.1
		kill -0 "$pid" 2>/dev/null || return 0
		if ((i % 20 == 0 && i < 600)) && sigint_ready "$pid"; then
			echo "$who: SIGINT to bpftrace $pid was lost; sent again" >&2
			kill -INT "$pid" 2>/dev/null || true
		elif ((i == 600)); then
			echo "$who: bpftrace $pid still running 60 s after SIGINT; sending SIGTERM" >&2
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	kill -KILL "$pid" 2>/dev/null || true
}
