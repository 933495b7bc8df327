#!/usr/bin/env bash
# t71-untrusted-files: files a profiled program (or its owner) controls.
# A FIFO named as a debug file (beside the binary, in .debug/), as a
# symbolize MODULE, as a split-DWARF .dwo, as a path in a saved capture
# is never opened for reading (no hang) and is said; a .dwo of another
# user is not read; a sparse debuglink target costs no CRC; compressed
# debug sections claiming a huge size cost no memory (under ulimit -v); a
# library truncated while it is read kills nothing (SIGBUS); --max-stacks
# fails with one line and exit status 5, leaving no temporary file; live:
# a capture (scripts/profile, scripts/continuous) whose program's debug
# file is a FIFO ends within seconds of its SIGTERM, and a library
# shrinking under `scripts/profile -p` does not kill the run.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
cd "$T" || exit 2

# run NAME SECS CMD...: run CMD with a deadline, stdin from $T/NAME.in if
# it exists; keeps $T/NAME.out, .err, .rc (124: the deadline passed) and
# .ms (wall time)
run() {
	local n=$1 secs=$2 in=/dev/null s e
	shift 2
	[ -f "$n.in" ] && in=$n.in
	s=$(date +%s%N)
	timeout -k 2 "$secs" "$@" <"$in" >"$n.out" 2>"$n.err"
	echo $? >"$n.rc"
	e=$(date +%s%N)
	echo $(((e - s) / 1000000)) >"$n.ms"
}
rc() { cat "$T/$1.rc"; }
said() { grep -q -- "$2" "$T/$1.err"; }

cat >hot.c <<'EOF'
__attribute__((noinline)) int hot_fn(int x) { return x * 3 + 1; }
int main(int c, char **v) { (void)v; return hot_fn(c) == 7; }
EOF
gcc -O1 -g -Wl,--build-id=none -o hot hot.c || { fail "build hot"; exit 0; }
addr=0x$(nm hot | awk '$3 == "hot_fn" { print $1 }')
objcopy --only-keep-debug hot hot.dbg
strip -o hot.stripped hot
# a stripped copy whose .gnu_debuglink names hot.debug (CRC of hot.dbg)
cp hot.dbg hot.debug
objcopy --add-gnu-debuglink=hot.debug hot.stripped hot.linked
rm hot.debug

# ---- debuglink candidates: FIFOs beside the binary and in .debug/ ----
for where in here dotdebug; do
	d=$T/dl-$where
	mkdir -p "$d/.debug"
	cp hot.linked "$d/hot"
	if [ $where = here ]; then mkfifo "$d/hot.debug"; else mkfifo "$d/.debug/hot.debug"; fi
	echo "$d/hot $addr" >"dl-$where.in"
	run "dl-$where" 10 "$STACKFOLD" symbolize --no-cache
	check_eq "debuglink FIFO ($where): symbolize ends, exit 0" 0 "$(rc "dl-$where")"
	check "debuglink FIFO ($where): said, once" \
		test "$(grep -c "is a FIFO, not a regular file" "dl-$where.err")" = 1
done
# the FIFO in the directory is skipped, the real file in .debug/ used
d=$T/dl-both
mkdir -p "$d/.debug"
cp hot.linked "$d/hot"
mkfifo "$d/hot.debug"
cp hot.dbg "$d/.debug/hot.debug"
echo "$d/hot $addr" >dl-both.in
run dl-both 10 "$STACKFOLD" symbolize --no-cache
check "debuglink: a FIFO beside the binary, the real file in .debug/ names hot_fn" \
	grep -qx hot_fn dl-both.out

# ---- a sparse debuglink target: refused before its CRC ----
d=$T/dl-sparse
mkdir -p "$d"
cp hot.linked "$d/hot"
cp hot.dbg "$d/hot.debug"
truncate -s 20G "$d/hot.debug"
echo "$d/hot $addr" >dl-sparse.in
run dl-sparse 20 "$STACKFOLD" symbolize --no-cache
check "sparse 20 GB debuglink: refused in under 3 s (no CRC of 20 GB)" \
	test "$(rc dl-sparse)" = 0 -a "$(cat dl-sparse.ms)" -lt 3000
check "sparse debuglink: said" said dl-sparse "is sparse"

# ---- a FIFO as a symbolize MODULE ----
mkfifo modfifo
echo "$T/modfifo 0x10" >mod.in
run mod 10 "$STACKFOLD" symbolize --no-cache
check_eq "FIFO module: exit 2 (an unreadable module), no hang" 2 "$(rc mod)"
check "FIFO module: one line saying it is a FIFO" said mod "'$T/modfifo' is a FIFO, not a regular file"

