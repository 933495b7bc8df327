#!/usr/bin/env bash
# t75-hostile-paths: names another local user controls one step away from
# those t71/t72 cover.  Outputs: a directory component that is nobody's
# link (in a sticky directory), or nobody's directory, is refused with
# exit 4 for every format, `record` and scripts/profile, and for the
# continuous directory made again as nobody's link while running; root's
# own links still work, and so does the sudo user's directory.  Files
# libdw and libdebuginfod open themselves: a DWZ alt file that is a FIFO
# (symbolize, and a live scripts/profile -p that must end on SIGTERM), a
# .dwo swapped with a FIFO by its owner in a loop (renameat2 EXCHANGE), a
# FIFO in libdebuginfod's cache, and an index cache under another user's
# HOME: nothing hangs, each is said or counted.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	if [ "${CI:-}" = true ]; then fail "hostile paths" "needs root and setpriv"; else skip "hostile paths" "needs root and setpriv"; fi
	exit 0
fi
cd "$T" || exit 2
chmod 755 "$T"
NB=(setpriv --reuid nobody --regid nogroup --clear-groups)
NOBODY=$(id -u nobody)
W=$T/w
mkdir -m 1777 "$W"
printf 'main;work 5\n' >in.folded
for v in victim victim2 victim3; do echo secret >"$v"; chmod 600 "$v"; done
# repeat_symbolize IN RUNS SECS: `symbolize --no-cache <IN` up to RUNS
# times within SECS; sets runs, hung (its 20 s deadline passed) and killed
# (ended by a signal)
repeat_symbolize() {
	local end=$((SECONDS + $3)) rc
	runs=0 hung=0 killed=0
	while [ $SECONDS -lt $end ] && [ $runs -lt "$2" ]; do
		timeout 20 "$STACKFOLD" symbolize --no-cache <"$1" >/dev/null 2>rep.err
		rc=$?
		if [ $rc = 124 ]; then hung=$((hung + 1)); elif [ $rc -ge 128 ]; then killed=$((killed + 1)); fi
		runs=$((runs + 1))
	done
}
untouched() { [ "$(cat "$T/victim") $(cat "$T/victim2") $(cat "$T/victim3")" = "secret secret secret" ]; }

# ---- -o through a directory component that is nobody's link ----
"${NB[@]}" mkdir "$W/D"
"${NB[@]}" ln -s "$T/victim" "$W/D/cpu.folded"
"${NB[@]}" ln -s "$T/victim2" "$W/D/cpu.svg"
"${NB[@]}" ln -s "$T/victim3" "$W/D/cpu.pb.gz"
"${NB[@]}" ln -s "$W/D" "$W/outd"
timeout 10 "$STACKFOLD" -q -f folded -o "$W/outd/cpu.folded" in.folded 2>link.err
check_eq "-o through nobody's directory link: exit 4" 4 "$?"
check_eq "-o through nobody's directory link: one line, naming the link" "1 1" \
	"$(wc -l <link.err) $(grep -c "refusing to write '$W/outd/cpu.folded': '$W/outd' is a symbolic link owned by uid $NOBODY" link.err)"
timeout 10 "$STACKFOLD" -q -o "$W/outd/cpu" -f folded,svg,pprof in.folded 2>multi.err
check_eq "-o PREFIX (three formats) through nobody's directory link: exit 4" 4 "$?"
check "the link targets are untouched" untouched
# nobody's real directory (no link on the way)
timeout 10 "$STACKFOLD" -q -o "$W/D/cpu" -f folded,svg,pprof in.folded 2>dir.err
check_eq "-o into nobody's directory: exit 4" 4 "$?"
check "-o into nobody's directory: says whose it is" \
	grep -q "refusing to write '$W/D/cpu.*its directory '$W/D' is owned by uid $NOBODY" dir.err
