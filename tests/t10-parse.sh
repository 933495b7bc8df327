#!/usr/bin/env bash
# t10-parse: bpftrace text in every form one-liners print, and folded text,
# into folded output.  Golden files are real bpftrace 0.17 captures of
# bin/demo (tests/fixtures/bt/*.txt), already symbolized by bpftrace, so the
# expected output does not depend on this machine's binaries.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
FX=$TOP/tests/fixtures/bt

for f in kstack ustack-kstack ustack-perf keyed-maps; do
	"$STACKFOLD" -q "$FX/$f.txt" >"$T/$f.out" 2>"$T/$f.err"
	check_diff "golden $f" "$FX/$f.expected" "$T/$f.out"
done

# Conservation: every count in the input is in the output (stack maps only).
in_total=$(grep -o ']: [0-9]*$' "$FX/ustack-kstack.txt" | awk '{ s += $2 } END { print s }')
check_eq "ustack-kstack: folded total equals the counts read" "$in_total" "$(folded_total "$T/ustack-kstack.out")"

# Kernel frames are suffixed _[k], offsets dropped, root first.
check "kstack frames carry _[k] and no +offset" \
	grep -q '^entry_SYSCALL_64_after_hwframe_\[k\];do_syscall_64_\[k\];ksys_read_\[k\];vfs_read_\[k\];read_zero_\[k\] ' "$T/kstack.out"
check "user frames before kernel frames" \
	grep -q '^__libc_start_call_main;main;run;__libc_read;entry_SYSCALL_64_after_hwframe_\[k\]' "$T/ustack-kstack.out"

# keyed-maps: @[pid, comm, kstack] plus @n[comm] and @total: the stack-less
# map is not added on top of the stack map (no double counting).
check_eq "keyed maps: only the stack map is counted" 49 "$(folded_total "$T/keyed-maps.out")"
check "keyed maps: the skipped counts are reported" grep -q '49 counts in maps without stacks' "$T/keyed-maps.err"
printf '@[foo]: 3\n@[bar]: 2\n' | "$STACKFOLD" -q >"$T/nostack.out"
check_eq "stack-less map alone: its counts are samples" "bar 2
foo 3" "$(cat "$T/nostack.out")"

# An empty string key prints as an empty stack does ("@c[]: N", "@c[x, ]:
# N"): a stack only in a map that has stacks, else a string key, not added
# beside a stack map (it was, counting samples twice).
printf '@c[]: 10\n@[\n    foo+1\n]: 10\n@c[abc, ]: 7\n@[]: 4\n' | "$STACKFOLD" >"$T/emptykey.out" 2>"$T/emptykey.err"
check_eq "empty string keys beside a stack map: not added; its empty stack is" "[no stack] 4|foo 10" \
	"$(paste -sd'|' "$T/emptykey.out")"
check "empty string keys beside a stack map: counted as not added" \
	grep -q '17 counts in maps without stacks' "$T/emptykey.err"
check_eq "empty and other string keys alone: all samples" "[no stack] 5|x 5" \
	"$(printf '@c[]: 5\n@c[x]: 5\n' | "$STACKFOLD" -q | paste -sd'|')"
# stackfold's own maps are stack maps even when one holds only empty stacks
# (its two maps take turns: one flush's may have only stack-id failures)
check_eq "stackfold's maps: an empty-stacks-only map is still samples" "app 3|app;foo 10" \
	"$(printf '@stackfold_a[4294967396, 100, app, \n    foo+1\n, ]: 10\n@stackfold_total_a: 10\n@stackfold_b[4294967396, 100, app, , ]: 3\n@stackfold_total_b: 3\n' |
		"$STACKFOLD" -q 2>/dev/null | paste -sd'|')"
# Entries of maps without stacks are merged by key: memory does not grow
# with the lines (it grew 124 MB for 4 million).
for n in 60000 600000; do
	awk -v n=$n 'BEGIN { for (i = 0; i < n; i++) printf "@c[comm%d]: 1\n", i % 3 }' >"$T/many.txt"
	/usr/bin/time -f '%M' -o "$T/many$n.rss" "$STACKFOLD" -q "$T/many.txt" >"$T/many$n.out"
done
check_eq "600,000 stack-less lines: merged by key" "comm0 200000|comm1 200000|comm2 200000" \
	"$(paste -sd'|' "$T/many600000.out")"
grow=$(( $(cat "$T/many600000.rss") - $(cat "$T/many60000.rss") ))
check "stack-less lines: 10 times the lines, not 4 MB more memory (got $grow KiB)" test "$grow" -lt 4096
printf '@[a]: 5000000000000000000\n@[b]: 5000000000000000000\n' | "$STACKFOLD" >/dev/null 2>"$T/ovf.err"
check_eq "stack-less counts past 2^63: bad input, exit 2" 2 $?
check_eq "stack-less counts past 2^63: says so (found at the end: no line)" \
	"stackfold: <stdin>: sample counts add up past 2^63 (corrupt input?)" "$(cat "$T/ovf.err")"

