#!/usr/bin/env bash
# t92-ux-perf-habits: what a perf, bpftrace and FlameGraph user does by
# habit works here too.  scripts/profile takes `-a -- sleep N` and
# `-p PID -- sleep N` (the command sets the duration), -t TID, and names
# perf's options it does not support; the SVG subtitle says --countname's
# unit; folded input drawn as flamegraph.pl draws it (0.1 px), with the
# frames left out counted; samples with no stack counted and explained;
# the top table sorts by tid and its hottest stacks follow --sort; runs
# of [unknown] frames fold into one; hostile process names stay on their
# line.  Live parts need root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

P=$TOP/scripts/profile

# --- 1. perf's idioms: -a -- sleep N, -p PID -- sleep N, -t, -e, -s --------
# dry KEY=VALUE... -- ARGS: the --dry-run parse of ARGS has every KEY=VALUE
dry() {
	local want=() out kv miss=""
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	shift
	out=$("$P" --dry-run "$@" 2>&1) || { echo "exit $?: $out"; return 1; }
	for kv in "${want[@]}"; do grep -qxF -- "$kv" <<<"$out" || miss="$miss $kv"; done
	[ -z "$miss" ] || { echo "missing:$miss; got: $out"; return 1; }
}
check "-a -- sleep 3: the command sets the duration" dry all=1 timer=1 secs=0 'command=sleep 3' -- -a -- sleep 3
check "-ag -o aa -f folded -- sleep 3 (the issue's line)" dry all=1 timer=1 'command=sleep 3' -- -g -a -o aa -f folded -- sleep 3
check "-p PID -- sleep 3: the command sets the duration" dry "pids=$$" timer=1 'command=sleep 3' -- -p "$$" -- sleep 3
check "-- COMMAND alone: profiled, not a timer" dry timer=0 'command=sleep 3' -- -- sleep 3
check "-t TID (perf record -t)" dry "tids=$$" "pids=$$" -- -t "$$"
check "-tTID -- sleep 1" dry "tids=$$" timer=1 -- "-t$$" -- sleep 1
check "--tid stays the report's option (thread frames)" dry "tids=" "report=--tid" -- -a --tid
err=$("$P" -t 999999999 2>&1)
check_eq "-t of no thread: exit 253, named" "253 profile: thread 999999999 not found" "$? $err"
err=$("$P" -a -p "$$" 2>&1)
check_eq "-a with -p: exit 251, one line" "251 profile: give -p PID (or -t TID) or -a, not both (see --help)" "$? $err"
for o in -e --event=cycles -s --stat; do
	err=$("$P" -a "$o" 2>&1)
	rc=$?
	# shellcheck disable=SC2016 # the inner shell's
	check "$o: exit 251, one line saying it is not supported and why (got: $rc $err)" \
		bash -c '[ "$0" = 251 ] && [ "$(grep -c . <<<"$1")" = 1 ] && grep -q "^profile: -[-a-z]* is not supported: [a-z]" <<<"$1"' "$rc" "$err"
done
h=$("$P" --help)
check "--help: -a -- COMMAND sets the duration" grep -q 'perf record -a -- sleep 5' <<<"$h"
check "--help: -t TID" grep -q -- '-t TID\[,TID\]' <<<"$h"
check "--help: names -e and -s as not supported" grep -q 'Not supported, unlike perf record: -e' <<<"$h"

