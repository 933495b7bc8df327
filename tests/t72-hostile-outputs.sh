#!/usr/bin/env bash
# t72-hostile-outputs: what another local user can plant where root writes.
# In a sticky world-writable directory, names made by nobody (setpriv): a
# symlink to a root-only file, a dangling symlink and a FIFO at `-o` names
# of `stackfold` and `scripts/profile` are refused with exit 4 and one line
# (nothing written through them, nothing hangs), root's own links and FIFOs
# still work, and a planted set-id file lends no mode.  `stackfold
# continuous`: its start-up clean-up and --max-age take only its own files;
# one instance a directory; a directory removed mid-run is made again (the
# bpftrace program still runs: it is held open) and a failing restart says
# bpftrace's own error; windows are named and timed by the probe's
# "#window" clock, not by when they are read.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"	# pb_decode
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	if [ "${CI:-}" = true ]; then fail "hostile outputs" "needs root and setpriv"; else skip "hostile outputs" "needs root and setpriv"; fi
	exit 0
fi
chmod 755 "$T"
NB=(setpriv --reuid nobody --regid nogroup --clear-groups)
S=$T/sticky
mkdir -m 1777 "$S"
printf 'main;work 5\n' >"$T/in.folded"
echo secret >"$T/victim"
chmod 600 "$T/victim"

# --- stackfold -o ---------------------------------------------------------------
"${NB[@]}" ln -s "$T/victim" "$S/link.folded"
"${NB[@]}" ln -s "$T/made-elsewhere" "$S/dangling.folded"
"${NB[@]}" mkfifo "$S/fifo.folded"
for n in link dangling fifo; do
	timeout 10 "$STACKFOLD" -q -f folded -o "$S/$n.folded" "$T/in.folded" >/dev/null 2>"$T/$n.err"
	rc=$?
	check_eq "-o at nobody's $n: exit 4 (not a hang)" 4 "$rc"
	check_eq "-o at nobody's $n: one line, naming it" \
		"1 1" "$(wc -l <"$T/$n.err") $(grep -c "refusing to write '$S/$n.folded'" "$T/$n.err")"
done
check_eq "-o at nobody's link: its target untouched" secret "$(cat "$T/victim")"
check "-o at nobody's dangling link: nothing created where it points" test ! -e "$T/made-elsewhere"
check_eq "no temporary file left in the sticky directory" "" "$(find "$S" -name '*.tmp.*')"
# root's own link and FIFO are followed and written as before
ln -s "$T/mine.folded" "$S/own.folded"
"$STACKFOLD" -q -f folded -o "$S/own.folded" "$T/in.folded"
check_eq "-o at root's own link: written through it" "main;work 5" "$(cat "$T/mine.folded" 2>&1)"
mkfifo "$S/ownfifo"
timeout 10 cat "$S/ownfifo" >"$T/ownfifo.out" &
timeout 10 "$STACKFOLD" -q -f folded -o "$S/ownfifo" "$T/in.folded"
wait
check_eq "-o at root's own FIFO: streamed into it" "main;work 5" "$(cat "$T/ownfifo.out")"
# a planted regular file with set-id bits is replaced, its mode not taken
"${NB[@]}" sh -c "echo x >'$S/suid.folded'; chmod 6777 '$S/suid.folded'"
"$STACKFOLD" -q -f folded -o "$S/suid.folded" "$T/in.folded"
check_eq "-o over nobody's set-id file: root's file, no set-id or world-write" \
	"root 644" "$(stat -c '%U %a' "$S/suid.folded")"

# --- scripts/profile -o -----------------------------------------------------------
if live_prereq "profile -o at nobody's link"; then
	"${NB[@]}" ln -s "$T/victim" "$S/p.folded"
	timeout 60 "$TOP/scripts/profile" -d 1 -f folded -o "$S/p" -- timeout 0.5 sh -c 'while :; do :; done' >/dev/null 2>"$T/p.err"
	rc=$?
	check_eq "profile -o at nobody's link: exit 254" 254 "$rc"
	check "profile -o at nobody's link: says so" grep -q "refusing to write '$S/p.folded'" "$T/p.err"
	check_eq "profile -o at nobody's link: its target untouched" secret "$(cat "$T/victim")"
fi

