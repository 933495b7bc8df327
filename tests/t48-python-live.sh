#!/usr/bin/env bash
# t48-python-live: scripts/profile --python on Debian's python3 (3.11)
# running tests/fixtures/py/known.py, whose call structure is known:
# <module> -> main -> a -> b, main -> rec x7 -> b, main -> sorted -> keyf
# -> b, main -> a method, a lambda, a generator -> b.  Checks: -- COMMAND and -p PID runs name >= 90% of the samples
# with Python frames, in the script's order and lines (the recursion 7
# deep); a run given a wrong offset (co_qualname's replaced by
# co_filename's: without a check, every function would be named
# "known.py") names no frame wrongly, shows [python:unknown] and counts
# it; a python3.11 without debug info is said so, with the package to
# install; scripts/continuous --python -a, two 3 s windows beside those
# captures: known.py's frames in its order in a window, none named wrongly,
# no Python frame for a process that is not Python (awk); code objects
# freed and others made at their addresses (tests/fixtures/py/reuse.py):
# each sample named as its code object was then, not by an older read
# nor a later one, in a one-shot run and within one continuous window;
# async coroutines (tests/fixtures/py/coro.py) in their await order.  Needs root, bpftrace and
# python3.11-dbg (install-deps --test).
# First tests/unit/pyframes_test.c (the line table, the capture's new
# lines, the merge) and the offsets' DWARF read, under SANITIZE=1 too; the
# captures are the plain run's (CI's time: the sanitized binary passed
# them once by hand, and its parser and resolver are run sanitized by
# the unit program and t10-t75).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

unit_test pyframes_test pyframes_test.c -Wall -Wextra -Werror
PY=/usr/bin/python3
KNOWN=$TOP/tests/fixtures/py/known.py
# the offsets, from the DWARF (no capture: under SANITIZE=1 too)
if ! "$STACKFOLD" pyoffsets "$PY" >"$T/offsets" 2>&1; then
	if [ "${CI:-}" = true ]; then fail "python live" "no offsets for $PY:" "$(cat "$T/offsets")"
	else skip "python live" "$(tail -n 1 "$T/offsets")"; fi
	exit 0
fi
check_eq "pyoffsets: 3.11's frame and code members found" \
	"f_code previous prev_instr is_entry co_qualname co_filename co_linetable" \
	"$(awk '$1 ~ /^(f_code|previous|prev_instr|is_entry|co_qualname|co_filename|co_linetable)$/ && $2 ~ /^0x/ { printf "%s%s", n++ ? " " : "", $1 }' "$T/offsets")"
# no debug info (a copy without its build-id note, away from its
# debuglink's places): the package is named, exit 3
objcopy --remove-section .note.gnu.build-id "$(readlink -f "$PY")" "$T/python3.11"
"$STACKFOLD" pyoffsets "$T/python3.11" >/dev/null 2>"$T/nodebug"
rc=$?
if [ "$rc" = 3 ] && grep -q 'install python3.11-dbg' "$T/nodebug"; then
	pass "python live: no debug info names python3.11-dbg"
else fail "python live: no debug info names python3.11-dbg" "exit $rc" "$(cat "$T/nodebug")"; fi

