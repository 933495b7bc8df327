#!/usr/bin/env bash
# t65-continuous-windows: `stackfold continuous` against a fake bpftrace
# that prints canned bt/continuous.bt output, so window splitting is
# checked exactly and without root: a window per total line, both halves
# of the double buffer (@stackfold_total_b counts as a total), a short
# total reported as a loss, and bpftrace's exit-time echo of the keyless
# maps (as 0) not taken for a window.  Then a bpftrace whose stack maps
# are full (stack-id errors over 5% of a window) is restarted, once; one
# stopped by a signal to it alone has its last window written and is
# restarted; SIGTERM twice is one stop, SIGINT twice from one sender too, SIGINT from two
# senders (Ctrl-C twice) aborts.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"

pprof_tools_build || exit 0

# wait_for N PATTERN FILE: wait (up to 10 s) until FILE has N lines
# matching PATTERN
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "$2" "$3" 2>/dev/null)" -ge "$1" ] && return 0
		sleep 0.1
	done
}

cat >"$T/canned" <<'EOF'
Attaching 4 probes...
#attached Tracing stacks at 99 Hz... Hit Ctrl-C to end.
#pid 4242 fake
@stackfold[4242, 4242, fake, 
        work+12
        main+30
, ]: 7
@stackfold[4242, 4243, fake, 
        idle+5
        main+30
, ]: 3

@stackfold_total: 10
#pid 4242 fake
@stackfold_b[4242, 4242, fake, 
        work+12
        main+30
, ]: 5

@stackfold_total_b: 6
EOF
# The fake: print, then wait for SIGINT as bpftrace does, and echo the
# keyless maps at exit as bpftrace 0.17 does.
fake_bpftrace "$T/fake-bpftrace" 'printf "\n@stackfold_total: 0\n@stackfold_total_b: 0\n"' 'cat "$1"'

# fake_run DIR CANNED LOG N [OPTION]: stackfold continuous over the fake
# printing CANNED, its log in LOG, stopped by SIGTERM once N windows are
# logged; the exit status is continuous's
fake_run() {
	local cpid
	: >"$3"
	"$STACKFOLD" continuous -o "$1" --window 2 ${5:+"$5"} -- "$T/fake-bpftrace" "$2" 2>"$3" &
	cpid=$!
	wait_for "$4" ' samples, ' "$3"
	kill -TERM "$cpid"
	wait "$cpid"
}

W=$T/w
fake_run "$W" "$T/canned" "$T/log" 2 --folded
check_eq "fake capture: SIGTERM exits 0" 0 "$?"

# in the order written (a second window in the same second is STAMP_001)
mapfile -t pbs < <(sed -n 's/^stackfold: \([0-9TZ_]*\): .* samples, .*/\1/p' "$T/log" |
	while read -r stem; do [ -e "$W/$stem.pb.gz" ] && echo "$W/$stem.pb.gz"; done)
check_eq "fake capture: one window per total line, none for the exit echo" 2 "${#pbs[@]}"
if [ "${#pbs[@]}" -eq 2 ]; then
	check_eq "window 1: folded" "$(printf 'fake-4242;main;idle 3\nfake-4242;main;work 7')" \
		"$(cat "${pbs[0]%.pb.gz}.folded")"
	check_eq "window 2 (@stackfold_b): folded" "fake-4242;main;work 5" \
		"$(cat "${pbs[1]%.pb.gz}.folded")"
	res=$("$PPROF_CHECK" "${pbs[0]}" 2>&1)
	check_eq "window 1: valid pprof, 10 samples" "ok samples=2 total=10" "$res"
	res=$("$PPROF_CHECK" "${pbs[1]}" 2>&1)
	check_eq "window 2: valid pprof, 5 samples" "ok samples=1 total=5" "$res"
fi
check "window 2: the short total is logged as a loss" grep -q ': 5 samples, 1 stacks, .*; 1 samples dropped by a full map' "$T/log"
check_eq "fake capture: log lines" 3 "$(grep -c . "$T/log")"

