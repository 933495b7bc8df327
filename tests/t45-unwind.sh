#!/usr/bin/env bash
# t45-unwind.sh - --call-graph dwarf from saved captures: stack copies of
# tests/fixtures/unwind/uwprog (built without frame pointers: recursion of
# known depth, a chain through a shared library, a thread, a signal
# handler, a stack deeper than the copy) unwound with CFI and checked frame
# by frame; then the same captures doctored (a stack word changed, a copy
# cut short, records lost, the pc moved) to show each check catches it.
# The captures' maps name the system's libc by build-id: on another libc
# the frames above main cannot be named, and the test says so.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
F=$TOP/tests/fixtures/unwind

# fixture MODE: the capture with the fixture's directory put back
fixture() { sed "s|@FIXDIR@|$F/elf|g" "$F/$1.raw"; }
# unwind FILE: user frames, folded (stderr: the -v summary, to $T/sum)
unwind() { "$STACKFOLD" -v -U -f folded -o - "$1" 2>"$T/sum"; }
# not CMD...: CMD fails
not() { ! "$@"; }
# samples FILE: the #U records in a capture
samples() { grep -c '^#U ' "$1"; }

MAIN='^uwprog;_start;__libc_start_main;__libc_start_call_main;main;'
declare -A want=(
	[recurse]="${MAIN}run_recurse(;recurse){1,17}(;spin)? [0-9]+$"
	[lib]="${MAIN}run_lib;lib_entry;lib_mid;lib_leaf [0-9]+$"
	[thread]='^uwprog;clone3;start_thread;thread_main;run_lib;lib_entry;lib_mid;lib_leaf [0-9]+$'
	[signal]="${MAIN}run_signal;idle_loop(;(__restore_rt|libc\.so\.6\+0x[0-9a-f]+);handler(;spin)?)? [0-9]+$"
	[deep]='^uwprog;\[truncated\](;recurse)+(;spin)? [0-9]+$'
)

# chain_ok MODE FOLDED NSAMPLES: every stack matches MODE's chain, frame
# by frame, and every sample is in one.  Prints what is wrong.
chain_ok() {
	local bad total
	bad=$(grep -Evc "${want[$1]}" "$2")
	total=$(folded_total "$2")
	if [ "$bad" != 0 ]; then
		echo "$bad stacks not the expected chain:"; grep -Ev "${want[$1]}" "$2" | head -3 | cut -c1-300
		return 1
	fi
	[ "$total" = "$3" ] || { echo "$total samples unwound, $3 captured"; return 1; }
}

libc=$(ldd "$F/elf/uwprog" 2>/dev/null | awk '/libc.so.6/ { print $3 }')
libc_bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
if ! grep -q "$libc_bid" "$F/lib.raw" 2>/dev/null || [ -z "$libc_bid" ]; then
	fail "fixtures: this libc ($libc) is not the one the captures were made with" \
		"remake them: tests/fixtures/unwind/record.sh"
fi

for m in recurse lib thread signal deep; do
	fixture "$m" >"$T/$m.raw"
	unwind "$T/$m.raw" >"$T/$m.folded"
	check "fixture $m: every sample unwound frame by frame" chain_ok "$m" "$T/$m.folded" "$(samples "$T/$m.raw")"
done
check "fixture recurse: the full depth (16 recursions, spin) is there" \
	grep -Eq "${MAIN}run_recurse(;recurse){17};spin " "$T/recurse.folded"
check "fixture signal: samples in the handler, across the signal frame" \
	grep -q ';handler' "$T/signal.folded"
unwind "$T/deep.raw" >/dev/null
check "fixture deep: truncated stacks counted" \
	grep -q "$(samples "$T/deep.raw") samples had more stack than was copied" "$T/sum"
check "fixture deep: no [unwind-error]" bash -c "! grep -q unwind-error '$T/deep.folded'"

# --- the checks catch wrong input -----------------------------------------
# a stack word changed: every word of the first chunk made 0x1234 (the
# return addresses with the rest): never the expected chain
awk '/^#W / && $3 ~ /00$/ { for (i = 4; i <= NF; i++) $i = "1234" } { print }' \
	"$T/recurse.raw" >"$T/bad-words.raw"
unwind "$T/bad-words.raw" >"$T/bad-words.folded"
check "doctored stack words: the chain check fails" \
	not chain_ok recurse "$T/bad-words.folded" "$(samples "$T/recurse.raw")"
check "doctored stack words: marked [unwind-error], never a wrong caller" \
	bash -c "grep -Eq '^uwprog;\[unwind-error\];' '$T/bad-words.folded' && ! grep -q main '$T/bad-words.folded'"

