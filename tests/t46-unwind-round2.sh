#!/usr/bin/env bash
# t46-unwind-round2.sh - --call-graph dwarf, second round: a library
# another user truncates while it is unwound through kills nothing
# (SIGBUS); the CFI-row cache never changes an answer (a corpus unwound
# cold and warm, the same stacks); a leaf stopped at its `ret` after
# `pop %rbp` unwinds into an rbp-based caller; captures mostly truncated
# say which --stack-size to try; a program entered at an entry point
# without CFI (ld.so's _start) ends cleanly there.  Live parts (the raw
# file's mode from creation, a bash loop corpus, big frames) need root
# and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
F=$TOP/tests/fixtures/unwind
cd "$T" || exit 2
# the attacker: nobody, who must reach $T
chmod 711 "$T"
NB=(setpriv --reuid nobody --regid nogroup --clear-groups)

# fixture MODE DIR: the capture MODE with its binaries' directory DIR
fixture() { sed "s|@FIXDIR@|$2|g" "$F/$1.raw"; }

# ---- a library truncated by its owner while it is unwound: no SIGBUS ----
# The fixture's library (its .eh_frame past the first page) owned by
# nobody, who cuts it to its first page and writes it back in a loop.
mkdir -m 755 "$T/trunc"
cp "$F/elf/uwprog" "$F/elf/libuwlib.so" "$T/trunc/"
cp "$F/elf/libuwlib.so" "$T/libuwlib.orig"
chown -R nobody "$T/trunc"
fixture lib "$T/trunc" >"$T/trunc.raw"
# read into memory, not mapped, it unwinds as the root-owned fixture does
fixture lib "$F/elf" >"$T/lib.raw"
"$STACKFOLD" -U -f folded -o "$T/lib.folded" --no-cache "$T/lib.raw" 2>/dev/null
"$STACKFOLD" -U -f folded -o "$T/trunc.folded" --no-cache "$T/trunc.raw" 2>/dev/null
check "another user's library: unwound as root's is" \
	test -s "$T/lib.folded" -a "$(cat "$T/lib.folded")" = "$(sed 's|/trunc/|/|' "$T/trunc.folded")"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# shellcheck disable=SC2016 # expanded by the child shell
	"${NB[@]}" bash -c '
		end=$((SECONDS + 120))
		while [ $SECONDS -lt $end ]; do
			truncate -s 4096 "$1"; cat "$2" >"$1"
			truncate -s 4096 "$3"; cat "$4" >"$3"
		done' sh "$T/trunc/libuwlib.so" "$T/libuwlib.orig" \
		"$T/trunc/uwprog" "$F/elf/uwprog" &
	shrinker=$!
	# 60 runs (the code that mapped files died in about one run of 5),
	# at least 20 in 90 s on a slow machine (or under SANITIZE=1)
	deaths=0 runs=0 end=$((SECONDS + 90))
	while [ $runs -lt 60 ] && [ $SECONDS -lt $end ] && kill -0 $shrinker 2>/dev/null; do
		"$STACKFOLD" -U -f folded -o - --no-cache "$T/trunc.raw" >/dev/null 2>&1
		st=$?
		runs=$((runs + 1))
		[ $st -ge 128 ] && deaths=$((deaths + 1))
	done
	kill $shrinker 2>/dev/null
	wait $shrinker 2>/dev/null
	check "library truncated by nobody while unwound: 0 of $runs runs died of a signal ($deaths did)" \
		test $deaths = 0 -a $runs -ge 20
	cmp -s "$T/trunc/libuwlib.so" "$T/libuwlib.orig" || cp "$T/libuwlib.orig" "$T/trunc/libuwlib.so"
else
	if [ "${CI:-}" = true ]; then fail "truncated library" "needs root and setpriv"; else skip "truncated library" "needs root and setpriv"; fi
fi