# --- stackfold continuous against a fake bpftrace ----------------------------------
# The fake prints its "program" (canned output), then waits for SIGINT as
# bpftrace does; with EXIT_AFTER set it exits instead (a crash), and a
# start after FAIL_NEXT appeared fails with an error, as bpftrace would.
fake_bpftrace "$T/fake-bpftrace" 'echo "#end"' 'if [ -e "$T/FAIL_NEXT" ]; then echo "ERROR: fake start-up failure" >&2; exit 1; fi
cat "$1" || exit 1
[ -e "$T/EXIT_AFTER" ] && exit 1'
export T
# window N T: one window at probe time T (ns), 10 samples
window() {
	printf '#window %s\n#pid 4242:0:0 \\x66\\x61\\x6b\\x65\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\n' "$2"
	printf '@stackfold%s[4242, 4242, fake\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00, \n        work+12\n, ]: 10\n\n@stackfold_total%s: 10\n' "$1" "$1"
}
# probe times (CLOCK_MONOTONIC ns): 10 s after boot, and on
now_mono=10000000000
{
	echo "Attaching 4 probes..."
	echo "#attached Tracing stacks at 99 Hz... Hit Ctrl-C to end."
	printf '#window %s\n' $((now_mono - 9000000000))
	for i in 1 2 3 4 5 6; do
		b=""; [ $((i % 2)) = 0 ] && b=_b
		window "$b" $((now_mono - 9000000000 + i * 1000000000))
	done
} >"$T/six.bt"

# Six 1 s windows read at once (a stackfold that was stopped): named and
# timed by the probe's clock, not 16 ms apart in one second with _001...
D=$T/cont-times
mkdir "$D"
cp "$T/six.bt" "$D/.continuous.bt"
"$STACKFOLD" continuous -o "$D" -q --folded -- "$T/fake-bpftrace" "$D/.continuous.bt" 2>"$T/times.err" &
cpid=$!
for ((i = 0; i < 100; i++)); do [ "$(find "$D" -name '*.pb.gz' | wc -l)" -ge 6 ] && break; sleep 0.1; done
kill -TERM "$cpid"; wait "$cpid"
names=$(find "$D" -name '*.pb.gz' -printf '%f\n' | sed 's/\.pb\.gz$//' | sort)
check_eq "six windows read at once: six names, none with a _NNN suffix" "6 0" \
	"$(printf '%s\n' "$names" | grep -c .) $(printf '%s\n' "$names" | grep -c _)"
secs=$(printf '%s\n' "$names" | while read -r n; do date -u -d "${n:0:8} ${n:9:2}:${n:11:2}:${n:13:2}" +%s; done | sort -n)
check_eq "six windows read at once: one second apart" "1 1 1 1 1" \
	"$(printf '%s\n' "$secs" | awk 'NR > 1 { printf "%s%d", s, $1 - p; s = " " } { p = $1 }')"
first=$(printf '%s\n' "$names" | head -n1)
check "six windows read at once: each 1 s long (duration_nanos)" \
	grep -qx ' *duration_nanos: 1000000000' <(pb_decode "$D/$first.pb.gz" 2>/dev/null)

# Start-up clean-up and --max-age: only stackfold's own files go.
D=$T/cont-clean
mkdir -m 1777 "$D"
old=20200101T000000Z
"${NB[@]}" sh -c "cd '$D' && echo u >$old.folded && echo u >$old.tmp.mine && echo u >$old.pb.gz.tmp.abcdef && echo u >20200101T000001Z.pb.gz"
echo ours >"$D/$old.pb.gz.tmp.Zx81Qa"
echo ours >"$D/20200101T000002Z.folded.tmp.k2JdP0"
echo ours >"$D/20200101T000003Z.pb.gz"
echo ours >"$D/20200101T000003Z.folded"
window "" $((now_mono)) >"$D/.continuous.bt"
"$STACKFOLD" continuous -o "$D" --max-age 1d -- "$T/fake-bpftrace" "$D/.continuous.bt" 2>"$T/clean.err" &
cpid=$!
for ((i = 0; i < 100; i++)); do grep -q 'window' "$T/clean.err" 2>/dev/null && break; sleep 0.1; done
kill -TERM "$cpid"; wait "$cpid"
check_eq "clean-up: nobody's files with window-like names are all kept" \
	"$old.folded $old.pb.gz.tmp.abcdef $old.tmp.mine 20200101T000001Z.pb.gz" \
	"$(cd "$D" && find . -user nobody -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "clean-up: our own stale temporaries and old window removed" "" \
	"$(cd "$D" && ls -- *Zx81Qa *k2JdP0 20200101T000003Z.* 2>/dev/null)"
check "clean-up: says 2 unfinished files" grep -q 'removed 2 unfinished files' "$T/clean.err"
check "--max-age: counts the 1 window it removed (not nobody's)" grep -q 'removed 1 window past' "$T/clean.err"