# ---- a FIFO as a path in a saved capture (the process is gone) ----
capture_head hot 999999 hot "$T/capfifo" >cap.txt
printf '@stackfold[999999, 999999, hot, \n    0x%x\n, ]: 5\n' "$((CAP_BASE + addr))" >>cap.txt
mkfifo capfifo
run cap 10 "$STACKFOLD" -f folded -o "$T/cap.folded" cap.txt
check_eq "FIFO in a saved capture: report ends, exit 0" 0 "$(rc cap)"
check "FIFO in a saved capture: said; frame is module+offset" \
	bash -c "grep -q 'is a FIFO' '$T/cap.err' && grep -q 'capfifo+0x' '$T/cap.folded'"
check "FIFO in a saved capture: the summary counts it" said cap "1 file not read"

# ---- split DWARF: a FIFO .dwo, another user's .dwo ----
cat >inl.c <<'EOF'
static inline __attribute__((always_inline)) int inner(int x) { return x * 7 + 3; }
__attribute__((noinline)) int outer(int x) { return inner(x) ^ 5; }
int main(int c, char **v) { (void)v; return outer(c); }
EOF
mkdir -p dwo
if (cd dwo && gcc -O2 -g -gsplit-dwarf -o inl ../inl.c) && [ -f dwo/inl.dwo ]; then
	oaddr=0x$(nm dwo/inl | awk '$3 == "outer" { print $1 }')
	echo "$T/dwo/inl $oaddr" >dwo-ok.in
	cp dwo-ok.in dwo-fifo.in
	cp dwo-ok.in dwo-other.in
	run dwo-ok 10 "$STACKFOLD" symbolize --no-cache
	check "split DWARF: the .dwo's inlined frame (inner) when it is in place" \
		grep -qx inner dwo-ok.out
	mv dwo/inl.dwo dwo/inl.dwo.real
	mkfifo dwo/inl.dwo
	run dwo-fifo 10 "$STACKFOLD" symbolize --no-cache
	check_eq "FIFO .dwo: symbolize ends, exit 0" 0 "$(rc dwo-fifo)"
	check "FIFO .dwo: said, the skeleton names outer" \
		bash -c "grep -q \"split DWARF '$T/dwo/inl.dwo' is not read: a FIFO\" '$T/dwo-fifo.err' &&
			 grep -qx outer '$T/dwo-fifo.out'"
	rm dwo/inl.dwo
	mv dwo/inl.dwo.real dwo/inl.dwo
	chown nobody dwo/inl.dwo
	run dwo-other 10 "$STACKFOLD" symbolize --no-cache
	check "another user's .dwo next to root's binary: not read, said" \
		bash -c "! grep -qx inner '$T/dwo-other.out' && grep -q 'belongs to another user' '$T/dwo-other.err'"
	chown root dwo/inl.dwo
else
	fail "split DWARF: gcc -gsplit-dwarf builds inl.dwo"
fi

# ---- compressed debug sections that claim 512 MiB (zlib of zeros) ----
truncate -s 512M zeros
objcopy --add-section .debug_sfbomb=zeros --set-section-flags .debug_sfbomb=readonly,debug hot hot.big &&
	objcopy --compress-debug-sections=zlib hot.big hot.bomb
rm -f zeros hot.big
echo "$T/hot.bomb $addr" >bomb.in
if [ "${SANITIZE:-}" != 1 ]; then	# ASan reserves terabytes of address space
	run bomb 20 bash -c "ulimit -v 400000; exec '$STACKFOLD' symbolize --no-cache"
	check "bomb ($(stat -c %s hot.bomb) bytes) under ulimit -v 400 MB: exit 0, hot_fn named from .symtab" \
		bash -c "test \"\$(cat '$T/bomb.rc')\" = 0 && grep -qx hot_fn '$T/bomb.out'"
else
	skip "bomb under ulimit -v" "ASan reserves terabytes of address space; the RSS check below stands"
fi
cp bomb.in bomb2.in
run bomb2 20 /usr/bin/time -f 'maxrss %M' "$STACKFOLD" symbolize --no-cache
rss=$(sed -n 's/^maxrss //p' bomb2.err)
check "bomb: max RSS under 200 MB (was 530 MB)" test "${rss:-999999}" -lt 200000
check "bomb: refusal said" said bomb2 "past the bound, its DWARF is not read"