# ---- the raw capture is owner-only from its creation ----
# stackfold record's "bpftrace" here is a shell that looks at the
# temporary file first (under umask 000), then prints a capture: an fp
# one (counts and a map) and a dwarf one (the fixture's records).
for kind in fp dwarf; do
	case $kind in
	fp) printf '@[\n    0x401000\n, comm]: 3\n' >"$T/cap-$kind.txt" ;;
	dwarf) fixture lib "$F/elf" | sed -n '/^Attaching/,$p' >"$T/cap-$kind.txt" ;;
	esac
	# shellcheck disable=SC2016 # expanded by the child shell
	(umask 000; "$STACKFOLD" record -q -f folded -o "$T/rc-$kind" --save-raw "$T/rc-$kind.raw" -- \
		sh -c 'stat -c %a "$1".tmp.* >"$1.mode"; cat "$2"' sh "$T/rc-$kind.raw" "$T/cap-$kind.txt" \
		>/dev/null 2>"$T/rc-$kind.err")
	check_eq "raw capture ($kind, umask 000): 0600 as soon as it exists" 600 "$(cat "$T/rc-$kind.raw.mode" 2>&1)"
	check_eq "raw capture ($kind, umask 000): 0600 when complete" 600 "$(stat -c %a "$T/rc-$kind.raw" 2>&1)"
done

# ---- exact stops: tests/fixtures/unwind/epi.S under gdb ----
# stops MODE OUT LABEL...: a capture of epi MODE stopped (gdb) at each
# LABEL of epi.S; the labels are then stripped (frames are named by their
# functions).  1 when gdb cannot.
E=$T/epi
mkdir -p "$E"
gcc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -o "$E/epi.full" \
	"$F/epimain.c" "$F/epi.S" || fail "build epi"
labels=(many_exits_restored many_exits_ret leaf_fp_ret)
strip_args=()
for l in "${labels[@]}"; do strip_args+=(--strip-symbol="$l"); done
objcopy "${strip_args[@]}" "$E/epi.full" "$E/epi"
stops() {
	local mode=$1 out=$2 l fn addr base at=()
	shift 2
	for l in "$@"; do
		fn=${l%_re*}
		addr=$(nm "$E/epi.full" | awk -v s="$l" '$3 == s { print $1 }')
		base=$(nm "$E/epi.full" | awk -v s="$fn" '$3 == s { print $1 }')
		at+=(--at "$fn+$((0x$addr - 0x$base))")
	done
	python3 "$TOP/tests/tools/gdbcap.py" "$out" "${at[@]}" -- "$E/epi" "$mode" >/dev/null
}
have_gdb=false
if command -v gdb >/dev/null && stops exits "$E/exits.raw" many_exits_restored many_exits_ret &&
	stops fp "$E/fp.raw" leaf_fp_ret &&
	python3 "$TOP/tests/tools/gdbcap.py" "$E/entry.raw" --starti 2 -- "$E/epi" fp >/dev/null; then
	have_gdb=true
elif [ "${CI:-}" = true ]; then
	fail "exact stops" "gdb missing or failing (scripts/install-deps --test)"
else
	skip "exact stops" "gdb missing or failing"
fi
EPIMAIN='^epi;_start;__libc_start_main;__libc_start_call_main;main;'

# ---- exact stops: tests/fixtures/unwind/epi.S under gdb ----
# stops MODE OUT LABEL...: a capture of epi MODE stopped (gdb) at each
# LABEL of epi.S (FUNCTION_suffix); the labels are stripped from the
# binary the capture names (frames are named by their functions).
E=$T/epi
mkdir -p "$E"
gcc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -o "$E/epi.full" \
	"$F/epimain.c" "$F/epi.S" || fail "build epi"
objcopy --strip-symbol=many_exits_restored --strip-symbol=many_exits_ret \
	--strip-symbol=leaf_fp_ret "$E/epi.full" "$E/epi"
