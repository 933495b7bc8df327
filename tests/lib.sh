# tests/lib.sh - sourced by every tests/t*.sh.
#
# Each check prints one line: "PASS: name", "FAIL: name" (plus details on
# the following lines, indented) or "SKIP: name (reason)".  tests/run counts
# them.  A live test that cannot run where it must (CI, root with bpftrace)
# FAILs; it never turns into a pass.
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TOP
STACKFOLD=${STACKFOLD:-$TOP/bin/stackfold}
export STACKFOLD
# libraries to link test programs against libstackfold.a (one list: the Makefile's)
SF_LDLIBS=$(make -s -C "$TOP" print-ldlibs 2>/dev/null)
export SF_LDLIBS
T=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-test.XXXXXX")
export T
trap 'rm -rf "$T"' EXIT

pass() { echo "PASS: $1"; }
fail() {
	echo "FAIL: $1"
	shift
	[ $# -gt 0 ] && printf '    %s\n' "$@"
	return 0
}
skip() { echo "SKIP: $1 ($2)"; }

# check NAME CMD...: PASS when CMD exits 0, else FAIL with its output.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "command: $*" "$(printf '%s\n' "$out" | tail -n 15)"
	fi
}

# check_eq NAME EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi
}

# check_diff NAME EXPECTED_FILE ACTUAL_FILE
check_diff() {
	local d
	if d=$(diff -u "$2" "$3" 2>&1); then pass "$1"; else fail "$1" "$(printf '%s\n' "$d" | head -n 30)"; fi
}

# Live tests need root and bpftrace.  Outside CI a missing prerequisite
# skips; in CI (CI=true) it fails, because CI must run them.
live_prereq() {
	local why=""
	[ "$(id -u)" = 0 ] || why="not root"
	command -v bpftrace >/dev/null 2>&1 || why="bpftrace not installed"
	if [ -n "$why" ]; then
		if [ "${CI:-}" = true ]; then fail "$1" "live test cannot run in CI: $why"; else skip "$1" "$why"; fi
		return 1
	fi
	return 0
}

# capture_head BIN PID COMM [PATH]: the start of a stackfold raw capture
# (stackfold record's format) of process PID, COMM, that ran BIN: its
# executable segment saved in the map at CAP_BASE (0x555555554000) plus its
# ELF address, as PATH (default BIN), up to the "#pid" line; stacks follow.
# Sets CAP_START, CAP_LIMIT and CAP_OFF (the mapping's range and file
# offset): call it outside a subshell.  1 when BIN has no executable LOAD.
capture_head() {
	local bin=$1 pid=$2 pg=4096 off vaddr memsz bid
	CAP_BASE=$((0x555555554000))
	read -r off vaddr memsz <<<"$(readelf -lW "$bin" | awk '$1 == "LOAD" && $(NF-1) ~ /E/ { print $2, $3, $6; exit }')"
	[ -n "$memsz" ] || return 1
	bid=$(readelf -n "$bin" | awk '/Build ID/ { print $3 }')
	CAP_START=$((CAP_BASE + (vaddr & ~(pg - 1))))
	CAP_LIMIT=$(((CAP_BASE + vaddr + memsz + pg - 1) & ~(pg - 1)))
	CAP_OFF=$((off & ~(pg - 1)))
	printf '# stackfold-capture 1\n#meta hz 99\n#meta start_ns 1700000000000000000\n#maps %d\n' "$pid"
	printf '%x-%x r-xp %08x 00:00 0 %s\n' "$CAP_START" "$CAP_LIMIT" "$CAP_OFF" "${4:-$bin}"
	[ -z "$bid" ] || printf '#bid %x %s\n' "$CAP_START" "$bid"
	printf '#main %x\n#endmaps\n#pid %d %s\n' "$CAP_START" "$pid" "$3"
}

# sum of the counts of a folded file
folded_total() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

# hang_server FILE: in the background (its pid in $!), a TCP server on
# 127.0.0.1 that accepts connections and never answers (a debuginfod
# that hangs); its port is written to FILE once it listens.
hang_server() {
	python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)' >"$1" &
}