if live_prereq "profile -a -- sleep 1"; then
	sh -c 'while :; do :; done' &
	spin=$!
	"$P" -a -o "$T/aa" -f folded -- sleep 1 >"$T/aa.out" 2>"$T/aa.err"
	rc=$?
	check_eq "-a -- sleep 1: exit 0" 0 "$rc"
	check "-a -- sleep 1: every process sampled (sh, the spinner)" grep -q '^sh;' "$T/aa.folded"
	"$P" -p "$spin" -o "$T/pp" -f folded -- sleep 1 >"$T/pp.out" 2>"$T/pp.err"
	rc=$?
	check_eq "-p PID -- sleep 1: exit 0" 0 "$rc"
	check_eq "-p PID -- sleep 1: only the pid sampled (not sleep)" sh \
		"$(cut -d';' -f1 "$T/pp.folded" | sort -u | tr '\n' ' ' | sed 's/ $//')"
	"$P" -t "$spin" -o "$T/tt" -f folded -d 1 >"$T/tt.out" 2>"$T/tt.err"
	check_eq "-t TID -d 1: exit 0, the thread sampled" "0 sh" \
		"$? $(cut -d';' -f1 "$T/tt.folded" | sort -u | tr '\n' ' ' | sed 's/ $//')"
	"$P" -a -o "$T/ab" -f folded -d 1 -- sh -c 'exit 7' >"$T/ab.out" 2>"$T/ab.err"
	check_eq "-a -- COMMAND that fails: its status" 7 "$?"
	kill "$spin"
	wait "$spin" 2>/dev/null
	# the capture ended with sleep 1, not after the default 10 s
	d=$(awk '$1 == "#meta" && $2 == "duration_ns" { print int($3 / 1000000) }' "$T/aa.raw" 2>/dev/null)
	check "-a -- sleep 1: the capture lasted about 1 s (${d:-?} ms)" test "${d:-99999}" -lt 4000
fi

# --- 2. --countname in the SVG subtitle --------------------------------------
sub() { grep -o '<text id="subtitle"[^>]*>[^<]*' | sed 's/.*>//'; }
check_eq "--countname ns: the subtitle counts ns, not samples" "4000 ns" \
	"$(printf 'a;b 1000\na;c 3000\n' | "$STACKFOLD" -f svg --countname ns | sub)"
check_eq "without --countname: samples" "4000 samples" \
	"$(printf 'a;b 1000\na;c 3000\n' | "$STACKFOLD" -f svg | sub)"

# --- 3. folded input drawn as flamegraph.pl draws it; the left out counted --
# 99,800 samples over 1180 px: 0.0118 px a sample.  warmN (10 samples,
# 0.118 px) are under 0.1% but over flamegraph.pl's 0.1 px; coldN (5,
# 0.059 px) are under both.
{
	echo "main;hot 99000"
	for i in $(seq 60); do echo "main;warm$i 10"; done
	for i in $(seq 40); do echo "main;cold$i 5"; done
} >"$T/narrow.folded"
drawn() { grep -o '<title>[a-z]*[0-9]* (' "$1" | grep -c "<title>$2"; }
"$STACKFOLD" -f svg -o "$T/n.svg" "$T/narrow.folded"
check_eq "folded file -> svg: frames down to 0.1 px drawn (flamegraph.pl's default)" "60 0" \
	"$(drawn "$T/n.svg" warm) $(drawn "$T/n.svg" cold)"
check_eq "the subtitle counts the frames left out" "99800 samples; 40 frames narrower than 0.1 px left out" \
	"$(sub <"$T/n.svg")"
"$STACKFOLD" -f svg <"$T/narrow.folded" >"$T/n-pipe.svg"
check "folded from a pipe: the same graph" cmp -s "$T/n.svg" "$T/n-pipe.svg"
"$STACKFOLD" -f svg,top -o "$T/n2" "$T/narrow.folded" >/dev/null
check_eq "folded, -f svg,top (through a fold): the same frames" "60 0" \
	"$(drawn "$T/n2.svg" warm) $(drawn "$T/n2.svg" cold)"
"$STACKFOLD" -f svg --minwidth 0.1% -o "$T/n3.svg" "$T/narrow.folded"
check_eq "--minwidth 0.1% given: 0.1% kept, 100 frames said left out" "0 99800 samples; 100 frames under 0.1% left out" \
	"$(drawn "$T/n3.svg" warm) $(sub <"$T/n3.svg")"
"$STACKFOLD" -f svg --subtitle mine -o "$T/n4.svg" "$T/narrow.folded"
check "--subtitle given: the count in a comment" grep -qx '<!-- 40 frames narrower than 0.1 px left out -->' "$T/n4.svg"
"$STACKFOLD" -f svg --minwidth 0 -o "$T/n5.svg" "$T/narrow.folded"
check_eq "--minwidth 0: nothing left out, nothing said" "40 99800 samples" "$(drawn "$T/n5.svg" cold) $(sub <"$T/n5.svg")"