sym() { nm "$E/epi.full" | awk -v s="$1" '$3 == s { print $1 }'; }
stops() {
	local mode=$1 out=$2 l fn at=()
	shift 2
	for l in "$@"; do
		fn=${l%_*}
		at+=(--at "$fn+$((0x$(sym "$l") - 0x$(sym "$fn")))")
	done
	python3 "$TOP/tests/tools/gdbcap.py" "$out" "${at[@]}" -- "$E/epi" "$mode" >/dev/null
}
have_gdb=false
if command -v gdb >/dev/null && stops exits "$E/exits.raw" many_exits_restored many_exits_ret &&
	stops fp "$E/fp.raw" leaf_fp_ret &&
	python3 "$TOP/tests/tools/gdbcap.py" "$E/entry.raw" --starti 2 -- "$E/epi" fp >/dev/null; then
	have_gdb=true
elif [ "${CI:-}" = true ]; then
	fail "exact stops" "gdb missing or failing (scripts/install-deps --test)"
else
	skip "exact stops" "gdb missing or failing"
fi
EPIMAIN='^epi;_start;__libc_start_main;__libc_start_call_main;main;'

# ---- a leaf at its ret after pop %rbp, its caller's CFA rbp-based ----
if $have_gdb; then
	"$STACKFOLD" -U -f folded -o "$E/fp.folded" --no-cache "$E/fp.raw" 2>/dev/null
	check "leaf at ret after pop %rbp: unwound through its rbp-based caller to main" \
		grep -Eq "${EPIMAIN}run_fp;caller_fp;leaf_fp [0-9]+$" "$E/fp.folded"
	check_eq "leaf at ret after pop %rbp: every sample whole" \
		"$(grep -c . "$E/fp.folded")" "$(grep -Ec "${EPIMAIN}run_fp;caller_fp;leaf_fp [0-9]+$" "$E/fp.folded")"
fi

# ---- ld.so's entry code has no CFI: the outermost frame ----
# stopped in _dl_start, called from ld.so's _start (no FDE): the stack
# ends there, whole, as the kernel began it
if $have_gdb; then
	"$STACKFOLD" -U -f folded -o "$E/entry.folded" --no-cache "$E/entry.raw" 2>/dev/null
	check "ld.so's _start without CFI: the stack ends there, not in [unwind-error]" \
		grep -Eq '^epi;ld-linux-x86-64\.so\.2\+0x[0-9a-f]+;_dl_start 1$' "$E/entry.folded"
fi

# ---- the CFI-row cache never changes an answer ----
# coldwarm NAME FILE...: each capture unwound without the cache, then
# twice with one cache directory for them all (cold, warm): the same
# stacks every time
coldwarm() {
	local name=$1 c=$T/cache-$1 f out=""
	shift
	mkdir -p "$c"
	for pass in none cold warm; do
		for f in "$@"; do
			if [ $pass = none ]; then
				"$STACKFOLD" -U -f folded -o "$f.$pass" --no-cache "$f" 2>/dev/null
			else
				"$STACKFOLD" -U -f folded -o "$f.$pass" --cache-dir "$c" "$f" 2>/dev/null
			fi
		done
	done
	for f in "$@"; do
		[ -s "$f.none" ] || out+="$f: nothing unwound; "
		cmp -s "$f.none" "$f.cold" || out+="$f: cold differs: $(diff "$f.none" "$f.cold" | head -4 | tr '\n' ' '); "
		cmp -s "$f.none" "$f.warm" || out+="$f: warm differs: $(diff "$f.none" "$f.warm" | head -4 | tr '\n' ' '); "
	done
	check "CFI-row cache, $name: cold and warm unwind as without a cache" test -z "$out"
}
if $have_gdb; then
	check "after DW_CFA_restore_state: unwound to main without a cache" \
		test "$("$STACKFOLD" -U -f folded -o - --no-cache "$E/exits.raw" 2>/dev/null | grep -Evc "${EPIMAIN}run_exits;many_exits [0-9]+$")" = 0
	coldwarm "an epilogue between remember_state and restore_state" "$E/exits.raw"