# A program's printf text first (bpftrace -q, a BEGIN banner): the input is
# still bpftrace's (it was read as folded text, every stack lost).
printf 'Sampling at 99 Hz\n\n@[\n    foo+1\n    bar+2\n]: 117\n' | "$STACKFOLD" >"$T/banner.out" 2>"$T/banner.err"
check_eq "a printf banner before the maps: bpftrace text" "bar;foo 117" "$(cat "$T/banner.out")"
check "a printf banner before the maps: counted as one unparsable line" \
	grep -q '<stdin>:1: ignored 1 unparsable line' "$T/banner.err"
printf 'a header\nmain;f 3\n' | "$STACKFOLD" >"$T/fhead.out" 2>"$T/fhead.err"
check_eq "a text line before folded lines: folded" "main;f 3" "$(cat "$T/fhead.out")"
check "a text line before folded lines: one unparsable line" grep -q 'ignored 1 unparsable line (first at line 1)' "$T/fhead.err"

# hist() keyed by a stack: not a truncated record (none counted as
# incomplete); its rows add up to the entry's count (with the count
# map's: two stack maps, added together).
printf '@[\n    foo+1\n]: 3\n@h[\n    foo+1\n]: \n[0]     1 |@@@@@@@@|\n[1, 2)  1 |@@@@@@@@|\n\n' |
	"$STACKFOLD" >"$T/hist.out" 2>"$T/hist.err"
check_eq "hist() keyed by a stack: its rows summed, added to the other map's" "foo 5" "$(cat "$T/hist.out")"
check "hist() keyed by a stack: no incomplete record" bash -c "! grep -q incomplete '$T/hist.err'"

# A record with a line the parser refuses, twice: each copy counts the same
# (the record cache answered the second without the parser: 1 unparsable
# line, and with a count cut from a line after it, 3 in place of 5).
printf '@[\n    foo+1\n    0xZZ\n]: 3\n@[\n    foo+1\n    0xZZ\n]: 3\n' | "$STACKFOLD" -q 2>&1 >/dev/null |
	grep -q '2 unparsable lines'
check_eq "a bad line in a repeated record: counted in each copy" 0 $?
check_eq "a count line with a trailing blank, repeated: the same count each time" "foo 10" \
	"$(printf '@[\n    foo+1\n]: 5 \n]: 3\n@[\n    foo+1\n]: 5 \n]: 3\n' | "$STACKFOLD" -q 2>/dev/null)"

# Process frame with --show-pid (comm-PID), and -U / -K.
"$STACKFOLD" -q --show-pid "$FX/keyed-maps.txt" >"$T/pid.out" 2>/dev/null
check "--show-pid puts comm-PID first" grep -q '^demo-17511;entry_SYSCALL' "$T/pid.out"
"$STACKFOLD" -q -K "$FX/ustack-kstack.txt" >"$T/k.out"
check "-K keeps kernel frames only" bash -c "! grep -q 'main' '$T/k.out' && grep -q 'read_zero_\[k\]' '$T/k.out'"
"$STACKFOLD" -q -U "$FX/ustack-kstack.txt" >"$T/u.out"
check "-U keeps user frames only" bash -c "! grep -q '_\[k\]' '$T/u.out' && grep -q 'matrix_multiply' '$T/u.out'"
check_eq "-U keeps every sample" "$in_total" "$(folded_total "$T/u.out")"

# Empty input and input with no samples: exit 2, one line, nothing written.
: >"$T/empty.txt"
echo keep >"$T/prev.folded"
"$STACKFOLD" -o "$T/prev.folded" "$T/empty.txt" 2>"$T/empty.err"
check_eq "empty input exits 2" 2 $?
check_eq "empty input message" "stackfold: no samples found in $T/empty.txt" "$(tail -n 1 "$T/empty.err")"
check_eq "empty input leaves the previous output" keep "$(cat "$T/prev.folded")"
"$STACKFOLD" -q "$FX/only-attaching.txt" 2>/dev/null
check_eq "only 'Attaching' exits 2" 2 $?
"$STACKFOLD" "$T/does-not-exist" 2>"$T/nofile.err"
check_eq "missing input exits 2" 2 $?
check "missing input names the file" grep -q "cannot open '$T/does-not-exist'" "$T/nofile.err"

# Junk, lost events, stack-id errors, an overflowing count.
"$STACKFOLD" "$FX/junk.txt" >"$T/junk.out" 2>"$T/junk.err"
check_eq "junk: the good records are kept" 7 "$(folded_total "$T/junk.out")"
check "junk: unparsable lines counted with the first line number" \
	grep -q 'junk.txt:3: ignored 3 unparsable lines (first at line 3)' "$T/junk.err"
check "junk: lost events reported" grep -q 'bpftrace lost 7 events' "$T/junk.err"
check "junk: stack-id errors reported" grep -q '1 stack-id errors' "$T/junk.err"