# A window in which nothing ran: its pprof still has the window's time,
# duration and metadata, and its counters are known (it is not written as
# if from folded text, with none and "unknown")
printf '#attached Tracing stacks at 99 Hz... Hit Ctrl-C to end.\n#pid 4242 fake\n@stackfold[4242, 4242, fake, \n        work+12\n, ]: 2\n\n@stackfold_total: 2\n\n@stackfold_total_b: 0\n' >"$T/canned0"
fake_run "$T/w0" "$T/canned0" "$T/log0" 2
empty=$(sed -n 's/^stackfold: \([0-9TZ_]*\): 0 samples, .*/\1/p' "$T/log0" | head -n 1)
check "empty window: logged" test -n "$empty"
check_eq "empty window: a valid pprof with its time" "ok samples=0 total=0" \
	"$("$PPROF_CHECK" "$T/w0/$empty.pb.gz" 2>&1)"
check "empty window: its counters known" bash -c "gzip -dc '$T/w0/$empty.pb.gz' | grep -aq 'lost_events=0 map_dropped=0 '"
check "empty window: its metadata (host, kernel)" bash -c "gzip -dc '$T/w0/$empty.pb.gz' | grep -aq 'kernel=.* host='"

# A "Map full" warning on bpftrace's stderr is a loss of its window, in
# the log and the pprof comment, not hidden and uncounted; the log names
# every kind of loss as record's summary does.
fake_bpftrace "$T/fake-mf" : 'head -n 2 "$1"
echo "WARNING: Map full; can'"'"'t update element. Try increasing MAP_KEYS_MAX." >&2
sleep 0.3
tail -n +3 "$1"'
chmod +x "$T/fake-mf"
: >"$T/logmf"
"$STACKFOLD" continuous -o "$T/wmf" --window 2 -- "$T/fake-mf" "$T/canned0" 2>"$T/logmf" &
cpid=$!
wait_for 1 ' samples, ' "$T/logmf"
kill -TERM "$cpid"
wait "$cpid"
check "map full: in the window's log line" grep -q ': 2 samples, .*warned 1 times that a map was full' "$T/logmf"
mf=$(sed -n 's/^stackfold: \([0-9TZ_]*\): 2 samples, .*/\1/p' "$T/logmf" | head -n 1)
check "map full: in the window's pprof comment" bash -c "gzip -dc '$T/wmf/$mf.pb.gz' | grep -aq 'map_full_warnings=1'"

# --- D32: twelve windows at once: names sort in the order taken ------------
# Twelve totals printed together are twelve windows within a second or two:
# some share a second (twelve distinct seconds would take eleven), and
# STAMP, STAMP_001, ... STAMP_011 must sort as they were taken (a '-N'
# suffix sorted before STAMP, and -10 before -2).
for i in 1 2 3 4 5 6; do
	printf '#pid 4242 fake\n@stackfold[4242, 4242, fake, \n        work+12\n, ]: %d\n\n@stackfold_total: %d\n' "$i" "$i"
	printf '#pid 4242 fake\n@stackfold_b[4242, 4242, fake, \n        work+12\n, ]: %d\n\n@stackfold_total_b: %d\n' "$((i + 6))" "$((i + 6))"
done >"$T/canned12"
fake_run "$T/w12" "$T/canned12" "$T/log12" 12
check_eq "12 windows at once: SIGTERM exits 0" 0 "$?"
logged=$(sed -n 's/^stackfold: \([0-9TZ_]*\): .* samples, .*/\1/p' "$T/log12")
sorted=$(find "$T/w12" -name '*.pb.gz' -printf '%f\n' | LC_ALL=C sort | sed 's/\.pb\.gz$//')
check_eq "12 windows at once: 12 files" 12 "$(grep -c . <<<"$sorted")"
check_eq "12 windows at once: names sort in the order the windows were taken" "$logged" "$sorted"
check "12 windows at once: some share a second (STAMP_NNN)" grep -q '^[0-9]\{8\}T[0-9]\{6\}Z_[0-9]\{3\}$' <<<"$sorted"
# the samples of each window, in the log's order: 1, 7, 2, 8, ...
got=$(while read -r s; do "$PPROF_CHECK" "$T/w12/$s.pb.gz" | sed 's/.*total=//'; done <<<"$sorted" | xargs)
check_eq "12 windows at once: in that order, the windows' own samples" "1 7 2 8 3 9 4 10 5 11 6 12" "$got"