"${NB[@]}" mkdir "$W/empty"
timeout 10 "$STACKFOLD" -q -f folded -o "$W/empty/new.folded" in.folded 2>/dev/null
check_eq "-o into nobody's empty directory: exit 4, nothing made there" "4 " "$? $(ls "$W/empty")"
printf '@[\n    work+12\n, fake]: 5\n' >one.bt
echo '#!/bin/sh' >cat-bt
# shellcheck disable=SC2016 # its $1, not ours
echo 'cat "$1"' >>cat-bt
chmod +x cat-bt
timeout 10 "$STACKFOLD" record -q -o "$W/outd/rec" -- ./cat-bt one.bt </dev/null >/dev/null 2>rec.err
check_eq "record -o through nobody's directory link: exit 4" 4 "$?"
check "still untouched after all of them" untouched
check_eq "no temporary file left anywhere under the sticky directory" "" "$(find "$W" -name '*.tmp.*')"
# a link of root's on the way, and the sudo user's directory: written
mkdir "$T/rootdir"
ln -s "$T/rootdir" "$W/rootlink"
"$STACKFOLD" -q -f folded -o "$W/rootlink/r.folded" in.folded
check_eq "-o through root's own directory link: written" "main;work 5" "$(cat "$T/rootdir/r.folded" 2>&1)"
SUDO_UID=$NOBODY "$STACKFOLD" -q -f folded -o "$W/empty/s.folded" in.folded
check_eq "-o into the sudo user's directory (SUDO_UID): written" "main;work 5" "$(cat "$W/empty/s.folded" 2>&1)"

# ---- scripts/profile -o through nobody's directory link ----
if live_prereq "scripts/profile -o through nobody's link"; then
	timeout 60 "$TOP/scripts/profile" -d 1 -o "$W/outd/cpu" -- timeout 0.5 sh -c 'while :; do :; done' >/dev/null 2>prof.err
	check_eq "scripts/profile -o through nobody's directory link: exit 254" 254 "$?"
	check "scripts/profile: says so" grep -q "refusing to write '$W/outd/cpu" prof.err
	check "scripts/profile: the targets untouched" untouched
fi

# ---- continuous: DIR removed, then made again as nobody's link ----
win() {	# one window at probe time $1 (ns)
	printf '#window %s\n#pid 4242:0:0 \\x66\\x61\\x6b\\x65\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\n' "$1"
	printf '@stackfold[4242, 4242, fake\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00, \n        work+12\n, ]: 10\n\n@stackfold_total: 10\n' 
}
D=$W/cont
mkdir "$D"
# the fake prints a second window once GO exists: after the swap below
{ echo "#attached"; win 1000000000; } >prog.bt
win 2000000000 >prog2.bt
cat >fake-bt2 <<'SH'
#!/bin/sh
cat "$1"
while [ ! -e "$T/GO" ]; do sleep 0.1; done
cat "$2"
trap 'exit 0' INT TERM
while :; do sleep 0.1; done
SH
chmod +x fake-bt2
"$STACKFOLD" continuous -o "$D" --folded -- "$T/fake-bt2" "$T/prog.bt" "$T/prog2.bt" 2>cont.err &
cpid=$!
for ((i = 0; i < 100; i++)); do [ -n "$(find "$D" -name '*.pb.gz')" ] && break; sleep 0.1; done
"${NB[@]}" mkdir "$W/evil"
"${NB[@]}" ln -s "$T/victim" "$W/evil/20300101T000000Z.folded"
rm -rf "$D"
"${NB[@]}" ln -s "$W/evil" "$D"
touch "$T/GO"
for ((i = 0; i < 100; i++)); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
kill -TERM "$cpid" 2>/dev/null
reap "$cpid" >reap.rc
st=$(cat reap.rc)
check_eq "continuous, DIR made again as nobody's link: stops with exit 4" 4 "$st"
check "continuous: says whose link it is" grep -q "'$D' is a symbolic link owned by uid $NOBODY" cont.err
check_eq "continuous: nothing written into nobody's directory" "20300101T000000Z.folded" "$(ls -A "$W/evil")"
check "continuous: the link's target untouched" untouched
timeout 10 "$STACKFOLD" continuous --check -o "$D" -- true 2>check.err
check_eq "continuous --check on nobody's link (scripts/continuous asks it): exit 4" 4 "$?"
rm "$D"
"${NB[@]}" mkdir "$D"
timeout 10 "$STACKFOLD" continuous --check -o "$D" -- true 2>check2.err
check_eq "continuous --check on nobody's directory: exit 4" 4 "$?"

