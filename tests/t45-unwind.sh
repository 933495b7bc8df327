#!/usr/bin/env bash
# t45-unwind.sh - --call-graph dwarf from saved captures: stack copies of
# tests/fixtures/unwind/uwprog (built without frame pointers: recursion of
# known depth, a chain through a shared library, a thread, a signal
# handler, a stack deeper than the copy) unwound with CFI and checked frame
# by frame; then the same captures doctored (a stack word changed, a copy
# cut short, records lost, the pc moved) to show each check catches it.
# The captures' maps name the system's libc by build-id: on another libc
# the frames above main cannot be named, and the test says so.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
F=$TOP/tests/fixtures/unwind

# fixture MODE: the capture with the fixture's directory put back
fixture() { sed "s|@FIXDIR@|$F/elf|g" "$F/$1.raw"; }
# unwind FILE: user frames, folded (stderr: the -v summary, to $T/sum)
unwind() { "$STACKFOLD" -v -U -f folded -o - "$1" 2>"$T/sum"; }
# not CMD...: CMD fails
not() { ! "$@"; }
# samples FILE: the sample headers in a capture
samples() { grep -c '^@stackfold_du_' "$1"; }

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

# The captures hold bt/profile-dwarf.bt's flushed maps: per sample a
# header "@stackfold_du_a[CPU, SEQ]: (KEY, TID, MODE, NCHUNKS, FLAGS, LEN,
# COMM0, COMM1, 17 registers, rip last)", chunks "@stackfold_dw_a[CPU,
# SEQ, INDEX]: (48 words)", a flush's count "@stackfold_dn_a: N".
# nth_key FILE N: "CPU, SEQ" of the Nth sample's header
nth_key() { grep '^@stackfold_du_' "$1" | sed -n "${2}p" | sed 's/^[^[]*\[\([0-9]*, [0-9]*\)\].*/\1/'; }

# --- the checks catch wrong input -----------------------------------------
# a stack word changed: every word of each first chunk made 0x1234 (the
# return addresses with the rest): never the expected chain
words=$(printf '4660, %.0s' $(seq 47))4660
awk -v w="$words" '/^@stackfold_dw_/ && /, 0\]: \(/ { sub(/\(.*\)/, "(" w ")") } { print }' \
	"$T/recurse.raw" >"$T/bad-words.raw"
unwind "$T/bad-words.raw" >"$T/bad-words.folded"
check "doctored stack words: the chain check fails" \
	not chain_ok recurse "$T/bad-words.folded" "$(samples "$T/recurse.raw")"
check "doctored stack words: marked [unwind-error], never a wrong caller" \
	bash -c "grep -Eq '^uwprog;\[unwind-error\];' '$T/bad-words.folded' && ! grep -q main '$T/bad-words.folded'"

# the copy cut to 64 bytes (LEN of every header): truncated, counted
awk 'BEGIN { FS = OFS = ", " } /^@stackfold_du_/ { $7 = 64 } { print }' "$T/lib.raw" >"$T/cut.raw"
unwind "$T/cut.raw" >"$T/cut.folded"
check "copy cut short: the chain check fails" not chain_ok lib "$T/cut.folded" "$(samples "$T/lib.raw")"
check "copy cut short: root [truncated] on every sample" \
	bash -c "[ \$(grep -c '^uwprog;\[truncated\];' '$T/cut.folded') = \$(wc -l <'$T/cut.folded') ]"
check "copy cut short: counted in the summary" grep -q "$(samples "$T/lib.raw") samples had more stack" "$T/sum"

# the pc moved out of every mapping: [unwind-error], counted
sed '/^@stackfold_du_/ s/[0-9]*)$/16)/' "$T/lib.raw" >"$T/pc.raw"
unwind "$T/pc.raw" >"$T/pc.folded"
check "pc unmapped: [unwind-error] root, counted" \
	bash -c "grep -q '^uwprog;\[unwind-error\];' '$T/pc.folded' && grep -q 'stacks not unwound to their end' '$T/sum'"

# records lost: a chunk of the second sample and the header of the third
# dropped: those two samples are partial
n=$(samples "$T/lib.raw")
k2=$(nth_key "$T/lib.raw" 2) k3=$(nth_key "$T/lib.raw" 3)
grep -v -e "^@stackfold_dw_.\[$k2, 0\]" -e "^@stackfold_du_.\[$k3\]" "$T/lib.raw" >"$T/lost.raw"
printf 'Lost 7 events\n' >>"$T/lost.raw"
unwind "$T/lost.raw" >"$T/lost.folded"
check_eq "records lost: the complete samples only" "$((n - 2))" "$(folded_total "$T/lost.folded")"
check "records lost: 2 partial samples counted" grep -q "[^0-9]2 samples partial" "$T/sum"
check "records lost: bpftrace's lost events counted" grep -q "lost 7 events" "$T/sum"