# Names-only stacks (one-liner text): a kernel root such as worker_thread
# makes a stack kernel only as its outermost frame; a program's own
# worker_thread in the middle of a user stack leaves it user: no frame of
# it is marked _[k].
printf '@[\n    compute+1\n    worker_thread+2\n    start_thread+3\n    clone3+4\n]: 5\n' >"$T/uworker.txt"
check_eq "user stack through a worker_thread of its own: no _[k]" \
	"clone3;start_thread;worker_thread;compute 5" "$("$STACKFOLD" -q "$T/uworker.txt")"
printf '@[\n    process_one_work+1\n    worker_thread+2\n    kthread+3\n]: 2\n' >"$T/kworker.txt"
check_eq "kernel stack rooted at kthread: _[k]" \
	"kthread_[k];worker_thread_[k];process_one_work_[k] 2" "$("$STACKFOLD" -q "$T/kworker.txt")"
printf '@[\n    _raw_spin_lock+1\n    __x64_sys_futex+2\n    do_syscall_64+3\n]: 1\n' >"$T/ktrunc.txt"
check_eq "kernel stack cut short (no root): kernel by its syscall frames" \
	"do_syscall_64_[k];__x64_sys_futex_[k];_raw_spin_lock_[k] 1" "$("$STACKFOLD" -q "$T/ktrunc.txt")"

# CRLF line ends and a truncated final record.
"$STACKFOLD" "$FX/crlf-truncated.txt" >"$T/crlf.out" 2>"$T/crlf.err"
check_eq "CRLF input parses" "do_idle_[k];schedule_[k] 4" "$(cat "$T/crlf.out")"
check "truncated final record reported with its line" grep -q 'crlf-truncated.txt:6: ignored 1 incomplete record (first at line 6;' "$T/crlf.err"

# Raw kernel addresses (bpftrace >= 0.18 raw mode) are named via kallsyms.
if [ "$(awk '$3 == "vfs_read" { print $1; exit }' /proc/kallsyms)" != 0000000000000000 ] &&
	addr=$(awk '$3 == "vfs_read" { print $1; exit }' /proc/kallsyms) && [ -n "$addr" ]; then
	leaf=$(printf '%x' $((0x$addr + 16)))
	printf 'Attaching 1 probe...\n@[\n    %s\n]: 3\n' "$leaf" >"$T/raw.txt"
	check_eq "raw kernel address symbolized through kallsyms" "vfs_read_[k] 3" "$("$STACKFOLD" -q "$T/raw.txt")"
else
	skip "raw kernel address symbolized" "kallsyms hidden"
fi
# The same as a golden: raw mode's `@[ustack(raw), kstack(raw)]` with an
# empty user part, named through a kallsyms of our own (the return
# address 821ecc51 at address - 1, inside do_syscall_64).
printf '%s\n' 'ffffffff816b8200 T vfs_read' 'ffffffff816b8400 T rw_verify_area' \
	'ffffffff821ecc00 T do_syscall_64' 'ffffffff821ecc51 T entry_SYSCALL_64' >"$T/fake.kallsyms"
check_eq "raw mode: kernel addresses named through kallsyms, empty user part" \
	"do_syscall_64_[k];vfs_read_[k] 3" \
	"$(STACKFOLD_KALLSYMS=$T/fake.kallsyms STACKFOLD_MODULES=/dev/null "$STACKFOLD" -q "$FX/raw-mode.txt")"

# --offsets keeps each frame's offset in its function, as perf script
# -F +symoff writes it (hex): from kallsyms for raw kernel addresses (of
# the return address itself, though it is named at address - 1), from
# bpftrace's SYM+OFF text (decimal there) otherwise; frames at two offsets
# stay apart, and merge without it.
check_eq "--offsets: raw kernel addresses, offsets from kallsyms" \
	"do_syscall_64+0x51_[k];vfs_read+0xeb_[k] 3" \
	"$(STACKFOLD_KALLSYMS=$T/fake.kallsyms STACKFOLD_MODULES=/dev/null "$STACKFOLD" -q --offsets "$FX/raw-mode.txt")"
printf '@[\n    do_syscall_64+56\n    entry_SYSCALL_64_after_hwframe+118\n]: 3\n@[\n    do_syscall_64+60\n    entry_SYSCALL_64_after_hwframe+118\n]: 2\n' >"$T/koff.txt"
check_eq "--offsets: SYM+OFF text, two offsets two frames, in hex" \
	"entry_SYSCALL_64_after_hwframe+0x76_[k];do_syscall_64+0x38_[k] 3
entry_SYSCALL_64_after_hwframe+0x76_[k];do_syscall_64+0x3c_[k] 2" \
	"$("$STACKFOLD" -q --offsets "$T/koff.txt")"
check_eq "without --offsets: offsets dropped, the two frames one" \
	"entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k] 5" \
	"$("$STACKFOLD" -q "$T/koff.txt")"
check_eq "--offsets -f top: a row per offset" \
	"60.0% 3 60.0% 3 do_syscall_64+0x38_[k]|40.0% 2 40.0% 2 do_syscall_64+0x3c_[k]" \
	"$("$STACKFOLD" -q --offsets -f top --top 2 "$T/koff.txt" | awk '/^ .*% .*do_syscall_64/ && !/;/ { $1 = $1; printf "%s%s", sep, $0; sep = "|" }')"