# A restart within a second that has windows already (an earlier run wrote
# STAMP and STAMP_002 there, its _001 failed): the new ones come after them.
mkdir -p "$T/wr"
now=$(date -u +%s)
for s in $(seq 0 15); do
	st=$(date -u -d "@$((now + s))" +%Y%m%dT%H%M%SZ)
	: >"$T/wr/$st.pb.gz"
	: >"$T/wr/${st}_002.pb.gz"
done
fake_run "$T/wr" "$T/canned" "$T/logr" 2
# (the two windows start a few ms apart: in one second, _003 and _004, or
# across two, _003 each)
newr=$(sed -n 's/^stackfold: \([0-9TZ_]*\): .* samples, .*/\1/p' "$T/logr")
check_eq "restart in a second with windows: both new ones named after them (_003 or later)" \
	"2 2" "$(grep -c . <<<"$newr") $(grep -c 'Z_00[3-9]$' <<<"$newr")"
check_eq "restart in a second with windows: two names" 2 "$(sort -u <<<"$newr" | grep -c .)"

# --- stack maps full: bpftrace is restarted once -------------------------------
# 15 stack-id errors in a 220-sample window (over 5%): one restart, and not
# another within 30 windows although the new run reports as many.
cat >"$T/canned2" <<'EOF'
Attaching 4 probes...
#attached Tracing stacks at 99 Hz... Hit Ctrl-C to end.
@stackfold[4242, 4242, fake, 
        work+12
        main+30
, ]: 220

@stackfold_total: 220
EOF
fake_bpftrace "$T/fake2" 'printf "\n@stackfold_total: 0\n@stackfold_total_b: 0\n"' 'echo run >>"$2"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	echo "failed to look up stack id -17 (pid 4242): No such file or directory" >&2
done
sleep 0.3
cat "$1"'
chmod +x "$T/fake2"
: >"$T/log2"
"$STACKFOLD" continuous -o "$T/w2" --window 2 -- "$T/fake2" "$T/canned2" "$T/runs" 2>"$T/log2" &
cpid=$!
wait_for 2 ' samples, ' "$T/log2"
sleep 0.5
kill -TERM "$cpid"
wait "$cpid"
check_eq "stack maps full: SIGTERM exits 0" 0 "$?"
check_eq "stack maps full: bpftrace restarted once" 2 "$(grep -c . "$T/runs")"
check_eq "stack maps full: one line says why" 1 "$(grep -c 'stack-id errors in 220 samples .*restarting bpftrace' "$T/log2")"
check_eq "stack maps full: both windows written" 2 "$(find "$T/w2" -name '*.pb.gz' | wc -l)"

# --- bpftrace stopped by someone else (SIGTERM to it alone) ---------------
# Its END prints the window in progress, then "#end", then bpftrace echoes
# the keyless maps (as 0) and exits 0: that window is written, the echo is
# not a window, the log says nothing was lost, and bpftrace is restarted.
cat >"$T/canned3" <<'EOF'
Attaching 4 probes...
#attached Tracing stacks at 99 Hz... Hit Ctrl-C to end.
@stackfold_b[4242, 4242, fake, 
        work+12
        main+30
, ]: 4

@stackfold_total_b: 4
#end

@stackfold_total: 0
@stackfold_total_b: 0
EOF
# fake3 CANNED RUNS [kill]: the first run prints CANNED and exits (dies of
# SIGKILL with "kill"), the next ones wait for SIGINT
fake_bpftrace "$T/fake3" : 'echo run >>"$2"
if [ "$(grep -c . "$2")" = 1 ]; then cat "$1"; [ "$3" = kill ] && kill -KILL $$; exit 0; fi
echo "#attached"'
: >"$T/log3"
"$STACKFOLD" continuous -o "$T/w3" --window 2 --folded -- "$T/fake3" "$T/canned3" "$T/runs3" 2>"$T/log3" &
cpid=$!
wait_for 2 . "$T/runs3"
kill -TERM "$cpid"
wait "$cpid"
check_eq "bpftrace stopped by another: SIGTERM exits 0" 0 "$?"
check_eq "bpftrace stopped by another: its last window written, no window for the echo" \
	"1|fake-4242;main;work 4" "$(find "$T/w3" -name '*.pb.gz' | wc -l)|$(cat "$T"/w3/*.folded)"
