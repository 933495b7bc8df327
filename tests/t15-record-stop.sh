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
fake_bpftrace "$T/fakebt" 'sleep 0.5; printf "@[\n\tleaf\n\troot\n]: 3\n"'

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
# reads), the later ones stay as they were.  Signals only counted there
# would leave SIGKILL as the one way to end it.
mkfifo "$T/late.folded"
echo old >"$T/late.pb.gz"
printf '@[\n\tleaf\n\troot\n]: 3\n' >"$T/late.txt"
"$STACKFOLD" record -f folded,pprof -o "$T/late" -- cat "$T/late.txt" \
	>/dev/null 2>"$T/late.err" &
rpid=$!
sleep 1
stop_signals INT "$rpid"	# tests/lib.sh
reap "$rpid" >"$T/late.rc"
check_eq "second SIGINT while writing: aborted, exit 130" 130 "$(cat "$T/late.rc")"
check_eq "second SIGINT while writing: a later output left as it was" old "$(cat "$T/late.pb.gz")"
check "second SIGINT while writing: says so" grep -q 'aborted; the outputs not yet written are left as they were' "$T/late.err"

# bpftrace killed mid-capture (OOM killer, kill -9): what it printed is
# written, and the loss is said, counted in every output, and in the exit
# status (3): the samples since its last flush died with it.  Not exit 0,
# and the pprof does not say map_dropped=0.
cat >"$T/diebt" <<'SH'
#!/bin/sh
echo "#attached"
echo "#pid 4242 fake"
printf '@stackfold_a[4242, 4242, fake, \n        work+12\n, ]: 5\n\n@stackfold_total_a: 5\n#flushed\n'
sleep 0.5
kill -KILL $$
SH
chmod +x "$T/diebt"
"$STACKFOLD" record -f folded,pprof,svg -o "$T/die" --save-raw "$T/die.raw" -- "$T/diebt" \
	>/dev/null 2>"$T/die.err"
check_eq "bpftrace killed: exit 3, what it printed written" "3 fake;work 5" "$? $(cat "$T/die.folded")"
check "bpftrace killed: one line says so" grep -q 'bpftrace ended early (signal 9) after .* s: the samples since its last flush are lost' "$T/die.err"
check "bpftrace killed: the summary counts it" grep -q '1 capture cut short' "$T/die.err"
check "bpftrace killed: in the pprof comment" grep -q 'captures_cut=1' <(gzip -dc "$T/die.pb.gz")
check "bpftrace killed: in the SVG subtitle" grep -q 'capture cut short' "$T/die.svg"
# read again: said with -v (it was said when recorded), and always in the
# outputs that carry losses
"$STACKFOLD" -v -f folded -o /dev/null "$T/die.raw" 2>"$T/die-replay.err"
check "bpftrace killed: the raw capture read again with -v says so too" grep -q '1 capture cut short' "$T/die-replay.err"
"$STACKFOLD" -f svg -o "$T/die-replay.svg" "$T/die.raw" 2>/dev/null
check "bpftrace killed: the raw capture read again, its SVG says so" grep -q 'capture cut short' "$T/die-replay.svg"

# A stop while a flush is printing waits for its clear, also when the print
# takes longer than two flush periods (a big map on a loaded machine):
# stopped between the print and the clear, bpftrace prints the same
# entries again at exit.  A wait given up after two periods and two
# seconds would count those samples twice.  The fake is free of races
# with the stop under load: its print begins at once (the stop comes at
# 3 s and must find it under way) and its "clear" (inflush=0) comes
# before "#flushed", as bt/profile.bt's clear() comes before its printf.
# The print ends past 3 s + two periods + 2 s (11 s).
cat >"$T/slowbt" <<'SH'
#!/bin/bash
entries() { for i in $(seq 1 "$1"); do printf '@stackfold_a[4242, 4242, fake, \n        f%d+1\n, ]: 1\n' "$i"; done; }
inflush=0
trap 'kill "$sl" 2>/dev/null; if [ "$inflush" = 1 ]; then entries 40; printf "@stackfold_total_a: 40\n"; else printf "@stackfold_total_b: 0\n"; fi; exit 0' INT
echo "#attached"
echo "#pid 4242 fake"
inflush=1
for i in $(seq 1 40); do
	printf '@stackfold_a[4242, 4242, fake, \n        f%d+1\n, ]: 1\n' "$i"
	sleep 0.3 & sl=$!; wait "$sl"
done
printf '@stackfold_total_a: 40\n'
inflush=0
printf '#flushed\n'
sleep 60 & sl=$!; wait "$sl"
SH
chmod +x "$T/slowbt"
"$STACKFOLD" record -F 99 --flush 3 -D 3 -f folded -o "$T/slow" -- "$T/slowbt" >/dev/null 2>"$T/slow.err"
check_eq "stop during a long flush print: exit 0, each sample once" "0 40" "$? $(folded_total "$T/slow.folded")"
check "stop during a long flush print: nothing past bpftrace's count" bash -c "! grep -q 'more than bpftrace counted' '$T/slow.err'"