# the copy cut to 64 bytes (LEN of every #U): truncated, counted
awk '/^#U / { $10 = 64 } { print }' "$T/lib.raw" >"$T/cut.raw"
unwind "$T/cut.raw" >"$T/cut.folded"
check "copy cut short: the chain check fails" not chain_ok lib "$T/cut.folded" "$(samples "$T/lib.raw")"
check "copy cut short: root [truncated] on every sample" \
	bash -c "[ \$(grep -c '^uwprog;\[truncated\];' '$T/cut.folded') = \$(wc -l <'$T/cut.folded') ]"
check "copy cut short: counted in the summary" grep -q "$(samples "$T/lib.raw") samples had more stack" "$T/sum"

# the pc moved out of every mapping: [unwind-error], counted
awk '/^#U / { $NF = "10" } { print }' "$T/lib.raw" >"$T/pc.raw"
unwind "$T/pc.raw" >"$T/pc.folded"
check "pc unmapped: [unwind-error] root, counted" \
	bash -c "grep -q '^uwprog;\[unwind-error\];' '$T/pc.folded' && grep -q 'stacks not unwound to their end' '$T/sum'"

# records lost: a chunk of the second sample and the header of the third
# dropped, as a lost perf event does: those two samples are partial
awk '/^#U / { u++ } /^#W / && u == 2 && !done2 { done2 = 1; next }
     /^#U / && u == 3 { next } { print }' "$T/lib.raw" >"$T/lost.raw"
printf 'Lost 7 events\n' >>"$T/lost.raw"
unwind "$T/lost.raw" >"$T/lost.folded"
n=$(samples "$T/lib.raw")
check_eq "records lost: the complete samples only" "$((n - 2))" "$(folded_total "$T/lost.folded")"
check "records lost: 2 partial samples counted" grep -q "2 samples partial" "$T/sum"
check "records lost: bpftrace's lost events counted" grep -q "lost 7 events" "$T/sum"

# the first chunk of a 4-chunk sample lost: its 3 later chunks are out of
# order, and the one sample is counted partial once, not once per chunk
awk '/^#U / { u++ } /^#W / && u == 2 && !done2 { done2 = 1; next } { print }' \
	"$T/recurse.raw" >"$T/lost1.raw"
unwind "$T/lost1.raw" >"$T/lost1.folded"
check_eq "chunk lost: the complete samples only" "$(($(samples "$T/recurse.raw") - 1))" \
	"$(folded_total "$T/lost1.folded")"
check "chunk lost: 1 partial sample counted, once" grep -q "[^0-9]1 samples partial" "$T/sum"
# the header of the first sample of a CPU never seen lost: its 4 chunks
# are one partial sample
awk '/^#U / { u++ } u == 1 && /^#[UW] / { $2 = 9 } u == 1 && /^#U / { next } { print }' \
	"$T/recurse.raw" >"$T/lost2.raw"
unwind "$T/lost2.raw" >"$T/lost2.folded"
check "header lost on a new CPU: 1 partial sample counted, once" grep -q "[^0-9]1 samples partial" "$T/sum"
unwind "$T/lib.raw" >/dev/null
check "complete capture: no partial samples said" bash -c "! grep -q partial '$T/sum'"

# interleaved CPUs: records of two samples on two CPUs, alternating, are
# put back together (the second sample moved to CPU 7)
awk '/^#U / { u++ } u == 2 && /^#[UWK] / { $2 = 7 } { print }' "$T/lib.raw" |
	awk '/^#U / { u++ } u == 2 && /^#[UW] / { held[++h] = $0; next }
	     u >= 3 && h && /^#W / { print; if (k < h) print held[++k]; next } { print }
	     END { while (k < h) print held[++k] }' >"$T/mix.raw"
unwind "$T/mix.raw" >"$T/mix.folded"
check "interleaved CPUs: every sample whole" chain_ok lib "$T/mix.folded" "$n"

# --- scripts/profile's options (refused before anything runs: exit 1) -----
# rc ARGS...: scripts/profile's exit status and its message's head
rc() { "$TOP/scripts/profile" "$@" >/dev/null 2>"$T/opt.err"; echo "$? $(head -c 40 "$T/opt.err")"; }
check_eq "options: --call-graph bogus refused" "1 profile: --call-graph wants fp or dwarf[" "$(rc --call-graph bogus -p 1)"
check_eq "options: --stack-size below 8 refused" "1 profile: --stack-size 4 is out of range " "$(rc --call-graph dwarf --stack-size 4 -p 1)"
check_eq "options: --stack-size above 65528 refused" "1 profile: --stack-size 65536 is out of ra" "$(rc --call-graph=dwarf,65536 -p 1)"
check_eq "options: --stack-size without dwarf refused" "1 profile: --stack-size is for --call-grap" "$(rc --stack-size 4096 -p 1)"
check_eq "options: the size given twice refused" "1 profile: give the stack size once (--cal" "$(rc --call-graph dwarf,4096 --stack-size 4096 -p 1)"