# --- 4. samples with empty stacks: counted, said once with why -------------
printf '@[\n    schedule+1\n, \n    main+4\n, demo]: 5\n@[\n, \n, demo]: 193\n@[, , demo]: 7\n' >"$T/empty.bt"
"$STACKFOLD" -f folded "$T/empty.bt" >"$T/empty.folded" 2>"$T/empty.err"
check_eq "empty stacks: one line, with the count and the likely reasons" \
	"1 stackfold: 200 of 205 samples had empty stacks (drawn as the process name alone, or [no stack]): likely a process that exited before bpftrace printed its stacks, samples with no stack to walk (in the kernel with no kstack in the key, or at an exec), or a key without ustack" \
	"$(grep -c . "$T/empty.err") $(cat "$T/empty.err")"
"$STACKFOLD" -v -f svg -o "$T/empty.svg" "$T/empty.bt" 2>"$T/empty-v.err"
check_eq "empty stacks, -v: said once" 1 "$(grep -c 'had empty stacks' "$T/empty-v.err")"
printf '@[\n    schedule+1\n, \n    main+4\n, demo]: 5\n' | "$STACKFOLD" >/dev/null 2>"$T/full.err"
check_eq "no empty stack: nothing said" "" "$(cat "$T/full.err")"
# bpftrace's own RLIMIT_MEMLOCK complaint (no CAP_SYS_RESOURCE, a low
# hard limit): left out, and explained with -v
if live_prereq "profile: bpftrace's RLIMIT_MEMLOCK line"; then
	prlimit --memlock=65536:65536 setpriv --bounding-set -sys_resource --inh-caps -sys_resource \
		"$P" -v -a -d 1 -f folded -o "$T/ml" >/dev/null 2>"$T/ml.err"
	check_eq "RLIMIT_MEMLOCK: bpftrace's ERROR left out, explained once" \
		"0 1" "$(grep -c '^bpftrace: .*RLIMIT_MEMLOCK' "$T/ml.err") $(grep -c '^stackfold: bpftrace could not raise its RLIMIT_MEMLOCK.*harmless' "$T/ml.err")"
fi
"$STACKFOLD" -q "$T/empty.bt" >/dev/null 2>"$T/empty-q.err"
check_eq "empty stacks, -q: nothing said" "" "$(cat "$T/empty-q.err")"

# --- 5. top table: --sort tid; the hottest stacks follow --sort -------------
printf 'sh-10/11;main;work 6\nsh-10/12;main;idle 3\nbash-20/20;main;read 1\n' >"$T/tids.folded"
"$STACKFOLD" -f top --sort tid "$T/tids.folded" >"$T/tid.top" 2>"$T/tid.err"
check_eq "--sort tid: exit 0, a row per thread" "0 TID|11|12|20" \
	"$? $(awk 'NR > 1 && NF == 5 { print $5 } /^HOTTEST/ { exit }' "$T/tid.top" | paste -sd '|')"
"$STACKFOLD" -f top --sort comm,pid,tid "$T/tids.folded" >"$T/cpt.top"
check "--sort comm,pid,tid: 'sh 10 11' a row" grep -Eq '^ *60\.0% +6 +60\.0% +6  sh +10 +11$' "$T/cpt.top"
"$STACKFOLD" -f top --sort comm "$T/tids.folded" >"$T/comm.top"
check_eq "--sort comm: the hottest stacks by comm" "90.0%  sh|10.0%  bash" \
	"$(sed -n '/^HOTTEST STACKS$/,$p' "$T/comm.top" | sed '1d; s/^ *//' | paste -sd '|')"
"$STACKFOLD" -f top --sort comm,sym "$T/tids.folded" >"$T/cs.top"
check_eq "--sort comm,sym: the hottest stacks 'COMM: frames'" "60.0%  sh: main;work|30.0%  sh: main;idle|10.0%  bash: main;read" \
	"$(sed -n '/^HOTTEST STACKS$/,$p' "$T/cs.top" | sed '1d; s/^ *//' | paste -sd '|')"