check "bpftrace stopped by another: the log says the window was printed, and restarts" \
	grep -q 'bpftrace exited (exit status 0) after printing the window in progress; restarting in 1 s' "$T/log3"
check "bpftrace stopped by another: nothing reported lost or cut short" \
	bash -c "grep -q '^stackfold: stopped: 1 window written, 0 lost, 0 cut short by a bpftrace exit$' '$T/log3' &&
		! grep -v '^stackfold: stopped:' '$T/log3' | grep 'lost\|dropped\|more than'"
check_eq "bpftrace stopped by another: restarted" 2 "$(grep -c . "$T/runs3")"

# bpftrace killed while it prints a window (SIGKILL: the OOM killer, the
# unit's MemoryMax): the part printed is not written as a window (under a
# window's name), and the log says the window in progress is lost.
cat >"$T/canned5" <<'EOF'
Attaching 4 probes...
#attached Tracing stacks at 99 Hz... Hit Ctrl-C to end.
@stackfold[4242, 4242, fake, 
        work+12
, ]: 2

@stackfold_total: 2
@stackfold_b[4242, 4242, fake, 
        idle+12
, ]: 7
EOF
"$STACKFOLD" continuous -o "$T/w5" --window 2 --folded -- "$T/fake3" "$T/canned5" "$T/runs5" kill 2>"$T/log5" &
cpid=$!
wait_for 2 . "$T/runs5"
kill -TERM "$cpid"
wait "$cpid"
check_eq "bpftrace killed mid-print: only the whole window written" \
	"1|fake-4242;work 2" "$(find "$T/w5" -name '*.pb.gz' | wc -l)|$(cat "$T"/w5/*.folded)"
check "bpftrace killed mid-print: the log says the window in progress is lost" \
	grep -q 'bpftrace exited (signal 9): the samples of the window in progress are lost' "$T/log5"
# -q logs problems only, and the closing line is one when it counts losses
"$STACKFOLD" continuous -q -o "$T/w5q" --window 2 -- "$T/fake3" "$T/canned5" "$T/runs5q" kill 2>"$T/log5q" &
cpid=$!
wait_for 2 . "$T/runs5q"
kill -TERM "$cpid"
wait "$cpid"
check "-q: the closing line counts the window cut short" \
	grep -q '^stackfold: stopped: 1 window written, 0 lost, 1 cut short by a bpftrace exit$' "$T/log5q"
check_eq "-q: no line for a window written" "" "$(grep ': [0-9]* samples, ' "$T/log5q")"

# --watch-pid (scripts/continuous -p): once every target has exited, the
# window in progress is written and it stops, exit 0 (not empty windows
# for good, in which a reused pid could be profiled)
sleep 3 &
sp=$!
"$STACKFOLD" continuous -o "$T/w6" --window 2 --watch-pid "$sp" -- "$T/fake-bpftrace" "$T/canned" 2>"$T/log6" &
cpid=$!
for ((i = 0; i < 100; i++)); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
kill -TERM "$cpid" 2>/dev/null	# (not stopped by itself: the check below fails)
wait "$cpid"
check_eq "--watch-pid: the target gone, stops by itself, exit 0" "0|stackfold: every --watch-pid target has exited; stopping" \
	"$?|$(grep 'watch-pid' "$T/log6")"
wait "$sp"
# ... said once, and nothing restarted, when the stop has to wait for a
# safe moment (a bpftrace that never flushes: up to 2 windows + 2 s), not
# again every second of that wait
cat >"$T/quiet" <<'EOF2'
#!/bin/sh
echo "#attached"
exec sleep 60
EOF2
chmod +x "$T/quiet"
sleep 3 &	# gone once a flush is due (at 2 s) that never comes
sp=$!
timeout -k 5 40 "$STACKFOLD" continuous -o "$T/w6q" --window 2 --watch-pid "$sp" -- "$T/quiet" 2>"$T/log6q"
check_eq "--watch-pid, the stop waiting: said once, exit 0" "0 1" "$? $(grep -c 'watch-pid target has exited' "$T/log6q")"
wait "$sp"