printf '@[1234, app,\n    leaf+0\n    main+0x1a\n    __libc_start_call_main+122\n]: 4\n@[1234, app,\n    leaf+7\n    main+26\n    __libc_start_call_main+122\n]: 1\n' >"$T/uoff.txt"
check_eq "--offsets: user SYM+OFF frames, +0 kept as +0x0, hex and decimal alike" \
	"app;__libc_start_call_main+0x7a;main+0x1a;leaf+0x0 4
app;__libc_start_call_main+0x7a;main+0x1a;leaf+0x7 1" \
	"$("$STACKFOLD" -q --no-cache --offsets "$T/uoff.txt")"
printf '@[\n        ffffffff821ecc38 do_syscall_64+56 ([kernel.kallsyms])\n        ffffffff82400076 entry_SYSCALL_64_after_hwframe+118 ([kernel.kallsyms])\n]: 2\n' >"$T/kperf.txt"
check_eq "--offsets: kstack(perf) frames keep bpftrace's offsets" \
	"entry_SYSCALL_64_after_hwframe+0x76_[k];do_syscall_64+0x38_[k] 2" \
	"$(STACKFOLD_KALLSYMS=/dev/null "$STACKFOLD" -q --offsets "$T/kperf.txt")"

# Folded input: round trip, merge, _[k] kept, comments/garbage counted.
printf 'a;b;c 3\na;b 2\na;b;c 4\nx;y_[k] 1\nbad line\n' >"$T/in.folded"
"$STACKFOLD" "$T/in.folded" >"$T/f.out" 2>"$T/f.err"
check_eq "folded input merged and sorted" "a;b 2
a;b;c 7
x;y_[k] 1" "$(cat "$T/f.out")"
check "folded input: bad line counted" grep -q 'in.folded:5: ignored 1 unparsable line' "$T/f.err"
"$STACKFOLD" -q "$T/f.out" >"$T/f2.out"
check_diff "folded output re-parses to itself" "$T/f.out" "$T/f2.out"

# Names that would break the format are made safe, and re-parse the same.
printf '@[\n    a;b+1\n    c\tx+2\n]: 5\n' >"$T/semi.txt"
check_eq "';' becomes ':' and control bytes '?'" "c?x;a:b 5" "$("$STACKFOLD" -q "$T/semi.txt")"

# Determinism: same input, same bytes.
"$STACKFOLD" -q "$FX/ustack-kstack.txt" >"$T/d1"
"$STACKFOLD" -q "$FX/ustack-kstack.txt" >"$T/d2"
check "same input gives the same bytes" cmp -s "$T/d1" "$T/d2"

# ustack(perf) module names may hold parentheses: "(/x/app (deleted))".
printf '@[\n\t562ea408e369 foo+3 (/opt/app/demo (deleted))\n\t562ea408e400 main+3 (/opt/app/demo (deleted))\n]: 1\n' >"$T/deleted.txt"
check_eq "perf frame of a deleted module: name and module split at the matching '('" \
	"main;foo 1" "$("$STACKFOLD" -q "$T/deleted.txt")"
# ustack(perf) frames with short addresses ("1 0x1 ([unknown])", seen in
# -a captures): addresses, not names
printf '@[\n\t1 0x1 ([unknown])\n\t7f0000001234 0x7f0000001234 ([unknown])\n\t753a 0x753a ([unknown])\n]: 5\n' >"$T/small.txt"
"$STACKFOLD" -v "$T/small.txt" >"$T/small.out" 2>"$T/small.err"
check_eq "short perf-format addresses: unknown frames, not names" "[unknown];[unknown];[unknown] 5" "$(cat "$T/small.out")"
check "short perf-format addresses: counted as unsymbolized" grep -q '15 unsymbolized frame samples' "$T/small.err"
check_eq "a short hex-looking name stays a name" "add;beef 1" \
	"$(printf '@[\n\tbeef\n\tadd\n]: 1\n' | "$STACKFOLD" -q)"
# The summary counts unique stacks, folded input included.
printf 'a;b;c 3\na;b 2\na;b;c 4\n' >"$T/dup.folded"
"$STACKFOLD" -v "$FX/kstack.txt" "$T/dup.folded" 2>"$T/dup.err" >"$T/dup.out"
check_eq "summary: unique stacks, bpftrace and folded input mixed" \
	"$(wc -l <"$T/dup.out") unique stacks" "$(grep -o '[0-9]* unique stacks' "$T/dup.err")"

# Options on folded input give the same folded text whatever else is written
# (pprof goes through a profile; folded alone does not): -U, -K and -d act on
# the _[k] marks, --show-pid and --tid have no pid to add.
printf 'comm;main;read;vfs_read_[k];copy_[k] 3\ncomm;main;compute 2\n' >"$T/uk.folded"
for o in -U -K --delimit --show-pid --tid; do
	"$STACKFOLD" -q "$o" "$T/uk.folded" >"$T/uk1.out"
	"$STACKFOLD" -q "$o" -f folded,pprof -o "$T/uk2" "$T/uk.folded"
	check "folded input, $o: folded alone = folded beside pprof" cmp -s "$T/uk1.out" "$T/uk2.folded"