# folded input has no objects: a run of one dso ([unknown]) is one frame
"$STACKFOLD" -f top --sort comm,dso "$T/tids.folded" >"$T/cd.top"
check_eq "--sort comm,dso: the hottest stacks by comm and dso" "90.0%  sh: [unknown]|10.0%  bash: [unknown]" \
	"$(sed -n '/^HOTTEST STACKS$/,$p' "$T/cd.top" | sed '1d; s/^ *//' | paste -sd '|')"
"$STACKFOLD" -f top "$T/tids.folded" >"$T/plain.top"
check_eq "no --sort: the hottest stacks are the folded lines, as before" "60.0%  sh-10/11;main;work" \
	"$(sed -n '/^HOTTEST STACKS$/{n;p}' "$T/plain.top" | sed 's/^ *//')"

# --- 6. a hostile comm (newline, tab, escape) stays on its line -------------
# a raw capture as bt/profile.bt prints it: bpftrace escapes the comm's bytes
printf '# stackfold-capture 1\n#meta hz 99\n@stackfold_a[4294967297, 2895, a\\x0ab\\x09c\\x1b[31m\\x00\\x00, \n\t7fc1e62cfef1 0x7fc1e62cfef1 ([unknown])\n, ]: 5\n@stackfold_a[4294967298, 2896, date\\x00\\x00, \n\t7fc1e62cfef1 0x7fc1e62cfef1 ([unknown])\n, ]: 3\n' >"$T/hostile.raw"
for s in comm comm,pid,tid,dso,sym comm,dso; do
	"$STACKFOLD" report "$T/hostile.raw" -f top --sort "$s" >"$T/h.top" 2>/dev/null
	check_eq "hostile comm, top --sort $s: no control byte, 'a?b?c?[31m' on one line" "0 2" \
		"$(LC_ALL=C grep -c '[[:cntrl:]]' "$T/h.top") $(grep -c 'a?b?c?\[31m' "$T/h.top")"
done
"$STACKFOLD" report "$T/hostile.raw" -f top >"$T/h0.top" 2>/dev/null
check_eq "hostile comm, top (no --sort): no control byte" 0 "$(LC_ALL=C grep -c '[[:cntrl:]]' "$T/h0.top")"
"$STACKFOLD" report "$T/hostile.raw" -f folded >"$T/h.folded" 2>/dev/null
check_eq "hostile comm, folded: no control byte, as '?'" "0 1" \
	"$(LC_ALL=C grep -c '[[:cntrl:]]' "$T/h.folded") $(grep -c '^a?b?c?\[31m;' "$T/h.folded")"
"$STACKFOLD" report "$T/hostile.raw" -f svg -o "$T/h.svg" 2>/dev/null
check_eq "hostile comm, svg: no control byte but newlines" 0 "$(tr -d '\n' <"$T/h.svg" | LC_ALL=C grep -c '[[:cntrl:]]')"

# --- 7. garbage frame-pointer walks: runs of [unknown] as one frame ---------
# the issue's 4 samples of `bash;[truncated];[unknown]x126;_IO_fflush`,
# beside 400 ordinary ones, and a walk of mostly [unknown] frames with
# names between them
u126=$(printf '[unknown];%.0s' $(seq 126))
u3=$(printf '[unknown];[unknown];x+0x1;%.0s' $(seq 20))
printf 'bash;[truncated];%s_IO_fflush 4\nbash;main;work 400\ncut;%sleaf 2\nsh;[unknown];[unknown];dash+0x6f 5\n' "$u126" "$u3" >"$T/unk.folded"
"$STACKFOLD" -f svg -o "$T/unk.svg" "$T/unk.folded" 2>"$T/unk.err"
h=$(grep -o '<svg [^>]*height="[0-9]*"' "$T/unk.svg" | sed 's/.*height="//; s/"//')
check "mostly [unknown] stacks: the graph stays short (${h:-?} px, was 2,174)" test "${h:-9999}" -le 500
check "a run of 126 [unknown] frames: one frame, the count in its tooltip" \
	grep -q '<title>\[unknown\]×126 (4 samples, 0.97%)</title>' "$T/unk.svg"
