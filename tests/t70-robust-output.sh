#!/usr/bin/env bash
# t70-robust-output: output faults (failure-cases.md section 7 D30, D31):
# disk full on a 64 KiB tmpfs, a read-only file system, an unwritable
# directory (as an unprivileged user), an output path that is a directory,
# and SIGKILL of the writer at random moments.  The final path only ever
# holds a complete old or new file, and no temporary file is left after an
# error.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }

MNT=()
cleanup() {
	local m
	for m in "${MNT[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	if [ "${CI:-}" = true ]; then fail "output faults" "needs root (mount)"; else skip "output faults" "needs root (mount)"; fi
	exit 0
fi

# 300 stacks of equal weight: every frame is drawn, so the SVG is ~100 KiB
awk 'BEGIN { for (i = 0; i < 300; i++) printf "main;work_%d;inner_%d;leaf_%d 10\n", i % 40, i, i }' >"$T/in.folded"
awk 'BEGIN { for (i = 0; i < 300; i++) printf "main;other_%d;leaf_%d 7\n", i % 30, i }' >"$T/in2.folded"
# 20000 stacks of random names: folded and pprof (even gzipped) > 64 KiB
awk 'BEGIN { srand(7); for (i = 0; i < 20000; i++)
	printf "main;fn_%08x;leaf_%08x 3\n", int(rand() * 4294967295), int(rand() * 4294967295) }' >"$T/wide.folded"

# --- D30: disk full -----------------------------------------------------------
mkdir -p "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full"; then
	MNT+=("$T/full")
	for fmt in folded svg pprof; do
		out=$T/full/out.$fmt in=$T/wide.folded
		[ "$fmt" = svg ] && in=$T/in.folded	# narrow frames are not drawn
		echo "old $fmt" >"$out"
		"$STACKFOLD" -q -f "$fmt" -o "$out" "$in" >/dev/null 2>"$T/full-$fmt.err"
		rc=$?
		check_eq "disk full ($fmt): exit 4" 4 "$rc"
		if grep -E -q "write '?$out'?: No space left on device" "$T/full-$fmt.err"; then
			pass "disk full ($fmt): 'write $out: No space left on device'"
		else
			fail "disk full ($fmt): 'write $out: No space left on device'" "stderr: $(cat "$T/full-$fmt.err")" \
				"(proposed fix in collapse/ingest/report.c write_one: see tests/fuzz/FINDINGS.md)"
		fi
		check_eq "disk full ($fmt): previous output intact" "old $fmt" "$(cat "$out")"
		check_eq "disk full ($fmt): no temporary file left" "" "$(find "$T/full" -name '*.tmp*')"
	done
	# the same to standard output: every format names it and the cause
	for fmt in folded top svg pprof; do
		"$STACKFOLD" -q -f "$fmt" "$T/wide.folded" >/dev/full 2>"$T/stdout-$fmt.err"
		check_eq "stdout on /dev/full ($fmt): exit 4, the output and the cause named" \
			"4 stackfold: write '<stdout>': No space left on device" "$? $(cat "$T/stdout-$fmt.err")"
	done
	# several formats: each output is old or new, none half-written
	for f in folded svg pb.gz; do echo "old" >"$T/full/multi.$f"; done
	"$STACKFOLD" -q -f folded,svg,pprof -o "$T/full/multi" "$T/wide.folded" >/dev/null 2>"$T/full-multi.err"
	check_eq "disk full (3 formats): exit 4" 4 $?
	check_eq "disk full (3 formats): no temporary file left" "" "$(find "$T/full" -name '*.tmp*')"
else
	fail "disk full: mount a 64 KiB tmpfs"
fi

# --- read-only file system, output path is a directory --------------------
mkdir -p "$T/ro"
if mount -t tmpfs -o size=64k,ro tmpfs "$T/ro"; then
	MNT+=("$T/ro")
	"$STACKFOLD" -q -o "$T/ro/out.folded" "$T/in.folded" 2>"$T/ro.err"
	check_eq "read-only file system: exit 4" 4 $?
	check "read-only file system: names the path and the reason" \
		grep -E -q "$T/ro/out.folded.*Read-only file system" "$T/ro.err"
else
	fail "read-only tmpfs: mount"
fi
mkdir -p "$T/isdir/out.folded"
"$STACKFOLD" -q -o "$T/isdir/out.folded" "$T/in.folded" 2>"$T/isdir.err"
check_eq "output path is a directory: exit 4" 4 $?
# (not "cannot open", as an input that cannot be read says)
check_eq "output path is a directory: one line, 'cannot write'" \
	"stackfold: cannot write '$T/isdir/out.folded': Is a directory" "$(cat "$T/isdir.err")"
check_eq "output path is a directory: no temporary file left" "" "$(find "$T/isdir" -name '*.tmp*')"

