#!/usr/bin/env bash
# t47-mapsrc-live: the map reader (collapse/capture/mapsrc.h) against a
# real bpftrace running bt/continuous.bt on one process (bin/demo).
# Checks: a buffer frozen (the process stopped) read from the maps and
# printed by bpftrace gives the same folded stacks and total; a layout not
# as expected (another key size, a renamed map, an unknown version) is
# refused with one line saying why; a map too small for the window
# (BPFTRACE_MAP_KEYS_MAX) shows its loss as total - sum, counted as
# dropped; a read takes the map and zeroes its total.  Needs root and
# bpftrace 0.17.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

live_prereq "mapsrc live" || exit 0
[ -x "$TOP/bin/demo" ] || { fail "mapsrc live: bin/demo is built (make demo)"; exit 0; }
BTV=$(bpftrace --version 2>/dev/null)
case $BTV in
*v0.17.*) ;;
*) if [ "${CI:-}" = true ]; then fail "mapsrc live" "bpftrace 0.17 wanted, found '$BTV'"
   else skip "mapsrc live" "bpftrace 0.17 wanted, found '$BTV'"; fi
   exit 0 ;;
esac
export STACKFOLD_BPFTRACE_VERSION=$BTV

b=.output san=""
if [ "${SANITIZE:-}" = 1 ]; then
	b=.output-san
	san="-fsanitize=address,undefined -fno-sanitize-recover=all"
fi
DRV=$T/mapsrc_driver
# shellcheck disable=SC2086
if ! out=$(cc -std=gnu11 -O1 -g $san -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I"$TOP" -I"$TOP/collapse" -I"$TOP/symbolizer" -o "$DRV" "$TOP/tests/tools/mapsrc_driver.c" \
	"$TOP/$b/libstackfold.a" $SF_LDLIBS 2>&1); then
	fail "mapsrc live: driver builds" "$out"
	exit 0
fi