# the session's bound on decompressed bytes held at once
objcopy --compress-debug-sections=zlib hot hot.z
echo "$T/hot.z $addr" >held.in
run held 10 env STACKFOLD_INFLATE_MAX=100 "$STACKFOLD" symbolize --no-cache
check "STACKFOLD_INFLATE_MAX=100: a compressed debug file's DWARF not read, said" \
	bash -c "grep -qx hot_fn '$T/held.out' && grep -q 'past the 100 this run may hold' '$T/held.err'"
cp held.in held2.in
run held2 10 "$STACKFOLD" symbolize --no-cache
check "the same file within the default bound: its lines" grep -q 'hot.c:1$' held2.out

# ---- a library truncated while it is read: no SIGBUS ----
# Its symbol table is at the file's end; the file is cut to its first
# page and written back, over and over, as symbolize reads it.  The file
# is another user's (root's own files are read through a mapping).
{
	echo '#define F(n) int f##n(int x) { return x * n + 1; }'
	for i in $(seq 0 3999); do echo "F($i)"; done
} >big.c
gcc -O0 -g -shared -fPIC -o libbig.so big.c || fail "build libbig.so"
cp libbig.so libbig.orig
chown nobody libbig.so
bigaddr=0x$(nm libbig.so | awk '$3 == "f3999" { print $1 }')
size=$(stat -c %s libbig.orig)
(
	end=$((SECONDS + 6))
	while [ $SECONDS -lt $end ]; do
		truncate -s 4096 libbig.so
		dd if=libbig.orig of=libbig.so bs=4096 skip=1 seek=1 conv=notrunc status=none
	done
) &
shrinker=$!
deaths=0 runs=0
end=$((SECONDS + 5))
while [ $SECONDS -lt $end ]; do
	echo "$T/libbig.so $bigaddr" | "$STACKFOLD" symbolize --no-cache >/dev/null 2>&1
	st=$?
	runs=$((runs + 1))
	[ $st -ge 128 ] && deaths=$((deaths + 1))
done
wait $shrinker
check "library shrinking while read: 0 of $runs symbolize runs died of a signal ($deaths did)" test $deaths = 0
[ "$(stat -c %s libbig.so)" = "$size" ] || fail "shrinker restored libbig.so"

# ---- --max-stacks ----
awk -v lines=3000 -v seed=1 -f "$TOP/bench/gen_folded.awk" >many.folded
mkdir -p ms
run ms 20 "$STACKFOLD" -f folded,pprof,svg -o "$T/ms/out" --max-stacks 1000 many.folded
check_eq "--max-stacks 1000 of 3000: exit 5" 5 "$(rc ms)"
check "--max-stacks: one line naming input and line" \
	bash -c "test \"\$(wc -l <'$T/ms.err')\" = 1 && grep -q 'many.folded:1001: more than 1000 unique stacks' '$T/ms.err'"
check_eq "--max-stacks: no output and no temporary file left" "" "$(ls -A ms)"
run ms2 20 "$STACKFOLD" -q -f folded -o "$T/ms/ok.folded" --max-stacks 3000 many.folded
check "--max-stacks 3000 of 3000: written" test "$(rc ms2)" = 0 -a -s ms/ok.folded

# ---- live: SIGTERM while the program's debug file is a FIFO ----
if live_prereq "SIGTERM with a FIFO debug file"; then
	d=$T/live
	mkdir -p "$d"
	cat >"$d/spin.c" <<'EOF'