# ---- the DWZ alt file is a FIFO ----
cat >alt.c <<'C'
#include <stdio.h>
struct big { int a, b, c; double d[4]; };
__attribute__((noinline)) int alt_fn(struct big *x) { return x->a + x->b; }
int main(void) { struct big x = {1, 2, 3, {0}}; volatile int s = 0; for (;;) s += alt_fn(&x); return s; }
C
sed 's/int main/int main2/' alt.c >alt2.c
echo 'int main(void) { return main2(); }' >>alt2.c
mkdir dwz
if gcc -O1 -g -o dwz/a alt.c && gcc -O1 -g -o dwz/b alt2.c &&
	dwz -m "$T/dwz/common.debug" -M "$T/dwz/common.debug" dwz/a dwz/b 2>/dev/null &&
	readelf -S dwz/a | grep -q gnu_debugaltlink; then
	addr=0x$(nm dwz/a | awk '$3 == "alt_fn" { print $1 }')
	echo "$T/dwz/a $addr" >alt.in
	timeout 10 "$STACKFOLD" symbolize --no-cache <alt.in >alt-ok.out 2>alt-ok.err
	check "DWZ alt file in place: symbolize names alt_fn, nothing said" \
		bash -c "grep -qx alt_fn '$T/alt-ok.out' && ! grep -q 'alt file' '$T/alt-ok.err'"
	mv dwz/common.debug dwz/common.real
	mkfifo dwz/common.debug
	s=$(date +%s%N)
	timeout 10 "$STACKFOLD" symbolize --no-cache <alt.in >alt-fifo.out 2>alt-fifo.err
	rc=$?
	ms=$((($(date +%s%N) - s) / 1000000))
	check "DWZ alt file a FIFO: symbolize ends at once, exit 0 (${ms} ms, exit $rc)" test "$rc" = 0 -a "$ms" -lt 3000
	check "DWZ alt file a FIFO: said, the function still named" \
		bash -c "grep -q \"DWZ alt file '$T/dwz/common.debug' is not read: not a regular file\" '$T/alt-fifo.err' && grep -qx alt_fn '$T/alt-fifo.out'"
	# an alt file whose .debug_str claims 64 MiB in 64 KB (libdw inflates
	# what it opens itself: 4ce9adb took 69 MB and 3 s here)
	head -c 64M /dev/zero >zeros.bin
	objcopy --update-section .debug_str=zeros.bin dwz/common.real dwz/bomb.tmp &&
		objcopy --compress-debug-sections=zlib dwz/bomb.tmp dwz/bomb.debug
	rm -f zeros.bin dwz/bomb.tmp dwz/common.debug
	cp dwz/bomb.debug dwz/common.debug
	/usr/bin/time -f %M -o bomb.kb timeout 20 "$STACKFOLD" symbolize --no-cache <alt.in >alt-bomb.out 2>alt-bomb.err
	lim=40000
	[ "${SANITIZE:-}" = 1 ] && lim=120000
	check "DWZ alt file inflating to 64 MiB: refused ($(cat bomb.kb) KB peak, at most $lim), said" \
		bash -c "test \"\$(tail -1 '$T/bomb.kb')\" -le $lim && grep -q 'claim past the size bounds' '$T/alt-bomb.err'"
	rm dwz/common.debug
	mkfifo dwz/common.debug
	if live_prereq "scripts/profile -p, DWZ alt file a FIFO"; then
		dwz/a &
		apid=$!
		"$TOP/scripts/profile" -p "$apid" -f folded -o "$T/altp" -d 30 >altp.out 2>altp.err &
		ppid=$!
		# sampling has begun once the raw capture holds the map (read
		# with the program's first sample, which indexes the file and
		# so asks libdw for its alt file)
		for ((i = 0; i < 250; i++)); do grep -qs '^#maps' "$T"/altp.raw.tmp.* && break; sleep 0.1; done
		sleep 1
		s=$(date +%s%N)
		kill -TERM "$ppid"
		reap "$ppid" >reap.rc
		st=$(cat reap.rc)
		ms=$((($(date +%s%N) - s) / 1000000))
		kill "$apid"; wait "$apid" 2>/dev/null
		# (4ce9adb: never; 8 s leaves room for a loaded machine)
		check "scripts/profile -p, DWZ alt file a FIFO: ends within 8 s of SIGTERM (${ms} ms, exit $st)" \
			test "$ms" -lt 8000 -a "$st" = 0
		check "scripts/profile -p: alt_fn in the profile, no temporary left" \
			bash -c "grep -q 'alt_fn' '$T/altp.folded' && test -z \"\$(ls '$T' | grep 'altp.*tmp')\""
	fi