done
check_eq "folded input, -U: kernel frames dropped" "comm;main;compute 2
comm;main;read 3" "$("$STACKFOLD" -q -U "$T/uk.folded")"
check_eq "folded input, --show-pid: no made-up pid" "$(sort "$T/uk.folded")" "$("$STACKFOLD" -q --show-pid "$T/uk.folded" | sort)"
# -K keeps the first frame, the process by FlameGraph's convention, as it
# keeps a capture's process frame, so the processes' stacks do not merge
# into "[no stack]" and the kernel frames alone
check_eq "folded input, -K: the process frame kept, user frames dropped" "comm 2
comm;vfs_read_[k];copy_[k] 3" "$("$STACKFOLD" -q -K "$T/uk.folded")"
check_eq "folded input, -U: a kernel frame at the root is no process" "[no stack] 3" \
	"$(printf 'vfs_read_[k];copy_[k] 3\n' | "$STACKFOLD" -q -U)"

# `-f folded --diff` output (difffolded.pl's format, "stack BEFORE AFTER")
# read back: not silently taken for one-count lines.  (It is not read as
# two counts: a frame name may end in a number, and stackfold's own folded
# text must read back unchanged; see the round trip in t70-robust-input.)
printf 'a;b 10\na;c 5\nd 1\n' >"$T/before.folded"
printf 'a;b 5\na;c 10\ne 3\n' >"$T/after.folded"
"$STACKFOLD" -q -f folded --diff "$T/before.folded" "$T/after.folded" >"$T/diff.folded"
"$STACKFOLD" "$T/diff.folded" >"$T/diffback.out" 2>"$T/diffback.err"
check "differential folded read back: reported on stderr" \
	grep -q 'diff.folded: every line has two counts: differential folded text?' "$T/diffback.err"
"$STACKFOLD" "$T/after.folded" >/dev/null 2>"$T/plain.err"
check "plain folded: no such report" bash -c "! grep -q 'two counts' '$T/plain.err'"

# A printf line that ends in a number ("sampling pid 1234") before the
# maps does not make bpftrace text folded (read as folded, every stack
# would be lost and 1234 samples invented).  One-frame folded lines are
# still folded.
printf 'sampling pid 1234\n@[\n    foo+1\n    main+2\n]: 7\n' >"$T/printf1.txt"
"$STACKFOLD" "$T/printf1.txt" >"$T/printf1.out" 2>"$T/printf1.err"
check_eq "a printf line ending in a number first: bpftrace text" "main;foo 7" "$(cat "$T/printf1.out")"
check "... that line one unparsable line (line 1)" grep -q 'printf1.txt:1: ignored 1 unparsable line' "$T/printf1.err"
printf '[no stack] 5\nmain 2\nmain;f 3\n' | "$STACKFOLD" -q >"$T/oneframe.out" 2>&1
check_eq "one-frame folded lines, then deeper ones: folded" "[no stack] 5|main 2|main;f 3" "$(paste -sd '|' "$T/oneframe.out")"
printf 'b 1\na 2\n' | "$STACKFOLD" -q -f folded >"$T/oneonly.out" 2>&1
check_eq "only one-frame folded lines: folded" "a 2|b 1" "$(paste -sd '|' "$T/oneonly.out")"
printf 'b 1\na 2\nb 3\n' >"$T/oneuns.folded"
check_eq "only one-frame lines, unsorted, as SVG: read again as a tree" "b 4 samples" \
	"$("$STACKFOLD" -q -f svg "$T/oneuns.folded" | grep -o '<title>b ([0-9]* samples' | tr -d '<>(' | sed 's/title//')"
# A held one-frame line is read at its own line number: an unparsable one
# (a count past 2^64) is said where it is, and before a later printf line,
# not at the line that told the format
printf 'x 18446744073709551616\nb 5\nhello\nc;d 2\n' >"$T/heldbad.folded"
"$STACKFOLD" "$T/heldbad.folded" >"$T/heldbad.out" 2>"$T/heldbad.err"
check "a held line that does not parse: its own line number" \
	grep -q 'heldbad.folded:1: ignored 2 unparsable lines (first at line 1)' "$T/heldbad.err"
check_eq "... the rest read" "b 5|c;d 2" "$(paste -sd '|' "$T/heldbad.out")"

# ... and the 64 KiB they may fill is of text, their line numbers aside: 900
# lines of 70 bytes (63 KB) still wait for the bpftrace record after them
# (with the numbers counted, 70 KB, the input became folded text and the
# record was lost)
awk 'BEGIN { for (i = 0; i < 900; i++) printf "sampling pid %-55d 5\n", i;
	printf "@[\n    main+4\n    _start+10\n]: 7\n" }' >"$T/held64.txt"
check_eq "900 held lines of 70 bytes, then a bpftrace record: the record" "_start;main 7" \
	"$("$STACKFOLD" -q "$T/held64.txt" 2>/dev/null)"

