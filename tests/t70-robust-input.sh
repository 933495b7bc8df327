#!/usr/bin/env bash
# t70-robust-input: bad bpftrace/folded input (failure-cases.md section 7 A,
# B9, B10, D28 and E38): empty input, truncated records, junk and CRLF, bad
# numbers with their line numbers, malformed saved maps, 10,000 processes'
# maps, stack-id errors, 1024-frame stacks, 10M lines in bounded memory,
# control/NUL/non-UTF-8 bytes, and the folded round trip.
# Every case also checks conservation: samples read == folded total ==
# pprof total == SVG root total.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
FX=$TOP/tests/fixtures/bt

# pprof validator (tests/tools/pprof_check.c), when it builds here.
PPROF_OK=0
if [ -f "$TOP/tests/tools/pprof_build.sh" ]; then
	# shellcheck source=tests/tools/pprof_build.sh
	. "$TOP/tests/tools/pprof_build.sh"
	pprof_tools_build >"$T/pprof-build.log" 2>&1 && PPROF_OK=1
	[ "$PPROF_OK" = 1 ] || fail "pprof_check builds" "$(tail -n 5 "$T/pprof-build.log")"
fi

# sf NAME ARGS...: run stackfold, keep $T/NAME.out, .err and .rc
sf() {
	local n=$1
	shift
	"$STACKFOLD" -v "$@" >"$T/$n.out" 2>"$T/$n.err"
	echo $? >"$T/$n.rc"
}
rc() { cat "$T/$1.rc"; }
# samples the summary line reports ("read: N samples")
read_samples() { sed -n 's/.*read: \([0-9]*\) samples.*/\1/p' "$T/$1.err" | tail -n 1; }
svg_total() { sed -n 's/.*<title>all (\([0-9,]*\) samples.*/\1/p' "$1" | head -n 1 | tr -d ,; }

# conserve NAME INPUT: folded total == samples read == pprof total == SVG.
conserve() {
	local n=$1 in=$2 folded pp="" svg
	"$STACKFOLD" -v -f folded,svg,pprof -o "$T/$n.c" "$in" 2>"$T/$n.c.err"
	folded=$(folded_total "$T/$n.c.folded")
	svg=$(svg_total "$T/$n.c.svg")
	[ "$PPROF_OK" = 1 ] && pp=$("$PPROF_CHECK" --sum --no-time "$T/$n.c.pb.gz" 2>&1)
	[ "$PPROF_OK" = 1 ] || pp=$folded
	if [ "$folded" = "$(read_samples "$n.c")" ] && [ "$folded" = "$pp" ] &&
		[ "$folded" = "$svg" ]; then
		pass "$n: conservation (read = folded = pprof = svg = $folded)"
	else
		fail "$n: conservation" "read=$(read_samples "$n.c") folded=$folded pprof=$pp svg=$svg"
	fi
}

# --- A1: empty input, only "Attaching" -----------------------------------
: >"$T/empty.txt"
for f in folded svg pb.gz; do echo "old $f" >"$T/prev.$f"; done
sf empty -f folded,svg,pprof -o "$T/prev" "$T/empty.txt"
check_eq "empty: exit 2" 2 "$(rc empty)"
check_eq "empty: message names the file" "stackfold: no samples found in $T/empty.txt" "$(tail -n 1 "$T/empty.err")"
check_eq "empty: previous outputs untouched" "old folded old svg old pb.gz" \
	"$(cat "$T/prev.folded" "$T/prev.svg" "$T/prev.pb.gz" | tr '\n' ' ' | sed 's/ $//')"
check_eq "empty: no temporary file left" "" "$(find "$T" -maxdepth 1 -name 'prev*.tmp*')"
printf 'Attaching 1 probe...\r\n\r\n' >"$T/attach.txt"
sf attach "$T/attach.txt"
check_eq "only Attaching (CRLF): exit 2" 2 "$(rc attach)"
check "only Attaching: message" grep -q "no samples found in $T/attach.txt" "$T/attach.err"
printf '' | "$STACKFOLD" 2>"$T/stdin.err" >/dev/null
check_eq "empty stdin: exit 2" 2 $?
check "empty stdin: message says <stdin>" grep -q 'no samples found in <stdin>' "$T/stdin.err"

# --- A2: truncated final record ------------------------------------------
printf '@[\n    a+1\n    main+2\n]: 3\n@[\n    b+1\n    main+2\n]: 7' >"$T/lastnonl.txt"
sf lastnonl "$T/lastnonl.txt"
check_eq "final '\]: N' without newline still counts" "10" "$(folded_total "$T/lastnonl.out")"
printf '@[\n    a+1\n    main+2\n]: 3\n@[\n    b+1\n    main+2' >"$T/trunc.txt"
sf trunc "$T/trunc.txt"
check_eq "truncated: exit 0 with the complete records" 0 "$(rc trunc)"
check_eq "truncated: partial stack never counted" "main;a 3" "$(cat "$T/trunc.out")"
check "truncated: reported as incomplete, with the line it began on" grep -q 'trunc.txt:5: ignored 1 incomplete record (first at line 5;' "$T/trunc.err"
printf '@[\n    a+1\n]: 3\n@[\n    b+1\n]:' >"$T/trunc2.txt"
sf trunc2 "$T/trunc2.txt"
check_eq "truncated inside ']: N': not counted" "a 3" "$(cat "$T/trunc2.out")"
check "truncated inside ']: N': reported" grep -q 'incomplete record' "$T/trunc2.err"
# bpftrace killed mid-print of a raw capture: directives cut too
head -c 2000 "$TOP/tests/fuzz/corpus/bt_parse/raw-capture-records.txt" >"$T/rawcut.txt"
sf rawcut "$T/rawcut.txt"
check "raw capture cut at 2000 bytes: no crash, exit 0 or 2" test "$(rc rawcut)" -le 2

# --- A3: junk, CRLF -------------------------------------------------------
sf junk "$FX/junk.txt"
check "junk: unparsable lines in one warning with the first line" \
	grep -q 'junk.txt:3: ignored 3 unparsable lines (first at line 3)' "$T/junk.err"
check "junk: lost events and stack-id errors counted" \
	grep -q '1 stack-id errors.*bpftrace lost 7 events' "$T/junk.err"