else
	fail "dwz builds a DWZ alt file (gcc, dwz)"
fi

# ---- a .dwo its owner swaps with a FIFO, in a loop ----
cat >swap.c <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
int main(int c, char **v) {
	time_t end = time(NULL) + (c > 3 ? atoi(v[3]) : 20);
	while (time(NULL) < end)
		renameat2(AT_FDCWD, v[1], AT_FDCWD, v[2], RENAME_EXCHANGE);
	return 0;
}
C
sed -i 's/#include <time.h>/#include <stdlib.h>\n#include <time.h>/' swap.c
cat >inl.c <<'C'
static inline __attribute__((always_inline)) int inner(int x) { return x * 7 + 3; }
__attribute__((noinline)) int outer(int x) { return inner(x) + 1; }
int main(int c, char **v) { (void)v; return outer(c); }
C
mkdir sw
if gcc -O2 -o swap swap.c && (cd sw && gcc -O2 -g -gsplit-dwarf -o inl ../inl.c) && [ -f sw/inl.dwo ]; then
	chown -R nobody sw
	"${NB[@]}" mkfifo sw/fifo
	oaddr=0x$(nm sw/inl | awk '$3 == "outer" { print $1 }')
	echo "$T/sw/inl $oaddr" >sw.in
	"${NB[@]}" ./swap "$T/sw/inl.dwo" "$T/sw/fifo" 70 &
	swp=$!
	repeat_symbolize sw.in 100 60
	kill "$swp"; wait "$swp" 2>/dev/null
	# (4ce9adb hung in 1 run of 17 to 30)
	check ".dwo swapped with a FIFO in a loop: $runs runs, none hung ($hung did)" \
		test "$hung" = 0 -a "$runs" -ge 30
else
	fail "build the .dwo swap test (gcc -gsplit-dwarf)"
fi