# --- unwritable directory, as an unprivileged user --------------------------
# (root ignores directory permissions)
mkdir -p "$T/pub/locked"
chmod 711 "$T"
chmod 755 "$T/pub"
chmod 555 "$T/pub/locked"
cp "$T/in.folded" "$T/pub/in.folded"
chmod 644 "$T/pub/in.folded"
if command -v setpriv >/dev/null && [ -r "$STACKFOLD" ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$STACKFOLD" -q -o "$T/pub/locked/out.folded" "$T/pub/in.folded" 2>"$T/pub/locked.err"
	check_eq "unwritable directory: exit 4" 4 $?
	check "unwritable directory: names the output and 'Permission denied'" \
		grep -E -q "$T/pub/locked/out.folded.*Permission denied" "$T/pub/locked.err"
	check_eq "unwritable directory: nothing created" "" "$(ls -A "$T/pub/locked")"
else
	fail "unwritable directory" "setpriv missing"
fi
chmod 700 "$T"

# --- output file mode: the old file's, else 0666 less the umask ------------
rm -f "$T/mode.folded"
(umask 077 && "$STACKFOLD" -q -o "$T/mode.folded" "$T/in2.folded")
check_eq "new output under umask 077 is 600" 600 "$(stat -c %a "$T/mode.folded")"
chmod 640 "$T/mode.folded"
"$STACKFOLD" -q -o "$T/mode.folded" "$T/in.folded"
check_eq "rewritten output keeps its mode (640)" 640 "$(stat -c %a "$T/mode.folded")"

# --- D31: SIGKILL of the writer, at random moments ---------------------------
# The final path holds the complete old file or the complete new one, every
# time; a .pb.gz always passes gzip -t.
big=$T/kill.folded
awk 'BEGIN { for (i = 0; i < 60000; i++) printf "main;mod_%d;fn_%d;leaf_%d %d\n", i % 97, i % 1009, i, 1 + i % 13 }' >"$big"
"$STACKFOLD" -q -f folded,pprof -o "$T/ref-new" "$big" || fail "SIGKILL: reference outputs"
"$STACKFOLD" -q -f folded,pprof -o "$T/ref-old" "$T/in2.folded" || fail "SIGKILL: reference outputs"
cp "$T/ref-old.folded" "$T/k.folded"
cp "$T/ref-old.pb.gz" "$T/k.pb.gz"
start=$(date +%s%N)
"$STACKFOLD" -q -f folded,pprof -o "$T/timing" "$big"
full_ms=$((($(date +%s%N) - start) / 1000000))
bad=0 olds=0 news=0
for i in $(seq 1 40); do
	"$STACKFOLD" -q -f folded,pprof -o "$T/k" "$big" &
	pid=$!
	# uniform over the run, a bit past its end
	ms=$((RANDOM % (full_ms + full_ms / 4 + 1)))
	sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	for f in folded pb.gz; do
		if cmp -s "$T/k.$f" "$T/ref-new.$f"; then
			news=$((news + 1))
		elif cmp -s "$T/k.$f" "$T/ref-old.$f"; then
			olds=$((olds + 1))
		else
			bad=$((bad + 1))
			echo "iteration $i ($ms ms): $f is neither old nor new" >>"$T/kill.log"
		fi
	done
	gzip -t "$T/k.pb.gz" 2>>"$T/kill.log" || bad=$((bad + 1))
	# next round starts from the old files again
	cp "$T/ref-old.folded" "$T/k.folded"
	cp "$T/ref-old.pb.gz" "$T/k.pb.gz"
done
if [ "$bad" = 0 ]; then
	pass "SIGKILL x40 (run ${full_ms} ms): final paths always complete old ($olds) or new ($news), gzip -t ok"
else
	fail "SIGKILL x40: final paths always complete" "$(head -n 5 "$T/kill.log")"
fi
leftover=$(find "$T" -maxdepth 1 -name 'k.*.tmp.*' | wc -l)
check_eq "SIGKILL: leftovers are only recognisable temporary files ($leftover *.tmp.*)" "" \
	"$(find "$T" -maxdepth 1 -name 'k.*' ! -name k.folded ! -name k.pb.gz ! -name 'k.folded.tmp.??????' ! -name 'k.pb.gz.tmp.??????')"

# --- SIGTERM of the writer, at random moments --------------------------------
# As SIGKILL, and no temporary file is left: the handler removes the one
# being written, then the process ends by SIGTERM as by default (left, it
# could be hundreds of MB beside the output).
bad=0 left=0
for i in $(seq 1 20); do
	"$STACKFOLD" -q -f folded,pprof -o "$T/t" "$big" 2>>"$T/term.err" &
	pid=$!
	sleep "$(awk -v m="$((RANDOM % (full_ms + 1)))" 'BEGIN { printf "%.3f", m / 1000 }')"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 143 ] || bad=$((bad + 1))
	left=$((left + $(find "$T" -maxdepth 1 -name 't.*.tmp.*' | wc -l)))
	rm -f "$T"/t.*
done
check_eq "SIGTERM x20: exit 0 or by SIGTERM (143), no temporary file left" "0 0" "$bad $left"

