#!/usr/bin/env bash
# t13-watch: collapse/capture/watch.c, what `stackfold record --watch-pid` stops on
# (tests/unit/watch_test.c): processes and threads that exit, seen through
# pidfds and through the /proc polling fallback.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

unit_test watch_test watch_test.c -Wall -Wextra -Werror || exit 0

# stackfold record --watch-pid, without bpftrace: a stand-in prints
# "#attached", then on SIGINT (record's stop) one stack, as bpftrace prints
# its map, and exits.  record must stop only once every watched pid has
# exited, write its outputs, and say why in one line (not with -q, nor
# for a command started to run until it exits, --start-pid without -D:
# then its exit is the expected end).
fake_bpftrace "$T/fakebt" 'printf "@[\n\tleaf\n\troot\n]: 3\n"'
watch_case() {	# NAME POLL RECORD-ARGS...: the watched pids in $long $short
	local name=$1 poll=$2 rc t0 took
	shift 2
	t0=$(date +%s)
	STACKFOLD_WATCH_POLL=$poll "$STACKFOLD" record -f folded -o "$T/w" "$@" -- "$T/fakebt" \
		>/dev/null 2>"$T/w.err"
	rc=$? took=$(( $(date +%s) - t0 ))
	check_eq "$name: exit 0" 0 "$rc"
	if kill -0 "$long" 2>/dev/null; then fail "$name: stops only once every pid has exited" \
		"stopped after ${took} s, pid $long still runs" "$(cat "$T/w.err")"
	else pass "$name: stops only once every pid has exited"; fi
	check "$name: stops soon after the last (${took} s)" test "$took" -le 10
	check_eq "$name: outputs written" "root;leaf 3" "$(cat "$T/w.folded" 2>&1)"
}
for poll in 0 1; do
	how=pidfd
	[ "$poll" = 1 ] && how=polled
	sleep 3 & long=$!
	sleep 1 & short=$!
	watch_case "--watch-pid A --watch-pid B ($how)" "$poll" -D 30 --watch-pid "$long" --watch-pid "$short"
	check "--watch-pid A --watch-pid B ($how): one line says why" \
		grep -qE '^stackfold: every target exited after [0-9.]+ s; stopping$' "$T/w.err"
	sleep 3 & long=$!
	sleep 1 & short=$!
	watch_case "--watch-pid A,B -q ($how)" "$poll" -D 30 -q --watch-pid "$long,$short"
	check_eq "--watch-pid A,B -q ($how): nothing said" "" "$(cat "$T/w.err")"
done
sleep 2 & long=$!
watch_case "--watch-pid without -D" 0 --watch-pid "$long"
# (scripts/profile -p PID -d 0: the line promised for -p is said without
# -D too)
check "--watch-pid without -D: one line says why" grep -q 'every target exited after' "$T/w.err"
sleep 2 & long=$!
kill -STOP "$long"	# a command started stopped, as scripts/profile's
watch_case "--watch-pid --start-pid without -D" 0 --watch-pid "$long" --start-pid "$long"
check "--watch-pid --start-pid without -D: no note (the expected end)" bash -c "! grep -q 'every target' '$T/w.err'"
wait

# Bad lists are refused before anything starts (exit 1, one line).
for bad in "" 0 "1,,2" "1," ",1" "x" "1 2" -1 2147483648; do
	"$STACKFOLD" record --watch-pid "$bad" -- "$T/fakebt" >/dev/null 2>"$T/bad.err"
	check_eq "--watch-pid '$bad': usage error, one line" "1 1" "$? $(wc -l <"$T/bad.err")"
done
