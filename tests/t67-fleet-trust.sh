#!/usr/bin/env bash
# t67-fleet-trust: a fleet store a team can trust, against a real
# ClickHouse (tests/clickhouse.sh) and stand-ins on its port
# (tests/tools/ch_standin.py, run as nobody: any local user can bind a
# port while the store is down).  Checks: an INSERT whose answer is lost,
# or that reaches the store twice, counted once (query and --meta agree);
# --max-age never deletes from the store, --push-max-age deletes this
# host's old days only, and says what; a server that answers 200 without
# ClickHouse's headers delivers nothing; a window keeps the labels of the
# run that wrote it; --host refused rather than cut; IPv6 literals; a
# label value too long said so; `stackfold query --timeout` on a hung
# store; a count answer bounded to a few bytes; SIGTERM within the push
# grace whatever the store does; a password over plain HTTP warned about
# once; a full disk neither stops nor kills the pusher; --label OR.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"

ch_prereq "fleet trust" setpriv || exit 0
if [ "$(id -u)" != 0 ]; then
	if [ "${CI:-}" = true ]; then fail "fleet trust" "needs root (setpriv, mount)"; else skip "fleet trust" "needs root (setpriv, mount)"; fi
	exit 0
fi
ch_cleanup_on_exit
trap 'umount "$T/full" 2>/dev/null; ch_cleanup' EXIT
chmod 755 "$T"
ch_start "$T/ch" || { fail "fleet trust: clickhouse-server starts"; exit 0; }
ch_fake_bpftrace "$T/fake"
T0=$(( $(date +%s) - 60 ))
mkdir "$T/s"
chown nobody "$T/s"
NB=(setpriv --reuid nobody --regid nogroup --clear-groups /usr/bin/python3)