# A --save-raw that cannot be written costs only itself, as any output:
# the others are written, not lost with it, exit 4.
"$STACKFOLD" record --save-raw /dev/full -f folded -o "$T/rawfull" -- cat "$T/late.txt" \
	>/dev/null 2>"$T/rawfull.err"
check_eq "--save-raw /dev/full: exit 4, the folded output written" "4 root;leaf 3" \
	"$? $(cat "$T/rawfull.folded" 2>&1)"
check "--save-raw /dev/full: one line names it" grep -q "write '/dev/full': No space left on device" "$T/rawfull.err"

# --watch-pid without -D: the targets' exit is said too (scripts/profile -p
# PID -d 0), but for a command started to run until it exits (--start-pid).
sleep 1 &
tpid=$!
"$STACKFOLD" record --watch-pid "$tpid" -f folded -o "$T/w0" -- "$T/fakebt" >/dev/null 2>"$T/w0.err"
check "--watch-pid, no -D: says every target exited" grep -q 'every target exited after' "$T/w0.err"
wait "$tpid"

# Faults in bpftrace's output.  A "Map full" warning on its stderr is a
# loss, counted as the filter counts it (by record and continuous too, not
# only shown).  A 100 MB line with no newline is not held: it is one
# unparsable line (in the raw capture too) and memory stays bounded.
cat >"$T/faultbt" <<'SH'
#!/bin/sh
echo "#attached"
printf '@[\n\tleaf\n\troot\n]: 3\n'
echo "WARNING: Map full; can't update element. Try increasing MAP_KEYS_MAX." >&2
head -c 100000000 /dev/zero | tr '\0' x
printf '\n@[\n\tleaf2\n\troot\n]: 2\n'
SH
chmod +x "$T/faultbt"
"$STACKFOLD" record -v -f folded,pprof -o "$T/fault" --save-raw "$T/fault.raw" -- "$T/faultbt" \
	>/dev/null 2>"$T/fault.err"
check_eq "bpftrace faults: exit 0, both records written" "0 5" "$? $(folded_total "$T/fault.folded")"
check "map full on bpftrace's stderr: counted in the summary" \
	grep -q 'warned 1 times that a map was full' "$T/fault.err"
check "map full: in the pprof comment" bash -c "gzip -dc '$T/fault.pb.gz' | grep -aq 'map_full_warnings=1'"
check "a 100 MB line: one unparsable line" grep -q '; 1 unparsable lines' "$T/fault.err"
rss=$(sed -n 's/.*stackfold max rss \([0-9]*\) KiB.*/\1/p' "$T/fault.err")
cap=$((60 * 1024)); [ "${SANITIZE:-}" = 1 ] && cap=$((90 * 1024))
check "a 100 MB line: not held (max rss ${rss:-?} KiB under $cap)" test "${rss:-999999}" -lt "$cap"
"$STACKFOLD" -f folded "$T/fault.raw" >"$T/fault2.folded" 2>"$T/fault2.err"
check "the raw capture read again: the same losses" bash -c \
	"grep -q 'warned 1 times that a map was full.*; 1 unparsable lines' '$T/fault2.err' && cmp -s '$T/fault.folded' '$T/fault2.folded'"

# Counts past 2^63 (corrupt output) end the capture at once, exit 2, with
# bpftrace stopped: not "out of memory", not deaf to SIGTERM and Ctrl-C
# until bpftrace ends by itself, not exit 0.
cat >"$T/hugebt" <<'SH'
#!/bin/sh
echo "#attached"
printf '@[\n\tleaf\n\troot\n]: 9223372036854775807\n@[\n\tleaf2\n\troot\n]: 9223372036854775807\n'
sleep 60 &
wait
SH
chmod +x "$T/hugebt"
start=$SECONDS
timeout -k 5 30 "$STACKFOLD" record -f folded -o "$T/huge" -- "$T/hugebt" >/dev/null 2>"$T/huge.err"
check_eq "counts past 2^63: exit 2 at once, nothing written" "2 fast no-file" \
	"$? $( [ $((SECONDS - start)) -lt 10 ] && echo fast || echo slow) $( [ -e "$T/huge.folded" ] && echo file || echo no-file)"
check "counts past 2^63: said" grep -q 'sample counts add up past 2^63' "$T/huge.err"
check "counts past 2^63: bpftrace stopped" bash -c "! pgrep -f '$T/[h]ugebt' >/dev/null"

# A missing output directory is found before bpftrace starts, not once the
# capture is over (a long capture would be lost so)
start=$SECONDS
"$STACKFOLD" record -f folded,svg -o "$T/nonexist/p" -- sleep 20 >/dev/null 2>"$T/nodir.err"
check_eq "record -o into a missing directory: exit 4 at once" "4 fast" \
	"$? $( [ $((SECONDS - start)) -lt 10 ] && echo fast || echo slow)"
check "record -o into a missing directory: says which output" grep -q "cannot write '$T/nonexist/p.folded'" "$T/nodir.err"