"$STACKFOLD" -q -f svg "$FX/junk.txt" >"$T/junk.svg" 2>/dev/null
check "junk: losses in the SVG subtitle" grep -q 'lost: 7 events, 1 stack-id error, 3 unparsable lines' "$T/junk.svg"
if [ "$PPROF_OK" = 1 ]; then
	"$STACKFOLD" -q -f pprof -o "$T/junk.pb.gz" "$FX/junk.txt" 2>/dev/null
	check "junk: losses in the pprof comments" bash -c "gzip -dc '$T/junk.pb.gz' | grep -a -q 'lost_events=7'"
fi
conserve junk "$FX/junk.txt"
printf 'Map full; can'"'"'t update element. Try increasing max_map_keys\n@[\n    a+1\n]: 2\n' >"$T/mapfull.txt"
sf mapfull "$T/mapfull.txt"
check "'Map full' is recognised, not an unparsable line" bash -c "! grep -q unparsable '$T/mapfull.err'"
check "'Map full' is reported in the summary (F3)" grep -q 'map was full' "$T/mapfull.err"
# ...and kept in the outputs that carry counters, as the other losses are
"$STACKFOLD" -q -f svg "$T/mapfull.txt" >"$T/mapfull.svg" 2>/dev/null
check "'Map full' in the SVG subtitle" grep -q 'lost: 1 map-full warning' "$T/mapfull.svg"
if [ "$PPROF_OK" = 1 ]; then
	"$STACKFOLD" -q -f pprof -o "$T/mapfull.pb.gz" "$T/mapfull.txt" 2>/dev/null
	check "'Map full' in the pprof comments" \
		bash -c "gzip -dc '$T/mapfull.pb.gz' | grep -a -q 'map_full_warnings=1'"
fi
# Loss counters never wrap: past 2^64 - 1 they stay there (a counter that
# wrapped said "lost 1 events" after these two lines)
printf '@[\n    a+1\n]: 2\nLost 18446744073709551615 events\nLost 2 events\n' >"$T/lostwrap.txt"
sf lostwrap "$T/lostwrap.txt"
check "loss counter held at 2^64 - 1, not wrapped" \
	grep -q 'bpftrace lost 18446744073709551615 events' "$T/lostwrap.err"
sed 's/$/\r/' "$FX/ustack-kstack.txt" >"$T/crlf.txt"
sf crlf -q "$T/crlf.txt"
check_diff "CRLF input gives the same folded output as LF" "$FX/ustack-kstack.expected" "$T/crlf.out"
sed 's/$/\r/' "$FX/ustack-kstack.expected" >"$T/crlf.folded"
sf crlff -q "$T/crlf.folded"
check_diff "CRLF folded input reads back the same" "$FX/ustack-kstack.expected" "$T/crlff.out"

# --- A4: bad numbers, rejected with their line numbers ---------------------
cat >"$T/badnum.txt" <<'EOF'
@[
    a+1
]: 5
@[
    b+1
]: -3
@[
    c+1
]: 0
@[
    d+1
]: 99999999999999999999
@[
    e+1
]: 9223372036854775808
@[
    f+1
]: 1x
@[
    g+1
]: 0x10
EOF
sf badnum "$T/badnum.txt"
# A count past 2^63-1 on a record seen before is judged as on a new one.
printf '@[\n    e+1\n]: 1\n' | cat - "$T/badnum.txt" >"$T/badnum2.txt"
sf badnum2 "$T/badnum2.txt"
check_eq "bad counts on a repeated record: the same verdict (exit 0)" 0 "$(rc badnum2)"
check "bad counts on a repeated record: the same 5 lines rejected" \
	grep -q 'badnum2.txt:9: ignored 5 unparsable lines (first at line 9)' "$T/badnum2.err"
check_eq "bad counts: only the good record is kept" "a 5" "$(cat "$T/badnum.out")"
check "bad counts: 5 lines rejected, first at line 6" \
	grep -q 'badnum.txt:6: ignored 5 unparsable lines (first at line 6)' "$T/badnum.err"
check "bad counts: not mistaken for truncation" bash -c "! grep -q 'ignored .* incomplete' '$T/badnum.err'"
printf '@[\n    0xZZ\n    0x\n    0x12345678901234567890\n    main+1\n]: 2\n' >"$T/badaddr.txt"
sf badaddr "$T/badaddr.txt"
check_eq "bad addresses: the sample stays, frames say so" "main;[bad address];[bad address];[bad address] 2" "$(cat "$T/badaddr.out")"
check "bad addresses: rejected lines with the first line number" \
	grep -q 'badaddr.txt:2: ignored 3 unparsable lines (first at line 2)' "$T/badaddr.err"
# Totals never wrap: 2 x 2^62 x 3 passes INT64_MAX.
printf '@[\n    a+1\n]: 6917529027641081856\n@[\n    b+1\n]: 6917529027641081856\n' >"$T/wrap.txt"
sf wrap "$T/wrap.txt"
check "sum past INT64_MAX: an error (exit 2), not a wrapped total" test "$(rc wrap)" = 2
check "sum past INT64_MAX: nothing printed" test ! -s "$T/wrap.out"
check "sum past INT64_MAX: the message names file and line (F4)" \
	grep -q "wrap.txt:[0-9]*: sample counts add up past 2^63" "$T/wrap.err"
printf 'a;b 18446744073709551615\na;c 1\n' >"$T/wrap.folded"
sf wrapf "$T/wrap.folded"
check_eq "folded count of 2^64-1: refused (exit 2), not wrapped to 0 samples" 2 "$(rc wrapf)"
check "folded count of 2^64-1: not reported as 'no samples'" bash -c "! grep -q 'no samples' '$T/wrapf.err'"
printf '@[\n    a+1\n]: 9223372036854775807\n' >"$T/max.txt"
sf max -f folded,svg,pprof -o "$T/max" "$T/max.txt"
check_eq "count of INT64_MAX is accepted by every writer" 0 "$(rc max)"
check_eq "count of INT64_MAX: folded total" 9223372036854775807 "$(awk '{print $NF}' "$T/max.folded")"

# two inputs whose totals together pass INT64_MAX: refused, not wrapped
printf 'a;b 9223372036854775807\n' >"$T/max.folded"
sf max2 "$T/max.folded" "$T/max.txt"
check "two inputs summing past INT64_MAX: an error, nothing printed" \
	test "$(rc max2)" != 0 -a ! -s "$T/max2.out"