# --- -o through a symbolic link ---------------------------------------------
# The file the link names is replaced, the link stays (replacing the link
# itself by a file, -o /dev/stdout with stdout closed would replace the
# system's /dev/stdout).  A descriptor's name is written
# through that descriptor, as a shell's redirection is.
"$STACKFOLD" -q -o "$T/sl-ref.folded" "$T/in.folded"
echo old >"$T/sl-target.folded"
ln -s sl-target.folded "$T/sl-link.folded"
"$STACKFOLD" -q -o "$T/sl-link.folded" "$T/in.folded"
check_eq "-o LINK: exit 0, the link stays a link" "0 yes" "$? $([ -L "$T/sl-link.folded" ] && echo yes)"
check "-o LINK: the file it names is the new output" cmp -s "$T/sl-target.folded" "$T/sl-ref.folded"
ln -s /proc/self/fd/1 "$T/sl-stdout"
"$STACKFOLD" -q -o "$T/sl-stdout" "$T/in.folded" >"$T/sl-stdout.out"
check_eq "-o LINK to /proc/self/fd/1: exit 0, the link stays a link" "0 yes" "$? $([ -L "$T/sl-stdout" ] && echo yes)"
check "-o LINK to /proc/self/fd/1: the output reaches stdout" cmp -s "$T/sl-stdout.out" "$T/sl-ref.folded"
{ "$STACKFOLD" -q -o /dev/fd/1 "$T/in.folded"; echo "end $?"; } >"$T/sl-fd1.out"
check_eq "-o /dev/fd/1: exit 0, written through the descriptor (the shell's next write follows it)" \
	"$(cat "$T/sl-ref.folded"; echo end 0)" "$(cat "$T/sl-fd1.out")"
long=$T/$(printf 'n%.0s' $(seq 1 246)).folded
"$STACKFOLD" -q -o "$long" "$T/in.folded"
check_eq "-o NAME of 253 bytes (no room for .tmp.XXXXXX): written" "0 yes" \
	"$? $(cmp -s "$long" "$T/sl-ref.folded" && echo yes)"

# --- `bpftrace ... | stackfold` and Ctrl-C ----------------------------------
# A Ctrl-C reaches the whole pipe: bpftrace prints its maps into it and
# exits.  So the first SIGINT lets stackfold read the pipe to its end and
# write everything; a second (from another process, as Ctrl-C again)
# ends it as SIGINT does, with nothing written.  Were the first to kill
# it, the README's one-liner pipe would lose all its output.
# env --default-signal: SIGINT as at a terminal, not ignored as by a job
# of a script (or of a test run started in the background), which
# stackfold leaves ignored.
half=$(folded_total "$T/in.folded")
dflt=(env --default-signal=INT)
{ cat "$T/in.folded"; sleep 1.5; cat "$T/in.folded"; } |
	"${dflt[@]}" "$STACKFOLD" -q -o "$T/pint.folded" &
sf=$!
sleep 0.5
env kill -INT "$sf"
wait "$sf"
check_eq "pipe, one SIGINT: exit 0, both halves of the input written" "0 $((2 * half))" \
	"$? $(folded_total "$T/pint.folded")"
echo old >"$T/pint2.folded"
{ cat "$T/in.folded"; sleep 3; } | "${dflt[@]}" "$STACKFOLD" -q -o "$T/pint2.folded" &
sf=$!
sleep 0.5
env kill -INT "$sf"
sleep 0.2
env kill -INT "$sf"
wait "$sf"
check_eq "pipe, two SIGINTs: ends by SIGINT (130), nothing replaced" "130 old" \
	"$? $(cat "$T/pint2.folded")"
"${dflt[@]}" "$STACKFOLD" -q -o "$T/fint.folded" <(sleep 3; cat "$T/in.folded") &
sf=$!
sleep 0.5
env kill -INT "$sf"
wait "$sf"
echo "$?" >"$T/fint.rc"
check_eq "a file argument, one SIGINT: ends by SIGINT (130)" "130 no" \
	"$(cat "$T/fint.rc") $([ -e "$T/fint.folded" ] && echo yes || echo no)"

# An -o past what a path can hold (with a suffix and a temporary name's) is
# refused up front, not cut short silently; so are continuous's window
# paths (and their clean-up's unlink).
long=$(printf 'a%.0s' $(seq 3950))
echo "x 1" | "$STACKFOLD" -o "$T/$long" 2>"$T/longo.err"
check_eq "-o too long for a path: exit 1, said" "1 1" "$? $(grep -c 'too long for a path' "$T/longo.err")"
"$STACKFOLD" continuous -o "$T/$long" -- true 2>"$T/longc.err"
check_eq "continuous -o too long: exit 1, said" "1 1" "$? $(grep -c 'too long for a path' "$T/longc.err")"

check_eq "no ASan/UBSan/LSan report in any run" "" \
	"$(grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T"/*.err "$T"/pub/*.err 2>/dev/null)"