# A bpftrace that does not end: it ignores the stop (SIGINT), or closes
# its pipes and lives on.  record must not wait for it for good (a
# blocking waitpid after its pipes close would leave SIGKILL as the one
# way to end it).  One silent BT_STOP_GRACE_S (10 s) after its stop, or
# alive that long after its pipes closed, is killed, and what it
# printed is written with the loss said: exit 3, as for one killed -9.
# Both run at once (each takes the 10 s).
cat >"$T/deafbt" <<'SH'
#!/bin/sh
trap '' INT TERM
echo "#attached"
printf '@[\n\tleaf\n\troot\n]: 3\n'
sleep 60
SH
cat >"$T/closebt" <<'SH'
#!/bin/sh
echo "#attached"
printf '@[\n\tleaf\n\troot\n]: 3\n'
exec >/dev/null 2>&1
sleep 60
SH
chmod +x "$T/deafbt" "$T/closebt"
start=$SECONDS
for b in deaf close; do
	timeout -k 5 40 "$STACKFOLD" record -D 1 -f folded -o "$T/$b" -- "$T/${b}bt" \
		>/dev/null 2>"$T/$b.err" &
	eval "${b}_pid=\$!"
done
# shellcheck disable=SC2154 # deaf_pid, close_pid: set by the eval above
{ reap "$deaf_pid" >"$T/deaf.rc"; reap "$close_pid" >"$T/close.rc"; }
took=$((SECONDS - start))
for b in deaf close; do
	what="bpftrace deaf to the stop"
	[ $b = close ] && what="bpftrace alive with its pipes closed"
	check_eq "$what: killed, what it printed written, exit 3" "3 root;leaf 3" \
		"$(cat "$T/$b.rc") $(cat "$T/$b.folded" 2>&1)"
	check "$what: the loss said" grep -q 'bpftrace ended early (signal 9)' "$T/$b.err"
	check "$what: no stand-in left" bash -c "! pgrep -f '$T/[${b:0:1}]${b:1}bt' >/dev/null"
done
check "bpftrace deaf to the stop: the kill said" grep -q 'gave no output in 10 s after its stop: killed' "$T/deaf.err"
check "bpftrace deaf to the stop: where it waited said (the stand-in's shell: do_wait)" grep -q 'killed (it waited in: [a-z_ ]*do_wait' "$T/deaf.err"
check "both ended after the 10 s grace, not before it nor at the stand-ins' 60 s (${took} s)" \
	test "$took" -ge 10 -a "$took" -lt 30

# A SIGINT that bpftrace's event loop misses (it landed while bpftrace was
# busy printing: its flag is set, but it sleeps until its next event, the
# next flush, seconds away): SIGTERM a second later wakes it, and the
# capture ends whole, not killed 10 s on.  The stand-in takes no notice
# of SIGINT and prints its last map on SIGTERM.
cat >"$T/napbt" <<'SH'
#!/bin/bash
trap '' INT
trap 'kill "$sl" 2>/dev/null; printf "@[\n\tleaf\n\troot\n]: 3\n"; exit 0' TERM
echo "#attached"
sleep 60 &
sl=$!
wait "$sl"
SH
chmod +x "$T/napbt"
start=$SECONDS
timeout -k 5 40 "$STACKFOLD" record -D 1 -f folded -o "$T/nap" -- "$T/napbt" >/dev/null 2>"$T/nap.err"
check_eq "a missed SIGINT: woken by SIGTERM, the capture whole (exit 0)" "0 root;leaf 3" \
	"$? $(cat "$T/nap.folded" 2>&1)"
check "a missed SIGINT: ended within 5 s, not at the 10 s grace ($((SECONDS - start)) s)" \
	test "$((SECONDS - start))" -lt 5
check "a missed SIGINT: nothing said lost" bash -c '! grep -q "ended early\|killed" "$0"' "$T/nap.err"

# SIGCHLD inherited as ignored (perl's $SIG{CHLD} = 'IGNORE'): the kernel
# would reap bpftrace, waitpid fail, and one killed -9 read as exit 0, its
# loss unsaid.  main() resets SIGCHLD.
if command -v perl >/dev/null; then
	perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV or die' "$STACKFOLD" record -f folded \
		-o "$T/chld" -- "$T/diebt" >/dev/null 2>"$T/chld.err"
	check_eq "SIGCHLD ignored by the parent: bpftrace's kill -9 still seen (exit 3)" 3 "$?"
	check "SIGCHLD ignored by the parent: the loss said" grep -q 'ended early (signal 9)' "$T/chld.err"
else
	skip "SIGCHLD ignored by the parent" "no perl"
fi

# --watch-pid of a process that is not there: exit 3 at once, as
# scripts/profile -p says for one, bpftrace not started (not "no
# samples", exit 2)
sleep 0.1 &
gone=$!
wait "$gone"
"$STACKFOLD" record --watch-pid "$gone" -f folded -o "$T/nopid" -- "$T/fakebt" >/dev/null 2>"$T/nopid.err"
check_eq "--watch-pid of no process: exit 3, said, nothing written" "3 1 none" \
	"$? $(grep -c "watch-pid $gone: no such process" "$T/nopid.err") $( [ -e "$T/nopid.folded" ] && echo file || echo none)"
