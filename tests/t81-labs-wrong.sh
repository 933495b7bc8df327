#!/usr/bin/env bash
# t81-labs-wrong: labs/check runs the programs students write (labs 1, 9,
# 10, 13-17) against workloads where each plausible mistake gives another
# answer: every wrong program of tests/labs-wrong/ (EXERCISE-HOW.bt, a
# doctored answer each) is refused, and every right one, the solutions
# and the other formulations of tests/labs-right/, is accepted.  Live:
# root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

live_prereq "labs" || exit 0
plain_run_only "labs" || exit 0
if out=$(make -s -C "$TOP/labs" 2>&1); then pass "labs build"
else fail "labs build" "$out"; exit 0; fi

lab_of() {
	case $1 in
	count | hist | profile | interval) echo 1 ;;
	syscost) echo 9 ;;
	sleeps) echo 10 ;;
	orders) echo 13 ;;
	execs) echo 14 ;;
	latency) echo 15 ;;
	runqlat) echo 16 ;;
	biolat) echo 17 ;;
	esac
}

# run_one FILE: labs/check on FILE as the program it is named for (the
# name up to the first '-', after a lab number NN- if any); OUT is what
# the check printed.
run_one() {
	local f=$1 base ex
	base=$(basename "$f" .bt)
	ex=${base#[0-9][0-9]-}
	ex=${ex%%-*}
	rm -rf "$T/mine"; mkdir -p "$T/mine"
	cp "$f" "$T/mine/$ex.bt"
	mkdir -p "$T/out-$base"
	OUT=$(LAB_ONLY=$ex LAB_MINE=$T/mine "$TOP/labs/check" "$(lab_of "$ex")" "$T/out-$base" 2>&1)
}

for f in "$TOP"/tests/labs-wrong/*.bt; do
	run_one "$f"
	rc=$?
	p=$(grep "^PROBLEM: " <<<"$OUT" | head -n 1)
	if [ "$rc" = 1 ] && [ -n "$p" ]; then
		pass "labs/check refuses tests/labs-wrong/$(basename "$f"): $(cut -c10-150 <<<"$p")"
	else
		fail "labs/check refuses tests/labs-wrong/$(basename "$f")" "exit $rc" "$OUT"
	fi
done
for f in "$TOP"/labs/solutions/*.bt "$TOP"/tests/labs-right/*.bt; do
	run_one "$f"
	rc=$?
	if [ "$rc" = 0 ]; then
		pass "labs/check accepts ${f#"$TOP"/}: $(grep '^ok: ' <<<"$OUT" | head -n 1 | cut -c5-150)"
	else
		fail "labs/check accepts ${f#"$TOP"/}" "exit $rc" "$OUT"
	fi
done