# stop_signals HOW PID: send PID (stackfold record or continuous) a stop:
#   TERM2    SIGTERM twice, 0.2 s apart      TERM     SIGTERM twice at once
#   TERMINT  SIGTERM then SIGINT at once     INTINT   SIGINT twice from this
#   shell, 0.3 s apart (one sender: one request)
#   INT      SIGINT from two kill(1) processes, 0.2 s apart (Ctrl-C twice)
stop_signals() {
	case $1 in
	TERM2) kill -TERM "$2"; sleep 0.2; kill -TERM "$2" ;;
	TERM) kill -TERM "$2"; kill -TERM "$2" ;;
	TERMINT) kill -TERM "$2"; kill -INT "$2" ;;
	INTINT) kill -INT "$2"; sleep 0.3; kill -INT "$2" ;;
	INT) env kill -INT "$2"; sleep 0.2; env kill -INT "$2" ;;
	esac
}

# reap PID: wait for the background job PID and print its exit status;
# one still running after 20 s (a hang) is killed first.
reap() {
	local i
	for ((i = 0; i < 200; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1"
	echo "$?"
}

# unit_test NAME SRC [CC-FLAGS...]: build tests/unit SRC against the library
# (.output-san under SANITIZE=1) as $T/NAME, run it, and turn its lines
# "ok NAME", "skip NAME: WHY", "FAIL NAME: WHY" into checks.  1 when the
# build failed (reported).
unit_test() {
	local name=$1 src=$2 out=.output rc st line
	local -a flags=()
	shift 2
	if [ "${SANITIZE:-}" = 1 ]; then
		out=.output-san
		# shellcheck disable=SC2054 # the comma is -fsanitize's list
		flags=(-fsanitize=address,undefined -fno-sanitize-recover=all)
	fi
	# shellcheck disable=SC2086 # SF_LDLIBS is a list of -l flags
	if ! cc -std=gnu11 -O1 -g -D_GNU_SOURCE "$@" "${flags[@]}" -I"$TOP" -I"$TOP/collapse" \
		-I"$TOP/symbolizer" -o "$T/$name" "$TOP/tests/unit/$src" "$TOP/$out/libstackfold.a" \
		$SF_LDLIBS 2>"$T/build.err"; then
		fail "build tests/unit/$src" "$(tail -5 "$T/build.err")"
		return 1
	fi
	"$T/$name" >"$T/$name.out" 2>&1
	rc=$?
	while read -r st line; do
		case $st in
		ok) pass "$line" ;;
		skip) skip "${line%%:*}" "${line#*: }" ;;
		FAIL) fail "${line%%:*}" "${line#*: }" ;;
		*) fail "$name output" "$st $line" ;;
		esac
	done <"$T/$name.out"
	[ "$rc" = 0 ] || grep -q FAIL "$T/$name.out" || fail "$name exit status" "rc=$rc"
	[ -s "$T/$name.out" ] || fail "$name printed nothing" "rc=$rc"
	return 0
}

# plain_run_only NAME: 1 (said as a skip) under SANITIZE=1.  For the
# labs' live tests (their graders are shell scripts and bpftrace programs)
# and the browser test (the SVG's script, run by Chromium): the plain run
# checks them; the binary they call is run under the sanitizers by
# t10-t75 on the same kinds of input (t60 draws every SVG way), and a
# second pass would cost CI some 10 minutes.
plain_run_only() {
	[ "${SANITIZE:-}" = 1 ] || return 0
	skip "$1 under SANITIZE=1" "the plain run checks them; no C code of their own"
	return 1
}

# fake_bpftrace FILE ON_INT [BODY]: a stand-in for bpftrace written to
# FILE (bash, made executable): it runs BODY (default: echo "#attached"),
# then waits for SIGINT as bpftrace does; on SIGINT it runs ON_INT (what
# bpftrace prints as it exits: its maps) and exits 0.  BODY and ON_INT are
# shell text, any quotes; "$@" in them is the stand-in's arguments.
fake_bpftrace() {
	{
		printf '#!/usr/bin/env bash\n'
		printf 'on_int() {\n%s\nexit 0\n}\n' "${2:-:}"
		printf 'trap '"'"'kill "$sleeper" 2>/dev/null; on_int "$@"'"'"' INT\n'
		printf '%s\n' "${3-echo \"#attached\"}"
		printf 'sleep 600 &\nsleeper=$!\nwait\n'
	} >"$1"
	chmod +x "$1"
}