# Loss lines inside a #maps block (a hand-edited capture, or one whose
# stderr was merged in) are counted, not taken for malformed maps lines; a
# maps line whose path says "map full" stays a maps line
printf '#maps 4242\nLost 7 events\nfailed to look up stack id -17 (pid 4242): -17\n555555554000-555555556000 r-xp 00000000 08:01 123 /tmp/map full\n#endmaps\n@[\n    foo+1\n]: 3\n' >"$T/mapslost.txt"
"$STACKFOLD" "$T/mapslost.txt" >/dev/null 2>"$T/mapslost.err"
check "loss lines in a #maps block: counted" grep -q '1 stack-id errors.*bpftrace lost 7 events' "$T/mapslost.err"
# ... and keep the block's line numbers: a malformed maps line after one is
# said where it is, not one line early
printf '#maps 4242\n555555554000-555555556000 r-xp 00000000 08:01 123 /bin/true\nLost 7 events\nzzz bad line\n#endmaps\n@[\n    foo+1\n]: 3\n' >"$T/mapsgap.txt"
"$STACKFOLD" "$T/mapsgap.txt" >/dev/null 2>"$T/mapsgap.err"
check "a malformed maps line after a loss line: its own line number" \
	grep -q 'mapsgap.txt:4: ignored 1 malformed line(s) in saved maps of process 4242 (first at line 4)' "$T/mapsgap.err"
check "... and the block stays whole" bash -c "! grep -q 'malformed\|map was full' '$T/mapslost.err'"

# Options that cancel each other are refused in one line, not half obeyed
# (-p --no-comm would drop -p silently, -K -d print a divider with nothing
# before it, --lines --no-dwarf add no lines, -o '' write hidden ".folded"
# files); getopt's errors say "stackfold:", not the binary's path
for combo in "-K -d" "-U -d" "-p --no-comm" "--tid --no-comm" "--lines --no-dwarf" \
	"-o ''" "-o $T/sub/ -f folded,svg"; do
	eval "echo 'a;b 1' | \"\$STACKFOLD\" $combo" >/dev/null 2>"$T/combo.err"
	check_eq "refused: $combo (exit 1, one line)" "1 1" "$? $(grep -c . "$T/combo.err")"
done
"$STACKFOLD" -x 2>"$T/getopt.err" </dev/null
check_eq "unknown option: exit 1, one line in stackfold's words" \
	"1 stackfold: -x: unknown option (see --help)" "$? $(cat "$T/getopt.err")"
"$STACKFOLD" --top 2>"$T/getopt2.err" </dev/null
check_eq "missing argument: one line" "stackfold: --top: needs an argument (see --help)" "$(cat "$T/getopt2.err")"
"$STACKFOLD" --lines -xq 2>"$T/getopt4.err" </dev/null
check_eq "an unknown short option in a cluster after a long one: named" \
	"stackfold: -x: unknown option (see --help)" "$(cat "$T/getopt4.err")"
"$STACKFOLD" --quiet=1 2>"$T/getopt3.err" </dev/null
check_eq "a long option given an argument it does not take: named as typed" \
	"stackfold: --quiet: unknown, ambiguous, or takes no argument (see --help)" "$(cat "$T/getopt3.err")"

# --diff: the BEFORE input's losses are said too, not only AFTER's
# summary: BEFORE's lost events must not go unsaid
printf 'Lost 40 events\nfailed to look up stack id -17 (pid 1): -17\n@[\n    foo+1\n]: 3\n' >"$T/dbefore.txt"
printf '@[\n    foo+1\n]: 5\n' >"$T/dafter.txt"
"$STACKFOLD" -q -f folded --diff "$T/dbefore.txt" "$T/dafter.txt" >/dev/null 2>"$T/dloss.err"
check "--diff -q: BEFORE's losses said" grep -q '^stackfold: before: 3 samples, .*stack-id errors.*lost 40 events' "$T/dloss.err"

# The top table: self/total shares per function, hottest stacks.
"$STACKFOLD" -q -f top "$FX/ustack-perf.txt" >"$T/top.out"
check "top: matrix_multiply is the hottest self function" \
	bash -c "sed -n 3p '$T/top.out' | grep -q 'matrix_multiply\$'"
