#!/usr/bin/env bash
# t15-record-stop: the stop signals of `stackfold record` (collapse/
# stopsig.c), with a stand-in for bpftrace.  One stop request may come
# twice: `timeout -s INT` signals its command and then its process group.
# A SIGINT from the process that sent the one before is that same request
# (outputs written, exit 0); one from another sender, or Ctrl-C again,
# aborts (exit 130, nothing written).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }

# On SIGINT (record's stop) it prints one stack, slowly, as bpftrace
# prints its maps, and exits.
cat >"$T/fakebt" <<'SH'
#!/bin/sh
trap 'kill "$sleeper"; sleep 0.5; printf "@[\n\tleaf\n\troot\n]: 3\n"; exit 0' INT
echo "#attached"
sleep 60 &
sleeper=$!
wait
SH
chmod +x "$T/fakebt"

for how in TIMEOUT INTINT INT; do
	rm -f "$T/$how.folded"
	if [ "$how" = TIMEOUT ]; then
		timeout --preserve-status -s INT 1 "$STACKFOLD" record -f folded \
			-o "$T/$how" -- "$T/fakebt" >/dev/null 2>"$T/$how.err"
		echo "$?" >"$T/$how.rc"
		continue
	fi
	"$STACKFOLD" record -f folded -o "$T/$how" -- "$T/fakebt" >/dev/null 2>"$T/$how.err" &
	rpid=$!
	sleep 1
	stop_signals "$how" "$rpid"	# tests/lib.sh
	reap "$rpid" >"$T/$how.rc"
done
for how in TIMEOUT INTINT; do
	what="SIGINT twice from one sender"
	[ "$how" = TIMEOUT ] && what="timeout -s INT"
	check_eq "$what: one stop, exit 0" 0 "$(cat "$T/$how.rc")"
	check_eq "$what: outputs written" "root;leaf 3" "$(cat "$T/$how.folded" 2>&1)"
	check "$what: nothing aborted" bash -c "! grep -q aborted '$T/$how.err'"
done
check_eq "SIGINT from two senders: aborted, exit 130" 130 "$(cat "$T/INT.rc")"
check "SIGINT from two senders: nothing written" test ! -e "$T/INT.folded"
check "SIGINT from two senders: says so" grep -q 'aborted, no output written' "$T/INT.err"

# A second Ctrl-C once bpftrace has exited, while the outputs are written,
# aborts too: here the first output blocks for good (a FIFO nobody
# reads), the later ones stay as they were.  Until 2026-11-25 the signals
# were only counted there, and only SIGKILL ended it.
mkfifo "$T/late.folded"
echo old >"$T/late.pb.gz"
printf '@[\n\tleaf\n\troot\n]: 3\n' >"$T/late.txt"
"$STACKFOLD" record -f folded,pprof -o "$T/late" -- cat "$T/late.txt" \
	>/dev/null 2>"$T/late.err" &
rpid=$!
sleep 1
stop_signals INT "$rpid"	# tests/lib.sh
check_eq "second SIGINT while writing: aborted, exit 130" 130 "$(reap "$rpid")"
check_eq "second SIGINT while writing: a later output left as it was" old "$(cat "$T/late.pb.gz")"
check "second SIGINT while writing: says so" grep -q 'aborted; the outputs not yet written are left as they were' "$T/late.err"