check "a run of two: one frame" grep -q '<title>\[unknown\]×2 (5 samples' "$T/unk.svg"
check "a mostly [unknown] stack cut to 16 frames, the middle one frame" \
	grep -q '<title>\[mostly unknown\]×[0-9]* (2 samples' "$T/unk.svg"
check_eq "said once, counted, with --call-graph dwarf" \
	"stackfold: 6 of 411 samples (1.5%) had stacks of mostly [unknown] frames, drawn shortened in the SVG: frame-pointer walks through code built without frame pointers; --call-graph dwarf (scripts/profile) unwinds it" \
	"$(cat "$T/unk.err")"
"$STACKFOLD" -f svg,top -o "$T/unk2" "$T/unk.folded" >/dev/null 2>"$T/unk2.err"
check "through a fold (-f svg,top): the same frames" grep -q '<title>\[unknown\]×126 (4 samples' "$T/unk2.svg"
check_eq "through a fold: said once" 1 "$(grep -c 'mostly \[unknown\]' "$T/unk2.err")"
"$STACKFOLD" -f folded "$T/unk.folded" 2>"$T/unk3.err" | grep -c '\[unknown\];\[unknown\]' >"$T/unk3.n"
check_eq "the folded output keeps every frame, says nothing" "3 " "$(cat "$T/unk3.n") $(cat "$T/unk3.err")"

# the three ways an SVG is drawn (a file laid out as it is read, a pipe into
# a tree, a fold when another output needs one) draw runs the same, an
# empty first frame and a squashed run that sorts elsewhere included
printf ';[unknown];[unknown];a 1\nb;[unknown];[unknown];x 2\nb;[unknown];y 3\nb;z 1\n' >"$T/sq.folded"
"$STACKFOLD" -f svg -o "$T/sq-file.svg" "$T/sq.folded" 2>/dev/null
"$STACKFOLD" -f svg -o "$T/sq-pipe.svg" <"$T/sq.folded" 2>/dev/null
"$STACKFOLD" -f svg,top -o "$T/sq-fold" "$T/sq.folded" >/dev/null 2>&1
check "squashed runs: an empty first frame kept ([empty], then [unknown]×2)" \
	grep -q '<title>\[empty\] (1 samples' "$T/sq-pipe.svg"
check "squashed runs: a file, a pipe and a fold draw the same bytes" \
	cmp -s "$T/sq-file.svg" "$T/sq-pipe.svg"
check "squashed runs: ... and the fold too" cmp -s "$T/sq-file.svg" "$T/sq-fold.svg"

# --- 8. a sign of life when sampling starts ---------------------------------
if live_prereq "profile: one line when sampling starts"; then
	"$P" -a -d 4 -f folded -o "$T/life" >/dev/null 2>"$T/life.err" &
	lp=$!
	seen=""
	for _ in $(seq 300); do
		grep -q '^stackfold: sampling' "$T/life.err" && { seen=1; break; }
		kill -0 "$lp" 2>/dev/null || break
		sleep 0.1
	done
	running=0
	kill -0 "$lp" 2>/dev/null && running=1
	wait "$lp"
	check_eq "-a -d 4: the line, while still sampling" \
		"1 1 stackfold: sampling every process at 99 Hz for 4 s; Ctrl-C ends early" \
		"${seen:-0} $running $(grep '^stackfold: sampling' "$T/life.err")"
	"$P" -F 49 -f folded -o "$T/life2" -- sleep 0.2 >/dev/null 2>"$T/life2.err"
	check_eq "-- COMMAND: 'sampling 'sleep' at 49 Hz until it exits'" \
		"stackfold: sampling 'sleep' at 49 Hz until it exits; Ctrl-C ends early" \
		"$(grep '^stackfold: sampling' "$T/life2.err")"
	"$P" -p "$$" -d 1 -f folded -o "$T/life3" >/dev/null 2>"$T/life3.err"
	check_eq "-p PID -d 1" "stackfold: sampling pid $$ at 99 Hz for 1 s; Ctrl-C ends early" \
		"$(grep '^stackfold: sampling' "$T/life3.err")"
	"$P" -a -f folded -o "$T/life4" -- sleep 0.2 >/dev/null 2>"$T/life4.err"
	check_eq "-a -- sleep 0.2" "stackfold: sampling every process at 99 Hz until 'sleep' exits; Ctrl-C ends early" \
		"$(grep '^stackfold: sampling' "$T/life4.err")"
