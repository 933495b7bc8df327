#!/usr/bin/env bash
# t50-symbolize-lazy: DWARF read one group of compile units at a time
# (symbolizer/elf/dwlazy.c).  A program of 48 units with inlined functions, its
# DWARF in a separate, zlib-compressed debug file found by build-id: every
# way of reaching an answer (no cache, a cold cache, a cache holding some
# units, a warm cache, every unit read at once) gives the same bytes as
# addr2line's names and lines; the cache grows with the units read and a
# warm run needs no debug file; a debug file gone before its units were
# read gives names from the symbol table, never wrong ones.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fixtures/sym/symlib.sh
. "$TOP/tests/fixtures/sym/symlib.sh"
# shellcheck source=tests/fixtures/proc/build.sh
. "$TOP/tests/fixtures/proc/build.sh"
cd "$T" || exit 2

NU=48
for ((u = 0; u < NU; u++)); do
	cat >"u$u.c" <<EOF
static inline __attribute__((always_inline)) int sq$u(int x) { return x * x + $u; }
static int __attribute__((noinline)) mid$u(int x) { int s = 0; for (int i = 0; i < x; i++) s += sq$u(i); return s; }
int f$u(int x) { return mid$u(x) + sq$u(x); }
EOF
done
{
	for ((u = 0; u < NU; u++)); do echo "int f$u(int);"; done
	echo 'int main(int c, char **v) { (void)v; int s = 0;'
	for ((u = 0; u < NU; u++)); do echo "s += f$u(c);"; done
	echo 'return s & 1; }'
} >main.c
if ! gcc -O2 -g -o multi main.c u*.c 2>build.err; then
	fail "build the 48-unit fixture" "$(tail -3 build.err)"
	exit 0
fi
bid=$(readelf -n multi | awk '/Build ID/ { print $3 }')
mkdir -p "dbg/.build-id/${bid:0:2}"
objcopy --only-keep-debug --compress-debug-sections=zlib multi \
	"dbg/.build-id/${bid:0:2}/${bid:2}.debug"
objcopy --strip-debug multi multi.stripped
export STACKFOLD_DEBUG_DIRS=$T/dbg
debugfile=dbg/.build-id/${bid:0:2}/${bid:2}.debug

probe_addrs multi '^(f[0-9]+|mid[0-9]+(\..*)?)$' >all.addr
head -6 all.addr >few.addr
check "fixture: addresses in every unit" test "$(wc -l <all.addr)" -ge $((NU * 6))
sed 's/^/multi.stripped /' all.addr >all.in
sed 's/^/multi.stripped /' few.addr >few.in

# The reference: addr2line on the unstripped program (names and lines).
symb -a --no-cache <all.in >ref.out 2>ref.err
addr2line -a -f -i -e multi <all.addr >a2l.out
check_diff "no cache: as addr2line" a2l.out ref.out
check "no cache: inline frames present" grep -q '^sq[0-9]' ref.out

C=$T/c1
symb -a --cache-dir "$C" <few.in >few.out 2>few.err
entry=$(find "$C" -name '*.idx')
small=$(stat -c %s "$entry")
check_diff "cold cache, a few addresses: as without cache" \
	<(head -"$(wc -l <few.out)" ref.out) few.out
symb -a --cache-dir "$C" <all.in >mixed.out 2>mixed.err
check_diff "cache holding some units, the rest read now: same" ref.out mixed.out
big=$(stat -c %s "$entry")
check "the entry grows with the units read ($small -> $big bytes)" \
	test "$big" -gt "$small"
mv "$debugfile" hidden.debug
symb -a --cache-dir "$C" <all.in >warm.out 2>warm.err
check_diff "warm cache, debug file gone: same (nothing read again)" \
	ref.out warm.out
mv hidden.debug "$debugfile"

# Units never read while the debug file was there: symbol-table names.
C2=$T/c2
symb -a --cache-dir "$C2" <few.in >few2.out 2>&1
mv "$debugfile" hidden.debug
symb -a --cache-dir "$C2" <all.in >gone.out 2>gone.err
mv hidden.debug "$debugfile"
names_only <gone.out | grep -v '^0x' | sort -u >gone.names
names_only <few2.out | grep '^sq' | sort -u >few2.sq
check "the units read before have inline frames" test -s few2.sq
check_diff "debug file gone: inline frames only from the units read before" \
	few2.sq <(grep '^sq' gone.names)
check_eq "debug file gone: one answer per address" \
	"$(wc -l <all.addr)" "$(grep -c '^0x' gone.out)"
check "debug file gone: the sized functions still named" \
	grep -q '^f47$' gone.names

