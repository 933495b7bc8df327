#!/usr/bin/env bash
# t80-labs: every lab end to end, as a student would run it (shorter: 3 s
# captures at 999 Hz), then labs/check on what it produced; the bt/ family
# each alone through bpftrace and stackfold.  Live: root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

live_prereq "labs" || exit 0
plain_run_only "labs" || exit 0

if out=$(make -s -C "$TOP/labs" 2>&1); then pass "labs build (-Wall -Wextra -Werror)"
else fail "labs build" "$out"; exit 0; fi

# --- the bt/ family: lint with bpftrace -d (parse, semantic checks), then a
# real run whose output stackfold must accept.
# Every bt/*.bt (HZ PID FLUSH where it takes them; extra arguments are
# ignored), not only the labs' own.
for bt in "$TOP"/bt/*.bt; do
	check "bt/$(basename "$bt") passes bpftrace -d" bpftrace -d "$bt" 99 0 10
done

# run_bt SECONDS OUT ARGS...: bpftrace ARGS with stdout in OUT, stopped as
# Ctrl-C would SECONDS after it attached (labs/lib.sh's capture).
run_bt() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	bash -c '. "$1"; shift; capture "$@"' bash "$TOP/labs/lib.sh" "$1" "$2" bpftrace "${@:3}" 2>"$2.err"
}

"$TOP/labs/build/syscalls" 0 &
work=$!
run_bt 1 "$T/kprofile.txt" "$TOP/bt/kprofile.bt" 99
run_bt 1 "$T/threads.txt" "$TOP/bt/threads.bt" 99 "$work"
kill "$work"; wait "$work" 2>/dev/null
if "$STACKFOLD" -q "$T/kprofile.txt" >"$T/kprofile.folded" 2>"$T/err" &&
	grep -q '^syscalls;.*_\[k\] [0-9]*$' "$T/kprofile.folded"; then
	pass "bt/kprofile.bt output -> stackfold: kernel stacks of the workload"
else
	fail "bt/kprofile.bt output -> stackfold" "$(cat "$T/err")" "$(head -n 5 "$T/kprofile.folded")"
fi
n=$("$STACKFOLD" -q --tid "$T/threads.txt" 2>"$T/err" | awk -v p="syscalls/$work" '$1 == p { print $2 }')
# buf(comm, 16): "syscalls" and its NUL padding, 8 bytes printed as \x00
pad=$(printf '\\x00%.0s' 1 2 3 4 5 6 7 8)
raw=$(K="@threads[$work, $work, syscalls$pad]:" awk 'index($0, ENVIRON["K"]) == 1 { print $NF }' "$T/threads.txt")
if [ -n "$raw" ] && [ "$raw" -gt 0 ] && [ "${n:-}" = "$raw" ]; then
	pass "bt/threads.bt output -> stackfold --tid: syscalls/$work, $n samples as bpftrace counted"
else
	fail "bt/threads.bt output -> stackfold --tid" "bpftrace: '${raw:-}' samples, stackfold: '${n:-}'" "$(cat "$T/err")"
fi

# --- each lab: the script, then labs/check on its output.  The labs where
# students write bpftrace (1, 9, 10) are checked with the solutions in
# labs/solutions/.
# 999 Hz: enough samples to judge a 5% share in 3 s even when the
# workload gets a third of a CPU.
export LAB_SECONDS=${LAB_SECONDS:-3} LAB_HZ=${LAB_HZ:-999}
SOL=$TOP/labs/solutions
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
has_dwarf=0
"$TOP/scripts/profile" --help 2>&1 | grep -q -- '--call-graph' && has_dwarf=1
for script in "$TOP"/labs/[0-9][0-9]-*.sh; do
	name=$(basename "$script" .sh)
	n=${name%%-*}
	dir=$T/lab$n
	if [ "$n" = 06 ] && [ "$has_dwarf" = 0 ]; then
		# Until scripts/profile has --call-graph: one clear line, exit 1.
		"$script" "$dir" >"$T/$name.out" 2>"$T/$name.err"
		rc=$?
		if [ "$rc" = 1 ] && [ "$(grep -c . "$T/$name.err")" = 1 ] && grep -q -- '--call-graph' "$T/$name.err"; then
			pass "lab $name without scripts/profile --call-graph stops with one line: $(cat "$T/$name.err")"
		else
			fail "lab $name without --call-graph stops with one line" "exit $rc" "$(head -n 5 "$T/$name.err")"
		fi
		if [ "${CI:-}" = true ]; then fail "lab $name runs" "scripts/profile has no --call-graph dwarf"
		else skip "lab $name runs" "scripts/profile has no --call-graph dwarf yet"; fi
		continue
	fi
	start=$(date +%s)
	LAB_MINE=$T/mine "$script" "$dir" >"$T/$name.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		pass "lab $name runs ($(( $(date +%s) - start )) s)"
	else
		why="exit status $rc"
		[ "$rc" -le 128 ] || why="$why (killed by signal $((rc - 128)))"
		fail "lab $name runs" "$why" "$(tail -n 15 "$T/$name.log")"
		continue
	fi
	start=$(date +%s)
	if out=$(LAB_MINE=$SOL "$TOP/labs/check" "$n" "$dir" 2>&1); then
		pass "labs/check $n: the finding is visible ($(( $(date +%s) - start )) s)"
	else
		fail "labs/check $n" "$(grep -v '^ok:' <<<"$out")"
	fi
done
check_eq "lab 12 restores kernel.bpf_stats_enabled" "$stats_before" "$(sysctl -n kernel.bpf_stats_enabled)"
check "lab 1 gave the student the outlines" test -s "$T/mine/count.bt" -a -s "$T/mine/interval.bt"

# --- labs/check must say no to wrong programs: the wrong ones in
# tests/labs-wrong/ (each named in a PROBLEM line) and the untouched
# outlines of labs/exercises/.
wrong_programs() {	# LAB PROGRAM...
	local lab=$1 out p missed=""
	shift
	if out=$(LAB_MINE=$TOP/tests/labs-wrong "$TOP/labs/check" "$lab" "$T/lab$lab" 2>&1); then
		fail "labs/check $lab rejects wrong programs" "it accepted:" "$out"
		return
	fi
	for p in "$@"; do grep -q "^PROBLEM: $p" <<<"$out" || missed="$missed $p"; done
	check_eq "labs/check $lab rejects each wrong program (tests/labs-wrong)" "" "$missed"
	[ -z "$missed" ] || printf '    %s\n' "$out"
}
[ -d "$T/lab01" ] && wrong_programs 01 count.bt hist.bt matrix_multiply interval.bt
[ -d "$T/lab09" ] && wrong_programs 09 syscost.bt
[ -d "$T/lab10" ] && wrong_programs 10 sleeps.bt
if [ -d "$T/lab01" ]; then
	out=$(LAB_MINE=$TOP/labs/exercises "$TOP/labs/check" 1 "$T/lab01" 2>&1)
	n=$(grep -c '^PROBLEM:' <<<"$out")
	if [ "$n" -ge 4 ]; then pass "labs/check 1 rejects the untouched outlines ($n problems)"
	else fail "labs/check 1 rejects the untouched outlines" "$out"; fi
fi

# --- labs/check must say no to doctored outputs.  For each lab, its main
# file with a function removed, two shares swapped, another lab's file in
# its place, or emptied; the check must fail with a PROBLEM line about the
# profile (not about the student's programs, left out here).
# lab: FILE FRAMES-TO-REMOVE (a regular expression) SWAP-A SWAP-B
# ANOTHER-LAB'S-FILE
doctor_spec() {
	case $1 in
	02) echo 'trace.folded ^vfs_read_\[k\]$ vfs_read_[k] vfs_write_[k] lab03/shares.folded' ;;
	03) echo "shares.folded ^checksum$ matrix_multiply compress lab02/trace.folded" ;;
	05) echo "fp.folded ^main$ fp.folded nofp.folded lab03/shares.folded" ;;
	06) echo "dwarf.folded ^read_data$ dwarf.folded nofp.folded lab09/syscalls.folded" ;;
	07) echo "symbols.folded ^matrix_multiply$ shares-sym shares-strip lab05/nofp.folded" ;;
	08) echo 'jit.folded ^jit_cold_\[j\]$ jit-map jit-nomap lab07/symbols.folded' ;;
	09) echo "syscalls.folded ^sum_user$ sum_user tiny_writes lab10/offcpu.folded" ;;
	10) echo "offcpu.folded futex sleeper reader lab09/syscalls.folded" ;;
	11) echo "before.folded ^matrix_multiply$ before.folded after.folded lab09/syscalls.folded" ;;
	12) echo "overhead.txt - aggregate printf lab03/shares.folded" ;;
	04) echo "windows.txt - - - lab03/shares.folded" ;;
	esac
}
# swap_names FILE A B: every frame (or word) A becomes B and B becomes A.
swap_names() {
	awk -v a="$2" -v b="$3" '{ n = split($1, f, ";"); s = ""
		for (i = 1; i <= n; i++) { x = f[i]; if (x == a) x = b; else if (x == b) x = a
			s = s (i > 1 ? ";" : "") x }
		$1 = s; print }' "$1"
}
doctor() {	# LAB KIND: make $T/bad$LAB-KIND from $T/labLAB
	local lab=$1 kind=$2 file frame sa sb other d
	read -r file frame sa sb other <<<"$(doctor_spec "$lab")"
	d=$T/bad$lab-$kind
	rm -rf "$d"; cp -r "$T/lab$lab" "$d"
	case $kind in
	removed)
		case $lab in
		04) awk '{ $2 = 0; print }' "$T/lab$lab/$file" >"$d/$file" ;;
		12) grep -v '^mode=printf-cached ' "$T/lab$lab/$file" >"$d/$file" ;;
		*) RE=$frame awk '{ n = split($1, f, ";"); s = ""
			for (i = 1; i <= n; i++) if (f[i] !~ ENVIRON["RE"]) s = s (s == "" ? "" : ";") f[i]
			$1 = s; print }' "$T/lab$lab/$file" >"$d/$file" ;;
		esac ;;
	swapped)
		case $lab in
		04) awk '{ $2 = $3 - $2; print }' "$T/lab$lab/$file" >"$d/$file" ;;
		12) sed 's/^mode=aggregate /mode=TMP /; s/^mode=printf /mode=aggregate /; s/^mode=TMP /mode=printf /' \
			"$T/lab$lab/$file" >"$d/$file" ;;
		05 | 06 | 11) cp "$T/lab$lab/$sb" "$d/$sa"; cp "$T/lab$lab/$sa" "$d/$sb" ;;
		*) swap_names "$T/lab$lab/$file" "$sa" "$sb" >"$d/$file" ;;
		esac ;;
	other) cp "$T/$other" "$d/$file" ;;
	empty) : >"$d/$file" ;;
	esac
}
mkdir -p "$T/nomine"
for lab in 02 03 04 05 06 07 08 09 10 11 12; do
	read -r file frame sa sb other <<<"$(doctor_spec "$lab")"
	[ -s "$T/lab$lab/$file" ] || continue
	[ -s "$T/$other" ] || other=lab02/trace.folded
	for kind in removed swapped other empty; do
		doctor "$lab" "$kind"
		out=$(LAB_MINE=$T/nomine "$TOP/labs/check" "$lab" "$T/bad$lab-$kind" 2>&1)
		rc=$?
		if [ "$rc" = 1 ] && grep '^PROBLEM:' <<<"$out" | grep -qv "$T/nomine"; then
			pass "labs/check $lab fails on $file $kind: $(grep '^PROBLEM:' <<<"$out" | grep -v "$T/nomine" | head -n 1 | cut -c10-130)"
		else
			fail "labs/check $lab fails on $file $kind" "exit $rc" "$out"
		fi
	done
done

# --- lab 7: the debug file gone, with a warm symbol cache.  The warm
# cache alone would still name shares-dbglink's functions; the lab
# symbolizes with an empty cache, so its check sees the file is gone.
if [ -d "$T/lab07" ]; then
	cp -a "$TOP/labs/build" "$T/build-nodebug"
	mm=$(nm "$T/build-nodebug/shares-sym" | awk '$3 == "matrix_multiply" { print $1 }')
	dbg=$T/build-nodebug/shares-dbglink
	echo "$dbg 0x$mm" | STACKFOLD_CACHE_DIR=$T/warm "$STACKFOLD" symbolize >/dev/null 2>&1
	rm "$T/build-nodebug/.debug/shares-dbglink.debug"
	warm=$(echo "$dbg 0x$mm" | STACKFOLD_CACHE_DIR=$T/warm "$STACKFOLD" symbolize 2>/dev/null | head -n 1)
	check_eq "a warm cache still names shares-dbglink without its debug file" matrix_multiply "$warm"
	if STACKFOLD_CACHE_DIR=$T/warm LAB_BUILD=$T/build-nodebug "$TOP/labs/07-symbols.sh" "$T/lab07-nodebug" >"$T/nodebug.log" 2>&1; then
		out=$("$TOP/labs/check" 7 "$T/lab07-nodebug" 2>&1)
		if grep -q '^PROBLEM: .*shares-dbglink' <<<"$out"; then
			pass "labs/check 7 sees the debug file gone, even with a warm cache"
		else
			fail "labs/check 7 sees the debug file gone" "$out"
		fi
	else
		fail "lab 07 runs without shares-dbglink's debug file" "$(tail -n 5 "$T/nodebug.log")"
	fi
	# The page's answer 1: the middle offset of offsets.txt is in run.
	mid=$(sed -n 2p "$T/lab07/offsets.txt")
	check_eq "lab 7's offsets.txt: the middle offset is in run (answer 1)" run "$(awk '{ print $2 }' <<<"$mid")"
fi

# --- a lab stops with one clear last line when its workload dies at once
# or during the capture (2 s in: on a loaded machine, perhaps before
# scripts/profile has started, which it then says).
cp -a "$TOP/labs/build" "$T/build-dead"
printf '#!/bin/sh\nexit 3\n' >"$T/build-dead/shares"
printf '#!/bin/sh\nsleep 2\nexit 3\n' >"$T/build-dead/shares-fp"
for c in "03-flame-graph:(no samples|could not start|shares .* died)" \
	"05-frame-pointers:(shares-fp .pid [0-9]*. died|could not start)"; do
	LAB_BUILD=$T/build-dead "$TOP/labs/${c%%:*}.sh" "$T/dead" >/dev/null 2>"$T/dead.err"
	rc=$?
	last=$(tail -n 1 "$T/dead.err")
	if [ "$rc" = 1 ] && grep -Eq "^lab: .*${c#*:}" <<<"$last"; then
		pass "lab ${c%%:*} with a dead workload stops with: $last"
	else
		fail "lab ${c%%:*} with a dead workload stops with one clear line" "exit $rc" "$(tail -n 5 "$T/dead.err")"
	fi
done

"$TOP/labs/check" 13 /tmp >/dev/null 2>&1
check_eq "labs/check with no such lab is a usage error (exit 2)" 2 "$?"