fi

# --- 9. perf users' files: perf script output, perf.data ---------------------
# perf script's default text (one id: the tid), then -F comm,pid,tid: read
# as stackcollapse-perf.pl reads it (offsets dropped, unnamed frames as
# [module], kernel frames _[k], a comm with a blank kept whole)
cat >"$T/perf.txt" <<'PERF'
demo  4242 12345.678901:     250000 cpu-clock:ppp: 
	ffffffff82255aa7 clear_page_erms+0x7 ([kernel.kallsyms])
	ffffffff81000c82 asm_exc_page_fault+0x22 ([kernel.kallsyms])
	    55d0c1a0b1c2 matrix_multiply+0x42 (/usr/bin/demo)
	    55d0c1a0b300 main+0x10 (/usr/bin/demo)
	    7f1234567890 __libc_start_call_main+0x80 (/usr/lib/x86_64-linux-gnu/libc.so.6)

demo  4242 12345.688901:     250000 cpu-clock:ppp: 
	    55d0c1a0b1c2 matrix_multiply+0x42 (/usr/bin/demo)
	    55d0c1a0b300 main+0x10 (/usr/bin/demo)
	    7f1234567890 __libc_start_call_main+0x80 (/usr/lib/x86_64-linux-gnu/libc.so.6)

Web Content  4300 12345.698901:     250000 cpu-clock:ppp: 
	    7f12345678aa [unknown] (/usr/lib/firefox/libxul.so)
	    7f12345678bb [unknown] ([unknown])

PERF
"$STACKFOLD" "$T/perf.txt" >"$T/perf.folded" 2>"$T/perf.err"
check_eq "perf script output: read as stackcollapse-perf.pl does" \
	"Web Content;[unknown];[libxul.so] 1|demo;__libc_start_call_main;main;matrix_multiply 1|demo;__libc_start_call_main;main;matrix_multiply;asm_exc_page_fault_[k];clear_page_erms_[k] 1|" \
	"$(paste -sd '|' "$T/perf.folded")|$(cat "$T/perf.err")"
check_eq "perf script | stackfold --tid: comm/TID" "demo/4242" \
	"$("$STACKFOLD" --tid <"$T/perf.txt" | cut -d';' -f1 | sort -u | grep demo)"
sed 's/^demo  4242 /demo  4000\/4242 /' "$T/perf.txt" >"$T/perf2.txt"
check_eq "perf script -F comm,pid,tid: --show-pid --tid gives comm-PID/TID" "demo-4000/4242" \
	"$("$STACKFOLD" --show-pid --tid "$T/perf2.txt" | cut -d';' -f1 | sort -u | grep demo)"
# perf script --header (and FlameGraph's example-perf-stacks): '#' lines
# first, skipped as stackcollapse-perf.pl skips them
{ printf '# ========\n# captured on: Thu Jul  9 17:14:37 2015\n# cmdline : perf record -F 99 -a -g -- sleep 10 \n# ========\n#\n'; cat "$T/perf.txt"; } >"$T/perf-h.txt"
check_eq "perf script --header: its '#' lines skipped, the samples read" \
	"$(cat "$T/perf.folded")" "$("$STACKFOLD" "$T/perf-h.txt" 2>&1)"
# names tidied as stackcollapse-perf.pl's defaults do: ';' as ':',
# arguments dropped (not a Go method's parens, not "(anonymous
# namespace)"), quotes dropped, a java process's 'L' before a class path
cat >"$T/tidy.txt" <<'PERF'
java  5000 12345.700000:     250000 cpu-clock:ppp: 
	    7f0000000f00 RegExp:[&<>"'] (/tmp/perf-5000.map)
	    7f0000001000 Lorg/mozilla/javascript/ContextFactory;.call(Lorg/mozilla/javascript/ContextAction;)Ljava/lang/Object; (/tmp/perf-5000.map)
	    7f0000002000 Interpreter::run(Thread*, int) (/usr/lib/jvm/libjvm.so)
	    7f0000003000 ns::(anonymous namespace)::helper(int) (/usr/lib/jvm/libjvm.so)
	    7f0000004000 start_thread+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)