#include <unistd.h>
__attribute__((noinline)) int spin_fn(volatile unsigned *p) { unsigned i; for (i = 0; i < 100000000u; i++) *p += i; return (int)*p; }
int main(void) { volatile unsigned v = 0; alarm(30); for (;;) spin_fn(&v); }
EOF
	gcc -O1 -g -o "$d/spin.full" "$d/spin.c"
	objcopy --only-keep-debug "$d/spin.full" "$d/spin.dbg"
	strip -o "$d/spin.s" "$d/spin.full"
	cp "$d/spin.dbg" "$d/spin.debug"
	objcopy --add-gnu-debuglink="$d/spin.debug" "$d/spin.s" "$d/spin"
	rm "$d/spin.debug"
	mkfifo "$d/spin.debug"
	"$d/spin" &
	spid=$!
	"$TOP/scripts/profile" -p "$spid" -f folded -o "$d/out" -d 30 >"$T/live.out" 2>"$T/live.err" &
	ppid=$!
	# sampling has begun once the raw capture holds the program's map
	# (its first sample, which makes the symbolizer look for the debug
	# file): a fixed wait missed it on a loaded machine
	for ((i = 0; i < 250; i++)); do grep -qs '^#maps' "$d"/out.raw.tmp.* && break; sleep 0.1; done
	sleep 1
	s=$(date +%s%N)
	kill -TERM "$ppid"
	reap "$ppid" >"$T/reap.rc"
	st=$(cat "$T/reap.rc")
	e=$(date +%s%N)
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	ms=$(((e - s) / 1000000))
	check "SIGTERM: scripts/profile -p ends within 3 s (${ms} ms, exit $st)" \
		test "$ms" -lt 3000 -a "$st" = 0
	check "SIGTERM: the profile is written, the FIFO said" \
		bash -c "test -s '$d/out.folded' && grep -q 'is a FIFO' '$T/live.err'"
	# the continuous mode: the same program, 1 s windows
	"$d/spin" &
	spid=$!
	"$TOP/scripts/continuous" -o "$d/cont" -p "$spid" --window 1 --folded >"$T/cont.out" 2>"$T/cont.err" &
	cpid=$!
	for ((i = 0; i < 300; i++)); do ls "$d/cont/"*.folded >/dev/null 2>&1 && break; sleep 0.1; done
	sleep 1
	s=$(date +%s%N)
	kill -TERM "$cpid"
	reap "$cpid" >"$T/reap.rc"
	st=$(cat "$T/reap.rc")
	e=$(date +%s%N)
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	ms=$(((e - s) / 1000000))
	check "SIGTERM: scripts/continuous -p ends within 3 s (${ms} ms, exit $st)" \
		test "$ms" -lt 3000 -a "$st" = 0
	check "continuous: windows written, the FIFO said" \
		bash -c "ls '$d/cont/'*.folded >/dev/null 2>&1 && grep -q 'is a FIFO' '$T/cont.err'"
fi

# ---- live: a library shrinking under scripts/profile -p ----
if live_prereq "shrinking library under scripts/profile -p"; then
	d=$T/shr
	mkdir -p "$d"
	# the target spins in main; libbig.so stays mapped (dlopen), its
	# text in the first pages, its symbols at its end, which is cut
	cat >"$d/main.c" <<'EOF'
#include <dlfcn.h>
#include <unistd.h>
int main(int c, char **v) {
	volatile unsigned x = 0;
	int (*f)(int);
	void *h = dlopen(v[1], RTLD_NOW);
	(void)c;
	if (!h || !(f = (int (*)(int))dlsym(h, "f3999")))
		return 1;
	alarm(60);
	for (;;) x += (unsigned)f(1);	/* its samples land in the library */
}
EOF
	gcc -O1 -o "$d/main" "$d/main.c" -ldl
	cp libbig.orig "$d/libbig.so"
	chown nobody "$d/libbig.so"
	# the library's loaded part (kept: the target runs it) ...
	keep=0
	while read -r off filesz; do
		[ $((off + filesz)) -gt $keep ] && keep=$((off + filesz))
	done < <(readelf -lW "$d/libbig.so" | awk '$1 == "LOAD" { print $2, $5 }')
	keep=$(((keep + 4095) / 4096 * 4096))
	"$d/main" "$d/libbig.so" &
	tpid=$!
	sleep 0.3
	(
		end=$((SECONDS + 19))
		while [ $SECONDS -lt $end ]; do
			truncate -s "$keep" "$d/libbig.so"
			dd if=libbig.orig of="$d/libbig.so" bs=4096 skip=$((keep / 4096)) seek=$((keep / 4096)) conv=notrunc status=none
		done
	) &
	shrinker=$!
	# about one run in four hit the race on main: 6 runs or so
	bad=0 runs=0
	end=$((SECONDS + 17))
	while [ $SECONDS -lt $end ] && kill -0 "$tpid" 2>/dev/null; do
		"$TOP/scripts/profile" -p "$tpid" -d 1 -f folded -o "$d/p$runs" >"$d/p$runs.out" 2>"$d/p$runs.err"
		st=$?
		runs=$((runs + 1))
		# killed: 128+N (scripts/profile's own failures are 251..255)
		if { [ "$st" -gt 128 ] && [ "$st" -le 192 ]; } || grep -qi "bus error\|signal" "$d/p$((runs - 1)).err"; then
			bad=$((bad + 1))
		fi
	done
	kill "$shrinker" "$tpid" 2>/dev/null
	wait "$shrinker" "$tpid" 2>/dev/null
	check "shrinking library: $runs scripts/profile -p runs, none killed ($bad were)" \
		test "$bad" = 0 -a "$runs" -ge 2
fi