# the first chunk of a sample lost: counted partial once, not once per
# chunk; its header lost: its chunks are one partial sample
k=$(nth_key "$T/recurse.raw" 2)
grep -v "^@stackfold_dw_.\[$k, 0\]" "$T/recurse.raw" >"$T/lost1.raw"
unwind "$T/lost1.raw" >"$T/lost1.folded"
check_eq "chunk lost: the complete samples only" "$(($(samples "$T/recurse.raw") - 1))" \
	"$(folded_total "$T/lost1.folded")"
check "chunk lost: 1 partial sample counted, once" grep -q "[^0-9]1 samples partial" "$T/sum"
grep -v "^@stackfold_du_.\[$k\]" "$T/recurse.raw" >"$T/lost2.raw"
unwind "$T/lost2.raw" >"$T/lost2.folded"
check "header lost: 1 partial sample counted, once" grep -q "[^0-9]1 samples partial" "$T/sum"
# samples taken that no entry holds (a full map): the flush's count says
awk '/^@stackfold_dn_/ && !done { $2 += 2; done = 1 } { print }' "$T/lib.raw" >"$T/full.raw"
unwind "$T/full.raw" >"$T/full.folded"
check_eq "map full: the printed samples unwound" "$n" "$(folded_total "$T/full.folded")"
check "map full: 2 samples never printed counted partial" grep -q "[^0-9]2 samples partial" "$T/sum"
unwind "$T/lib.raw" >/dev/null
check "complete capture: no partial samples said" bash -c "! grep -q partial '$T/sum'"
# a sample taken in the kernel (MODE 0) needs its kernel stack entry
k=$(nth_key "$T/lib.raw" 1)
awk -v k="[$k]" 'BEGIN { FS = OFS = ", " } index($0, "@stackfold_du_a" k) == 1 { $4 = 0 } { print }' \
	"$T/lib.raw" >"$T/kmode.raw"
awk -v k="[$k]" '/^#flushed/ && !done { print "@stackfold_dk_a" k ":"; print "\tffffffff81000e06 entry_SYSCALL_64_after_hwframe+118"; done = 1 } { print }' \
	"$T/kmode.raw" >"$T/kstack.raw"
unwind "$T/kstack.raw" >"$T/kstack.folded"
check_eq "kernel stack: the sample taken in the kernel is whole" "$n" "$(folded_total "$T/kstack.folded")"
"$STACKFOLD" -f folded -o - "$T/kstack.raw" >"$T/kstack-all.folded" 2>/dev/null
check "kernel stack: its frame is there, above the user frames" grep -Eq ';lib_leaf;[^;]+_\[k\] 1$' "$T/kstack-all.folded"
unwind "$T/kmode.raw" >"$T/kmode.folded"
check_eq "kernel stack lost: the other samples only" "$((n - 1))" "$(folded_total "$T/kmode.folded")"
check "kernel stack lost: 1 partial sample counted" grep -q "[^0-9]1 samples partial" "$T/sum"
# bpftrace's stderr reaches the same report: a warning amid a kernel
# stack's frames is handed on, and the stack keeps every frame
awk -v k="[$k]" '/^#flushed/ && !done { print "@stackfold_dk_a" k ":"; print "\tffffffff81000e06 entry_SYSCALL_64_after_hwframe+118"
	print "WARNING: failed to look up stack id -17 (pid 0): No such file or directory"
	print "\tffffffff81000e06 entry_SYSCALL_64_after_hwframe+118"; done = 1 } { print }' \
	"$T/kmode.raw" >"$T/kwarn.raw"
"$STACKFOLD" -f folded -o - "$T/kwarn.raw" >"$T/kwarn.folded" 2>/dev/null
check "kernel stack with a warning amid it: both frames kept" grep -Eq ';lib_leaf;[^;]+_\[k\];[^;]+_\[k\] 1$' "$T/kwarn.folded"

# a sample's chunks printed two flushes after its header (a probe still
# writing when its set was printed): one sample lost, counted once
awk -v k="[$k, 0]" 'index($0, "@stackfold_dw_a" k) == 1 { held = $0; next }
     /^#flushed/ && held && ++f == 2 { print "@stackfold_dw_a" substr(held, 16) } { print }' \
	"$T/lib.raw" >"$T/late.raw"
printf '#flushed\n' >>"$T/late.raw"
unwind "$T/late.raw" >"$T/late.folded"
check_eq "chunks a flush late: the other samples unwound" "$((n - 1))" "$(folded_total "$T/late.folded")"
check "chunks a flush late: 1 partial sample, counted once" grep -q "[^0-9]1 samples partial" "$T/sum"
nr0=$(samples "$T/recurse.raw")
# two CPUs: the second sample moved to CPU 7 with the first one's seq;
# each stays whole, apart from the other
k1=$(nth_key "$T/recurse.raw" 1) k2=$(nth_key "$T/recurse.raw" 2)
sed -e "s/^\(@stackfold_d[uw]_.\)\[$k2\([],]\)/\1[7, ${k1#*, }\2/" "$T/recurse.raw" >"$T/cpus.raw"
check "two CPUs, one seq: the capture has both" bash -c "grep -q '^@stackfold_du_.\[7, ${k1#*, }\]' '$T/cpus.raw' && grep -q '^@stackfold_du_.\[$k1\]' '$T/cpus.raw'"
unwind "$T/cpus.raw" >"$T/cpus.folded"
check "two CPUs, one seq: every sample whole" chain_ok recurse "$T/cpus.folded" "$nr0"