# --- A5: stack-id error lines ---------------------------------------------
cat >"$T/stackid.txt" <<'EOF'
Attaching 1 probe...
failed to look up stack id -17 (pid 12): File exists
failed to look up stack id -12 (pid 12): Cannot allocate memory
@[12, 12, app,
, 
    ffffffff81000000 do_syscall_64+1
]: 4
@[12, 12, app,
    0x401000
, ]: 2
@[]: 3
EOF
sf stackid --show-pid "$T/stackid.txt"
check_eq "stack-id errors: exit 0" 0 "$(rc stackid)"
check "stack-id errors: counted" grep -q '2 stack-id errors' "$T/stackid.err"
check_eq "stack-id errors: empty stacks keep their samples" 9 "$(folded_total "$T/stackid.out")"
check "empty stack without pid or comm: -p invents no pid-0 frame" grep -q '^\[no stack\] 3$' "$T/stackid.out"
check "stacks with a pid: --show-pid gives comm-PID" grep -q '^app-12;' "$T/stackid.out"
conserve stackid "$T/stackid.txt"
# bpftrace's stderr messages land between a record's lines in a live capture
# (stackfold record reads stdout and stderr as they come, and so does its raw
# file): counted, and the record around them kept whole
cat >"$T/interleave.txt" <<'EOF'
@stackfold_b[15067, 15067, spawner,
ERROR: failed to look up stack id -17 (pid -1): -2
	7f1cb1cabf90 0x7f1cb1cabf90 ([unknown])
Lost 5 events
,
	ffffffff8225f2d9 pvm_irq_enable+25
]: 1
@stackfold_b[15068, 15068, other,
	7f1cb1cabf91 0x7f1cb1cabf91 ([unknown])
, ]: 3
@stackfold_total_b: 4
EOF
sf interleave "$T/interleave.txt"
check_eq "stderr lines inside a record: the record kept" "other;[unknown] 3|spawner;[unknown];pvm_irq_enable_[k] 1" \
	"$(paste -sd '|' "$T/interleave.out")"
check "stderr lines inside a record: counted, nothing unparsable or dropped" \
	bash -c "grep -q 'bpftrace lost 5 events' '$T/interleave.err' && grep -q '1 stack-id errors' '$T/interleave.err' &&
		! grep -q 'unparsable\|incomplete\|dropped' '$T/interleave.err'"
# a process named like bpftrace's loss messages cannot hide its records
printf '#pid 7 map full\n@stackfold_a[7, 7, map full,\n\t7f0000001000\n, ]: 3\n@stackfold_a[8, 8, Lost 5 events,\n\t7f0000001000\n, ]: 2\n@stackfold_total_a: 5\n' >"$T/mapfull.txt"
sf mapfull "$T/mapfull.txt"
check_eq "comms 'map full', 'Lost 5 events': records kept" "Lost 5 events;[unknown] 2|map full;[unknown] 3" \
	"$(paste -sd '|' "$T/mapfull.out")"
check "comms like loss messages: nothing counted as lost" \
	bash -c "! grep -q 'warned\|lost\|unparsable\|dropped' '$T/mapfull.err'"
# a map printed twice (bpftrace 0.17 on SIGTERM then SIGINT): the entries add
# up past bpftrace's own count; said in the summary, the pprof and the SVG
printf '@stackfold_a[1, 1, app,\n\t7f0000001000\n, ]: 4\n@stackfold_total_a: 4\n' >"$T/twice1.txt"
cat "$T/twice1.txt" "$T/twice1.txt" | sed '$d' >"$T/twice.txt"
sf twice -f folded,svg,pprof -o "$T/twice" "$T/twice.txt"
check "a map printed twice: the excess counted in the summary" \
	grep -q '4 samples more than bpftrace counted' "$T/twice.err"
check "a map printed twice: and in the SVG subtitle" grep -q "4 samples past bpftrace" "$T/twice.svg"
if [ "$PPROF_OK" = 1 ]; then
	check "a map printed twice: and in the pprof comment" \
		bash -c "'$PPROF_CHECK' --dump '$T/twice.pb.gz' 2>/dev/null | grep -q 'over_total=4' ||
			gzip -dc '$T/twice.pb.gz' | grep -aq 'over_total=4'"
fi
# Each total against its own map's samples since its last total: a flush
# that dropped 5 (a full map) and a later one with 5 too many do not cancel
# out (comparing the input's sums would report nothing);
# at exit, both maps print before both totals.  Repeated entries (the
# record cache's hits) count as well as new ones.
e='\t7f0000001000\n, ]'
printf "@stackfold_a[1, 1, app,\n$e: 10\n@stackfold_total_a: 15\n@stackfold_b[1, 1, app,\n$e: 8\n@stackfold_total_b: 3\n@stackfold_a[1, 1, app,\n$e: 6\n@stackfold_b[2, 2, app,\n$e: 2\n@stackfold_total_a: 6\n@stackfold_total_b: 2\n" >"$T/flushes.txt"
sf flushes "$T/flushes.txt"
check "per flush: a flush's drops counted" grep -q ' 5 samples dropped by a full map' "$T/flushes.err"
check "per flush: another's surplus counted apart" grep -q '5 samples more than bpftrace counted' "$T/flushes.err"
# -q keeps the summary quiet unless samples were lost (losses are still
# said)
sf flushesq -q "$T/flushes.txt"
check "-q: losses still said" grep -q ' 5 samples dropped by a full map' "$T/flushesq.err"
sf quietok -q "$T/twice1.txt"
check_eq "-q: nothing lost, nothing said" "" "$(cat "$T/quietok.err")"
# A line past 16 MiB (a binary file, /dev/zero) is skipped, never held:
# memory stays bounded (held, an 80 MB line would take 200 MB RSS).
# It counts as unparsable, and breaks a record it falls in.
{ printf 'a;b 3\n'; head -c 80000000 /dev/zero | tr '\0' x; printf ' 5\na;c 2\n'; } >"$T/long.folded"
/usr/bin/time -f '%M' -o "$T/long.rss" "$STACKFOLD" "$T/long.folded" >"$T/long.out" 2>"$T/long.err"
check_eq "80 MB line: the lines around it kept, exit 0" "0|a;b 3|a;c 2" "$?|$(paste -sd '|' "$T/long.out")"
check "80 MB line: counted as unparsable, line 2" grep -q 'long.folded:2: ignored 1 unparsable line' "$T/long.err"
check "80 MB line: max RSS $(cat "$T/long.rss") KiB, under 64 MiB" test "$(cat "$T/long.rss")" -lt 65536
# "#meta" text values are interned for good: an input repeating them keeps
# the first 64 (a capture writes five), so 500,000 of them do not take
# 88 MB.
{ printf '# stackfold-capture 1\n#meta hz 99\n@[\n    foo+1\n    do_syscall_64+2\n]: 5\n'
  seq -f '#meta host h%0100.0f' 0 499999; } >"$T/meta500k.txt"