fi
corpus=()
for m in recurse lib thread signal deep lib-records; do
	fixture "$m" "$F/elf" >"$T/c-$m.raw"
	corpus+=("$T/c-$m.raw")
done
$have_gdb && corpus+=("$E/exits.raw" "$E/fp.raw" "$E/entry.raw")
coldwarm "the fixtures' corpus" "${corpus[@]}"

# ---- a capture mostly truncated says which --stack-size to try ----
"$STACKFOLD" -f folded -o /dev/null "$T/c-deep.raw" 2>"$T/deep.err"
check "deep fixture (every copy cut at 8192 bytes): the --stack-size to try said" \
	grep -qx "stackfold: 100% of samples truncated at 8192 bytes: try --stack-size 16384" "$T/deep.err"
"$STACKFOLD" -q -f folded -o /dev/null "$T/c-deep.raw" 2>"$T/deep-q.err"
check_eq "deep fixture, -q: not said" "" "$(cat "$T/deep-q.err")"
"$STACKFOLD" -f folded -o /dev/null "$T/c-lib.raw" 2>"$T/lib.err"
check "lib fixture (nothing truncated): not said" bash -c "! grep -q 'truncated at' '$T/lib.err'"

# ---- live ----
live_prereq "unwind round 2 live" || exit 0
P=$TOP/scripts/profile

# the raw capture's temporary, fp and dwarf, under umask 000: its mode
# from the moment it exists (watched every few ms) to the end
cat >"$T/spin.c" <<'C'
volatile unsigned long v;
int main(void) { for (;;) v++; }
C
gcc -O1 -o "$T/spin" "$T/spin.c"
for cg in fp dwarf; do
	"$T/spin" &
	S=$!
	(umask 000; "$P" --call-graph $cg -U -f folded -o "$T/live-$cg" -p $S -d 2 >/dev/null 2>"$T/live-$cg.err") &
	R=$!
	modes=()
	while kill -0 $R 2>/dev/null; do
		for f in "$T/live-$cg".raw.tmp.*; do
			# (renamed between the glob and the stat: nothing to see)
			m=$(stat -c %a "$f" 2>/dev/null) && modes+=("$m")
		done
		sleep 0.005
	done
	wait $R
	kill $S; wait $S 2>/dev/null
	seen=$(printf '%s\n' "${modes[@]}" | sort | uniq -c | tr -s ' \n' ' ')
	bad=$(printf '%s\n' "${modes[@]}" | grep -cvx 600)
	check "live $cg capture, umask 000: its temporary raw file seen, always 0600 (modes seen:$seen)" \
		test "${#modes[@]}" -gt 0 -a "$bad" = 0
	check_eq "live $cg capture: the raw file 0600" 600 "$(stat -c %a "$T/live-$cg.raw" 2>&1)"
done

# a busy bash loop (libc's malloc and free: epilogues between
# remember_state and restore_state), unwound cold and warm
bash -c 'x=0; s=; while :; do x=$((x + 1)); s=${s:0:200}$x; a=($s $x); done' &
B=$!
"$P" --call-graph dwarf -F 499 -U -f folded -o "$T/bashloop" -p $B -d 8 >/dev/null 2>"$T/bashloop.err"
kill $B; wait $B 2>/dev/null
check "bash loop: captured ($(folded_total "$T/bashloop.folded") samples)" \
	test "$(folded_total "$T/bashloop.folded")" -ge 50
coldwarm "a live bash loop" "$T/bashloop.raw"

