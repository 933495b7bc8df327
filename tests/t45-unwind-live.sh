#!/usr/bin/env bash
# t45-unwind-live.sh - scripts/profile --call-graph dwarf on a live program
# built without frame pointers (tests/fixtures/unwind/uwprog): the whole
# chain to main; the raw capture's round trip (owner-only file); and
# fidelity against `perf record --call-graph dwarf` sampling the same
# process at the same time (mean user depth within 10% of perf's, >= 90% of
# samples reaching the entry, leaf shares within a TVD of 0.10), with the
# same comparison shown failing on a doctored capture.  Needs root,
# bpftrace and perf.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
live_prereq "unwind live" || exit 0
B=$T/bin
"$TOP/tests/fixtures/unwind/build.sh" "$B" >/dev/null 2>&1 || { fail "unwind live: build uwprog"; exit 0; }

# --- the whole chain, and the raw capture ---------------------------------
"$TOP/scripts/profile" --call-graph dwarf -U -f folded -o "$T/lib" --save-raw "$T/lib.raw" \
	-- "$B/uwprog" lib 2 >/dev/null 2>"$T/lib.err"
chain='^uwprog;_start;__libc_start_main;__libc_start_call_main;main;run_lib;lib_entry;lib_mid;lib_leaf [0-9]+$'
total=$(folded_total "$T/lib.folded")
full=$(grep -E "$chain" "$T/lib.folded" | awk '{ s += $NF } END { print s + 0 }')
check "live chain: samples taken ($total)" test "$total" -ge 20
check "live chain: >= 95% of samples have the whole chain to main ($full of $total)" \
	test $((full * 100)) -ge $((total * 95))
check "live chain: a frame-pointer walk of the same program does not (the test would see it)" \
	bash -c "'$TOP/scripts/profile' -U -f folded -o '$T/fp' -- '$B/uwprog' lib 1 >/dev/null 2>&1;
		! grep -Eq '$chain' '$T/fp.folded'"
check_eq "raw capture: owner-only (it holds stack copies)" 600 "$(stat -c %a "$T/lib.raw")"
"$STACKFOLD" -U -f folded -o "$T/replay.folded" "$T/lib.raw" 2>/dev/null
check_diff "raw capture: replayed, the same stacks" "$T/lib.folded" "$T/replay.folded"

# --- against perf, same process, same time -----------------------------------
if ! command -v perf >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then fail "unwind vs perf" "perf (linux-perf) not installed"; else skip "unwind vs perf" "perf not installed"; fi
	exit 0
fi
"$B/uwprog" mix 12 &
P=$!
sleep 0.3
perf record -q -F 99 -e cpu-clock --call-graph dwarf -p "$P" -o "$T/perf.data" -- sleep 7 >/dev/null 2>&1 &
PR=$!
"$TOP/scripts/profile" --call-graph dwarf -U -f folded -o "$T/mix" -p "$P" -d 6 >/dev/null 2>"$T/mix.err"
wait "$PR"
kill "$P" 2>/dev/null
wait "$P" 2>/dev/null
perf script -i "$T/perf.data" -F comm,tid,ip,sym,dso --no-inline >"$T/perf.txt" 2>/dev/null
fig=$(python3 "$TOP/tests/tools/fidelity.py" "$T/mix.folded" "$T/perf.txt")
check "vs perf: $fig" python3 "$TOP/tests/tools/fidelity.py" "$T/mix.folded" "$T/perf.txt" --check
# the same comparison, stackfold's stacks cut to their 4 leaf frames (as a
# walk that stops early): it must fail
awk '{ n = split($1, f, ";"); s = f[1]; for (i = (n > 4 ? n - 3 : 2); i <= n; i++) s = s ";" f[i]; print s, $2 }' \
	"$T/mix.folded" >"$T/short.folded"
check "vs perf: shallow stacks fail the comparison" \
	bash -c "! python3 '$TOP/tests/tools/fidelity.py' '$T/short.folded' '$T/perf.txt' --check"
# ... and the leaves swapped for another function
sed 's/;spin \([0-9]*\)$/;recurse \1/' "$T/mix.folded" >"$T/leaf.folded"
check "vs perf: other leaves fail the comparison" \
	bash -c "! python3 '$TOP/tests/tools/fidelity.py' '$T/leaf.folded' '$T/perf.txt' --check"