/usr/bin/time -f '%M' -o "$T/meta500k.rss" "$STACKFOLD" -q -f pprof -o "$T/meta500k.pb.gz" "$T/meta500k.txt"
cap=24	# MiB (ASan's own overhead is some 20 MiB here)
[ "${SANITIZE:-}" = 1 ] && cap=64
check "500,000 #meta lines: max RSS $(cat "$T/meta500k.rss") KiB, under $cap MiB" \
	test "$(cat "$T/meta500k.rss")" -lt $((cap * 1024))
check "500,000 #meta lines: the 64th value kept" \
	grep -aq 'host=h0*63[^0-9]' <(gzip -dc "$T/meta500k.pb.gz")
# A "#maps" line with no "#endmaps" (a one-liner's printf, a capture cut
# short): its lines are held up to 32 MiB (a real block is kilobytes), then
# counted as text, so memory does not grow with the input.  120 MB of
# them: the records around them kept.
{ printf '@[\n    foo+1\n    do_syscall_64+2\n]: 5\n#maps 1\n'
  yes '0xabababababababababababababababababababab some text the program printed' | head -n 1500000
  printf '@[\n    bar+1\n    do_syscall_64+2\n]: 7\n'; } >"$T/mapsnoend.txt"
/usr/bin/time -f '%M' -o "$T/mapsnoend.rss" "$STACKFOLD" "$T/mapsnoend.txt" >"$T/mapsnoend.out" 2>"$T/mapsnoend.err"
check_eq "#maps with no end: both records kept, exit 0" "0|do_syscall_64_[k];bar_[k] 7|do_syscall_64_[k];foo_[k] 5" \
	"$?|$(sort "$T/mapsnoend.out" | paste -sd '|')"
check "#maps with no end: its lines counted unparsable, from the #maps line" \
	grep -q 'mapsnoend.txt:5: ignored 1500001 unparsable lines' "$T/mapsnoend.err"
cap=96	# MiB (ASan's own overhead is some 45 MiB here)
[ "${SANITIZE:-}" = 1 ] && cap=160
check "#maps with no end: max RSS $(cat "$T/mapsnoend.rss") KiB, under $cap MiB for 120 MB" \
	test "$(cat "$T/mapsnoend.rss")" -lt $((cap * 1024))
{ printf '@stackfold[1, 1, app,\n\t0x1000\n\t'; head -c 20000000 /dev/zero | tr '\0' x
  printf '\n, ]: 4\n@stackfold[2, 2, app,\n\t0x1000\n, ]: 3\n@stackfold_total: 7\n'; } >"$T/longrec.txt"
sf longrec --show-pid "$T/longrec.txt"
check_eq "20 MB frame line: the next record kept" "app-2;[unknown] 3" "$(cat "$T/longrec.out")"
check "20 MB frame line: its record counted incomplete" grep -q 'ignored 1 incomplete record' "$T/longrec.err"
# equal empty stacks merge (no memcmp on a NULL stack, under UBSan)
printf '@[]: 3\n@[]: 4\n' >"$T/empty2.txt"
sf empty2 "$T/empty2.txt"
check_eq "equal empty stacks merge into one [no stack] line" "[no stack] 7" "$(cat "$T/empty2.out")"

# A "#maps" line injected by a comm holding a newline ("#pid 5 x\n#maps 1",
# printed by bt/profile.bt) must not swallow the records after it.
printf '#pid 5 evil\n#maps 1\n@stackfold[5, 5, evil,\n    0x1234\n, ]: 10\n@stackfold[6, 6, good,\n    0x1234\n, ]: 5\n@stackfold_total: 15\n' >"$T/inject.txt"
sf inject "$T/inject.txt"
check_eq "injected #maps line: no sample swallowed" 15 "$(folded_total "$T/inject.out")"
check "injected #maps line: counted as unparsable, at its line" grep -q 'inject.txt:2: ignored 1 unparsable line' "$T/inject.err"

# folded in, folded out (the fold is handed to the writer as it is): the
# summary still counts what was read (it said "0 samples, 0 unique stacks")
printf 'a;b 1\na;c 2\na;b 3\n' >"$T/ff.folded"
sf ff -f folded "$T/ff.folded"
check_eq "folded -> folded: the summary counts the samples read" "6" "$(read_samples ff)"
check "folded -> folded: and the unique stacks" grep -q 'read: 6 samples, 2 unique stacks' "$T/ff.err"

# buf(comm, 16), as bt/profile.bt prints it: NUL padding dropped, other
# escapes made bytes again (a newline cannot forge a record: the fold
# writes control bytes as '?'; "é" does not stay "\xc3\xa9"),
# ", " inside the comm kept, a numeric comm is a name, stale bytes after
# the NUL dropped.
printf '#pid 5 a, b\\x00\\x00\n@stackfold[5, 5, a, b\\x00\\x00,\n    0x1234\n, ]: 10\n@stackfold[6, 6, \\x0a@[]: 9\\x0a\\x00,\n    0x1234\n, ]: 4\n@stackfold[7, 7, 1234\\x00, ]: 2\n@stackfold[8, 8, t\\xc3\\xa9\\xe4\\xb8\\xad\\x00old\\x00, ]: 3\n@stackfold_total: 19\n' >"$T/bufcomm.txt"
sf bufcomm --show-pid "$T/bufcomm.txt"
check_eq "buf(comm): padding dropped, ', ' kept" 10 "$(awk '/^a, b-5;/ { print $NF }' "$T/bufcomm.out")"
check_eq "buf(comm): an escaped newline is a byte, written '?'" 4 "$(grep -F '?@[]: 9?-6;' "$T/bufcomm.out" | awk '{ print $NF }')"
check_eq "buf(comm): a numeric comm is a name" "1234-7 2" "$(grep '^1234-7' "$T/bufcomm.out")"
check_eq "buf(comm): UTF-8 bytes as they are, up to the NUL" "$(printf 't\303\251\344\270\255-8 3')" "$(grep '^t.*-8 ' "$T/bufcomm.out")"
conserve bufcomm "$T/bufcomm.txt"

# --- B9: a "(deleted)" mapping whose file is gone, or replaced --------------
# Named module+offset with the suffix kept, one warning; a different file
# now at that path (another ELF) is never read for names.
printf '# stackfold-capture 1\n#meta hz 99\n#maps 4242\n555555555000-555555556000 r-xp 00001000 fd:01 1234 %s (deleted)\n#endmaps\n#pid 4242 app\n@stackfold[4242, 4242, app, \n        0x555555555123\n, ]: 5\n@stackfold_total: 5\n' \
	"$T/gone" >"$T/deleted.txt"