# Every unit at once (past a share of the groups, dwlazy reads them all)
# and the whole-index entry it stores.
C3=$T/c3
cat all.in all.in >twice.in
cat ref.out ref.out >twice.ref
symb -a --cache-dir "$C3" <twice.in >twice.out 2>twice.err
check_diff "all units read at once: same" twice.ref twice.out
symb -a --cache-dir "$C3" <all.in >twice-warm.out 2>&1
check_diff "all units, then warm: same" ref.out twice-warm.out
check "no warnings" test ! -s twice.err

# sym_opts.dwarf_whole (the continuous mode): the first lookup reads every
# unit, so the entry stored is the whole one.
if sym_build; then
	first=$(head -1 all.addr)
	SF_TEST_CACHE=1 STACKFOLD_CACHE_DIR=$T/c4 "$T/st" elf "$T/multi.stripped" "$first" >/dev/null
	SF_TEST_CACHE=1 SF_TEST_DWARF_WHOLE=1 STACKFOLD_CACHE_DIR=$T/c5 "$T/st" elf "$T/multi.stripped" "$first" >/dev/null
	one=$(stat -c %s "$(find "$T/c4" -name '*.idx')")
	whole=$(stat -c %s "$(find "$T/c5" -name '*.idx')")
	full=$(stat -c %s "$(find "$C3" -name '*.idx')")
	check_eq "dwarf_whole: one lookup stores every unit ($one bytes for one group)" \
		"$full" "$whole"

	# The file rewritten in place (cp over it, truncate) after its first
	# lookup: libdw reads the DWARF through a mapping, so a unit past the
	# new end of file would kill the run with SIGBUS, no output written,
	# and the same size rewritten would give the old unit table new bytes.
	# No more DWARF is read from it, said once, and its symbols still name.
	a0=0x$(nm multi | awk '$3 == "f0" {print $1}')
	a47=0x$(nm multi | awk '$3 == "f47" {print $1}')
	info=$(readelf -SW multi | sed 's/^ *\[ *[0-9]*\] *//' | awk '$1 == ".debug_info" { print $4 }')
	check "fixture: .debug_info found (offset 0x$info)" test -n "$info"
	for cmd in "truncate -s 4096 rw" "cp multi.stripped rw" \
		"dd if=/dev/zero of=rw bs=1 seek=$((0x${info:-0})) count=65536 conv=notrunc status=none"; do
		cp multi rw
		(cd "$T" && SF_TEST_CACHE=1 STACKFOLD_CACHE_DIR=$T/c7 "$T/st" elf "$T/rw" "$a0" \
			sh "$cmd" elf "$T/rw" "$a47" warnings) >rw.out 2>rw.err
		rc=$?
		check_eq "rewritten in place (${cmd%% *}): no crash" 0 "$rc"
		check_eq "rewritten in place (${cmd%% *}): both named" "f0 f47" \
			"$(awk '/^elf/ { for (i = 1; i <= NF; i++) if ($i ~ /^name=/) printf "%s%s", sep, substr($i, 6); sep = " " }' rw.out)"
		check_eq "rewritten in place (${cmd%% *}): said once" 1 \
			"$(grep -c 'rewritten while in use' rw.out)"
		rm -rf "$T/c7"
	done
else
	fail "build the session test helper"
fi

# Two programs made to share a build-id, their DWARF laid out differently.
# A build-id names one content, but their segments differ, so the second
# does not take the first's entry (its unit table walked in the second's
# DWARF as if it were its own): it is rebuilt from the second, whose own
# names it gives, not the first's.
{
	echo 'static inline __attribute__((always_inline)) int pad(int x) { return x * 3; }'
	echo 'int main(int c, char **v) { (void)v; return pad(c); }'
} >other_main.c
if gcc -O2 -g -Wl,--build-id=0x5eed5eed5eed5eed -o same1 main.c u*.c &&
	gcc -O2 -g -Wl,--build-id=0x5eed5eed5eed5eed -o same2 other_main.c u1*.c u2*.c; then
	C6=$T/c6
	probe_addrs same1 '^f0$' | sed 's/^/same1 /' >same1.in
	probe_addrs same2 '^(f1[0-9]|f2[0-9]|main)$' | sed 's/^/same2 /' >same2.in
	symb -a --cache-dir "$C6" <same1.in >same1.out 2>&1
	before=$(md5sum <"$(find "$C6" -name '*.idx')")
	symb -a --cache-dir "$C6" <same2.in >same2.out 2>same2.err
	rc=$?
	check "same build-id, other DWARF: no crash (exit $rc)" test "$rc" -lt 2
	check_eq "same build-id, other DWARF: one answer per address" \
		"$(wc -l <same2.in)" "$(grep -c '^0x' same2.out)"
	check_eq "same build-id, other layout: its own names, as without a cache" \
		"$(symb -a --no-cache <same2.in 2>/dev/null)" "$(grep -v '^stackfold' same2.out)"
	check "same build-id, other layout: the entry rebuilt" \
		test "$before" != "$(md5sum <"$(find "$C6" -name '*.idx')")"
else
	fail "build two programs with one build-id"
fi
