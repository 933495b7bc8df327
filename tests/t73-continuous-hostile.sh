#!/usr/bin/env bash
# t73-continuous-hostile: live, names and times that a process or the
# scheduler could make wrong.  A SIGSTOPped `stackfold continuous` writes
# its windows, once resumed, with the times their samples were taken; an
# exec ping-pong of two non-PIE programs past the probe's exec cap (126)
# never names one's samples from the other's map, and says how many were
# left unnamed; a fork storm of children that exit before their map can be
# read is named from the parent's map; a comm of the four characters
# \x42 reads back as them, not as "B".
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"	# pb_decode
live_prereq "continuous hostile" || exit 0
PROFILE=$TOP/scripts/profile
chmod 755 "$T"
for n in alpha beta; do
	cc -O1 -no-pie -fno-pie -DNAME="$n" -o "$T/${n}_np" "$TOP/tests/fixtures/live/pingpong.c" ||
		{ fail "build $n (cc -no-pie)"; exit 0; }
done
cc -O1 -o "$T/forkstorm" "$TOP/tests/fixtures/live/forkstorm.c" || { fail "build forkstorm"; exit 0; }

# --- exec ping-pong past the cap --------------------------------------------------
timeout 120 "$PROFILE" -F 199 -f folded -o "$T/pp" -- "$T/alpha_np" 300 "$T/beta_np" "$T/alpha_np" \
	>/dev/null 2>"$T/pp.err"
check_eq "exec ping-pong: exit 0" 0 "$?"
check "exec ping-pong: named before the cap" grep -Eq '^alpha_np;.*alpha_work|^beta_np;.*beta_work' "$T/pp.folded"
wrong=$(grep -E '^alpha_np;.*beta_|^beta_np;.*alpha_' "$T/pp.folded" | head -n 3)
check_eq "exec ping-pong: no sample of one program named from the other's map" "" "$wrong"
check "exec ping-pong: the images past the cap are said" grep -q 'past 126 execs' "$T/pp.err"

# --- fork storm ---------------------------------------------------------------------
timeout 120 "$PROFILE" -F 499 -f folded -o "$T/fs" -- "$T/forkstorm" 400 >/dev/null 2>"$T/fs.err"
check_eq "fork storm: exit 0" 0 "$?"
# the user-space samples (a frame not in the kernel): named when no frame is
# module+0xOFF or [unknown].  A child is often sampled in _Fork or main,
# just forked or about to exit: named too, from the same map.
read -r unnamed all work <<<"$(awk '/^forkstorm;/ && !/^forkstorm(;[^;]*_\[k\])* [0-9]+$/ {
	all += $NF; if (/\+0x[0-9a-f]+(;| )|\[unknown\]/) unnamed += $NF; if (/child_work/) work += $NF }
	END { print unnamed + 0, all + 0, work + 0 }' "$T/fs.folded")"
if [ "$work" -gt 50 ] && [ $((unnamed * 100)) -le $((all * 15)) ]; then
	pass "fork storm: children named from the parent's map ($unnamed of $all user samples unnamed, $work in child_work)"
else
	fail "fork storm: children named from the parent's map" \
		"$unnamed of $all user samples unnamed, $work in child_work" \
		"$(grep -E '\+0x|\[unknown\]' "$T/fs.folded" | sort -t' ' -k2 -nr | head -n 5)"
fi

# --- a backslash comm ---------------------------------------------------------------
# shellcheck disable=SC2016
timeout 60 "$PROFILE" -f folded -o "$T/bs" -- sh -c 'printf "%s" "\\x42" >/proc/$$/comm
	end=$(( $(date +%s) + 2 )); while [ "$(date +%s)" -lt "$end" ]; do :; done' >/dev/null 2>"$T/bs.err"
check_eq "backslash comm: exit 0" 0 "$?"
check "backslash comm: read back as its four characters" grep -q '^\\x42;' "$T/bs.folded"
check_eq "backslash comm: never read as B" "" "$(grep '^B;' "$T/bs.folded" | head -n 2)"

# --- a SIGSTOPped stackfold continuous ---------------------------------------------
D=$T/cont
sh -c 'while :; do :; done' &
busy=$!
"$TOP/scripts/continuous" -o "$D" -p "$busy" --window 1 -q 2>"$T/cont.err" &
cpid=$!	# the script execs stackfold
for ((i = 0; i < 150; i++)); do [ "$(find "$D" -name '*.pb.gz' 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.1; done
kill -STOP "$cpid"
sleep 5
kill -CONT "$cpid"
sleep 3
kill -TERM "$cpid"
wait "$cpid"
kill "$busy"
names=$(find "$D" -name '*.pb.gz' -printf '%f\n' | sed 's/\.pb\.gz$//' | sort)
n=$(printf '%s\n' "$names" | grep -c .)
check "stopped continuous: 8 windows or more written" test "$n" -ge 8
check_eq "stopped continuous: no window named with a _NNN suffix (two in one second)" "" \
	"$(printf '%s\n' "$names" | grep _)"
# every window but the first (from BEGIN, after the interval timer was
# armed) and the last (cut by the stop) is 1 s of samples
bad=""
for s in $(printf '%s\n' "$names" | sed '1d;$d'); do
	d=$(pb_decode "$D/$s.pb.gz" 2>/dev/null | awk '/^duration_nanos:/ { print $2 }')
	if [ -z "$d" ] || [ "$d" -lt 900000000 ] || [ "$d" -gt 1100000000 ]; then bad="$bad $s=${d:-none}"; fi
done
check_eq "stopped continuous: every whole window is 1 s long (probe time), none 16 ms or 6 s" "" "$bad"

# --- " (deleted)" in a mapping's name ----------------------------------------------
# A file really named "real (deleted)" is that file, not a deleted "real";
# a deleted file's mapping says " (deleted)".
if cc -O1 -o "$T/real (deleted)" "$TOP/tests/fixtures/live/burn.c" && cp "$T/real (deleted)" "$T/gone"; then
	real="$T/real (deleted)"
	"$real" 30000 &	# killed below; long enough for a slow start of bpftrace
	rpid=$!
	"$T/gone" 30000 &
	gpid=$!
	sleep 0.2
	rm -f "$T/gone"
	timeout 60 "$PROFILE" -p "$rpid,$gpid" -d 1 -f pprof -o "$T/del" >/dev/null 2>"$T/del.err"
	kill "$rpid" "$gpid" 2>/dev/null
	wait "$rpid" "$gpid" 2>/dev/null
	names=$(pb_decode "$T/del.pb.gz" 2>/dev/null | awk '/^string_table:/ { print }')
	check "a file named 'real (deleted)': its mapping has its whole name" \
		grep -qxF "string_table: \"$T/real (deleted)\"" <<<"$names"
	check_eq "a file named 'real (deleted)': not taken for a deleted 'real'" "" \
		"$(grep -xF "string_table: \"$T/real\"" <<<"$names")"
	check "a deleted file: its mapping says ' (deleted)'" \
		grep -qxF "string_table: \"$T/gone (deleted)\"" <<<"$names"
else
	fail "build burn.c"
fi