# the entries of each flush in another order (chunks first, each map's
# keys descending, the first header last), and a flush printed twice:
# every sample whole, once
nr=$(samples "$T/recurse.raw")
awk '/^@stackfold_du_/ && !first { first = $0; next }
     /^@stackfold_d[uwk]_/ { held[++h] = $0; next }
     { while (h) print held[h--]; if (/^#flushed/ && first) { print first; first = "" } print }
     END { while (h) print held[h--] }' "$T/recurse.raw" >"$T/mix.raw"
unwind "$T/mix.raw" >"$T/mix.folded"
check "entries out of order: every sample whole" chain_ok recurse "$T/mix.folded" "$nr"
awk '/^@stackfold_d[uw]_/ { print } { print }' "$T/recurse.raw" >"$T/twice.raw"
unwind "$T/twice.raw" >"$T/twice.folded"
check "entries printed twice: every sample once" chain_ok recurse "$T/twice.folded" "$nr"
check "entries printed twice: no partial sample said" bash -c "! grep -q partial '$T/sum'"

# the per-sample records of earlier versions (#U, #W, #K) are still read
fixture lib-records >"$T/records.raw"
unwind "$T/records.raw" >"$T/records.folded"
check "earlier records (#U, #W): every sample unwound frame by frame" \
	chain_ok lib "$T/records.folded" "$(grep -c '^#U ' "$T/records.raw")"

# --- the CFI rows kept in the index cache ----------------------------------
# a run keeps each file's rows (b-BUILDID-c.idx); the next one takes them
# from there and reads no file for CFI, with the same stacks; a corrupt
# entry is read around (the file again) and written anew
export STACKFOLD_CACHE_DIR=$T/cficache
fixture thread >"$T/cc.raw"
unwind "$T/cc.raw" >"$T/cc1.folded"
check "CFI cache: a cold run reads the files' CFI" grep -Eq 'unwinding: 0 files. CFI rows from the cache, [1-9][0-9]* files read' "$T/sum"
check "CFI cache: rows kept per build-id" bash -c "ls '$T/cficache' | grep -Eq '^b-[0-9a-f]+-c\.idx$'"
unwind "$T/cc.raw" >"$T/cc2.folded"
check "CFI cache: a warm run reads no file for CFI" grep -Eq 'unwinding: [1-9][0-9]* files. CFI rows from the cache, 0 files read' "$T/sum"
check_diff "CFI cache: the same stacks from the cached rows" "$T/cc1.folded" "$T/cc2.folded"
for e in "$T"/cficache/b-*-c.idx; do printf 'XXXX' | dd of="$e" bs=1 seek=40 conv=notrunc 2>/dev/null; done
unwind "$T/cc.raw" >"$T/cc3.folded"
check_diff "CFI cache: corrupt entries: the same stacks" "$T/cc1.folded" "$T/cc3.folded"
check "CFI cache: corrupt entries: the files read again" grep -Eq 'unwinding: 0 files. CFI rows from the cache, [1-9][0-9]* files read' "$T/sum"
unwind "$T/cc.raw" >/dev/null
check "CFI cache: corrupt entries written anew" grep -Eq 'from the cache, 0 files read' "$T/sum"
# an entry that cannot be written is said, as the symbol index's is
export STACKFOLD_CACHE_DIR=$T/cficache2
unwind "$T/cc.raw" >/dev/null
for e in "$T"/cficache2/b-*-c.idx; do rm -f "$e"; mkdir "$e"; done
unwind "$T/cc.raw" >/dev/null
check "CFI cache: a write that fails is a warning" grep -q 'not cached' "$T/sum"
unset STACKFOLD_CACHE_DIR

# --- scripts/profile's options (refused before anything runs: exit 1) -----
# rc ARGS...: scripts/profile's exit status and its message's head
rc() { "$TOP/scripts/profile" "$@" >/dev/null 2>"$T/opt.err"; echo "$? $(head -c 40 "$T/opt.err")"; }
check_eq "options: --call-graph bogus refused" "251 profile: --call-graph wants fp or dwarf[" "$(rc --call-graph bogus -p 1)"
check_eq "options: --stack-size below 8 refused" "251 profile: --stack-size 4 is out of range " "$(rc --call-graph dwarf --stack-size 4 -p 1)"
check_eq "options: --stack-size above 65528 refused" "251 profile: --stack-size 65536 is out of ra" "$(rc --call-graph=dwarf,65536 -p 1)"
check_eq "options: --stack-size without dwarf refused" "251 profile: --stack-size is for --call-grap" "$(rc --stack-size 4096 -p 1)"
check_eq "options: the size given twice refused" "251 profile: give the stack size once (--cal" "$(rc --call-graph dwarf,4096 --stack-size 4096 -p 1)"
