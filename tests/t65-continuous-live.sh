#!/usr/bin/env bash
# t65-continuous-live: scripts/continuous for real, 2 s windows, the whole
# machine (-a) while bin/demo burns CPU and a loop starts short-lived
# processes.  Checks: one valid pprof per window (strict validator, go
# tool pprof), totals equal to the .folded sidecars, names and no
# temporary file in sight; SIGKILL then restart (stale temporaries and a
# half-written window removed, nothing overwritten, no bpftrace left
# behind); retention by size; SIGTERM writes the window in progress and
# exits 0; scripts/flame-range merges a range.  Needs root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"

live_prereq "continuous live" || exit 0
pprof_tools_build || exit 0
[ -x "$TOP/bin/demo" ] || { fail "continuous live: bin/demo is built (make demo)"; exit 0; }

W=$T/windows
bg_pids=()
cleanup_bg() {
	[ ${#bg_pids[@]} -gt 0 ] && kill "${bg_pids[@]}" 2>/dev/null
	[ -n "${cpid:-}" ] && kill -KILL "$cpid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup_bg EXIT

"$TOP/bin/demo" 0 >/dev/null &
bg_pids+=($!)
demo=$!
# short-lived processes: a new pid every ~50 ms, each gone before the
# window ends
(while :; do /bin/true; sleep 0.05; done) &
bg_pids+=($!)
# an exec in the middle of windows: two non-PIE programs with the same code
# at the same addresses, different names (tests/fixtures/live/execimg.c)
for w in alpha beta; do
	cc -O1 -g -fno-omit-frame-pointer -fno-pie -no-pie -DWORK=${w}_work \
		-o "$T/exec_$w" "$TOP/tests/fixtures/live/execimg.c"
done
(while :; do "$T/exec_alpha" 0.3 "$T/exec_beta"; sleep 0.2; done) &
bg_pids+=($!)

# nwin [DIR [NAME]]: files named NAME (*.pb.gz) in DIR ($W)
nwin() { find "${1:-$W}" -maxdepth 1 -name "${2:-*.pb.gz}" 2>/dev/null | wc -l; }
# wait_for N SECONDS [DIR [NAME]]: until N windows exist (false on
# timeout, or when the continuous mode cpid has ended)
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(nwin "${3:-$W}" "${4:-*.pb.gz}")" -ge "$1" ] && return 0
		kill -0 "$cpid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
start() {
	"$TOP/scripts/continuous" -a --window 2 --folded -o "$W" "$@" 2>>"$T/log" &
	cpid=$!
}

# --- windows -----------------------------------------------------------------
start
if wait_for 3 30; then pass "continuous: 3 windows within 30 s"; else
	fail "continuous: 3 windows within 30 s" "$(tail -5 "$T/log")"; exit 0; fi

bad_names=$(find "$W" -maxdepth 1 -type f ! -name '.continuous.bt' ! -name .lock ! -name '*.tmp.*' \
	-regextype posix-extended ! -regex '.*/[0-9]{8}T[0-9]{6}Z(_[0-9]{3})?\.(pb\.gz|folded)')
check_eq "continuous: every file is STAMP.pb.gz or STAMP.folded (its program and lock aside)" "" "$bad_names"

ok=0 bad=""
for pb in "$W"/*.pb.gz; do
	fo=${pb%.pb.gz}.folded
	res=$("$PPROF_CHECK" "$pb" 2>&1)
	want=$(folded_total "$fo")
	case $res in
	"ok samples="*" total=$want") ok=$((ok + 1)) ;;
	*) bad+="${pb##*/}: $res (folded $want); " ;;
	esac
done
check_eq "continuous: each window valid pprof, total == its .folded" "" "$bad"
first=$(find "$W" -name '*.pb.gz' | sort | sed -n 2p)
if gopprof -raw -symbolize=none "$first" >"$T/raw" 2>"$T/goerr"; then
	check_eq "continuous: go tool pprof -raw total == .folded" \
		"$(folded_total "${first%.pb.gz}.folded")" "$(raw_total "$T/raw")"
else
	fail "continuous: go tool pprof -raw" "$(tail -5 "$T/goerr")"
fi
if cat "$W"/*.folded | grep -q "^demo-$demo;.*;matrix_multiply "; then
	pass "continuous: demo's matrix_multiply symbolized"
else
	fail "continuous: demo's matrix_multiply symbolized" "$(head -c 600 "$W"/*.folded)"
fi
a=$(cat "$W"/*.folded | awk '/^exec_alpha-[0-9]+;.*;alpha_work( |;)/ { n += $NF } END { print n + 0 }')
b=$(cat "$W"/*.folded | awk '/^exec_beta-[0-9]+;.*;beta_work( |;)/ { n += $NF } END { print n + 0 }')
wrong=$(cat "$W"/*.folded | awk '/^exec_alpha-[0-9]+;.*beta_work|^exec_beta-[0-9]+;.*alpha_work/ { n += $NF } END { print n + 0 }')
check "continuous: exec mid-window, each program's samples named from it ($a alpha, $b beta)" \
	test "$a" -gt 0 -a "$b" -gt 0
check_eq "continuous: exec mid-window, none named from the other program" 0 "$wrong"
logged=$(grep -c ': [0-9]* samples, ' "$T/log")
check_eq "continuous: one log line per window" "$(nwin)" "$logged"

# the windows so far, for flame-range below: retention (--max-size 6K)
# leaves only the newest, perhaps the few ms between the last full window
# and SIGTERM
mkdir "$T/merged"
cp "$W"/*.pb.gz "$W"/*.folded "$T/merged/"

# --- SIGKILL, leftovers, restart ----------------------------------------------
bt=$(pgrep -P "$cpid" bpftrace)
kill -KILL "$cpid"
wait "$cpid" 2>/dev/null
sleep 0.5
# dead means gone or a zombie (this container's pid 1 may not reap)
if [ -n "$bt" ] && ! awk '{ exit $3 == "Z" ? 0 : 1 }' "/proc/$bt/stat" 2>/dev/null &&
	[ -e "/proc/$bt" ]; then
	fail "SIGKILL: bpftrace ends with its consumer"
	kill -KILL "$bt"
else
	pass "SIGKILL: bpftrace ends with its consumer"
fi
# what a crash mid-write leaves: a temporary, and a .folded whose .pb.gz
# never got renamed
echo junk >"$W/20200101T000000Z.pb.gz.tmp.Ab12Cd"
echo 'a;b 1' >"$W/20200101T000001Z.folded"
stat -c '%n %Y.%i' "$W"/*.pb.gz | sort >"$T/before"
newest=$(find "$W" -name '*.pb.gz' | sort | tail -n 1)
start --max-size 6K
# retention leaves one window: wait for two new ones by their log lines
logged0=$(grep -c ': [0-9]* samples, ' "$T/log")
for ((i = 0; i < 300; i++)); do
	[ "$(grep -c ': [0-9]* samples, ' "$T/log")" -ge $((logged0 + 2)) ] && break
	kill -0 "$cpid" 2>/dev/null || break
	sleep 0.1
done
if [ "$(grep -c ': [0-9]* samples, ' "$T/log")" -ge $((logged0 + 2)) ]; then
	pass "restart: windows continue"
else
	fail "restart: windows continue" "$(tail -5 "$T/log")"
fi
check "restart: stale temporary removed" test ! -e "$W/20200101T000000Z.pb.gz.tmp.Ab12Cd"
check "restart: half-written window removed" test ! -e "$W/20200101T000001Z.folded"
check "restart: says what it removed" grep -q 'removed 2 unfinished files' "$T/log"
stat -c '%n %Y.%i' "$W"/*.pb.gz | sort >"$T/after"
changed=$(join "$T/before" "$T/after" | awk '$2 != $3')
check_eq "restart: no window rewritten" "" "$changed"

# --- bpftrace killed: restarted, the window in progress said lost -----------
# wait_log PATTERN: until the log has it (10 s at most)
wait_log() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "$1" "$T/log" && return 0
		sleep 0.1
	done
	return 1
}
bt=$(pgrep -P "$cpid" bpftrace)
kill -KILL "$bt"
wait_log 'window in progress are lost; restarting'
check "bpftrace killed: the lost window in progress is said" \
	grep -q 'bpftrace exited (signal 9): the samples of the window in progress are lost; restarting' "$T/log"
# ... and its replacement killed before it attached: restarted again (the
# daemon does not exit 3, as when the first bpftrace cannot attach)
for ((i = 0; i < 300; i++)); do
	bt2=$(pgrep -P "$cpid" bpftrace) && [ "$bt2" != "$bt" ] && break
	sleep 0.02
done
kill -KILL "$bt2" 2>/dev/null
wait_log 'failed before attaching (signal 9); restarting'
check "bpftrace killed before attaching, after a restart: restarted again" \
	grep -q 'failed before attaching (signal 9); restarting' "$T/log"
check "bpftrace killed before attaching, after a restart: still running" kill -0 "$cpid"
logged0=$(grep -c ': [0-9]* samples, ' "$T/log")
for ((i = 0; i < 300; i++)); do
	[ "$(grep -c ': [0-9]* samples, ' "$T/log")" -gt "$logged0" ] && break
	sleep 0.1
done
check "bpftrace killed: restarted, windows continue" \
	test "$(grep -c ': [0-9]* samples, ' "$T/log")" -gt "$logged0"

# --- SIGTERM -----------------------------------------------------------------
sleep 1
touch "$T/mark"
kill -TERM "$cpid"
wait "$cpid"
check_eq "SIGTERM: exit status 0" 0 "$?"
cpid=""
check "SIGTERM: says it stopped, with the window bpftrace's exit cut short" \
	grep -q 'stopped: .* 1 cut short by a bpftrace exit' "$T/log"
after_term=$(find "$W" -name '*.pb.gz' -newer "$T/mark" | wc -l)
if [ "$after_term" -ge 1 ]; then pass "SIGTERM: the window in progress is written"; else
	fail "SIGTERM: the window in progress is written" "$(tail -n 3 "$T/log")"; fi
check_eq "SIGTERM: no bpftrace left" "" "$(pgrep -f "$W/.continuous.bt")"

# retention, now that nothing is being written
total=0
for pb in "$W"/*.pb.gz; do
	total=$(( total + $(stat -c %s "$pb") + $(stat -c %s "${pb%.pb.gz}.folded") ))
done
newest_now=$(find "$W" -name '*.pb.gz' | sort | tail -n 1)
newest_size=$(( $(stat -c %s "$newest_now") + $(stat -c %s "${newest_now%.pb.gz}.folded") ))
if [ "$total" -le $((6144 > newest_size ? 6144 : newest_size)) ]; then
	pass "retention: --max-size 6K holds ($total bytes, newest window $newest_size)"
else
	fail "retention: --max-size 6K holds" "total $total bytes" "$(ls -l "$W")"
fi
check "retention: oldest removed first" test ! -e "$newest"

# --- scripts/flame-range -------------------------------------------------------------
if "$TOP/scripts/flame-range" "$T/merged" --since 10m --comm demo -f folded,svg -o "$T/fl" 2>"$T/flerr"; then
	pass "flame: merged the last 10 minutes"
	if ! grep -v '^demo[; ]' "$T/fl.folded" >/dev/null && grep -q matrix_multiply "$T/fl.folded"; then
		pass "flame: demo only, comm frame without pid"
	else
		fail "flame: demo only, comm frame without pid" "$(head -n 5 "$T/fl.folded")" \
			"$(ls -l "$T/merged")"
	fi
	check "flame: svg written" grep -q '<svg' "$T/fl.svg"
else
	fail "flame: merged the last 10 minutes" "$(cat "$T/flerr")"
fi
"$TOP/scripts/flame-range" "$W" --from '2001-01-01' --to '2001-01-02' -o "$T/none" 2>"$T/none.err"
rc=$?
if [ "$rc" = 2 ]; then pass "flame: empty range exits 2"
else fail "flame: empty range exits 2" "exit $rc: $(head -c 400 "$T/none.err")"; fi

# --- -p TID: a thread that is not its process's main thread ----------------
# sampled alone (bpftrace's pid is the process's: `pid == TID` matched
# nothing), with a note saying so
if cc -O0 -pthread -o "$T/namedthread" "$TOP/tests/fixtures/live/namedthread.c" 2>"$T/nt.err"; then
	"$T/namedthread" &
	ntpid=$!
	bg_pids+=("$ntpid")
	sleep 0.3
	tid=$(find "/proc/$ntpid/task" -mindepth 1 -maxdepth 1 -printf '%f\n' | grep -vx "$ntpid" | head -n 1)
	W2=$T/tidwin
	"$TOP/scripts/continuous" -p "$tid" --window 2 --folded -o "$W2" 2>"$T/tidlog" &
	cpid=$!
	wait_for 2 30 "$W2" '*.folded'
	kill -TERM "$cpid"
	wait "$cpid" 2>/dev/null
	roots=$(cat "$W2"/*.folded 2>/dev/null | awk '{ n[$0 ~ /^workerthr-/ ? "thread" : "other"] += $NF }
		END { printf "%d %d", n["thread"], n["other"] }')
	check "continuous -p TID: that thread's samples only (thread, other: $roots)" \
		test "${roots% *}" -gt 0 -a "${roots#* }" = 0
	check "continuous -p TID: says it samples the thread" \
		grep -q "continuous: $tid is a thread of process $ntpid: sampling that thread only" "$T/tidlog"
	kill "$ntpid" 2>/dev/null
else
	fail "continuous -p TID: build namedthread.c" "$(tail -5 "$T/nt.err")"
fi

# --- a machine that keeps starting short programs ---------------------------
# Each lives 8 ms: its "#pid" line is handled at once (no wait between
# windows), so most of its samples are named (12-16% were before, when the
# map was read after a 20 ms wait; bench/churn.sh measures it).
# (The loads above are stopped first: this one alone.)
[ ${#bg_pids[@]} -gt 0 ] && kill "${bg_pids[@]}" 2>/dev/null
bg_pids=()
if cc -O2 -fno-omit-frame-pointer -o "$T/churn" "$TOP/tests/fixtures/live/churn.c" 2>"$T/churn.err"; then
	W3=$T/churnwin
	"$TOP/scripts/continuous" -a --window 5 --folded -o "$W3" 2>"$T/churnlog" &
	cpid=$!
	if ! wait_for 1 30 "$W3" '*.folded'; then	# attached: a first window
		fail "short-lived programs: a first window within 30 s" "$(tail -5 "$T/churnlog")"
	else
		timeout 10 "$T/churn" run 6 8
		kill -TERM "$cpid"
		wait "$cpid" 2>/dev/null
		share=$(cat "$W3"/*.folded 2>/dev/null | awk '/^churn-[0-9]+;/ { all += $NF; if ($1 ~ /;main(;|$)/) m += $NF }
			END { printf "%d %d", all ? 100 * m / all : 0, all }')
		check "short-lived programs: most samples named (${share% *}% of ${share#* } name main)" \
			test "${share% *}" -ge 50 -a "${share#* }" -ge 100
	fi
	kill -KILL "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	cpid=""
else
	fail "short-lived programs: build churn.c" "$(tail -5 "$T/churn.err")"
fi

# -p of a target that exits early in a 2 s window: the stop waits for the
# window being printed, so no sample is read as counted twice (a stop
# landing mid-print would lose its total line, and report every sample of
# the window as "more than bpftrace counted")
# (a run where the target exited before bpftrace attached, which takes
# 1-4 s on a loaded 2-CPU machine, wrote no window: it is tried again, up
# to 3 times; a longer-lived target would not exercise the early exit)
for i in 1 2 3; do
	for _ in 1 2 3; do
		rm -rf "$T/early$i"
		"$TOP/bin/demo" 3 >/dev/null &
		dp=$!
		timeout 30 "$TOP/scripts/continuous" -p "$dp" --window 2 --folded -o "$T/early$i" 2>"$T/early$i.log"
		wait "$dp" 2>/dev/null
		! grep -q ' [1-9][0-9]* windows\{0,1\} written' "$T/early$i.log" || break
	done
done
check_eq "-p, the target exiting in a 2 s window (3 runs): no sample counted twice" "" \
	"$(grep -h 'more than bpftrace counted' "$T"/early[123].log)"
check "-p, the target exiting early: windows written" \
	bash -c "ls '$T'/early1/*.pb.gz '$T'/early2/*.pb.gz '$T'/early3/*.pb.gz >/dev/null"