# big frames: every copy cut at 8 KiB, and the size said is enough
cat >"$T/bigframes.c" <<'C'
#include <string.h>
volatile unsigned long v;
__attribute__((noinline)) unsigned long deep(int n)
{
	volatile char buf[3000];
	memset((char *)buf, n, sizeof(buf));
	if (n == 0) { for (int i = 0; i < 100000; i++) v += i; return buf[7]; }
	return deep(n - 1) + buf[n];
}
int main(void) { for (;;) v += deep(4); }
C
gcc -O2 -fomit-frame-pointer -o "$T/bigframes" "$T/bigframes.c"
"$T/bigframes" &
G=$!
# ...and, -p: the side band reads the target's records only.  Meanwhile
# another process starts a /bin/true every 50 ms (some 60 processes): a
# side band of every process would hold their maps too.
(while :; do /bin/true; sleep 0.05; done) &
C=$!
"$P" -v --call-graph dwarf -U -f folded -o "$T/big" -p $G -d 3 >/dev/null 2>"$T/big.err"
kill $C; wait $C 2>/dev/null
side=$(grep '^stackfold: side band: ' "$T/big.err")
made=$(sed -n 's/^stackfold: side band: [0-9]* records of \([0-9]*\) processes (the targets and their descendants).*/\1/p' <<<"$side")
check "-p: the side band holds the target's records only (bigframes forks nothing; another process forks 20 a second): $side" \
	test -n "$made" -a "${made:-9}" -le 1
try=$(sed -n 's/^stackfold: [0-9]*% of samples truncated at 8192 bytes: try --stack-size \([0-9]*\)$/\1/p' "$T/big.err")
check "big frames (15 KiB stacks): the capture says which --stack-size to try ($try)" test -n "$try"
"$P" --call-graph dwarf --stack-size "${try:-16384}" -U -f folded -o "$T/big2" -p $G -d 3 >/dev/null 2>"$T/big2.err"
kill $G; wait $G 2>/dev/null
check "big frames with --stack-size ${try:-16384}: no sample truncated, nothing said" \
	bash -c "! grep -q 'truncated' '$T/big2.folded' '$T/big2.err' && test -s '$T/big2.folded'"

# short-lived processes under -a: `/bin/true` in a loop lives about a
# millisecond, gone before record reads its /proc/PID/maps; the kernel's
# side-band records (perfside.h) give its map.  Asserted: the raw capture
# holds a map naming /usr/bin/true for >= 75% of the true processes
# sampled (with it: 89-100% here, the rest mostly sampled mid-exec;
# without it, STACKFOLD_SIDEBAND=0: 5-30%).
# Shown: the share of its samples unwound to the entry (samples inside
# execve or exit, which have no user stack of their own, left out:
# tests/tools/entryshare.py).
(while :; do /bin/true; done) &
L=$!
"$P" --call-graph dwarf -a -f folded -o "$T/short" -d 4 >/dev/null 2>"$T/short.err"
kill $L; wait $L 2>/dev/null
# "SAVED TOTAL": true's images after its exec (#pid lines, the image's
# low 7 bits 2: one exec since the fork) with a map of /usr/bin/true
mapped=$(python3 - "$T/short.raw" <<'PY'
import sys
maps, key, saved, total = {}, None, 0, 0
for line in open(sys.argv[1], errors="replace"):
    w = line.split()
    if line.startswith("#maps "):
        key = w[1]; maps[key] = False
    elif line.startswith("#endmaps"):
        key = None
    elif key and line.rstrip().endswith("/true"):
        maps[key] = True
    elif line.startswith("#pid ") and w[2].startswith("true\\x00"):
        k = w[1].split(":")[0]
        if (int(k) >> 32) & 127 == 2:
            total += 1; saved += maps.get(k, False)
print(saved, total)
PY
)
share=$(python3 "$TOP/tests/tools/entryshare.py" --folded "$T/short.folded" true)
read -r saved total <<<"$mapped"
check "-a, a /bin/true loop: a map for >= 75% of its processes ($saved of $total; samples unwound to the entry: $share)" \
	test "$total" -ge 5 -a $((saved * 100)) -ge $((total * 75))