# One writer a directory, enforced by stackfold continuous itself.
D=$T/cont-lock
mkdir "$D"
window "" "$now_mono" >"$D/.continuous.bt"
"$STACKFOLD" continuous -o "$D" -q -- "$T/fake-bpftrace" "$D/.continuous.bt" 2>"$T/lock1.err" &
cpid=$!
for ((i = 0; i < 50; i++)); do [ -e "$D/.lock" ] && break; sleep 0.1; done
sleep 0.3
timeout 10 "$STACKFOLD" continuous -o "$D" -q -- "$T/fake-bpftrace" "$D/.continuous.bt" >/dev/null 2>"$T/lock2.err"
rc=$?
kill -TERM "$cpid"; wait "$cpid"
check_eq "a second instance on one directory: exit 4 at once, one line" "4 1" "$rc $(wc -l <"$T/lock2.err")"
check "a second instance: says another profiler writes there" grep -q 'another profiler writes to' "$T/lock2.err"

# The directory removed while running, bpftrace then restarting: made
# again, and the restart still has its program.
D=$T/cont-gone
mkdir "$D"
{ echo "#attached"; window "" "$now_mono"; } >"$D/.continuous.bt"
touch "$T/EXIT_AFTER"
"$STACKFOLD" continuous -o "$D" --folded -- "$T/fake-bpftrace" "$D/.continuous.bt" 2>"$T/gone.err" &
cpid=$!
for ((i = 0; i < 50; i++)); do [ "$(find "$D" -name '*.pb.gz' | wc -l)" -ge 1 ] && break; sleep 0.1; done
rm -rf "$D"
for ((i = 0; i < 80; i++)); do [ "$(find "$D" -name '*.pb.gz' 2>/dev/null | wc -l)" -ge 1 ] && break; sleep 0.1; done
check "directory removed: a later window is written in it, made again" test -n "$(find "$D" -name '*.pb.gz' 2>/dev/null)"
check "directory removed: locked again" test -f "$D/.lock"
check "directory removed: one line says so" grep -q "'$D' was removed or replaced while running" "$T/gone.err"
# and a restart that fails says bpftrace's own error
touch "$T/FAIL_NEXT"
for ((i = 0; i < 60; i++)); do grep -q 'fake start-up failure' "$T/gone.err" && break; sleep 0.1; done
kill -TERM "$cpid"; wait "$cpid"
check "a failing restart: bpftrace's own error is said" grep -q 'fake start-up failure' "$T/gone.err"
rm -f "$T/EXIT_AFTER" "$T/FAIL_NEXT"

# The memory budget: a window of 60000 unique stacks (12 unique kernel
# frames each: 380 MB without a budget) under --max-memory 48M keeps to it,
# every sample still counted, those past it in one [overflow] stack.
D=$T/cont-mem
mkdir "$D"
awk 'BEGIN { srand(3); print "#attached"; print "#window 1000000000"; print "#window 2000000000"
	for (i = 0; i < 60000; i++) {
		print "@stackfold[4242, 4242, fake\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00, "
		for (d = 0; d < 12; d++) printf "        ffffffff%08x\n", int(rand() * 268435456)
		print ", ]: 2"; print ""
	}
	print "@stackfold_total: 120000" }' >"$D/.continuous.bt"
"$STACKFOLD" continuous -o "$D" --folded --no-cache --max-memory 48M -- "$T/fake-bpftrace" "$D/.continuous.bt" 2>"$T/mem.err" &
cpid=$!
for ((i = 0; i < 600; i++)); do [ -n "$(find "$D" -name '*.pb.gz')" ] && break; sleep 0.2; done
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$cpid/status" 2>/dev/null)
kill -TERM "$cpid"; wait "$cpid"
# (ASan keeps freed memory in quarantine, and its shadow: half as much
# again; without a budget the peak is 380 MB either way)
lim=49152
[ "${SANITIZE:-}" = 1 ] && lim=73728
check "memory budget: peak RSS within --max-memory 48M (${hwm:-?} KiB, at most $lim)" test "${hwm:-999999}" -le "$lim"
f=$(find "$D" -name '*.folded' | head -n 1)
check_eq "memory budget: every sample in the window" 120000 "$(folded_total "$f")"
check "memory budget: the rest counted in one [overflow] stack" grep -q '^\[overflow\]' "$f"
check "memory budget: said" grep -q 'samples past the memory budget' "$T/mem.err"