check "top: main is 100% total" grep -Eq '^ +0\.0% +0 +100\.0% +[0-9]+  main$' "$T/top.out"
check "top: hottest stacks section" grep -q '^HOTTEST STACKS' "$T/top.out"
# --top N rows (default 25), N hottest stacks at most 10; --top 0 is every
# function (not the default 25).
for i in $(seq 1 40); do printf 'main;f%02d %d\n' "$i" "$i"; done >"$T/wide.folded"
fn_rows() { awk '/^ +SELF%/ { on = 1; next } /^$/ { on = 0 } on' "$1" | wc -l; }
stack_rows() { sed -n '/^HOTTEST STACKS$/,$p' "$1" | sed 1d | wc -l; }
"$STACKFOLD" -q -f top "$T/wide.folded" >"$T/top25.out"
check_eq "top: 25 function rows by default" 25 "$(fn_rows "$T/top25.out")"
"$STACKFOLD" -q -f top --top 0 "$T/wide.folded" >"$T/top0.out"
check_eq "top --top 0: every function (41)" 41 "$(fn_rows "$T/top0.out")"
check_eq "top --top 0: 10 hottest stacks" 10 "$(stack_rows "$T/top0.out")"
check_eq "top --top 0: the coldest function last" "main" "$(awk '/^ +SELF%/ { on = 1; next } /^$/ { on = 0 } on { n = $NF } END { print n }' "$T/top0.out")"
"$STACKFOLD" -q -f top --top 3 "$T/wide.folded" >"$T/top3.out"
check_eq "top --top 3: 3 rows, 3 stacks" "3 3" "$(fn_rows "$T/top3.out") $(stack_rows "$T/top3.out")"
check "--help says what --top 0 does" bash -c "'$STACKFOLD' --help | grep -q -- '--top N .*0: every function'"
# --countname is the unit of the table's total, as in the SVG and summary
check_eq "top: total in samples by default" "820 samples" "$(head -n 1 "$T/top25.out")"
"$STACKFOLD" -v -f top --countname bytes "$T/wide.folded" >"$T/topb.out" 2>"$T/topb.err"
check_eq "top --countname bytes: the total in bytes" "820 bytes" "$(head -n 1 "$T/topb.out")"
check "top --countname bytes: the summary too" grep -q 'read: 820 bytes' "$T/topb.err"

# Usage errors exit 1.
"$STACKFOLD" -f nosuch "$T/in.folded" 2>/dev/null
check_eq "unknown format exits 1" 1 $?
"$STACKFOLD" -f folded,top "$T/in.folded" >/dev/null 2>&1
check_eq "several formats without -o exit 1" 1 $?
"$STACKFOLD" -f folded,top -o "$T/multi" "$T/in.folded" 2>/dev/null
# ... found before any input is read (stdin is never consumed).
timeout 10 "$STACKFOLD" -f folded,top 2>/dev/null < <(sleep 30)
check_eq "several formats without -o: refused before reading stdin" 1 $?
"$STACKFOLD" -f '' "$T/in.folded" >"$T/noformat.out" 2>&1
check_eq "an empty format list exits 1 (not 0 with nothing written)" 1 $?
"$STACKFOLD" -f folded,folded -o "$T/twice" "$T/in.folded" >/dev/null 2>&1
check_eq "a format given twice exits 1" 1 $?
"$STACKFOLD" -U -K "$T/in.folded" >/dev/null 2>&1
check_eq "-U with -K exits 1 (they would leave no frame)" 1 $?
check "several formats with -o PREFIX write PREFIX.folded and PREFIX.top" test -s "$T/multi.folded" -a -s "$T/multi.top"

# -o to a device or FIFO writes in place: it never replaces /dev/null.
"$STACKFOLD" -q -o /dev/null "$FX/kstack.txt"
check "-o /dev/null leaves /dev/null a character device" test -c /dev/null
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.out" &
"$STACKFOLD" -q -o "$T/fifo" "$FX/kstack.txt"
wait
check "-o FIFO streams into the FIFO" test -p "$T/fifo" -a -s "$T/fifo.out"

# One-liner text and folded text together: equal stacks merge into one
# line, each with its own count: the folded input's lines are not added
# after the fold is sorted, onto other stacks' lines (that would give
# main;leaf_a 5, main;leaf_a 9, main;leaf_b 3).
printf '@[\n    leaf_a+1\n    main+2\n]: 5\n@[\n    leaf_b+1\n    main+2\n]: 7\n' >"$T/mix.txt"
printf 'main;leaf_a 2\nmain;leaf_b 3\n' >"$T/mix.folded"
check_eq "one-liner text and folded input: equal stacks merged" \
	"main;leaf_a 7|main;leaf_b 10" \
	"$("$STACKFOLD" -q "$T/mix.txt" "$T/mix.folded" | paste -sd '|')"
check_eq "... in the top table too" "leaf_b 10|leaf_a 7" \
	"$("$STACKFOLD" -q -f top "$T/mix.folded" "$T/mix.txt" |
	   awk '/^ +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9]+  leaf/ { print $5, $2 }' | paste -sd '|')"

# record's own options are refused by the filter, as -D and --flush are
# (taken, --save-raw would never be written)
for o in "--save-raw $T/never.raw" --countdown; do
	# shellcheck disable=SC2086 # the option and its argument
	"$STACKFOLD" $o "$T/in.folded" >/dev/null 2>"$T/recopt.err"
	check_eq "filter: ${o%% *} refused (exit 1), one line" "1|stackfold: only stackfold record takes '${o%% *}' (see --help)" \
		"$?|$(cat "$T/recopt.err")"
done