server  5100 12345.710000:     250000 cpu-clock:ppp: 
	    4a0000 net/http.(*Client).Do+0x20 (/usr/bin/server)
	    4b0000 Lmain/x.main (/usr/bin/server)

PERF
check_eq "perf script: names tidied as stackcollapse-perf.pl does (Java, C++ arguments, Go methods)" \
	"java;start_thread;ns::(anonymous namespace)::helper;Interpreter::run;org/mozilla/javascript/ContextFactory:.call;RegExp:[&<>] 1|server;Lmain/x.main;net/http.(*Client).Do 1" \
	"$("$STACKFOLD" "$T/tidy.txt" 2>&1 | paste -sd '|')"
"$STACKFOLD" -f svg -o "$T/perf.svg" <"$T/perf.txt"
check "perf script | stackfold -f svg: a graph of 3 samples" grep -q '<text id="subtitle"[^>]*>3 samples<' "$T/perf.svg"
"$STACKFOLD" -K "$T/perf.txt" >"$T/perf-k.folded"
check_eq "-K: the kernel frames, as _[k] marks them" "Web Content 1|demo 1|demo;asm_exc_page_fault_[k];clear_page_erms_[k] 1" \
	"$(paste -sd '|' "$T/perf-k.folded")"
printf 'PERFILE2\x68\x00\x00\x00\x00\x00\x00\x00' >"$T/perf.data"
"$STACKFOLD" "$T/perf.data" >/dev/null 2>"$T/pd.err"
check_eq "a perf.data file: exit 2, what to run instead" \
	"2 stackfold: $T/perf.data: a perf.data file (perf record's binary): give its text instead, as to stackcollapse-perf.pl: perf script -i $T/perf.data | stackfold -f svg > flame.svg" \
	"$? $(cat "$T/pd.err")"
if command -v perf >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	# shellcheck disable=SC2016 # the inner shell's
	perf record -q -g -o "$T/live.data" -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' >/dev/null 2>&1
	perf script -i "$T/live.data" 2>/dev/null >"$T/live.txt"
	n=$(grep -c 'cpu-clock\|cycles' "$T/live.txt")
	"$STACKFOLD" "$T/live.txt" >"$T/live.folded" 2>"$T/live.err"
	check_eq "perf record -g + perf script: every sample read, nothing unparsable ($n)" "$n " \
		"$(awk '{ s += $NF } END { print s + 0 }' "$T/live.folded") $(cat "$T/live.err")"
	check "perf record -g + perf script: sh's frames" grep -q '^sh;' "$T/live.folded"
else
	skip "perf record + perf script" "perf (linux-perf) not installed or not root"
fi

# --- 10. a raw capture's warnings: said when recorded, again with -v only ---
printf '# stackfold-capture 1\n#meta hz 99\n#pid 4242 demo\n@stackfold_a[4242, 4242, demo\\x00\\x00, \n\t7fc1e62cfef1 0x7fc1e62cfef1 ([unknown])\n, ]: 5\n' >"$T/lossy.raw"
"$STACKFOLD" report "$T/lossy.raw" -f svg -o "$T/lossy.svg" 2>"$T/lossy.err"
check_eq "report X.raw: the capture's warnings not repeated" "0 " "$? $(cat "$T/lossy.err")"
check "report X.raw: the SVG subtitle still says them" \
	grep -q '1 process exited before its memory map could be saved</text>' "$T/lossy.svg"
"$STACKFOLD" report -v "$T/lossy.raw" -f folded >/dev/null 2>"$T/lossy-v.err"
check "report -v X.raw: said again" grep -qx 'stackfold: 1 process exited before its memory map could be saved (frames shown as \[unknown\])' "$T/lossy-v.err"
head -c -3 "$T/lossy.raw" >"$T/cut.raw"
"$STACKFOLD" report "$T/cut.raw" -f folded >/dev/null 2>"$T/cut.err"
check "report of a cut raw capture: what is unreadable now is said" grep -q 'incomplete' "$T/cut.err"