sf deleted --no-cache -f folded "$T/deleted.txt"
check_eq "(deleted), file gone: module (deleted)+offset" "app;gone (deleted)+0x1123 5" "$(cat "$T/deleted.out")"
check_eq "(deleted), file gone: one warning naming it" 1 "$(grep -c "cannot open '$T/gone' (deleted)" "$T/deleted.err")"
cp "$STACKFOLD" "$T/gone"
sf deleted2 --no-cache -f folded "$T/deleted.txt"
check_eq "(deleted), another ELF now at the path: not named from it" "app;gone (deleted)+0x1123 5" "$(cat "$T/deleted2.out")"
check "(deleted), another ELF now at the path: says it changed" grep -q "'$T/gone' changed since it was mapped" "$T/deleted2.err"
rm -f "$T/gone"

# --- B10: malformed lines in a saved map ------------------------------------
# Skipped with one warning naming the input file and the line of the first
# (line 6 of the file: the block's second line); the good line is used.
# A line whose start address is not hex or that has no "-" is one of them
# and does not end the block (that would lose the whole map, and say its
# process exited before it could be saved).
if gcc -O1 -g -o "$T/b10" "$TOP/tests/fixtures/sym/inl.c" 2>"$T/b10-cc.err" &&
	capture_head "$T/b10" 4243 app >"$T/b10.head"; then
	helper=$(nm "$T/b10" | awk '$3 == "helper" { print "0x" $1 }')
	awk 'NR == 6 { print "7fa7bb75e000-7fa7bb75f000 r-xp 000zz000 00:00 0"
		print "7fa7$#75e000-7fa7bb75f000 r-xp 00000000 00:00 0 /x"
		print "7fa7bb760000 r-xp 00000000 00:00 0 /y" }
		{ print }
		/^#bid/ { print "7fa7bb75f000-7fa7bb75e000 r-xp 00000000 00:00 0" }' "$T/b10.head" >"$T/b10.txt"
	printf '@stackfold[4243, 4243, app, \n        0x%x\n, ]: 5\n' $((CAP_BASE + helper + 1)) >>"$T/b10.txt"
	sf b10 --no-cache -f folded "$T/b10.txt"
	check_eq "malformed maps lines: the good line still names the sample" "app;helper 5" "$(cat "$T/b10.out")"
	check_eq "malformed maps lines: one warning, naming the file and the first bad line" 1 \
		"$(grep -c "warning: $T/b10.txt:6: ignored 4 malformed line(s) in saved maps of process 4243 (first at line 6)" "$T/b10.err")"
	check_eq "malformed maps lines: the process not said to have exited" 0 "$(grep -c "exited before" "$T/b10.err")"
	check_eq "malformed maps lines: from stdin, named <stdin>" 1 \
		"$("$STACKFOLD" --no-cache -f folded <"$T/b10.txt" 2>&1 >/dev/null | grep -c 'warning: <stdin>:6: ignored 4 malformed')"
	# The line numbers are the file's after blank lines, after repeated
	# records (answered without the parser), and after a "#bid" line.
	# A bad record line after them is numbered right too.
	{
		printf '\n\n'
		cat "$T/b10.txt"
		tail -n 3 "$T/b10.txt"
		tail -n 3 "$T/b10.txt"
		sed -n 's/^#maps 4243$/#maps 4244/p; /^[0-9a-f]*-.* r-xp [0-9a-f]* 00:00 0 \//p; /^#bid/p' "$T/b10.txt"
		echo "7fa7bb75e000-7fa7bb75f000 r-xp 0000000g 00:00 0"
		printf '#endmaps\n@stackfold[4243, 4243, app, \n        0xzz\n, ]: 1\n'
	} >"$T/b10b.txt"
	sf b10b --no-cache -f folded "$T/b10b.txt"
	want_maps=$(grep -n -F ' 0000000g ' "$T/b10b.txt" | cut -d: -f1)
	want_rec=$(grep -n -F '0xzz' "$T/b10b.txt" | cut -d: -f1)
	check_eq "malformed maps line after blanks, repeated records and #bid: its own line number" 1 \
		"$(grep -c "warning: $T/b10b.txt:$want_maps: ignored 1 malformed line(s) in saved maps of process 4244 (first at line $want_maps)" "$T/b10b.err")"
	check "unparsable record line after repeated records: its own line number ($want_rec)" \
		grep -q "b10b.txt:[0-9]*: ignored .* unparsable line.* (first at line $want_rec)" "$T/b10b.err"

	# --- E38: ten thousand processes, each with its own saved map ---------
	# (the program and libc, at addresses that differ from one to the
	# next): every sample named, memory bounded (42 MiB here: 2 KiB a process).
	"$TOP/tests/tools/manypids.sh" "$T/b10" 10000 >"$T/pids.txt"
	timer=()
	[ -x /usr/bin/time ] && timer=(/usr/bin/time -f %M -o "$T/pids.rss")
	"${timer[@]}" "$STACKFOLD" --no-cache -f folded -o "$T/pids.folded" "$T/pids.txt" 2>"$T/pids.err"
	check_eq "10,000 processes: every sample named (helper <- malloc)" 10000 \
		"$(awk '$1 ~ /^app[0-9]+;helper;[^;]*malloc$/ { s += $2 } END { print s + 0 }' "$T/pids.folded")"
	check_eq "10,000 processes: nothing unsymbolized or dropped" "" "$(grep -E 'unsymbolized|dropped|warning' "$T/pids.err")"
	rss=$(tail -n 1 "$T/pids.rss" 2>/dev/null)
	cap=65536	# 41 MiB here; 89 when a process took 7 KiB
	[ "${SANITIZE:-}" = 1 ] && cap=262144	# ASan's own overhead
	check "10,000 processes: memory bounded (max RSS ${rss:-?} KiB < $((cap / 1024)) MiB)" test "${rss:-999999999}" -lt "$cap"
	conserve "10,000 processes" "$T/pids.txt"
else
	fail "B10: build the fixture" "$(tail -3 "$T/b10-cc.err")"
fi