# A bpftrace deaf to the stop (SIGINT ignored) is killed once silent for
# 10 s after it, and the window in progress is counted lost (the kill is
# said, and the closing line does not say nothing was lost); one that
# printed part of a window and then hung does not have that part written
# as a window.
cat >"$T/deaf" <<'EOF2'
#!/bin/sh
trap '' INT TERM
cat "$1"
exec sleep 60
EOF2
chmod +x "$T/deaf"
printf '%s\n' '#attached' '@stackfold[4242, 4242, fake, ' '        work+12' ', ]: 2' '' \
	'@stackfold_total: 2' '@stackfold_b[4242, 4242, fake, ' '        idle+12' ', ]: 9' >"$T/canned7"
"$STACKFOLD" continuous -o "$T/w7" --window 2 --folded -- "$T/deaf" "$T/canned7" 2>"$T/log7" &
cpid=$!
wait_for 1 'samples' "$T/log7"
kill -TERM "$cpid"
for ((i = 0; i < 400; i++)); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$cpid" 2>/dev/null	# (still running after 40 s: the check below fails)
wait "$cpid"
echo "$?" >"$T/w7.rc"
check_eq "bpftrace deaf to the stop: killed, exit 0, only the whole window written" \
	"0|1|fake-4242;work 2" "$(cat "$T/w7.rc")|$(find "$T/w7" -name '*.pb.gz' | wc -l)|$(cat "$T"/w7/*.folded)"
check "bpftrace deaf to the stop: the kill said" grep -q 'gave no output in 10 s after its stop: killed' "$T/log7"
check "bpftrace deaf to the stop: the window in progress counted lost" \
	grep -q '^stackfold: stopped: 1 window written, 0 lost, 1 cut short' "$T/log7"

# --- one stop request delivered twice -----------------------------------
# timeout(1) sends SIGTERM to its command and then to its process group,
# so stackfold may get it twice: still one stop, the window in progress
# (printed by bpftrace at its exit, slow here) written, exit 0.  Two SIGINTs
# from two senders (Ctrl-C twice) abort: exit 130.
fake_bpftrace "$T/fake4" 'sleep 0.6; printf "@stackfold[4242, 4242, fake, \n        work+12\n, ]: 2\n\n@stackfold_total: 2\n#end\n@stackfold_total: 0\n@stackfold_total_b: 0\n"'
# (TERM2: the second signal 0.2 s after the first, while bpftrace prints;
# TERM: back to back, as timeout(1) sends them; TERMINT: SIGTERM then
# SIGINT back to back, two signals that cannot merge: still one stop;
# INTINT: SIGINT twice from this shell, 0.3 s apart: one sender, one
# request; TIMEOUT: `timeout -s INT`, which sends SIGINT to its command and
# to its process group, as bpftrace users stop a capture.)  A hang (stop never sent) is killed after 20 s and fails.
for sig in TERM2 TERM TERMINT INTINT TIMEOUT INT; do
	: >"$T/log4$sig"
	if [ "$sig" = TIMEOUT ]; then
		timeout --preserve-status -s INT 1 "$STACKFOLD" continuous -o "$T/w4$sig" \
			--window 60 --folded -- "$T/fake4" 2>"$T/log4$sig"
		echo "$?" >"$T/rc4$sig"
		continue
	fi
	"$STACKFOLD" continuous -o "$T/w4$sig" --window 60 --folded -- "$T/fake4" 2>"$T/log4$sig" &
	cpid=$!
	sleep 0.5
	stop_signals "$sig" "$cpid"	# tests/lib.sh
	reap "$cpid" >"$T/rc4$sig"
done
for sig in TERM2 TERM TERMINT INTINT TIMEOUT; do
	check_eq "two stop signals ($sig): one stop, exit 0" 0 "$(cat "$T/rc4$sig")"
	check_eq "two stop signals ($sig): the window in progress written" "fake-4242;work 2" "$(cat "$T/w4$sig"/*.folded 2>&1)"
	check "two stop signals ($sig): nothing aborted" bash -c "! grep -q aborted '$T/log4$sig'"