# --- 11. installed: the hint names stackfold; the unit and mandb ------------
make -s -C "$TOP" install DESTDIR="$T/inst" PREFIX=/usr/local >"$T/inst.out" 2>&1
check "make install: the systemd unit, paths under PREFIX" \
	grep -q '^ExecStart=/usr/local/bin/stackfold-continuous ' "$T/inst/usr/local/lib/systemd/system/stackfold-continuous.service"
check "make install (DESTDIR): says to run mandb" grep -q 'run mandb' "$T/inst.out"
if live_prereq "installed stackfold-profile: its hint"; then
	env -u STACKFOLD PATH="$T/inst/usr/local/bin:$PATH" "$T/inst/usr/local/bin/stackfold-profile" -a -d 1 -f folded -o "$T/inst-run" \
		>/dev/null 2>"$T/inst-run.err"
	check "installed: the hint says 'stackfold report', not the share/ path" \
		grep -q "report again: stackfold report $T/inst-run.raw" "$T/inst-run.err"
fi

# --- 12. exit status: a COMMAND's own kept apart from the profiler's -------
# A command's status passes through as under perf record and time(1)
# (128+N when signal N killed it); the profiler's own failures are 250 +
# stackfold's status, so a program that exits 3 is not "pid not found".
# Until issue 45 both were 3, and a bad option was 1, as a failing command.
err=$("$P" -p 999999999 -o "$T/st-nopid" 2>&1)
check_eq "status: a missing pid: 253 (environment), one line" "253 profile: pid 999999999 not found" "$? $err"
err=$("$P" --frobnicate 2>&1)
check_eq "status: a bad option: 251 (usage), one line" "251 profile: unknown option '--frobnicate' (see --help)" "$? $err"
err=$("$P" -a -o "$T/st-nopid2" -p 999999999 -- sh -c 'exit 3' 2>&1)
check_eq "status: -a with -p -- COMMAND: 251, before the command runs" 251 "$?"
err=$("$P" -p 999999999 -o "$T/st-nopid3" -- sh -c 'exit 3' 2>&1)
check_eq "status: -p MISSING -- COMMAND: 253, the command never run" 253 "$?"
h=$("$P" --help)
# shellcheck disable=SC2016 # the inner shell's
check "status: --help has the table (251 usage, 253 environment, 128+N)" \
	bash -c 'grep -q "^  251 *usage error" <<<"$0" && grep -q "^  253 *environment" <<<"$0" && grep -q "128+N" <<<"$0"' "$h"
# shellcheck disable=SC2016 # the inner shell's
check "status: the man page has the table" \
	bash -c 'sed -n "/^\.SH EXIT STATUS/,/^\.SH/p" "$0" | grep -q "^\.B 251" && sed -n "/^\.SH EXIT STATUS/,/^\.SH/p" "$0" | grep -q "^\.B 253"' \
	"$TOP/man/stackfold-profile.1"
if live_prereq "exit status of a profiled COMMAND"; then
	# status WANT NAME SCRIPT: profile -- sh -c 'demo 1; SCRIPT' exits WANT
	# (a second of CPU first: the capture has samples, no 252)
	status() {
		"$P" -d 20 -o "$T/st" -f folded -- sh -c "\"\$0\" 1; $3" "$TOP/bin/demo" >/dev/null 2>"$T/st.err"
		local rc=$?
		check_eq "status: a command that $2: $1 (got: $(tail -n 1 "$T/st.err"))" "$1" "$rc"
	}
	status 0 "exits 0" "exit 0"
	status 1 "exits 1" "exit 1"
	status 3 "exits 3" "exit 3"
	status 255 "exits 255" "exit 255"
	check "status: a 255 of the command's is named as its exit status (not signal 127)" \
		grep -q "^profile: 'sh' exited with status 255" "$T/st.err"
	status 138 "is killed by SIGUSR1 (128+10)" 'kill -USR1 $$'
	check "status: the killed command is named" grep -q "^profile: 'sh' was killed by signal USR1" "$T/st.err"
	"$P" -d 20 -o "$T/st" -f folded -- sh -c 'exit 3' >/dev/null 2>"$T/st.err"
	check_eq "status: a command that exits 3 at once (no samples): still 3" 3 "$?"
fi