# A stack-keyed histogram (@[kstack] = hist(x)): its rows add up to the
# entry's count, as stackcollapse-bpftrace.pl adds them; such entries are
# not dropped without a counter ("no samples found").
printf 'Attaching 1 probe...\n\n@[\n    vfs_read+5\n    ksys_read+9\n]:\n[0]                    3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n[1]                    0 |                                                    |\n[2, 4)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@                  |\n\n@[\n    vfs_write+5\n    ksys_write+9\n]:\n(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n[0, 10)                4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n' >"$T/hist.txt"
check_eq "stack-keyed histograms: each entry's rows summed" "ksys_read;vfs_read 5|ksys_write;vfs_write 5" \
	"$("$STACKFOLD" -q "$T/hist.txt" 2>&1 | paste -sd '|')"
# Histograms keyed by an empty stack ("@h[]:", kstack in user mode, or
# "@h[PID, ]:") or by scalars alone ("@[comm] = hist(x)") count as the same
# entries printed by count() do: "[no stack]", or samples of the comm, or,
# next to stack maps, "not added": no row is skipped and counted nowhere
# (a live `@h[kstack] = hist(cpu)` has 248 of its 396 in such rows)
hrow='[0]                  151 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|'
printf '@h[\n    xas_start+163\n]: \n%s\n\n@h[]: \n%s\n\n@h[456, ]: \n%s\n' "$hrow" "$hrow" "$hrow" >"$T/hempty.txt"
check_eq "histograms keyed by an empty stack: [no stack], every row counted" "[no stack] 302|xas_start 151" \
	"$("$STACKFOLD" -q "$T/hempty.txt" 2>&1 | paste -sd '|')"
printf '@[bash]: \n%s\n\n@[sshd]: \n%s\n' "$hrow" "$hrow" >"$T/hscalar.txt"
check_eq "histograms keyed by a comm alone: that comm's samples, as count()'s" "bash 151|sshd 151" \
	"$("$STACKFOLD" -q "$T/hscalar.txt" 2>&1 | paste -sd '|')"
printf '@s[\n    foo+1\n]: 3\n@c[bash]: \n%s\n' "$hrow" >"$T/hmixed.txt"
"$STACKFOLD" "$T/hmixed.txt" >"$T/hmixed.out" 2>"$T/hmixed.err"
check "a comm-keyed histogram next to a stack map: said not added" \
	grep -q '151 counts in maps without stacks not added' "$T/hmixed.err"
# A map whose value is a stack (@last[tid] = kstack) is no count: its
# frames are unparsable lines, and no record is said cut short
printf '@last[123]: \n        foo+1\n        bar+2\n\n@[\n    main+1\n]: 3\n' >"$T/stackval.txt"
"$STACKFOLD" "$T/stackval.txt" >"$T/stackval.out" 2>"$T/stackval.err"
check_eq "a stack-valued map: its samples none, its frames unparsable, no incomplete record" \
	"main 3|2 unparsable lines, 0 incomplete" \
	"$(cat "$T/stackval.out")|$(grep -o '[0-9]* unparsable lines, [0-9]* incomplete' "$T/stackval.err")"
# A printed line that only looks like a histogram row ("[...]", a '|') is
# text, counted as unparsable (not skipped without a count).
printf '[02:22:01] cpu=1 | busy\n(warn) queue | full\nhello\n@[\n    main+1\n]: 3\n[02:22:02] cpu=0 | idle\n' >"$T/nothist.txt"
"$STACKFOLD" "$T/nothist.txt" >/dev/null 2>"$T/nothist.err"
check "printed '[..] x | y' lines: counted unparsable" grep -q 'ignored 4 unparsable lines' "$T/nothist.err"
# Two stack maps are added together (as stackcollapse-bpftrace.pl does):
# said, since a sample in both counts twice; counts of a map without
# stacks, left out, are in the SVG subtitle and the pprof comment too.
printf '@k[\n    vfs_read+5\n]: 4\n@s[\n    vfs_read+5\n]: 4\n@c[sh]: 4\n' >"$T/twomaps.txt"
"$STACKFOLD" -f folded,svg,pprof -o "$T/twomaps" "$T/twomaps.txt" 2>"$T/twomaps.err"
check "two stack maps: said to be added together" grep -q '2 stack maps added together' "$T/twomaps.err"
check "a stack-less map's counts left out: in the SVG subtitle" grep -q '4 counts of maps without stacks not added' "$T/twomaps.svg"
check "a stack-less map's counts left out: in the pprof comment" grep -q 'nonstack_not_added=4' <(gzip -dc "$T/twomaps.pb.gz")

# A comm that is there but empty (prctl(PR_SET_NAME, "") is allowed) is
# the frame "[empty]", as an empty frame is, so the line has a process
# frame and, read back, its first function is not taken for one.
printf '@[1234, 1235, \\x00\\x00\\x00\\x00, \n\tmain+1\n\tfoo+2\n]: 5\n@[1234, 1236, x\\x00\\x00, \n\tmain+1\n]: 3\n' >"$T/emptycomm.txt"
check_eq "an empty comm: the frame [empty]" "[empty];foo;main 5|x;main 3" \
	"$("$STACKFOLD" -q "$T/emptycomm.txt" 2>&1 | paste -sd '|')"