# another version (3.12's Py_Version written into a copy: the same build
# id, so its DWARF is found): one line naming what is supported, exit 3
read -r vaddr < <(readelf -W --dyn-syms "$PY" | awk '$NF == "Py_Version" { print $2; exit }')
voff=""
while read -r _ type addr off size _; do	# (readelf -SW, the [Nr] cut)
	[ "$type" = PROGBITS ] && [ -n "$vaddr" ] || continue
	if (( 16#$addr <= 16#$vaddr && 16#$vaddr < 16#$addr + 16#$size )); then
		voff=$(( 16#$vaddr - 16#$addr + 16#$off )); break
	fi
done < <(readelf -SW "$PY" | sed -n 's/^ *\[ *[0-9]*\] //p')
cp "$(readlink -f "$PY")" "$T/py312"
printf '\xf0\x01\x0c\x03' | dd of="$T/py312" bs=1 seek="${voff:-0}" conv=notrunc status=none
"$STACKFOLD" pyoffsets "$T/py312" >/dev/null 2>"$T/v312"
rc=$?
if [ -n "$voff" ] && [ "$rc" = 3 ] && [ "$(wc -l <"$T/v312")" = 1 ] &&
   grep -q 'is CPython 3\.12: --python reads CPython 3\.11' "$T/v312"; then
	pass "python: CPython 3.12 refused in one line naming 3.11"
else fail "python: CPython 3.12 refused in one line naming 3.11" "exit $rc, offset '$voff'" "$(cat "$T/v312")"; fi

live_prereq "python live" || exit 0
plain_run_only "python live" || exit 0

# python_share FOLDED: percent of python3's samples with a Python frame
# (known.py's, or the interpreter's start-up's: <frozen site>...)
python_share() {
	awk '$0 ~ /^python3;/ { t += $NF; if ($0 ~ / \([^();]+:[0-9]+\)(;| [0-9]+$)/) p += $NF }
	     END { printf "%d\n", t ? 100 * p / t : 0 }' "$1"
}
# foreign_frames FOLDED FILE NAMES: the frames of script FILE (a regex)
# whose function is none of NAMES (a regex alternation), each once
foreign_frames() {
	tr ';' '\n' <"$1" | sed 's/ [0-9]*$//' | grep -E " \\($2:[0-9]+\\)\$" |
		grep -vE "^($3) \\($2:[0-9]+\\)\$" | sort -u
}
# wrong_names FOLDED: frames of known.py that are not its functions (the
# interpreter's start-up, <frozen site>..., is named too: not counted)
wrong_names() {
	foreign_frames "$1" 'known\.py' '<module>|main|a|b|rec|keyf|K\.m|main\.<locals>\.<lambda>|gen'
}

# The edge cases (tests/fixtures/py/edge.py, run as grüße_ß.py), each check
# a function of a folded file, so that it is also shown refusing a
# doctored one (below).  F: the folded file; X: the script's name.
X='grüße_ß\.py'
# a non-ASCII function and file name, as UTF-8 (the SVG too: its title)
check_utf8() {
	grep -qE "(^|;)grüße \\($X:2[45]\\)(;| )" "$1" && grep -q 'grüße' "${1%.folded}.svg"
}
# after the exception: after_raise directly under catcher, never under
# the raiser frames the exception unwound; the raise 3 frames deep
check_exception() {
	grep -qE "(^|;)catcher \\($X:4[1-3]\\);after_raise \\($X:3[5-7]\\)" "$1" &&
		grep -qE "catcher \\($X:4[1-3]\\);(raiser \\($X:3[0-2]\\);){2}raiser \\($X:3[01]\\)" "$1" &&
		! grep -qE "raiser \\([^;]*;(.*;)?after_raise" "$1"
}
# the fork child: child_work under BaseProcess.run, in threads (--tid) of
# its own: no thread both child_work's and the parent's (grüße, catcher)
check_child() {
	grep -qE "BaseProcess\\._bootstrap \\(process\\.py:[0-9]+\\);BaseProcess\\.run \\(process\\.py:[0-9]+\\);(.*;)?child_work \\($X:4[6-9]\\)" "$1" &&
		grep -q 'catcher (' "$1" &&
		[ -z "$(awk '{ t = $0; sub(/;.*/, "", t) }
			/child_work \(/ { c[t] = 1 } /(grüße|catcher) \(/ { p[t] = 1 }
			END { for (t in c) if (t in p) print t }' "$1")" ]
}
edge_wrong() {
	foreign_frames "$1" "$X" '<module>|main|grüße|raiser|after_raise|catcher|child_work|burn'
}

# The captures run side by side (bpftrace's start-up is most of a run's
# time): 1. -- COMMAND; 2. -p PID; 3. -- COMMAND given a wrong offset
# (co_qualname's := co_filename's) through a stackfold whose pyoffsets
# says so: refused, never "known.py (...)"; 4. two threads running Python
# (tests/fixtures/py/threads.py), by thread (--tid)
cat >"$T/doctored" <<DOC
#!/usr/bin/env bash
if [ "\$1" = pyoffsets ]; then
	v=(\$("$STACKFOLD" "\$@")) || exit
	v[10]=\${v[11]}
	n=\$((\${#v[@]} - 1))	# the offsets, then the interpreter's file
	printf '%s\\n' "\${v[*]:0:n}" "\${v[n]}"
	exit
fi
exec "$STACKFOLD" "\$@"
DOC
chmod +x "$T/doctored"
export STACKFOLD_NO_COUNTDOWN=1
"$TOP/scripts/profile" --python -d 20 -o "$T/cmd" -f folded -- "$PY" "$KNOWN" 2 >"$T/cmd.out" 2>&1 &
cmd=$!
STACKFOLD="$T/doctored" "$TOP/scripts/profile" --python -d 20 -o "$T/bad" -f folded \
	-- "$PY" "$KNOWN" 1 >"$T/bad.out" 2>&1 &
bad=$!
"$TOP/scripts/profile" --python --tid -d 20 -o "$T/thr" -f folded \
	-- "$PY" "$TOP/tests/fixtures/py/threads.py" 2 >"$T/thr.out" 2>&1 &
thr=$!
cp "$TOP/tests/fixtures/py/edge.py" "$T/grüße_ß.py"
"$TOP/scripts/profile" --python --tid -F 297 -d 20 -o "$T/edge" -f folded,svg \
	-- "$PY" "$T/grüße_ß.py" 3 >"$T/edge.out" 2>&1 &
edge=$!
# 5. no debug info: the copy without its build-id note (above) runs
# known.py; its capture must be the native one
"$TOP/scripts/profile" --python -d 20 -o "$T/nodbg" -f folded \
	-- "$T/python3.11" "$KNOWN" 1 >"$T/nodbg.out" 2>&1 &
nodbg=$!
# 5b. no BTF: root without CAP_SYS_ADMIN (a container given CAP_BPF and
# CAP_PERFMON), where bpftrace before 0.18 cannot read the kernel's BTF
# (scripts/caps.sh); 0.18 reads it itself: nothing hides it then
# shellcheck source=scripts/caps.sh
. "$TOP/scripts/caps.sh"	# (version_ge)
nobtf=""
if command -v capsh >/dev/null && ! version_ge "$(bpftrace --version | sed 's/^bpftrace v//')" 0.18; then
	capsh --drop=cap_sys_admin -- -c 'exec "$1" --python -d 20 -f folded -o "$2" -- "$3" "$4" 1' \
		sh "$TOP/scripts/profile" "$T/nobtf" "$PY" "$KNOWN" >"$T/nobtf.out" 2>&1 &
	nobtf=$!
fi
"$PY" "$KNOWN" 60 &	# (killed when the continuous run is done)
pid=$!
# 6. -a: known.py's process named; a process that is not python3.11
# (awk, spinning) given no Python frame (the program walks only
# python3.11's processes; the thread_id == fsbase test would refuse
# awk's memory too: removing the first alone does not fail this)
awk 'BEGIN { while (1) n++ }' &
spin=$!
# 7. continuous --python -a, two 3 s windows (its bpftrace's start-up
# overlaps the captures above), stopped (SIGINT) once it has written them
# (at most 60 s): known.py's process and awk's
"$TOP/scripts/continuous" --python -a --window 3 --folded -o "$T/cont" >"$T/cont.out" 2>&1 &
cont=$!
(
	for _ in $(seq 300); do
		[ "$(find "$T/cont" -name '*.pb.gz' 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.2
	done
	kill -INT "$cont" 2>/dev/null
) &
cont_stop=$!
sleep 0.3
"$TOP/scripts/profile" --python -a -d 2 -o "$T/all" -f folded >"$T/all.out" 2>&1 &
all=$!
"$TOP/scripts/profile" --python -p "$pid" -d 2 -o "$T/pid" -f folded >"$T/pid.out" 2>&1
wait "$all"
wait "$cmd" "$bad" "$thr" "$edge" "$nodbg" ${nobtf:+"$nobtf"}
wait "$cont" "$cont_stop"
kill "$pid" "$spin" 2>/dev/null
wait "$pid" "$spin" 2>/dev/null
# 8. code objects freed and others made at their addresses (reuse.py:
# 1.2 s of CPU, 1.5 s asleep), alone: beside the captures above, on 2
# CPUs, it got too little CPU time to finish in 20 s
"$TOP/scripts/profile" --python -d 20 -o "$T/reuse" -f folded \
	-- "$PY" "$TOP/tests/fixtures/py/reuse.py" 1 1.5 20 >"$T/reuse.out" 2>&1
# 9. the same within one continuous window (20 s): phase A (20 x 30 ms)
# 8 s after the start (the capture attached by then), phase B 0.5 s
# later, the process alive 30 s more (its names are read at the window's
# end); stopped once the window is written
"$PY" "$TOP/tests/fixtures/py/reuse.py" 1.5 0.5 20 30 8 30 >"$T/creuse.out" 2>&1 &
rpid=$!
"$TOP/scripts/continuous" --python -p "$rpid" --window 20 --folded -o "$T/creuse" >"$T/creuse.log" 2>&1 &
cont=$!
for _ in $(seq 300); do
	[ -n "$(find "$T/creuse" -name '*.folded' 2>/dev/null)" ] && break
	sleep 0.2
done
kill "$rpid" 2>/dev/null
wait "$cont" "$rpid" 2>/dev/null
# 10. async coroutines (tests/fixtures/py/coro.py): outer awaits inner,
# resumed by asyncio's event loop
"$TOP/scripts/profile" --python -d 20 -o "$T/coro" -f folded \
	-- "$PY" "$TOP/tests/fixtures/py/coro.py" 3 >"$T/coro.out" 2>&1

f=$T/cmd.folded
share=$(python_share "$f")
if [ "$share" -ge 90 ]; then pass "python live: -- COMMAND: $share% of samples have Python frames"
else fail "python live: -- COMMAND: >= 90% of samples have Python frames" "got $share%" "$(cat "$T/cmd.out")" "$(head -n 5 "$f")"; fi
if grep -qE '^python3;(.*;)?<module> \(known\.py:56\);(.*;)?main \(known\.py:39\);(.*;)?a \(known\.py:22\);(.*;)?b \(known\.py:1[67]\)' "$f"; then
	pass "python live: <module>;main;a;b in order, with their lines"
else fail "python live: <module>;main;a;b in order" "$(head -n 5 "$f")"; fi
rec7='main \(known\.py:40\);(rec \(known\.py:28\);){6}rec \(known\.py:27\);(.*;)?b \(known\.py:1[67]\)'
if grep -qE "$rec7" "$f" && ! grep -qE '(rec \(known\.py:28\);){7}' "$f"; then
	pass "python live: the recursion is 7 frames deep"
else fail "python live: the recursion is 7 frames deep" "$(grep rec "$f" | head -n 3)"; fi
if grep -qE 'main \(known\.py:41\);(.*;)?keyf \(known\.py:32\);(.*;)?b \(known\.py:1[67]\)' "$f"; then
	pass "python live: sorted(key=keyf) calls keyf under main"
else fail "python live: sorted(key=keyf) calls keyf under main" "$(grep keyf "$f" | head -n 3)"; fi
for fn in 'K\.m \(known\.py:49\)' 'main\.<locals>\.<lambda> \(known\.py:43\)' 'gen \(known\.py:53\)'; do
	if grep -qE "main \\(known\\.py:4[234]\\);(.*;)?$fn;(.*;)?b \\(known\\.py:1[67]\\)" "$f"; then
		pass "python live: main;${fn%% *};b (a method, a lambda, a generator)"
	else fail "python live: main;${fn%% *};b" "$(grep -E "${fn%% *}" "$f" | head -n 2)"; fi
done
check_eq "python live: no frame named wrongly" "" "$(wrong_names "$f")"

share=$(python_share "$T/pid.folded")
if [ "$share" -ge 90 ]; then pass "python live: -p PID: $share% of samples have Python frames"
else fail "python live: -p PID: >= 90% of samples have Python frames" "got $share%" "$(cat "$T/pid.out")"; fi

check_eq "python live: a wrong offset names no frame wrongly" "" "$(wrong_names "$T/bad.folded")"
if grep -q '\[python:unknown\]' "$T/bad.folded" && grep -q 'Python frame samples not named' "$T/bad.out"; then
	pass "python live: a wrong offset gives [python:unknown], counted"
else fail "python live: a wrong offset gives [python:unknown], counted" "$(cat "$T/bad.out")" "$(head -n 3 "$T/bad.folded")"; fi

# each thread's samples carry its own function only (spin_one, spin_two:
# one a thread)
per_thread=$(grep -oE '^python3/[0-9]+;|spin_(one|two) \(' "$T/thr.folded" |
	awk '/^python3/ { t = $0; next } { seen[t] = seen[t] " " $1 }
	     END { for (t in seen) { n = split(seen[t], f, " "); u = f[1]
		   for (i = 2; i <= n; i++) if (f[i] != u) u = "mixed"; print u } }' | sort | tr '\n' ' ')
# (a thread the loaded machine hardly ran may have no named sample: not
# required; a thread with both names is the failure)
case " $per_thread" in
*mixed* | " ") fail "python live: threads: each thread's own frames" "got: '$per_thread'" \
	"$(grep -E 'spin_(one|two)' "$T/thr.folded" | head -n 4)" ;;
*) pass "python live: threads: each thread's own frames ($per_thread)" ;;
esac

# -a: known.py named in its order, nothing of it wrongly; the spinning
# awk (not python3.11: its memory at _PyRuntime's address is not one) has
# no Python frame
if grep -qE '^python3;(.*;)?main \(known\.py:[0-9]+\);(.*;)?b \(known\.py:1[67]\)' "$T/all.folded"; then
	pass "python live: -a: known.py's frames named"
else fail "python live: -a: known.py's frames named" "$(cat "$T/all.out")" "$(grep known "$T/all.folded" | head -n 3)"; fi
check_eq "python live: -a: no frame named wrongly" "" "$(wrong_names "$T/all.folded")"
check_eq "python live: -a: awk has no Python frame" "" "$(grep -E '^awk;.* \([^();]+:[0-9]+\)' "$T/all.folded" | head -n 2)"
if grep -q '^awk;' "$T/all.folded"; then pass "python live: -a: awk was sampled"
else fail "python live: -a: awk was sampled" "$(head -n 3 "$T/all.folded")"; fi

# The edge cases, then each check against a doctored copy of the result:
# it must refuse it
f=$T/edge.folded
cp "$T/edge.svg" "$T/doc.svg"
doctor() { sed "$1" "$f" >"$T/doc.folded"; }
if check_utf8 "$f"; then pass "python live: a non-ASCII function and file name (grüße, grüße_ß.py) in folded and SVG"
else fail "python live: non-ASCII names" "$(cat "$T/edge.out")" "$(head -n 3 "$f")"; fi
doctor 's/grüße/gr??e/g'
if check_utf8 "$T/doc.folded"; then fail "python live: the non-ASCII check refuses gr??e"; else pass "python live: the non-ASCII check refuses gr??e"; fi
if check_exception "$f"; then pass "python live: after an exception, samples are after_raise's under catcher, not under the frames it unwound"
else fail "python live: an exception unwinding" "$(cat "$T/edge.out")" "$(grep -E 'raiser|after_raise' "$f" | head -n 4)"; fi
doctor 's/catcher (\([^)]*\));after_raise/catcher (\1);raiser (grüße_ß.py:31);after_raise/'
if check_exception "$T/doc.folded"; then fail "python live: the exception check refuses after_raise under raiser"
else pass "python live: the exception check refuses after_raise under raiser"; fi
if check_child "$f"; then pass "python live: the multiprocessing child's own frames (child_work under BaseProcess.run, its threads only)"
else fail "python live: the multiprocessing child's own frames" "$(cat "$T/edge.out")" "$(grep child_work "$f" | head -n 3)"; fi
ptid=$(grep -m1 'catcher (' "$f" | cut -d';' -f1)
doctor "/child_work (/s|^[^;]*;|$ptid;|"
if check_child "$T/doc.folded"; then fail "python live: the child check refuses child_work in the parent's thread"
else pass "python live: the child check refuses child_work in the parent's thread"; fi
check_eq "python live: edge.py: no frame named wrongly" "" "$(edge_wrong "$f")"
doctor 's/burn (/socket.send (/'
if edge_wrong "$T/doc.folded" | grep -q '^socket\.send ('; then pass "python live: the wrong-name check refuses a name edge.py lacks"
else fail "python live: the wrong-name check refuses a name edge.py lacks" "$(edge_wrong "$T/doc.folded")"; fi

# The fallbacks: native_only FOLDED OUT COMM ADVICE: OUT says ADVICE and
# that the stacks are native, FOLDED has >= 20 samples of COMM and no
# Python frame.  Shown refusing the --python capture of known.py.
native_only() {
	grep -qF -- "$4" "$2" && grep -q 'native stacks only' "$2" &&
		[ "$(awk -v c="$3;" 'index($0, c) == 1 { n += $NF } END { print n + 0 }' "$1")" -ge 20 ] &&
		! grep -qE ' \([^();]+\.py:[0-9]+\)(;| [0-9]+$)' "$1"
}
if native_only "$T/nodbg.folded" "$T/nodbg.out" python3.11 'install python3.11-dbg (apt-get install python3.11-dbg)'; then
	pass "python live: no debug info: the package named, native stacks captured"
else fail "python live: no debug info: the package named, native stacks captured" "$(cat "$T/nodbg.out")" "$(head -n 3 "$T/nodbg.folded")"; fi
if native_only "$T/cmd.folded" "$T/cmd.out" python3 'install python3.11-dbg'; then
	fail "python live: the fallback check refuses a capture with Python frames"
else pass "python live: the fallback check refuses a capture with Python frames"; fi
if [ -z "$nobtf" ]; then
	skip "python live: no BTF" "needs capsh and bpftrace before 0.18 (0.18 reads the BTF without CAP_SYS_ADMIN)"
elif native_only "$T/nobtf.folded" "$T/nobtf.out" python3 "--python needs the kernel's BTF"; then
	pass "python live: no BTF (no CAP_SYS_ADMIN, bpftrace 0.17): said, native stacks captured"
else fail "python live: no BTF: said, native stacks captured" "$(cat "$T/nobtf.out")" "$(head -n 3 "$T/nobtf.folded")"; fi

# reuse.py: phase A's functions (old_N) freed, phase B's (new_N) made at
# their addresses.  reuse_share FOLDED OUT: "OLD NEW A" (the samples named
# old_* and new_*, and phase A's share of the script's CPU time, in
# percent); reuse_ok: the old_* share is phase A's, within 10 points.  A
# name kept from phase A names phase B's samples old_* (too many); a name
# read only at the end names phase A's new_* (too few).
reuse_share() {
	awk '/^reuse [0-9]+\/[0-9]+ cpu_a / { a = 100 * $4 / ($4 + $6) }
	     FILENAME != ARGV[2] && /;old_[0-9]+ / { o += $NF }
	     FILENAME != ARGV[2] && /;new_[0-9]+ / { n += $NF }
	     END { printf "%d %d %d\n", o, n, a }' "$1" "$2"
}
reuse_ok() {
	local o n a
	read -r o n a < <(reuse_share "$1" "$2")
	[ $((o + n)) -ge 60 ] && [ $((o * 100 / (o + n) - a)) -le 10 ] &&
		[ $((a - o * 100 / (o + n))) -le 10 ]
}
read -r reused < <(sed -n 's/^reuse \([0-9]*\)\/20 .*/\1/p' "$T/reuse.out")
if [ "${reused:-0}" -lt 10 ]; then
	fail "python live: reuse.py made phase B's code objects at phase A's addresses" "$(cat "$T/reuse.out")"
elif reuse_ok "$T/reuse.folded" "$T/reuse.out"; then
	pass "python live: code objects reused ($reused/20): names read at each flush (old new A%: $(reuse_share "$T/reuse.folded" "$T/reuse.out"))"
else fail "python live: code objects reused: names read at each flush" "old new A%: $(reuse_share "$T/reuse.folded" "$T/reuse.out")" "$(cat "$T/reuse.out")"; fi
sed 's/;new_\([0-9]*\) /;old_\1 /' "$T/reuse.folded" >"$T/doc.folded"
if reuse_ok "$T/doc.folded" "$T/reuse.out"; then fail "python live: the reuse check refuses phase B named old_*"
else pass "python live: the reuse check refuses phase B named old_*"; fi
sed 's/;old_\([0-9]*\) /;new_\1 /' "$T/reuse.folded" >"$T/doc.folded"
if reuse_ok "$T/doc.folded" "$T/reuse.out"; then fail "python live: the reuse check refuses phase A named new_*"
else pass "python live: the reuse check refuses phase A named new_*"; fi

# reuse.py in one continuous window: a sample's code objects checked
# against the tag the program took (a fold of their names' hashes and
# first lines, docs/python.md): phase A's samples are [python:unknown]
# (their code objects' addresses are phase B's by the window's end), not
# new_*.  creuse_counts FOLDED... OUT: "NEW UNKNOWN A B" (samples, and the
# samples phase A's and B's CPU time make at 99 Hz); creuse_ok: new_* at
# most B's samples (+12% +6), at least half of A's samples unknown.
# Without the check every phase A sample is named new_* (210 new, 0
# unknown for A 60, B 149 on vm).
creuse_counts() {
	local out=${*: -1}
	awk -v out="$out" 'FILENAME == out && /^reuse [0-9]+\/[0-9]+ cpu_a / { a = $4 * 99; b = $6 * 99 }
	     FILENAME != out && /;new_[0-9]+ / { n += $NF }
	     FILENAME != out && /\[python:unknown\]/ { u += $NF }
	     END { printf "%d %d %d %d\n", n, u, a, b }' "$@"
}
creuse_ok() {
	local n u a b
	read -r n u a b < <(creuse_counts "$@")
	[ "$b" -ge 100 ] && [ "$n" -ge $((b / 2)) ] && [ "$n" -le $((b * 112 / 100 + 6)) ] &&
		[ "$u" -ge $((a / 2)) ]
}
# (the first window; the process's end may make a second, of a sample)
cwins=$(find "$T/creuse" -name '*.folded' 2>/dev/null | sort | head -n 1)
if [ -z "$cwins" ]; then
	fail "python live: continuous --python, reuse.py: a 20 s window" "$(cat "$T/creuse.log")" "$(cat "$T/creuse.out")"
else
	if creuse_ok "$cwins" "$T/creuse.out"; then
		pass "python live: continuous --python: code objects reused within a window: phase A's samples not named new_* (new unknown A B: $(creuse_counts "$cwins" "$T/creuse.out"))"
	else fail "python live: continuous --python: code objects reused within a window" "new unknown A B: $(creuse_counts "$cwins" "$T/creuse.out")" "$(cat "$T/creuse.out")" "$(cat "$T/creuse.log")"; fi
	sed 's/\[python:unknown\]/new_0 (reuse_gen.py:3)/' "$cwins" >"$T/doc.folded"
	if creuse_ok "$T/doc.folded" "$T/creuse.out"; then fail "python live: the window reuse check refuses phase A named new_*"
	else pass "python live: the window reuse check refuses phase A named new_*"; fi
fi

# coro.py: the coroutines on the event loop's chain, inner called by outer
# at its await (line 30), outer's own spin after it (line 31); inner's
# work is 4x outer's own (at least 2x checked: sampling error); no frame
# of coro.py other than its functions
coro_counts() {
	awk '/;main \(coro\.py:36\);.*;outer \(coro\.py:30\);inner \(coro\.py:24\);b \(coro\.py:1[89]\)[; ]/ { i += $NF }
	     /;main \(coro\.py:36\);.*;outer \(coro\.py:31\);b \(coro\.py:1[89]\)[; ]/ { o += $NF }
	     END { printf "%d %d\n", i, o }' "$1"
}
coro_ok() {
	local i o
	read -r i o < <(coro_counts "$1")
	[ "$o" -ge 5 ] && [ "$i" -ge $((2 * o)) ] &&
		[ -z "$(foreign_frames "$1" 'coro\.py' '<module>|main|outer|inner|b')" ]
}
share=$(python_share "$T/coro.folded")
if [ "$share" -ge 90 ]; then pass "python live: async coroutines: $share% of samples have Python frames"
else fail "python live: async coroutines: >= 90% of samples have Python frames" "got $share%" "$(cat "$T/coro.out")"; fi
if coro_ok "$T/coro.folded"; then
	pass "python live: async coroutines: main;...;outer;inner;b and outer;b in order (inner, outer's own: $(coro_counts "$T/coro.folded"))"
else fail "python live: async coroutines: main;...;outer;inner;b" "inner, outer's own: $(coro_counts "$T/coro.folded")" "$(grep coro "$T/coro.folded" | head -n 3)"; fi
sed 's/;outer (coro\.py:30);inner (coro\.py:24);/;inner (coro.py:24);outer (coro.py:30);/' "$T/coro.folded" >"$T/doc.folded"
if coro_ok "$T/doc.folded"; then fail "python live: the coroutine check refuses inner and outer swapped"
else pass "python live: the coroutine check refuses inner and outer swapped"; fi
sed 's/;outer (coro\.py:31);b /;gen (coro.py:31);b /' "$T/coro.folded" >"$T/doc.folded"
if coro_ok "$T/doc.folded"; then fail "python live: the coroutine check refuses a frame coro.py does not have"
else pass "python live: the coroutine check refuses a frame coro.py does not have"; fi

# continuous --python: its first two windows (a third, cut short by the
# stop, may follow): known.py in order in a window, no frame named
# wrongly, awk without Python frames; the known.py check shown refusing a
# doctored window
cont_wins=$(find "$T/cont" -name '*.folded' 2>/dev/null | sort | head -n 2)
cont_known() {
	grep -qE '^python3-[0-9]+;(.*;)?<module> \(known\.py:56\);(.*;)?main \(known\.py:39\);(.*;)?a \(known\.py:22\);(.*;)?b \(known\.py:1[67]\)' "$@"
}
if [ "$(wc -w <<<"$cont_wins")" -lt 2 ]; then
	fail "python live: continuous --python: two windows" "$(cat "$T/cont.out")"
else
	# shellcheck disable=SC2086 # two file names
	set -- $cont_wins
	if cont_known "$@"; then
		pass "python live: continuous --python: known.py's <module>;main;a;b in a window"
	else fail "python live: continuous --python: known.py's frames" "$(cat "$T/cont.out")" "$(grep -h known "$@" | head -n 3)"; fi
	cat "$@" >"$T/cont.all"
	check_eq "python live: continuous --python: no frame named wrongly" "" "$(wrong_names "$T/cont.all")"
	check_eq "python live: continuous --python: awk has no Python frame" "" "$(grep -hE '^awk-[0-9]+;.* \([^();]+:[0-9]+\)' "$@" | head -n 2)"
	sed 's/;a (known\.py/;x (known.py/' "$T/cont.all" >"$T/doc1"
	if cont_known "$T/doc1"; then fail "python live: continuous: the known.py check refuses a renamed frame"
	else pass "python live: continuous: the known.py check refuses a renamed frame"; fi
fi