# ---- a DWZ alt file and a .dwo their owner truncates while they are read ----
# libdw maps the files it opens itself: a user's is given to it as a
# private copy (4ce9adb died with SIGBUS in 6 runs of 40, and 3 of 30)
mkdir tr
chown nobody tr
{
	for i in $(seq 0 199); do echo "static inline __attribute__((always_inline)) int inl_fn_$i(int x) { volatile int y = x * $((i + 3)); return y + $i; }"; done
} >tr/h.h
{
	echo '#include "h.h"'
	for i in $(seq 0 199); do echo "__attribute__((noinline)) int outer_$i(int x) { return inl_fn_$i(x); }"; done
	echo 'int main(int c, char **v) { (void)v; int s = 0;'
	for i in $(seq 0 199); do echo "s += outer_$i(c);"; done
	echo 'return s; }'
} >tr/a.c
sed 's/int main/int main2/' tr/a.c >tr/b.c
echo 'int main(int c, char **v) { return main2(c, v); }' >>tr/b.c
chown nobody tr/*
if (cd tr && "${NB[@]}" gcc -O2 -g -o a a.c && "${NB[@]}" gcc -O2 -g -o b b.c &&
	"${NB[@]}" dwz -m "$T/tr/common.debug" -M "$T/tr/common.debug" a b &&
	"${NB[@]}" cp common.debug common.debug.real &&
	"${NB[@]}" cp a.c s.c && "${NB[@]}" gcc -O2 -g -gsplit-dwarf -o s s.c &&
	"${NB[@]}" cp s.dwo s.dwo.real) 2>tr.err && [ -f tr/s.dwo ]; then
	nm tr/a | awk -v p="$T/tr/a" '$3 ~ /^outer_/ { print p, "0x" $1 }' >tr-alt.in
	nm tr/s | awk -v p="$T/tr/s" '$3 ~ /^outer_/ { print p, "0x" $1 }' >tr-dwo.in
	for kind in alt dwo; do
		f=$T/tr/common.debug
		[ $kind = dwo ] && f=$T/tr/s.dwo
		"${NB[@]}" bash -c "end=\$((SECONDS + 90)); while [ \$SECONDS -lt \$end ]; do truncate -s 0 '$f'; cat '$f.real' >'$f'; done" 2>/dev/null &
		tp=$!
		repeat_symbolize "tr-$kind.in" 60 40
		kill "$tp"; wait "$tp" 2>/dev/null
		check "$kind file truncated in a loop by its owner: $runs runs, none killed ($killed were)" \
			test "$killed" = 0 -a "$runs" -ge 20
	done
else
	fail "build the truncation test (gcc, dwz as nobody)" "$(tail -3 tr.err)"
fi

# ---- a FIFO in libdebuginfod's cache (another user's) ----
cat >dbg.c <<'C'
__attribute__((noinline)) int dbg_fn(int x) { return x * 3 + 1; }
int main(int c, char **v) { (void)v; return dbg_fn(c) == 7; }
C
gcc -O1 -Wl,--build-id -o dbg dbg.c && strip dbg
bid=$(readelf -n dbg | awk '/Build ID/ { print $3 }')
if [ -n "$bid" ] && [ -e /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1 ]; then
	echo "$T/dbg 0x1000" >dbg.in
	# nobody's cache: not used, said; root's cache holding a FIFO (what
	# libdebuginfod opens itself): refused by the open it calls, no hang
	"${NB[@]}" mkdir -p "$W/dcache/$bid"
	"${NB[@]}" mkfifo "$W/dcache/$bid/debuginfo"
	mkdir -p "$T/rcache/$bid"
	mkfifo "$T/rcache/$bid/debuginfo"
	for c in "$W/dcache" "$T/rcache"; do
		n=$(basename "$c")
		s=$(date +%s%N)
		DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_CACHE_PATH=$c \
			timeout 20 "$STACKFOLD" symbolize --no-cache <dbg.in >"$n.out" 2>"$n.err"
		rc=$?
		ms=$((($(date +%s%N) - s) / 1000000))
		check "a FIFO in libdebuginfod's cache ($n): symbolize ends (${ms} ms, exit $rc)" \
			test "$rc" = 0 -a "$ms" -lt 10000
	done
	check "nobody's libdebuginfod cache: not used, said" \
		grep -q "its cache is not used: refusing to write '$W/dcache': '$W/dcache' on the way is owned by uid $NOBODY" dcache.err
	check_eq "root's libdebuginfod cache: its FIFO is still a FIFO" p "$(stat -c %A "$T/rcache/$bid/debuginfo" | cut -c1)"
else
	fail "libdebuginfod's cache test: a build-id and libdebuginfod.so.1"
fi

# ---- an index cache under another user's HOME ----
"${NB[@]}" mkdir -p "$W/home/.cache"
HOME=$W/home XDG_CACHE_HOME='' timeout 10 "$STACKFOLD" symbolize <alt.in >home.out 2>home.err
check "index cache in nobody's HOME: not used, said" \
	grep -q "index cache not used: refusing to write '$W/home/.cache/stackfold': '$W/home' on the way is owned by uid $NOBODY" home.err
check_eq "index cache in nobody's HOME: nothing written there" "" "$(find "$W/home/.cache" -type f)"