# --- A5b: processes that exited before their memory map could be saved -----
# stackfold record saves a process's map at its "#pid" line, and writes the
# "#maps" block into the raw capture before that line; a "#pid" of a process
# and image with no such block before it is a process that had exited.  The count reaches the summary,
# the SVG subtitle and the pprof comment, also when the raw capture is read
# again, not only on the stderr of `stackfold record`.
unsaved_line() { grep -o 'stackfold: [0-9]* process[es]* exited before [a-z]* memory map could be saved' "$1"; }
sf unsaved -f folded,svg,pprof -o "$T/unsaved" "$FX/unsaved-maps.txt"
check_eq "unsaved maps: replayed capture, 2 in the summary" \
	"stackfold: 2 processes exited before their memory map could be saved" "$(unsaved_line "$T/unsaved.err")"
check "unsaved maps: in the SVG subtitle" \
	grep -q 'samples; 2 processes exited before their memory map could be saved</text>' "$T/unsaved.svg"
if command -v go >/dev/null 2>&1 && [ "$PPROF_OK" = 1 ]; then
	gopprof -raw "$T/unsaved.pb.gz" >"$T/unsaved.raw" 2>"$T/unsaved.goerr"
	check "unsaved maps: in the pprof comment (go tool pprof -raw)" \
		grep -q '^Comment: samples=9 lost_events=0 .* over_total=0 maps_unsaved=2$' "$T/unsaved.raw"
else
	skip "unsaved maps: in the pprof comment" "go or pprof tools missing"
fi
check_eq "unsaved maps: their frames [unknown], the saved one's named" \
	"app;app+0x100 5|brief;[unknown] 1|gone;[unknown] 3" "$(paste -sd '|' "$T/unsaved.folded")"
conserve unsaved "$FX/unsaved-maps.txt"
# bpftrace's own output (no capture header: maps are read live, lazily) and
# a capture with every map saved count none, and the pprof comment is as it was
tail -n +2 "$FX/unsaved-maps.txt" >"$T/nohead.txt"
sf nohead -f svg,pprof -o "$T/nohead" "$T/nohead.txt"
check "unsaved maps: not counted without the capture header" \
	bash -c "test -s '$T/nohead.svg' -a -s '$T/nohead.pb.gz' && ! grep -q 'exited before' '$T/nohead.err' '$T/nohead.svg' && ! gzip -dc '$T/nohead.pb.gz' | grep -aq maps_unsaved"
# a process marked again after each flush is one process; each image (the
# pid field's high half: an exec) is its own, saved or not
{
	cat "$FX/unsaved-maps.txt"
	printf '#flushed\n#pid 200 gone\n#pid 100 app\n#pid %d app2\n#pid %d app2\n' \
		$(((1 << 32) | 100)) $(((1 << 32) | 100))
} >"$T/again.txt"
sf again -f folded "$T/again.txt"
check_eq "unsaved maps: once a process and image, every image counted" \
	"stackfold: 3 processes exited before their memory map could be saved" "$(unsaved_line "$T/again.err")"
grep -v '^#pid [23]00 ' "$FX/unsaved-maps.txt" >"$T/allsaved.txt"
sf allsaved -f svg "$T/allsaved.txt"
check "unsaved maps: none when every #pid has its #maps" \
	bash -c "grep -q '<svg' '$T/allsaved.out' && ! grep -q 'exited before' '$T/allsaved.err' '$T/allsaved.out'"
# stackfold record, with a stand-in for bpftrace: its own shell (alive, so
# its map is saved) and a pid above PID_MAX_LIMIT (never alive).  The count
# reaches every output, and the raw capture read again gives the same.
# shellcheck disable=SC2016 # $$ is the stand-in's pid
"$STACKFOLD" record -f folded,svg,pprof -o "$T/rec" --save-raw "$T/rec.raw" -- sh -c '
	printf "#pid %d sh\n" $$; sleep 1
	printf "#pid 4999999 gone\n@stackfold_a[4999999, 4999999, gone,\n\t7f0000001000\n, ]: 3\n@stackfold_total_a: 3\n"' \
	>/dev/null 2>"$T/rec.err"
check_eq "record: exit 0" 0 $?
check_eq "record: 1 process in the summary (the live one's map saved)" \
	"stackfold: 1 process exited before its memory map could be saved" "$(unsaved_line "$T/rec.err")"
check "record: its map is in the raw capture, right before its #pid" \
	bash -c "grep -B1 '^#pid [0-9]* sh$' '$T/rec.raw' | grep -q '^#endmaps$'"
check "record: in the SVG subtitle" grep -q '; 1 process exited before its memory map could be saved</text>' "$T/rec.svg"
check "record: in the pprof comment" bash -c "gzip -dc '$T/rec.pb.gz' | grep -aq 'over_total=0 maps_unsaved=1'"
sf replay -f svg,pprof -o "$T/replay" "$T/rec.raw"
check_eq "record's raw capture read again: the same count" "$(unsaved_line "$T/rec.err")" "$(unsaved_line "$T/replay.err")"
check "record's raw capture read again: the same subtitle losses" \
	bash -c "grep -q '; 1 process exited before its memory map could be saved</text>' '$T/replay.svg' &&
		gzip -dc '$T/replay.pb.gz' | grep -aq 'over_total=0 maps_unsaved=1'"
# An older image's "#pid" read after a newer one's (bpftrace reads its
# per-CPU buffers in turn): the process runs the newer program now, so its
# map is not the older image's; that image is counted, not snapshotted.
# shellcheck disable=SC2016 # $$ is the stand-in's pid
"$STACKFOLD" record -f folded -o "$T/late" --save-raw "$T/late.raw" -- sh -c '
	printf "#pid %d sh\n" $(((2 << 32) | $$)); sleep 1; printf "#pid %d old\n" $(((1 << 32) | $$)); sleep 1
	printf "@stackfold_a[%d, %d, old,\n\t7f0000001000\n, ]: 3\n@stackfold_total_a: 3\n" $(((1 << 32) | $$)) $$' \
	>/dev/null 2>"$T/late.err"
check_eq "late #pid of an older image: exit 0" 0 $?
check_eq "late #pid of an older image: counted as unsaved" \
	"stackfold: 1 process exited before its memory map could be saved" "$(unsaved_line "$T/late.err")"