done
check_eq "SIGINT from two senders: aborted, exit 130" 130 "$(cat "$T/rc4INT")"
check "SIGINT from two senders: says the window in progress is lost" grep -q 'aborted, window in progress lost' "$T/log4INT"

# scripts/flame adds up the windows' losses, kept in their .pb.gz comments
# only, says them and puts them in the SVG's subtitle.  The comments are
# read by `stackfold comments`: a grep of the gzip's bytes would read a
# last counter with the next string's protobuf tag ('2') as one more digit
# (maps_unsaved=2 read as 22).
FW=$T/flw
mkdir -p "$FW"
printf 'failed to look up stack id -17 (pid 1): -17\n@[\n    foo+1\n]: 3\n' >"$T/fw.txt"
for ago in 90 60 30; do
	st=$(date -u -d "-$ago sec" +%Y%m%dT%H%M%SZ)
	src=$T/fw.txt
	[ "$ago" = 30 ] && src=$TOP/tests/fixtures/bt/unsaved-maps.txt	# maps_unsaved=2, last
	"$STACKFOLD" -q -f pprof -o "$FW/$st.pb.gz" "$src" 2>/dev/null
	"$STACKFOLD" -q -f folded -o "$FW/$st.folded" "$src" 2>/dev/null
done
"$TOP/scripts/flame-range" "$FW" --since 5m -o "$T/fw" 2>"$T/fw.err"
check_eq "flame: three windows merged" 0 "$?"
want="map_dropped unknown in 2 windows over_total unknown in 2 windows stackid_errors=2 maps_unsaved=2"
check_eq "flame: the windows' losses said, exactly (drops unknown in one-liner text)" \
	"flame-range: losses in these windows (their .pb.gz comments): $want" "$(grep '^flame-range: losses' "$T/fw.err")"
check "flame: and in the SVG's subtitle" grep -q "losses in these windows: $want" "$T/fw.svg"
# The counters it adds up are the tool's (`stackfold --list stored-losses`,
# the loss table's): the script names none of its own, so a counter the
# table gains is added up without an edit here.
own=
for k in $("$STACKFOLD" --list losses); do
	grep -qw -- "$k" "$TOP/scripts/flame-range" && own="$own $k"
done
check_eq "flame: no loss counter named by the script, the tool lists them" "" "$own"
check_eq "flame: the tool lists the stored counters, in the store's order" \
	"map_dropped over_total stackid_errors lost_events map_full_warnings captures_cut unparsable_lines incomplete_records maps_unsaved" \
	"$("$STACKFOLD" --list stored-losses | tr '\n' ' ' | sed 's/ $//')"
# --comm (or --pid): the windows count losses for every process together,
# and the line says so (until issue 45 it showed them as the comm's own)
"$TOP/scripts/flame-range" "$FW" --since 5m --comm app -o "$T/fwc" 2>"$T/fwc.err"
check_eq "flame --comm app: merged" 0 "$?"
check_eq "flame --comm app: the losses said as every process's, not the comm's" \
	"flame-range: losses in these windows, of every process (windows do not count them per process; how many are --comm app's is unknown): $want" \
	"$(grep '^flame-range: losses' "$T/fwc.err")"
check "flame --comm app: the SVG's subtitle says every process too" \
	grep -q "losses in these windows, every process (not only --comm app): $want" "$T/fwc.svg"
cp -r "$FW" "$T/flw2"
for f in "$T"/flw2/*.folded; do echo 'app-7;work 4' >"$f"; done	# with a pid
"$TOP/scripts/flame-range" "$T/flw2" --since 5m --pid 7 --comm app -f folded -o "$T/fwp" 2>"$T/fwp.err"
check_eq "flame --pid 7 --comm app: the line names both filters" \
	"0 flame-range: losses in these windows, of every process (windows do not count them per process; how many are --comm app --pid 7's is unknown): $want" \
	"$? $(grep '^flame-range: losses' "$T/fwp.err")"
"$STACKFOLD" comments /etc/passwd >/dev/null 2>"$T/cm.err"
check_eq "stackfold comments on a file that is no pprof: exit 2, one line" "2 1" "$? $(grep -c . "$T/cm.err")"
