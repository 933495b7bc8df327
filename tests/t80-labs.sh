#!/usr/bin/env bash
# t80-labs: every lab end to end, as a student would run it (shorter: 3 s
# captures at 499 Hz), then labs/check on what it produced; the bt/ family
# each alone through bpftrace and stackfold.  Live: root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

live_prereq "labs" || exit 0

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

# --- each lab: the script, then labs/check.
export LAB_SECONDS=${LAB_SECONDS:-3} LAB_HZ=${LAB_HZ:-499}
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
for script in "$TOP"/labs/0[1-8]-*.sh; do
	name=$(basename "$script" .sh)
	n=${name%%-*}
	dir=$T/lab$n
	start=$(date +%s)
	"$script" "$dir" >"$T/$name.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		pass "lab $name runs ($(( $(date +%s) - start )) s)"
	else
		why="exit status $rc"
		[ "$rc" -le 128 ] || why="$why (killed by signal $((rc - 128)))"
		fail "lab $name runs" "$why" "$(tail -n 15 "$T/$name.log")"
		continue
	fi
	if out=$("$TOP/labs/check" "$n" "$dir" 2>&1); then
		pass "labs/check $n: the finding is visible"
	else
		fail "labs/check $n" "$(grep -v '^ok:' <<<"$out")"
	fi
done
check_eq "lab 08 restores kernel.bpf_stats_enabled" "$stats_before" "$(sysctl -n kernel.bpf_stats_enabled)"

# --- labs/check must be able to say no.
# Lab 2's shares from stacks without frame pointers (lab 3): read_data, the
# middle frame, is gone, so its 15% is not there.
if [ -s "$T/lab03/nofp.folded" ] && [ -d "$T/lab02" ]; then
	mkdir -p "$T/bad02"
	cp "$T/lab02/"* "$T/bad02/"
	sed 's/^shares-nofp;/shares;/' "$T/lab03/nofp.folded" >"$T/bad02/shares.folded"
	if out=$("$TOP/labs/check" 2 "$T/bad02" 2>&1); then
		fail "labs/check 2 rejects broken stacks" "it accepted:" "$out"
	elif grep -q '^PROBLEM: read_data has' <<<"$out"; then
		pass "labs/check 2 rejects broken stacks and names read_data"
	else
		fail "labs/check 2 rejects broken stacks and names read_data" "$out"
	fi
fi
# Lab 6's values as if they were samples (divided by 1e6): the off-CPU
# seconds no longer match the capture.
if [ -s "$T/lab06/offcpu.folded" ]; then
	mkdir -p "$T/bad06"
	cp "$T/lab06/"* "$T/bad06/"
	awk '{ $NF = int($NF / 1e6); print }' "$T/lab06/offcpu.folded" >"$T/bad06/offcpu.folded"
	if "$TOP/labs/check" 6 "$T/bad06" >"$T/bad06.out" 2>&1; then
		fail "labs/check 6 rejects values that are not nanoseconds" "$(cat "$T/bad06.out")"
	else
		pass "labs/check 6 rejects values that are not nanoseconds"
	fi
fi
"$TOP/labs/check" 9 /tmp >/dev/null 2>&1
check_eq "labs/check with no such lab is a usage error (exit 2)" 2 "$?"