check_eq "late #pid of an older image: only the newer image's map saved" 1 "$(grep -c '^#maps ' "$T/late.raw")"
# A process that runs exec between its sample and the reading of its
# "#pid" line: the line's start of stack (after the colon) is the older
# program's, /proc/PID/stat shows the newer one's.  Its map is not saved
# for the older image (counted instead), and a sample of that image at an
# address of the newer program's code is not named from it, not even by a
# lazy snapshot at the end when the newer image has no "#pid" line of its
# own (NEWER=0); the newer image's line is saved.
# shellcheck disable=SC2016 # the stand-in's own variables
exec_race='
	stat28() { sed "s/.*) //" "/proc/$1/stat" | cut -d" " -f26; }
	sh -c "kill -STOP \$\$; exec sleep 30" & c=$!
	while [ "$(sed "s/.*) //" "/proc/$c/stat" | cut -c1)" != T ]; do sleep 0.01; done
	old=$(stat28 $c); kill -CONT $c
	# comm changes early in the exec: wait for sleep mapped and asleep
	until grep -q "r-xp.*sleep" /proc/$c/maps && [ "$(sed "s/.*) //" "/proc/$c/stat" | cut -c1)" = S ]; do
		sleep 0.01
	done
	new=$(stat28 $c)
	a=$(awk "/r-xp.*sleep/ { split(\$1, r, \"-\"); print r[1]; exit }" /proc/$c/maps)
	printf "#pid %d:%d sh\n" $(((1 << 32) | c)) "$old"; sleep 1
	[ "$NEWER" = 0 ] || printf "#pid %d:%d sleep\n" $(((2 << 32) | c)) "$new"; sleep 1
	printf "@stackfold_a[%d, %d, sh,\n\t%x\n, ]: 3\n" $(((1 << 32) | c)) $c $((0x$a + 0x40))
	printf "@stackfold_total_a: 3\n"; kill $c'
NEWER=1 "$STACKFOLD" record -f folded -o "$T/exec" --save-raw "$T/exec.raw" -- sh -c "$exec_race" \
	>/dev/null 2>"$T/exec.err"
check_eq "exec before the #pid line is read: exit 0" 0 $?
check_eq "exec before the #pid line is read: the older image counted as unsaved" \
	"stackfold: 1 process exited before its memory map could be saved" "$(unsaved_line "$T/exec.err")"
check_eq "exec before the #pid line is read: only the newer image's map saved" \
	"#maps $(awk '/^#pid [0-9]*:[0-9]* sleep$/ { sub(/:.*/, "", $2); print $2 }' "$T/exec.raw")" \
	"$(grep '^#maps ' "$T/exec.raw")"
check_eq "exec before the #pid line is read: its sample not named from the newer program" \
	"sh;[unknown] 3" "$(cat "$T/exec.folded")"
NEWER=0 "$STACKFOLD" record -f folded -o "$T/exec0" -- sh -c "$exec_race" >/dev/null 2>"$T/exec0.err"
check_eq "exec before the #pid line is read, newer image unseen: not named from it either" \
	"0|sh;[unknown] 3" "$?|$(cat "$T/exec0.folded")"

# --- A6: 1024-frame and 127-frame stacks ----------------------------------
# A stack at a depth limit (127: perf_event_max_stack's default; 1024:
# bpftrace's maximum) may have lost its root: marked [truncated] and
# counted.  One frame less is not marked.
awk 'BEGIN { print "@[1, 1, deep,"; for (i = 0; i < 1024; i++) printf "\tf%d+1\n", i;
	print "]: 5"; print "@[1, 1, deep,"; for (i = 0; i < 127; i++) printf "\tk%d+1\n", i; print "]: 2"
	print "@[1, 1, deep,"; for (i = 0; i < 126; i++) printf "\tm%d+1\n", i; print "]: 1" }' >"$T/deep.txt"
sf deep "$T/deep.txt"
check_eq "1024-frame stack: every frame kept (+ process frame, + [truncated])" 1026 \
	"$(awk '/f1023/ { print gsub(/;/, ";") + 1 }' "$T/deep.out")"
check_eq "127-frame stack: every frame kept (+ [truncated])" 129 "$(awk '/k126/ { print gsub(/;/, ";") + 1 }' "$T/deep.out")"
check "1024-frame stack: root first, marked [truncated]" grep -q '^deep;\[truncated\];f1023;f1022;' "$T/deep.out"
check "127-frame stack: marked [truncated]" grep -q '^deep;\[truncated\];k126;k125;' "$T/deep.out"
check "126-frame stack: not marked" grep -q '^deep;m125;m124;' "$T/deep.out"
check "stacks at the depth limit: counted in the summary" \
	grep -q '7 samples with a stack at the depth limit' "$T/deep.err"
conserve deep "$T/deep.txt"
# The same records again (a map printed every flush repeats them): answered
# from the record cache, and still counted as truncated.
cat "$T/deep.txt" "$T/deep.txt" >"$T/deep2.txt"
sf deep2 "$T/deep2.txt"
check "repeated stacks at the depth limit: counted each time" \
	grep -q '14 samples with a stack at the depth limit' "$T/deep2.err"

# an 8 MB frame name on one line (the line reader grows to the line)
{ printf '@[\n    '; head -c 8000000 /dev/zero | tr '\0' x; printf '+1\n]: 3\n'; } >"$T/long.txt"
sf long "$T/long.txt"
check_eq "8 MB frame name: kept whole" "8000000 3" "$(awk '{ print length($1), $2 }' "$T/long.out")"

# --- A7: 10M lines streamed in bounded memory ------------------------------
# 2M records of 5 lines over 100 unique stacks.  ASan reserves terabytes of
# virtual memory, so under it the bound is checked on the RSS instead.
gen_lines() {	# RECORDS
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) { s = i % 100;
		printf "@[\n    leaf%d+1\n    mid%d+2\n    main+3\n]: 1\n", s, s % 7 } }'
}
big_run() {	# NAME RECORDS -> folded total in $T/NAME.out, max RSS (KiB) in NAME.rss
	local n=$1 recs=$2
	if [ "${SANITIZE:-}" = 1 ]; then
		gen_lines "$recs" | /usr/bin/time -f %M -o "$T/$n.rss" "$STACKFOLD" -q >"$T/$n.out" 2>"$T/$n.err"
	else
		gen_lines "$recs" | (ulimit -v 262144 && /usr/bin/time -f %M -o "$T/$n.rss" "$STACKFOLD" -q) >"$T/$n.out" 2>"$T/$n.err"
	fi
}
if [ -x /usr/bin/time ]; then
	start=$(date +%s)
	big_run big 2000000
	secs=$(($(date +%s) - start))
	check_eq "10M lines: every sample counted (ulimit -v 256 MiB unless ASan)" 2000000 "$(folded_total "$T/big.out")"
	big_run small 20000
	big_rss=$(tail -n 1 "$T/big.rss") small_rss=$(tail -n 1 "$T/small.rss")
	if [ -n "$big_rss" ] && [ -n "$small_rss" ] && [ "$big_rss" -lt $((small_rss + 16384)) ]; then
		pass "10M lines: memory does not grow with input (RSS ${big_rss} KiB vs ${small_rss} KiB for 100k lines; ${secs}s)"
	else
		fail "10M lines: memory does not grow with input" "RSS 10M lines: $big_rss KiB, 100k lines: $small_rss KiB"
	fi