# standin MODE [ADDRESS]: a stand-in as nobody (not this shell's child:
# its SIGKILL at the end is no job message); its port in $SPORT
standin() {
	local i
	cpids+=("$("${NB[@]}" "$TOP/tests/tools/ch_standin.py" "$1" "${2:-127.0.0.1}" \
		"$T/s/$1.port" "$CH_HTTP" "$T/s/$1.stat" </dev/null >/dev/null 2>>"$T/standin.err" & echo $!)")
	for ((i = 0; i < 150; i++)); do [ -s "$T/s/$1.port" ] && break; sleep 0.1; done
	SPORT=$(cat "$T/s/$1.port")
}
wait_for() {	# N PATTERN FILE [SECONDS]
	local i
	for ((i = 0; i < ${4:-20} * 10; i++)); do
		[ "$(grep -c -- "$2" "$3" 2>/dev/null || :)" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# start DIR HOST URL [OPTION...]: continuous over the fake ($cpid)
start() {
	local dir=$1 host=$2 url=$3
	shift 3
	"$STACKFOLD" continuous -o "$dir" --window 1 --host "$host" \
		--push "$url" "$@" -- "$T/fake" 2>>"$dir.log" &
	cpid=$!
	cpids+=("$cpid")
}
stop() { kill -TERM "$cpid"; wait "$cpid"; }
# stop_time: SIGTERM, then the seconds until the exit (at most 40)
stop_time() {
	local t0 i
	t0=$(date +%s%N)
	kill -TERM "$cpid"
	for ((i = 0; i < 400; i++)); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	echo $(( ($(date +%s%N) - t0) / 1000000000 ))
}
sent() { cat "$1"/.push-*.sent 2>/dev/null | grep -c .; }
wait_sent() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(sent "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
local_total() { cat "$1"/*.folded | folded_total /dev/stdin; }
# store_total HOST: stackfold query's samples, and --meta's samples=
store_total() {
	"$STACKFOLD" query "$CH_URL" --from "$T0" --to $(( $(date +%s) + 60 )) \
		--host "$1" -o "$T/st.folded" --meta "$T/st.meta" 2>/dev/null &&
		echo "$(folded_total "$T/st.folded") $(grep -o '^windows=[0-9]* samples=[0-9]*' "$T/st.meta" | sed 's/.*=//')"
}

# --- A: an answer lost, an INSERT repeated on the way ---------------------------
standin lose
FAKE_WINDOWS=3 start "$T/l" hLose "clickhouse://127.0.0.1:$SPORT/stackfold"
wait_sent "$T/l" 3
stop
check "lost answer: the stand-in did lose the answer of a samples INSERT" grep -q "lost the answer" "$T/s/lose.stat"
tl=$(local_total "$T/l")
check_eq "lost answer: query and --meta count each sample once" "$tl $tl" "$(store_total hLose)"
"$TOP/scripts/flame" --from "$CH_URL" --since 1h --host hLose -f folded -o "$T/fl" 2>/dev/null
check_eq "lost answer: scripts/flame --from counts it once" "$tl" "$(folded_total "$T/fl.folded")"
standin dup
FAKE_WINDOWS=2 start "$T/u" hDup "clickhouse://127.0.0.1:$SPORT/stackfold"
wait_sent "$T/u" 2
stop
check "repeated insert: the stand-in did send one twice" grep -q "sent twice" "$T/s/dup.stat"
tu=$(local_total "$T/u")
check_eq "repeated insert: counted once" "$tu $tu" "$(store_total hDup)"
check "repeated insert: the attempt left uncommitted is said" grep -q "not committed, sent again" "$T/u.log"

# --- B: store retention is per host, and explicit -----------------------------------
old=$(( $(date +%s) - 3 * 86400 ))
cols="hour, host, attempt, stack_id, pid, tid, comm, labels, count"
for h in hR1 hR2; do
	ch_sql "INSERT INTO stackfold.samples ($cols) VALUES ($(( old / 3600 * 3600 )), '$h', 1, 1, 1, 0, 'x', '', 5)"
	ch_sql "INSERT INTO stackfold.windows (window_id, attempt, window_start, host, stem) VALUES (1, 1, $old, '$h', 'old')"
done
FAKE_WINDOWS=1 start "$T/r1" hR1 "$CH_URL" --max-age 2d --push-max-age 2d
wait_sent "$T/r1" 1
stop
oldrows() { ch_sql "SELECT (SELECT count() FROM stackfold.samples WHERE host = '$1' AND hour < now() - 86400), (SELECT count() FROM stackfold.windows WHERE host = '$1' AND window_start < now() - 86400)" | tr '\t' ' '; }
for ((i = 0; i < 100; i++)); do [ "$(oldrows hR1)" = "0 0" ] && break; sleep 0.1; done
check_eq "--push-max-age 2d: this host's day 3 days old deleted" "0 0" "$(oldrows hR1)"
check_eq "--push-max-age 2d: another host's same day untouched" "1 1" "$(oldrows hR2)"
check_eq "--push-max-age 2d: this host's today stays" 1 "$(ch_sql "SELECT count() FROM stackfold.windows WHERE host = 'hR1' AND window_start > now() - 86400")"
check "--push-max-age: the deletion is logged with what it removed" \
	grep -q "store retention (--push-max-age): deleting host 'hR1''s 1 window (1 sample rows) from before" "$T/r1.log"

# --- C: a 200 that is not ClickHouse's --------------------------------------------
standin ok200
FAKE_WINDOWS=2 start "$T/n" hNot "clickhouse://127.0.0.1:$SPORT/stackfold"
wait_for 2 " samples, " "$T/n.log"
wait_for 1 "X-ClickHouse" "$T/n.log" 5
stop
check_eq "a non-ClickHouse 200: no window counted delivered" 0 "$(sent "$T/n")"
check "a non-ClickHouse 200: said" grep -q "without X-ClickHouse-\* headers: not the store's answer" "$T/n.log"

# --- D: a window's labels are those of the run that wrote it ------------------------
dead="clickhouse://127.0.0.1:$(ch_free_port)/stackfold"
FAKE_WINDOWS=2 start "$T/lab" hLab "$dead" --label run=1
wait_for 2 " samples, " "$T/lab.log"
stop
FAKE_WINDOWS=1 "$STACKFOLD" continuous -o "$T/lab" --window 1 --host hLab --folded \
	-- "$T/fake" 2>>"$T/lab.log" &
cpid=$!
wait_for 3 " samples, " "$T/lab.log"
stop
FAKE_WINDOWS=1 start "$T/lab" hLab "$CH_URL" --label run=4
wait_sent "$T/lab" 4
stop
check_eq "labels: run=1's windows stored as run=1, a run without --push's without, run=4's as run=4" \
	":1;run=1:2;run=4:1;" "$(ch_sql "SELECT labels, count() FROM stackfold.windows WHERE host = 'hLab' GROUP BY labels ORDER BY labels FORMAT TSV" | tr '\t\n' ':;')"

# --- E: names and addresses -----------------------------------------------------------
for h in "web 01" $'tab\there' $'bad\xff'; do
	"$STACKFOLD" continuous -o "$T/hx" --host "$h" --push "$CH_URL" --check -- true 2>"$T/hx.err"
	st=$?
	check_eq "--host $(printf %q "$h"): refused at start" 1 "$st"
done
"$STACKFOLD" continuous -o "$T/hx" --host "web 01" --check -- true 2>"$T/hx.err"
check "--host with a blank: said" grep -q "blank or a control character (byte 4 is 0x20): refused, not cut" "$T/hx.err"
FAKE_WINDOWS=1 start "$T/u8" "hôte-ü.example" "$CH_URL"
wait_sent "$T/u8" 1
stop
tu8=$(local_total "$T/u8")
check_eq "--host in UTF-8: stored as given, found by the same name" "$tu8 $tu8" "$(store_total "hôte-ü.example")"
standin pass ::1
FAKE_WINDOWS=1 start "$T/v6" hV6 "clickhouse://[::1]:$SPORT/stackfold"
wait_sent "$T/v6" 1
stop
check_eq "an IPv6 literal URL: delivered" 1 "$(sent "$T/v6")"
long=$(printf 'v%.0s' {1..129})
"$STACKFOLD" continuous -o "$T/hx" --push "$CH_URL" --label "k=$long" --check -- true 2>"$T/lx.err"
check "a label value of 129 bytes: said too long" grep -q "value too long (129 bytes; at most 128)" "$T/lx.err"
cpids+=("$(hang_server "$T/hang.port"; echo $!)")
for ((i = 0; i < 100; i++)); do [ -s "$T/hang.port" ] && break; sleep 0.1; done
t0=$(date +%s)
"$STACKFOLD" query "clickhouse://127.0.0.1:$(cat "$T/hang.port")/stackfold" --from 1 --to 2 \
	--timeout 2 2>"$T/hq.err"
st=$?
check_eq "query on a hung store: exit 4 within --timeout" "4 yes" "$st $([ $(( $(date +%s) - t0 )) -le 6 ] && echo yes)"
check "query on a hung store: said" grep -q "no answer within 2 s (--timeout)" "$T/hq.err"

# --- F: hostile answers, hangs and the stop ---------------------------------------------
# a window found at start is a retry: its check is a count, a few bytes
FAKE_WINDOWS=1 "$STACKFOLD" continuous -o "$T/hg" --window 1 --folded -- "$T/fake" 2>"$T/hg0.log" &
cpid=$!
wait_for 1 " samples, " "$T/hg0.log"
stop
standin huge
FAKE_WINDOWS=0 start "$T/hg" hHuge "clickhouse://127.0.0.1:$SPORT/stackfold"
wait_for 1 "answer larger than" "$T/hg.log" 30
wait_for 1 "huge answer" "$T/s/huge.stat" 10
stop
check "a huge count answer: refused past its bound" grep -q "answer larger than 256 bytes" "$T/hg.log"
bytes=$(sed -n 's/^huge answer: \([0-9]*\) bytes sent$/\1/p' "$T/s/huge.stat" | head -1)
check "a huge count answer: not read (${bytes:-?} of 256 MiB sent)" test "${bytes:-999999999}" -lt $((32 << 20))
standin hang-insert
FAKE_WINDOWS=2 start "$T/hi" hHi "clickhouse://127.0.0.1:$SPORT/stackfold"
wait_for 1 hanging "$T/s/hang-insert.stat" 30
sleep 1
s=$(stop_time)
check "a store hanging on INSERT: SIGTERM ends it within the grace (${s} s)" test "$s" -le 8
standin hang-select
FAKE_WINDOWS=1 start "$T/hg" hHs "clickhouse://127.0.0.1:$SPORT/stackfold"
wait_for 1 hanging "$T/s/hang-select.stat" 30
sleep 1
s=$(stop_time)
check "a store hanging on the retry check: SIGTERM ends it within the grace (${s} s)" test "$s" -le 8
"$STACKFOLD" continuous -o "$T/hx" --push "clickhouse://u:pw@127.0.0.1:1/a" \
	--push "clickhouse://u:pw@127.0.0.1:2/b" --check -- true 2>"$T/pw.err"
check_eq "a password over plain HTTP: warned about, once" 1 "$(grep -c "warning: .*password goes over plain HTTP" "$T/pw.err")"
printf 'u:pw\n' >"$T/pw"
"$STACKFOLD" continuous -o "$T/hx" --push "clickhouses://127.0.0.1:1/a" --push-auth "$T/pw" \
	--check -- true 2>"$T/pws.err"
check_eq "a password over HTTPS: no warning" 0 "$(grep -c warning "$T/pws.err")"

# --- G: a full disk ------------------------------------------------------------------
mkdir "$T/full"
if mount -t tmpfs -o size=512k tmpfs "$T/full"; then
	# windows delivered before: the journal at start has lines to keep
	FAKE_WINDOWS=2 start "$T/full/d" hFull "$CH_URL"
	wait_sent "$T/full/d" 2
	stop
	dd if=/dev/zero of="$T/full/filler" bs=4k 2>/dev/null
	FAKE_WINDOWS=6 FAKE_GAP=1 start "$T/full/d" hFull "$CH_URL"
	sleep 2.5
	check "a full disk: continuous --push starts and runs" kill -0 "$cpid"
	rm -f "$T/full/filler"
	wait_sent "$T/full/d" 3
	stop
	check "a full disk: the windows after it are delivered" test "$(sent "$T/full/d")" -ge 3
	check "a full disk: the journal's failure is said" grep -q "cannot write '.*push-.*sent': No space left on device" "$T/full/d.log"
	check_eq "a full disk: the delivered windows are in the store" "$(sent "$T/full/d")" \
		"$(ch_sql "SELECT uniqExact(window_id) FROM stackfold.windows WHERE host = 'hFull'")"
	umount "$T/full"
else
	fail "a full disk: mount -t tmpfs"
fi

# --- H: --label OR ---------------------------------------------------------------------
for t in a b c; do
	FAKE_WINDOWS=1 start "$T/t$t" "hT$t" "$CH_URL" --label team=$t --label env=x
done
for t in a b c; do wait_sent "$T/t$t" 1; done
for p in "${cpids[@]: -3}"; do kill -TERM "$p"; wait "$p"; done
want=$(( $(local_total "$T/ta") + $(local_total "$T/tb") ))
"$STACKFOLD" query "$CH_URL" --from "$T0" --to $(( $(date +%s) + 60 )) --label team=a \
	--label env=x --label team=b -o "$T/or.folded" 2>"$T/or.err"
check_eq "--label team=a --label team=b: either (and env=x)" "$want" "$(folded_total "$T/or.folded")"
check_eq "--label team=a --label team=a: usage error" 1 \
	"$("$STACKFOLD" query "$CH_URL" --from 1 --to 2 --label team=a --label team=a 2>/dev/null; echo $?)"