demo="" bt=""
cleanup() {
	[ -n "$bt" ] && kill -KILL "$bt" 2>/dev/null
	[ -n "$demo" ] && { kill -CONT "$demo"; kill "$demo"; } 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# start_bt NAME PROG [ENV...]: bpftrace on $demo, 100 s windows (none
# ends during the test), output in $T/NAME.txt; false when it did not
# attach in 20 s
start_bt() {
	local name=$1 prog=$2 i
	shift 2
	env "$@" BPFTRACE_NO_USER_SYMBOLS=1 bpftrace "$prog" 99 "$demo" 100 \
		>"$T/$name.txt" 2>"$T/$name.err" &
	bt=$!
	for ((i = 0; i < 200; i++)); do
		grep -q '^#attached' "$T/$name.txt" 2>/dev/null && return 0
		kill -0 "$bt" 2>/dev/null || break
		sleep 0.1
	done
	fail "mapsrc live: bpftrace ($name) attached" "$(tail -n 5 "$T/$name.err")"
	return 1
}
stop_bt() {
	kill -INT "$bt"
	wait "$bt"
	bt=""
}

"$TOP/bin/demo" 0 >/dev/null &
demo=$!

# --- one frozen window, both ways ------------------------------------------
if start_bt frozen "$TOP/bt/continuous.bt"; then
	sleep 2
	kill -STOP "$demo"
	sleep 0.3	# samples already taken are in; no new ones
	"$DRV" maps "$bt" peek "$T/maps.folded" >"$T/maps.out" 2>&1
	rc=$?
	stop_bt
	kill -CONT "$demo"
	cat "$T/frozen.err" >>"$T/frozen.txt"	# its stack-id errors
	"$DRV" text "$T/frozen.txt" "$T/text.folded" >"$T/text.out" 2>&1
	check_eq "mapsrc: peek read ran" 0 "$rc"
	check_diff "mapsrc: folded stacks equal to bpftrace's print" "$T/text.folded" "$T/maps.folded"
	read -r _ total _ sum _ _ _ errs _ <"$T/maps.out"
	bt_total=$(awk '/^@stackfold_t(_b)?: / { print $2; exit }' "$T/frozen.txt")
	check_eq "mapsrc: total equal to bpftrace's" "$bt_total" "$total"
	check_eq "mapsrc: sum of entries is the total" "$total" "$sum"
	check "mapsrc: the window has samples" test "${total:-0}" -gt 20
	check_eq "mapsrc: stack-id errors as bpftrace's" \
		"$(grep -c 'failed to look up stack id' "$T/frozen.txt")" "$errs"
	check_eq "mapsrc: losses as the text's" "$(tail -n 1 "$T/text.out")" "$(tail -n 1 "$T/maps.out")"
fi

# --- layouts refused --------------------------------------------------------
# refused ARGS...: the driver's output, which must be one "refused:" line
refused() {
	local out rc
	out=$(env "$@" 2>&1)
	rc=$?
	[ "$rc" = 3 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
		[ "${out#refused: }" != "$out" ] && printf '%s\n' "$out"
}
sed 's/@stackfold_seen/@stackfold_new/g' "$TOP/bt/continuous.bt" >"$T/renamed.bt"
if start_bt renamed "$T/renamed.bt"; then
	out=$(refused "$DRV" maps "$bt" peek "$T/r.folded")
	check_eq "mapsrc: a renamed map refused" \
		"refused: no map @stackfold_seen in bpftrace (another program, or a map renamed)" "$out"
	out=$(refused MAPSRC_KEY_SIZE=57 "$DRV" maps "$bt" peek "$T/r.folded")
	check_eq "mapsrc: another key size refused" \
		"refused: map @stackfold has 49-byte keys, not 57" "$out"
	out=$(refused STACKFOLD_BPFTRACE_VERSION="bpftrace v0.21.0" "$DRV" maps "$bt" peek "$T/r.folded")
	check_eq "mapsrc: an unknown version refused" \
		"refused: bpftrace 0.21.0: its map layout is not known (0.17 is)" "$out"
	stop_bt
fi

# --- a full map: the loss counted, the map taken ----------------------------
if start_bt full "$TOP/bt/continuous.bt" BPFTRACE_MAP_KEYS_MAX=4; then
	sleep 2
	kill -STOP "$demo"
	sleep 0.3
	"$DRV" maps "$bt" read "$T/full.folded" >"$T/full.out" 2>&1
	"$DRV" maps "$bt" read "$T/again.folded" >"$T/again.out" 2>&1	# the other map
	"$DRV" maps "$bt" read "$T/again.folded" >"$T/again2.out" 2>&1	# this one again
	stop_bt
	kill -CONT "$demo"
	read -r _ total _ sum _ entries _ _ <"$T/full.out"
	check "mapsrc: a full map kept at most its 4 keys" test "${entries:-9}" -le 4
	check "mapsrc: a full map's total is past its sum" test "${total:-0}" -gt "${sum:-0}"
	check_eq "mapsrc: the loss counted as dropped" "dropped $((total - sum)) stackid_errors 0" \
		"$(tail -n 1 "$T/full.out")"
	check_eq "mapsrc: the map read is empty, its total zero" \
		"total 0 sum 0 entries 0" "$(head -n 1 "$T/again2.out" | cut -d' ' -f1-6)"
fi

# --- a stack map per buffer, emptied once its window is read ----------------
# stack_maps PID: "ENTRIES:VALUE_SIZE" of each stack-trace map bpftrace
# PID holds (its fds' fdinfo: map_type 7), in fd order
stack_maps() {
	local f id vs
	for f in /proc/"$1"/fdinfo/*; do
		grep -q '^map_type:[[:space:]]*7$' "$f" 2>/dev/null || continue
		id=$(awk '$1 == "map_id:" { print $2 }' "$f")
		vs=$(awk '$1 == "value_size:" { print $2 }' "$f")
		printf '%s:%s\n' "$(bpftool -j map dump id "$id" | grep -o '"key"' | wc -l)" "$vs"
	done | sort -t: -k2n | tr '\n' ' '
}
if start_bt perbuf "$TOP/bt/continuous.bt"; then
	sleep 2
	kill -STOP "$demo"
	sleep 0.3
	before=$(stack_maps "$bt")
	"$DRV" maps "$bt" read "$T/pb1.folded" >"$T/pb1.out" 2>&1	# @stackfold
	after1=$(stack_maps "$bt")
	"$DRV" maps "$bt" read "$T/pb2.folded" >"$T/pb2.out" 2>&1	# @stackfold_b
	after2=$(stack_maps "$bt")
	kill -CONT "$demo"
	sleep 1.5
	kill -STOP "$demo"
	sleep 0.3
	"$DRV" maps "$bt" read "$T/pb3.folded" >"$T/pb3.out" 2>&1	# @stackfold again
	stop_bt
	kill -CONT "$demo"
	read -r _ _ _ _ _ entries _ _ _ _ _ cleared _ <"$T/pb1.out"
	check "per-buffer stacks: two stack maps, 126 and 127 deep, the deeper filled ($before)" \
		eval '[[ "$before" =~ ^[0-9]+:1008\ [1-9][0-9]*:1016\ $ ]]'
	check "per-buffer stacks: the window read had entries ($entries), its ids deleted ($cleared)" \
		test "${entries:-0}" -gt 0 -a "${cleared:-0}" -gt 0
	check_eq "per-buffer stacks: @stackfold's map empty once its window is read" \
		"0:1008 0:1016 " "$after1"
	check_eq "per-buffer stacks: both empty once both windows are read" \
		"0:1008 0:1016 " "$after2"
	read -r _ total _ _ _ entries _ errs _ <"$T/pb3.out"
	check "per-buffer stacks: the next window's stacks read again ($entries entries, $errs errors)" \
		test "${entries:-0}" -gt 0 -a "${errs:-1}" = 0
	check "per-buffer stacks: ... and named from the demo (not one frame)" \
		grep -q ';' "$T/pb3.folded"
fi

# --- stackfold continuous --source ------------------------------------------
# cont NAME ARGS...: scripts/continuous on $demo, 1 s windows, into
# $T/NAME (log $T/NAME.log) until 2 windows are written (30 s at most) or
# it ends; its exit status in $T/NAME.rc
cont() {
	local name=$1 i
	shift
	"$TOP/scripts/continuous" -p "$demo" --window 1 --folded -o "$T/$name" "$@" \
		2>"$T/$name.log" &
	local c=$!
	for ((i = 0; i < 300; i++)); do
		[ "$(find "$T/$name" -name '*.pb.gz' 2>/dev/null | wc -l)" -ge 2 ] && break
		kill -0 "$c" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$c" 2>/dev/null
	wait "$c"
	echo $? >"$T/$name.rc"
}
# nsource DIR: windows of DIR whose metadata says "source maps", of all
nsource() {
	local f n=0 all=0
	for f in "$1"/*.pb.gz; do
		[ -e "$f" ] || continue
		all=$((all + 1))
		zcat "$f" | grep -aq 'source maps' && n=$((n + 1))
	done
	echo "$n of $all"
}

cont maps --source maps -v
check_eq "continuous --source maps: stops cleanly" 0 "$(cat "$T/maps.rc")"
check_eq "continuous --source maps -v: the source said once" 1 \
	"$(grep -c "^stackfold: reading bpftrace 0.17.[0-9]*'s maps directly$" "$T/maps.log")"
n=$(nsource "$T/maps")
check "continuous --source maps: windows say 'source maps' ($n)" test "${n% of *}" -ge 2 -a "${n% of *}" = "${n#* of }"
bad=""
for f in "$T"/maps/*.folded; do
	s=$(sed -n "s/^stackfold: $(basename "$f" .folded): \([0-9]*\) samples.*/\1/p" "$T/maps.log")
	[ "$s" = "$(folded_total "$f")" ] || bad="$bad $(basename "$f"):$s"
done
check_eq "continuous --source maps: each window's folded total is its logged count" "" "$bad"
# (read every 250 ms, four times a 1 s window: each read's total is held
# against its own entries, so no sample is lost or counted twice)
check "continuous --source maps: no window short of or past bpftrace's count" \
	eval '! grep -E "more than bpftrace counted|dropped" "$T/maps.log"'

STACKFOLD_MAPSRC_KEY_SIZE=57 cont doctored
check_eq "continuous, doctored layout: one line says why the text is read" \
	"stackfold: reading bpftrace's text, not its maps: map @stackfold has 49-byte keys, not 57" \
	"$(grep -v ' samples, \|^stackfold: stopped' "$T/doctored.log")"
n=$(nsource "$T/doctored")
check "continuous, doctored layout: windows from the text ($n)" test "${n% of *}" = 0 -a "${n#* of }" -ge 2

STACKFOLD_MAPSRC_KEY_SIZE=57 cont refused --source maps
check_eq "continuous --source maps, doctored layout: exit 3" 3 "$(cat "$T/refused.rc")"
check "continuous --source maps, doctored layout: says why" \
	grep -q "^stackfold: --source maps: map @stackfold has 49-byte keys, not 57$" "$T/refused.log"

# The second stack map only where the maps are read: --source text (as
# bpftrace >= 0.18) runs the program with one map for both buffers.
check "continuous --source maps: @stackfold_b's stacks 126 deep (a map of their own)" \
	grep -q 'ustack(perf, 126), kstack(perf, 126)' "$T/maps/.continuous.bt"
cont text --source text
check_eq "continuous --source text: stops cleanly" 0 "$(cat "$T/text.rc")"
check "continuous --source text: one stack map for both buffers" \
	eval '! grep -q ", 126)" "$T/text/.continuous.bt" && grep -q "@stackfold_b\[.*ustack(perf), kstack(perf)\]" "$T/text/.continuous.bt"'
n=$(nsource "$T/text")
check "continuous --source text: windows from the text ($n)" test "${n% of *}" = 0 -a "${n#* of }" -ge 2

# --max-memory holds in the map source too: a budget below the RSS at the
# window's start puts every entry past the 256th in one [overflow] stack,
# every sample still counted (short processes: a new entry each).
(while :; do /bin/true; done) &
loop=$!
"$TOP/scripts/continuous" -a -F 999 --window 2 --source maps --max-memory 1M --folded \
	-o "$T/budget" 2>"$T/budget.log" &
c=$!
for ((i = 0; i < 300; i++)); do
	[ "$(find "$T/budget" -name '*.pb.gz' 2>/dev/null | wc -l)" -ge 1 ] && break
	kill -0 "$c" 2>/dev/null || break
	sleep 0.1
done
kill -TERM "$c" 2>/dev/null
wait "$c"
kill "$loop"
wait "$loop" 2>/dev/null
f=$(find "$T/budget" -name '*.folded' | sort | head -n 1)
s=$(sed -n "s/^stackfold: $(basename "${f:-none}" .folded): \([0-9]*\) samples.*/\1/p" "$T/budget.log")
check "maps, --max-memory: the window past the budget in one [overflow] stack" \
	grep -q '^\[overflow\];\[overflow\] [0-9]' "${f:-/dev/null}"
check "maps, --max-memory: the overflow said" \
	grep -q "^stackfold: $(basename "${f:-none}" .folded): [0-9]* samples, [0-9]* stacks.* samples past the memory budget" "$T/budget.log"
check_eq "maps, --max-memory: every sample in the window's folded total" "${s:-?}" "$(folded_total "${f:-/dev/null}")"