else
	fail "10M lines" "/usr/bin/time missing (apt-get install time)"
fi

# --- A8: control bytes, NUL, non-UTF-8 ------------------------------------
printf '@[1, 2, c\377o\001m\033[31m,\n\tf\303\050o;o+1\n\tn\000u\tl+2\n\tb a;r\177+0x2\n, ]: 2\n@[1, 2, ok,\n\tmain+1\n, ]: 1\n' >"$T/bytes.txt"
sf bytes "$T/bytes.txt"
check_eq "control bytes: exit 0" 0 "$(rc bytes)"
check_eq "control bytes: no control byte or NUL in the folded output" 0 \
	"$(LC_ALL=C tr -d '\n' <"$T/bytes.out" | LC_ALL=C tr -d '\040-\176\200-\377' | wc -c)"
check "NUL in a frame name becomes '?', the name is not cut" grep -a -q 'n?u?l' "$T/bytes.out"
# shellcheck disable=SC2016
check "every line matches flamegraph.pl's line regex" \
	perl -ne 'BEGIN { $ok = 1 } $ok = 0 unless /^(.*)\s+?(\d+(?:\.\d*)?)$/; END { exit !$ok }' "$T/bytes.out"
conserve bytes "$T/bytes.txt"
"$STACKFOLD" -q -f svg "$T/bytes.txt" >"$T/bytes.svg" 2>/dev/null
if command -v xmllint >/dev/null; then
	check "control bytes: SVG is well-formed XML" xmllint --noout "$T/bytes.svg"
fi
if [ "$PPROF_OK" = 1 ]; then
	"$STACKFOLD" -q -f pprof -o "$T/bytes.pb.gz" "$T/bytes.txt" 2>/dev/null
	check "control bytes: pprof validates (UTF-8 strings)" "$PPROF_CHECK" --no-time "$T/bytes.pb.gz"
fi

# a folded input and a bpftrace input together (the unfinished folded
# part is not merged slot by slot, NULL stacks included: UBSan)
printf 'a;b 1\n' >"$T/mix.folded"
printf '@[\n    a+1\n]: 2\n' >"$T/mix.txt"
sf mix "$T/mix.folded" "$T/mix.txt"
check_eq "folded + bpftrace inputs merge" "a 2|a;b 1" "$(paste -sd '|' "$T/mix.out")"

# regressions of FINDINGS.md F1, F5, F9
printf '@[\n    ab +1\n]: 5\n' | "$STACKFOLD" -q | "$STACKFOLD" -q >"$T/blank.out"
check_eq "a leaf frame ending in a blank survives folded -> folded (F1)" "ab  5" "$(cat "$T/blank.out")"
long=$(head -c 1100 /dev/zero | tr '\0' x)
printf '%sA 1\n%sB 2\n' "$long" "$long" >"$T/longnames.folded"
sf longnames -f folded,pprof -o "$T/longnames" "$T/longnames.folded"
check_eq "names differing after byte 1023 stay apart (F5)" 2 "$(wc -l <"$T/longnames.folded")"
printf 'a\177b;;c 1\n;x 2\n' >"$T/ctl.folded"
"$STACKFOLD" -q "$T/ctl.folded" >"$T/ctl1.out"
"$STACKFOLD" -q -f folded,pprof -o "$T/ctl2" "$T/ctl.folded"
check_diff "folded output is the same with and without pprof (F9)" "$T/ctl1.out" "$T/ctl2.folded"

# --- D28: folded round trip (property test) ---------------------------------
# Random stacks whose names hold ';', spaces, tabs, trailing digits, [T; 4],
# memcpy@GLIBC_2.2.5 and high bytes: bpftrace text -> folded -> folded must
# be a fixed point with the same totals and the same frame count per line.
seed=${ROUNDTRIP_SEED:-$(date +%s)}
awk -v seed="$seed" 'BEGIN { srand(seed)
	split("[T; 4]|memcpy@GLIBC_2.2.5|a b c|f 123|x;y;z|trail 9|v2 10|\303\251t\303\251|tab\there|_[k]|[unknown]|end_[i]", w, "|")
	for (r = 0; r < 300; r++) {
		printf "@[%d, %d, comm %d,\n", r % 5, r % 5, r % 3
		d = 1 + int(rand() * 12)
		for (i = 0; i < d; i++) printf "\t%s%d+%d\n", w[1 + int(rand() * 12)], int(rand() * 4), i
		printf ", ]: %d\n", 1 + int(rand() * 1000)
	} }' >"$T/rt.txt"
sf rt1 -q "$T/rt.txt"
sf rt2 -q "$T/rt1.out"
check_diff "round trip: folded -> folded is a fixed point (seed $seed)" "$T/rt1.out" "$T/rt2.out"
check_eq "round trip: totals equal" "$(grep -o ']: [0-9]*$' "$T/rt.txt" | awk '{ s += $2 } END { print s }')" "$(folded_total "$T/rt2.out")"
# frames per stack survive: depth + process frame, summed over the lines
want=$(awk '/^@\[/ { d = 0; next } /^\t/ { d++; next } /^, \]: / { print d + 1 }' "$T/rt.txt" | sort -n | uniq -c | awk '{ print $2 }' | sort -n | tr '\n' ' ')
got=$(awk '{ sub(/ [0-9]+$/, ""); print gsub(/;/, ";") + 1 }' "$T/rt1.out" | sort -n | uniq | tr '\n' ' ')
check_eq "round trip: frame counts per stack preserved" "$want" "$got"
# shellcheck disable=SC2016
check "round trip: every line matches flamegraph.pl's regex" \
	perl -ne 'BEGIN { $ok = 1 } $ok = 0 unless /^(.*)\s+?(\d+(?:\.\d*)?)$/; END { exit !$ok }' "$T/rt1.out"
conserve roundtrip "$T/rt.txt"

# Under SANITIZE=1 a sanitizer report in any stderr kept above fails.
check_eq "no ASan/UBSan/LSan report in any run" "" \
	"$(grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T"/*.err 2>/dev/null)"
