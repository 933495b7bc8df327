#!/usr/bin/env bash
# t50-symbolize: `stackfold symbolize` against addr2line on a fixture
# matrix built here from tests/fixtures/sym/{inl.c,cxx.cc}: DWARF, PIE and
# non-PIE, stripped, stripped + .gnu_debuglink (right and wrong CRC),
# build-id debug dir, zlib/zstd-compressed debug sections, DWARF 2-5, split
# DWARF (.dwo), a 32-bit program, C++ templates.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fixtures/sym/symlib.sh
. "$TOP/tests/fixtures/sym/symlib.sh"

CFUNCS='^(main|outer|helper)$'
XFUNCS='(^main$|sf::)'
cd "$T" || exit 2

cc_fixture() { gcc -O2 -g "$@" 2>>"$T/cc.err"; }
cc_fixture -o inl "$FIX/inl.c" || { fail "build inl.c" "$(cat "$T/cc.err")"; exit 0; }
cc_fixture -no-pie -o inl-nopie "$FIX/inl.c"
g++ -O2 -g -o cxx "$FIX/cxx.cc" || { fail "build cxx.cc"; exit 0; }
g++ -O2 -g -no-pie -o cxx-nopie "$FIX/cxx.cc"
probe_addrs inl "$CFUNCS" >inl.addrs
probe_addrs inl-nopie "$CFUNCS" >inl-nopie.addrs
probe_addrs cxx "$XFUNCS" >cxx.addrs
probe_addrs cxx-nopie "$XFUNCS" >cxx-nopie.addrs
check "probe addresses found" test "$(wc -l <inl.addrs)" -ge 9 -a "$(wc -l <cxx.addrs)" -ge 9

# --- with DWARF: byte-identical to addr2line -a -f -i -C (C), names (C++;
# addr2line 2.40 misnumbers DWARF 5 file entries of some inlined headers)
compare_a2l "C, PIE, DWARF: same as addr2line" inl inl inl.addrs
compare_a2l "C, non-PIE, DWARF: same as addr2line" inl-nopie inl-nopie inl-nopie.addrs
compare_a2l "C++ templates, PIE: same names as addr2line" cxx cxx cxx.addrs names
compare_a2l "C++ templates, non-PIE: same names as addr2line" cxx-nopie cxx-nopie cxx-nopie.addrs names

# The inline chain itself: leaf <- mid <- outer, innermost first.
chain=$(fixture_funcs inl '^outer$' | while read -r lo size _; do
	for ((a = 0x$lo; a < 0x$lo + 0x$size; a++)); do printf 'inl 0x%x\n' "$a"; done
done | symb --no-cache | paste - - | awk '{print $1}' | tr '\n' ' ')
case "$chain" in
*"leaf mid outer"*) pass "inline chain leaf, mid, outer (innermost first)" ;;
*) fail "inline chain leaf, mid, outer (innermost first)" "got: $chain" ;;
esac
got=$(fixture_funcs cxx 'sf::crunch<long>\\(int\\)$' | head -1 | while read -r lo size _; do
	for ((a = 0x$lo; a < 0x$lo + 0x$size; a++)); do printf 'cxx 0x%x\n' "$a"; done
done | symb --no-cache | grep -c '^sf::Acc<long>::add(long)$')
check "C++ inlined member sf::Acc<long>::add(long) demangled" test "$got" -gt 0
# A member of a class local to main (std::function's handler for a lambda)
# has only a plain DW_AT_name in DWARF: named by its symbol, as addr2line
# does, not as a bare "_M_manager".
g++ -O2 -g -o cxxfn "$FIX/cxxfn.cc" 2>>"$T/cc.err" || fail "build cxxfn.cc" "$(cat "$T/cc.err")"
for m in _M_manager _M_invoke; do
	read -r lo size _ < <(nm -S cxxfn | awk -v m="$m" '$4 ~ m { print $1, $2; exit }')
	want=$(nm -C cxxfn | awk -v a="$lo" '$1 == a { $1 = ""; $2 = ""; sub(/^  /, ""); print; exit }')
	addrs=$(printf 'cxxfn 0x%x\ncxxfn 0x%x\n' $((0x$lo)) $((0x$lo + 0x$size / 2)))
	symb --no-cache <<<"$addrs" >"$T/$m.out"	# name, file:line per frame
	check_eq "C++ local-class member $m: named by its symbol, like addr2line" "2 0" \
		"$(grep -cxF "$want" "$T/$m.out") $(grep -cxF "$m" "$T/$m.out")"
	check_eq "C++ local-class member $m: addr2line agrees" "$want" \
		"$(addr2line -f -C -e cxxfn "0x$lo" | head -1)"
done
raw=$(awk 'NR==1 {print "cxx", $1}' cxx.addrs | symb --no-cache --no-demangle | head -1)
case "$raw" in
_Z*) pass "--no-demangle keeps mangled names" ;;
*) fail "--no-demangle keeps mangled names" "got: $raw" ;;
esac

# --- stripped, no debug info anywhere: honest ?? for every address
strip -o inl-stripped inl
sed 's/^/inl-stripped /' inl.addrs | symb --no-cache >stripped.out
check_eq "stripped: every address is ?? / ??:0" "$(wc -l <inl.addrs)" \
	"$(paste - - <stripped.out | grep -c '^??	??:0$')"

# --- stripped + .gnu_debuglink next to the file (right CRC)
mkdir -p dl && objcopy --only-keep-debug inl dl/inl.debug
strip -o dl/inl inl && (cd dl && objcopy --add-gnu-debuglink=inl.debug inl)
compare_a2l "stripped + debuglink: same as addr2line on the original" dl/inl inl inl.addrs
# in .debug/ below the file
mkdir -p dl2/.debug && cp dl/inl dl2/inl && cp dl/inl.debug dl2/.debug/inl.debug
compare_a2l "stripped + debuglink in .debug/: same as addr2line" dl2/inl inl inl.addrs

# --- wrong CRC: the debug file is not used, and that is reported
mkdir -p badcrc && cp dl/inl badcrc/inl && cp dl/inl.debug badcrc/inl.debug
printf 'X' >>badcrc/inl.debug
sed 's/^/badcrc\/inl /' inl.addrs | symb --no-cache >badcrc.out 2>badcrc.err
check_eq "debuglink with wrong CRC: debug file not used (all ??)" \
	"$(wc -l <inl.addrs)" "$(paste - - <badcrc.out | grep -c '^??	??:0$')"
check_eq "debuglink with wrong CRC: reported once" 1 "$(grep -c 'wrong crc' badcrc.err)"

# --- a debuglink to another build's debug file, its CRC right (taken from
# that file by --add-gnu-debuglink): both have build-ids, not the same, so
# it is not used (the old build's DWARF would name this code)
mkdir -p otherbuild && cc_fixture -O0 -o otherbuild/old "$FIX/inl.c"
objcopy --only-keep-debug otherbuild/old otherbuild/inl.debug
strip -o otherbuild/inl inl && (cd otherbuild && objcopy --add-gnu-debuglink=inl.debug inl)
sed 's/^/otherbuild\/inl /' inl.addrs | symb --no-cache >otherbuild.out 2>otherbuild.err
check_eq "debuglink to another build (right CRC): not used (all ??)" \
	"$(wc -l <inl.addrs)" "$(paste - - <otherbuild.out | grep -c '^??	??:0$')"
check_eq "debuglink to another build: reported once" 1 "$(grep -c "another build's" otherbuild.err)"

# --- a debuglink to a file that is not there: the stripped file's own
# names (its symbol table), no error, no exit 2
mkdir -p nolink && strip --strip-debug -o nolink/inl inl &&
	(cd nolink && cp ../dl/inl.debug gone.debug && objcopy --add-gnu-debuglink=gone.debug inl && rm gone.debug)
sed 's/^/nolink\/inl /' inl.addrs | symb --no-cache >nolink.out 2>nolink.err
rc=$?
check_eq "debuglink to a missing file: exit 0, the symbol table's names" \
	"0 $(sed 's/^/inl /' inl.addrs | symb --no-cache --no-dwarf | awk 'NR % 2')" \
	"$rc $(awk 'NR % 2' nolink.out)"

# --- DWARF versions: each the same as addr2line
for v in 2 3 4; do
	cc_fixture -gdwarf-$v -o inl-d$v "$FIX/inl.c"
	probe_addrs inl-d$v "$CFUNCS" >inl-d$v.addrs
	compare_a2l "C, DWARF $v: same as addr2line" inl-d$v inl-d$v inl-d$v.addrs
done

# --- split DWARF (-gsplit-dwarf): the binary keeps a skeleton unit (ranges,
# line table); the scopes and inlined calls are in a .dwo file, found beside
# the binary or under the unit's DW_AT_comp_dir.  The same code as the
# unsplit build, at the same addresses: the same answers as addr2line gives
# for that build, cold and from the index cache.
for v in 4 5; do
	mkdir -p split$v
	(cd split$v && gcc -O2 -g -gdwarf-$v -gsplit-dwarf -o inl "$FIX/inl.c" 2>>"$T/cc.err")
	ref=inl-d$v
	[ $v = 5 ] && ref=inl
	probe_addrs split$v/inl "$CFUNCS" >split$v.addrs
	compare_a2l "split DWARF $v (.dwo): same as addr2line on the unsplit build" \
		split$v/inl "$ref" split$v.addrs
	sed "s|^|split$v/inl |" split$v.addrs | symb -a --cache-dir "$T/splitcache$v" >split$v.cold
	sed "s|^|split$v/inl |" split$v.addrs | symb -a --cache-dir "$T/splitcache$v" >split$v.warm
	check_diff "split DWARF $v: the same from the index cache" split$v.cold split$v.warm
done
# moved away with its binary: found beside it
mkdir -p splitmv && mv split5/inl split5/*.dwo splitmv/
compare_a2l "split DWARF: .dwo found beside the moved binary" splitmv/inl inl split5.addrs
# without its .dwo: one frame an address, the symbol's name, file:line from
# the skeleton's line table; one warning naming the .dwo
rm splitmv/*.dwo
sed 's|^|splitmv/inl |' split5.addrs | symb --no-cache >nodwo.out 2>nodwo.err
check_eq "split DWARF without the .dwo: one frame an address, named by its symbol, with file:line" \
	"$(wc -l <split5.addrs)" \
	"$(paste - - <nodwo.out | grep -cE '^(main|outer|helper)	/.*/inl\.c:[1-9][0-9]*$')"
check_eq "split DWARF without the .dwo: reported once, naming it" 1 \
	"$(grep -c "split DWARF '[^']*\.dwo' not found" nodwo.err)"
# Two units whose .dwo files have the same layout (the same DIE offsets,
# each .dwo's counting from 0), each inlining its own function: the right
# name in each, cold and from the cache (which stores both units read in
# one go).  Without the .dwo files: one warning, and nothing cached that
# would hide them once they are back.
mkdir -p two
(cd two && gcc -O2 -g -gsplit-dwarf -o two "$FIX/split_a.c" "$FIX/split_b.c" "$FIX/split_main.c" 2>>"$T/cc.err")
gcc -O2 -g -o two-ref "$FIX/split_a.c" "$FIX/split_b.c" "$FIX/split_main.c" 2>>"$T/cc.err"
fixture_funcs two/two '^f[ab]$' | while read -r lo size _; do
	for ((a = 0x$lo; a < 0x$lo + 0x$size; a++)); do printf '0x%x\n' "$a"; done
done >two.addrs
addr2line -a -f -i -C -e two-ref <two.addrs >two.ref
check "two split units: the reference inlines both (alpha, bravo)" \
	test "$(grep -c '^alpha$' two.ref)" -gt 0 -a "$(grep -c '^bravo$' two.ref)" -gt 0
for run in cold warm; do
	sed 's|^|two/two |' two.addrs | symb -a --cache-dir "$T/twocache" >two.$run
	check_diff "two split units with the same DIE offsets ($run): same as addr2line unsplit" two.ref two.$run
done
mkdir -p two/away && mv two/*.dwo two/away/
sed 's|^|two/two |' two.addrs | symb -a --cache-dir "$T/twocache2" >/dev/null 2>two.nodwo.err
check_eq "two split units, no .dwo: one warning" 1 "$(grep -c 'split DWARF' two.nodwo.err)"
mv two/away/*.dwo two/
sed 's|^|two/two |' two.addrs | symb -a --cache-dir "$T/twocache2" >two.back 2>two.back.err
check_diff "two split units: the .dwo files back, nothing cached hides them" two.ref two.back
# A split unit and a whole one in one binary (split objects linked with a
# library built without -gsplit-dwarf), forty inlined functions each: the
# .dwo's DIE offsets and the binary's overlap, and a name cached from one
# must not answer for the other.  One run reads the split unit, the next
# the whole one (and stores both, read again in one go), the last answers
# from that entry.  (Whether two offsets meet depends on the layout: this
# one need not make them meet, so it checks the rule more than the clash.)
gen_inl() {	# PREFIX: 40 inlined functions, each in its own caller PREFIXfN
	local i
	echo "static volatile int sink_$1;"
	for i in $(seq 1 40); do
		echo "static inline __attribute__((always_inline)) int ${1}in$i(int x) { sink_$1 = x; return x * $i + 1; }"
	done
	for i in $(seq 1 40); do
		echo "__attribute__((noinline)) int ${1}f$i(int n) { int s = 0; for (int i = 0; i < n; i++) s += ${1}in$i(i); return s; }"
	done
}
mkdir -p mix
gen_inl a >mix/a.c
gen_inl c >mix/c.c
printf 'int af1(int);\nint cf1(int);\nint main(int argc, char **argv) { (void)argv; return af1(argc) + cf1(argc); }\n' >mix/m.c
(cd mix && gcc -O2 -g -gsplit-dwarf -c a.c && gcc -O2 -g -c c.c m.c && gcc -o mix a.o c.o m.o &&
	gcc -O2 -g -o ref a.c c.c m.c) 2>>"$T/cc.err"
for u in a c; do
	fixture_funcs mix/mix "^${u}f[0-9]+\$" | while read -r lo size _; do
		for ((a = 0x$lo; a < 0x$lo + 0x$size; a += 2)); do printf '0x%x\n' "$a"; done
	done >mix-$u.addrs
	addr2line -a -f -i -C -e mix/ref <mix-$u.addrs >mix-$u.ref
done
for run in a c c; do
	sed 's|^|mix/mix |' mix-$run.addrs | symb -a --cache-dir "$T/mixcache" >mix.out
	check_diff "a split unit and a whole one, forty inlined functions each (unit $run): same as addr2line unsplit" mix-$run.ref mix.out
done

# --- a 32-bit (ELF32, i386) non-PIE program: the same as addr2line (8-digit
# addresses too), and a capture of it, its text mapped at its own address,
# folded by name.
if gcc -m32 -O1 -g -fno-omit-frame-pointer -ffreestanding -nostdlib -static \
	-o spin32 "$FIX/spin32.c" 2>>"$T/cc.err"; then
	probe_addrs spin32 '^(leaf|mid|outer|_start)$' >spin32.addrs
	sed 's|^|spin32 |' spin32.addrs | symb -a --no-cache >spin32.ours
	addr2line -a -f -i -C -e spin32 <spin32.addrs >spin32.a2l
	check_diff "32-bit ELF: same as addr2line" spin32.a2l spin32.ours
	fn() { nm spin32 | awk -v f="$1" '$3 == f { print "0x" $1 }'; }
	read -r off va <<<"$(readelf -lW spin32 | awk '$1 == "LOAD" && $(NF-1) ~ /E/ { print $2, $3; exit }')"
	{
		printf '# stackfold-capture 1\n#meta hz 99\n#maps 4194003\n'
		printf '%x-%x r-xp %08x 00:00 0 %s\n' $((va)) $((va + 4096)) $((off)) "$T/spin32"
		printf '#bid %x %s\n' $((va)) "$(readelf -n spin32 | awk '/Build ID/ { print $3 }')"
		printf '#main %x\n#endmaps\n#pid 4194003 app\n' $((va))
		printf '@stackfold[4194003, 4194003, app, \n'
		printf '    0x%x\n' $(($(fn leaf) + 5)) $(($(fn mid) + 8)) $(($(fn outer) + 8)) $(($(fn _start) + 8))
		printf ', ]: 5\n'
	} >spin32.raw
	check_eq "32-bit ELF: a capture of it, by name" "app;_start;outer;mid;leaf 5" \
		"$("$STACKFOLD" -q --no-cache -f folded spin32.raw)"
else
	fail "build tests/fixtures/sym/spin32.c with gcc -m32 -nostdlib" "$(tail -3 "$T/cc.err")"
fi

# --- --offsets on captures of PIE programs: each frame's offset in its
# function is the one eu-addr2line -S gives (symbol+offset, from the
# symbol table): a leaf's at its address, a caller's at its return
# address, though that is named at address - 1.  A record per address,
# the comm telling them apart; the first frame is the outermost function
# (inlined frames, _[i], carry no offset).  In cold.c, DWARF names the
# code of work.cold work; its offset is work.cold's, and so is its name.
# offsets_capture BIN: a capture of BIN's addresses in BIN.addrs.
offsets_capture() {
	local off va memsz base=0x555555554000 i=0 a
	read -r off va memsz <<<"$(readelf -lW "$1" | awk '$1 == "LOAD" && $(NF-1) ~ /E/ { print $2, $3, $6; exit }')"
	printf '# stackfold-capture 1\n#meta hz 99\n#maps 4194004\n'
	printf '%x-%x r-xp %08x 00:00 0 %s\n' $((base + va)) $(((base + va + memsz + 4095) / 4096 * 4096)) $((off)) "$T/$1"
	printf '#bid %x %s\n#main %x\n#endmaps\n#pid 4194004 app\n' $((base + va)) \
		"$(readelf -n "$1" | awk '/Build ID/ { print $3 }')" $((base + va))
	while read -r a; do
		i=$((i + 1))
		printf '@stackfold[4194004, 4194004, a%d, \n    0x%x\n, ]: 1\n' "$i" $((base + a))
		# a caller: a return address in the middle of the function
		# (the middle address is the second of each three)
		[ $((i % 3)) = 2 ] && printf '@stackfold[4194004, 4194004, r%d, \n    0x%x\n    0x%x\n, ]: 1\n' \
			"$i" $((base + a)) $((base + a))
	done <"$1.addrs"
}
cc_fixture -o cold "$FIX/cold.c"
check "cold.c: gcc made work.cold" test -n "$(nm cold | awk '$3 == "work.cold"')"
probe_addrs cold '^(main|work|work\.cold|slowlog)$' >cold.addrs
for bin in inl cold; do
	offsets_capture "$bin" >"off-$bin.raw"
	xargs eu-addr2line -S -e "$bin" <"$bin.addrs" |
		awk 'NR % 2 == 1 { if ($0 !~ /\+0x/) $0 = $0 "+0x0"; i++; print "a" i, $0; if (i % 3 == 2) print "r" i, $0 }' |
		LC_ALL=C sort >"off-$bin.ref"
	"$STACKFOLD" -q --no-cache --offsets "off-$bin.raw" | sed 's/ [0-9]*$//' |
		awk -F';' '{ print $1, $2 }' | LC_ALL=C sort >"off-$bin.ours"
	check "--offsets ($bin): $(wc -l <"off-$bin.ref") frames, offsets from eu-addr2line -S" \
		test "$(wc -l <"off-$bin.ref")" -ge 12
	check_diff "--offsets ($bin): the same symbols and offsets as eu-addr2line -S, leaves and return addresses" \
		"off-$bin.ref" "off-$bin.ours"
done
check "--offsets (cold): code in work.cold is work.cold+0xOFF" grep -q ' work\.cold+0x' off-cold.ours
check "without --offsets, the same code is work" grep -q '^a[0-9]*;work [0-9]' \
	<("$STACKFOLD" -q --no-cache off-cold.raw)

# --- build-id debug dir ($STACKFOLD_DEBUG_DIRS), no debuglink
cc_fixture -Wl,--build-id=sha1 -o bid "$FIX/inl.c"
bidhex=$(readelf -n bid | awk '/Build ID/ {print $3}')
mkdir -p "dbg/.build-id/${bidhex:0:2}"
objcopy --only-keep-debug bid "dbg/.build-id/${bidhex:0:2}/${bidhex:2}.debug"
strip -o bid-stripped bid
probe_addrs bid "$CFUNCS" >bid.addrs
STACKFOLD_DEBUG_DIRS=$T/nonexistent:$T/dbg compare_a2l \
	"stripped + build-id debug dir: same as addr2line on the original" \
	bid-stripped bid bid.addrs
sed 's/^/bid-stripped /' bid.addrs | symb --no-cache >bid-nodir.out
check_eq "build-id debug file not found without the dir: all ??" \
	"$(wc -l <bid.addrs)" "$(paste - - <bid-nodir.out | grep -c '^??	??:0$')"

# --- compressed debug sections (SHF_COMPRESSED, as gcc -gz= makes them)
for z in zlib zstd; do
	if objcopy --compress-debug-sections="$z" inl "inl-$z" 2>/dev/null &&
		readelf -SW "inl-$z" | grep -q '\.debug_info.* C '; then
		probe_addrs "inl-$z" "$CFUNCS" >"inl-$z.addrs"
		compare_a2l "compressed debug sections ($z): same as addr2line" \
			"inl-$z" inl "inl-$z.addrs"
	else
		skip "compressed debug sections ($z)" "objcopy here cannot compress with $z"
	fi
done
# the older GNU form: .zdebug_* sections (objcopy's zlib-gnu)
if objcopy --compress-debug-sections=zlib-gnu inl inl-zgnu 2>/dev/null &&
	readelf -SW inl-zgnu | grep -q '\.zdebug_info'; then
	probe_addrs inl-zgnu "$CFUNCS" >inl-zgnu.addrs
	compare_a2l "compressed debug sections (.zdebug_*, zlib-gnu): same as addr2line" \
		inl-zgnu inl inl-zgnu.addrs
else
	skip "compressed debug sections (.zdebug_*)" "objcopy here cannot make them"
fi
# zstd sections of several frames (a parallel compressor's, one frame per
# block) are decompressed whole, not as if the first frame's size were
# the whole section's (that leaves them compressed, every DWARF name and
# line lost)
if [ -f inl-zstd ] && python3 "$TOP/tests/tools/zstd_frames.py" inl-zstd inl-zstd2 >zf.out 2>&1; then
	check "zstd in two frames: sections rewritten" grep -q '^.debug_info: 2 frames' zf.out
	compare_a2l "compressed debug sections (zstd, two frames a section): same as addr2line" \
		inl-zstd2 inl inl-zstd.addrs
else
	fail "zstd in two frames: tests/tools/zstd_frames.py" "$(tail -3 zf.out 2>/dev/null)"
fi

# --- sizeless symbols: only their exact address, never the 4 KiB after
lo=$(nm inl | awk '$3 == "sizeless_label" {print $1}')
{
	printf 'inl 0x%s\n' "$lo"
	for off in 1 16 512 4000; do printf 'inl 0x%x\n' $((0x$lo + off)); done
} | symb --no-cache | paste - - >sizeless.out
check_eq "sizeless symbol matches its exact address" "sizeless_label" \
	"$(head -1 sizeless.out | cut -f1)"
check_eq "sizeless symbol never matches addresses after it" 4 \
	"$(grep -c '^??	??:0$' sizeless.out)"

# --- aliases at one address (symbol tables only): global > weak > local,
# then shortest, then lexicographic
gcc -O2 -g -o aliases "$FIX/aliases.c"
for f in impl impl2; do
	printf 'aliases 0x%s\n' "$(nm aliases | awk -v f="$f" '$3 == f {print $1}')"
done | symb --no-cache --no-dwarf | paste - - | cut -f1 | tr '\n' ' ' >aliases.out
check_eq "aliases: global over weak over local, shortest, lexicographic" \
	"zeta_public ga " "$(cat aliases.out)"

# --- a C function is named by its symbol, so that its name does not hang on
# the debug information: the same names with DWARF, with the symbol table
# only, with .dynsym only.  addr2line names the first two by DWARF
# (impl_sum, __GI___sf_write); a .cold part keeps its function's name.
cnames_at() {	# FILE NAME...: each NAME's address + 4, symbolized in FILE
	local f=$1 n
	shift
	for n in "$@"; do
		printf '%s 0x%x\n' "$f" $((0x$(nm cnames.so | awk -v n="$n" '$3 == n {print $1}') + 4))
	done | symb --no-cache | paste - - | cut -f1 | tr '\n' ' '
}
if gcc -O2 -g -shared -fPIC -o cnames.so "$FIX/cnames.c" 2>>"$T/cc.err"; then
	strip --strip-debug -o cnames-symtab.so cnames.so
	strip -o cnames-dynsym.so cnames.so
	check "cnames.so: gcc made a .cold part" sh -c "nm cnames.so | grep -q ' checked\.cold$'"
	for v in cnames cnames-symtab cnames-dynsym; do
		check_eq "C names from the symbol table, not DWARF ($v.so)" \
			"api_sum sf_write checked " "$(cnames_at $v.so impl_sum __GI___sf_write checked)"
	done
	check_eq "C names: addr2line names them by DWARF (control)" "impl_sum __GI___sf_write" \
		"$(for n in impl_sum __GI___sf_write; do
			addr2line -f -e cnames.so "0x$(nm cnames.so | awk -v n="$n" '$3 == n {print $1}')" | head -1
		done | tr '\n' ' ' | sed 's/ $//')"
	check_eq "a .cold part keeps its function's name, not checked.cold" "checked " \
		"$(cnames_at cnames.so checked.cold)"
else
	fail "build cnames.c" "$(tail -3 "$T/cc.err")"
fi
if g++ -O2 -g -o cxxcold "$FIX/cxxcold.cc" 2>>"$T/cc.err"; then
	a=$(nm cxxcold | awk '$3 == "main.cold" {print $1}')
	check "cxxcold: g++ made main.cold" test -n "$a"
	check_eq "C++: main.cold (a plain name) is main" "main" \
		"$(printf 'cxxcold 0x%x\n' $((0x${a:-0} + 2)) | symb --no-cache | head -1)"
else
	fail "build cxxcold.cc" "$(tail -3 "$T/cc.err")"
fi
# libc's exported functions: the same names with and without libc6-dbg
# (before, 1,541 of 2,131 differed: __GI___libc_write against write).
name="libc: every exported function named the same with and without libc6-dbg"
libc=$(ldd /bin/true | awk '/libc\.so\.6/ {print $3}')
bid=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
if [ ! -r "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ]; then
	skip "$name" "libc6-dbg not installed"
elif [ "$(id -u)" != 0 ]; then
	skip "$name" "hiding the debug files takes a mount namespace (root)"
else
	readelf -W --dyn-syms "$libc" | awk '$4 == "FUNC" && $3 > 4 && $7 != "UND" {print $2}' |
		sort -u | while read -r a; do printf '%s 0x%x\n' "$libc" $((0x$a + 2)); done >libc.addrs
	symb -a --no-cache <libc.addrs | names_only >libc-dbg.names
	unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$0" symbolize -a --no-cache' \
		"$STACKFOLD" <libc.addrs | names_only >libc-nodbg.names
	check "libc: more than 1,000 exported functions probed" test "$(wc -l <libc.addrs)" -gt 1000
	check "libc: libc6-dbg gives inline frames (it was read)" \
		test "$(wc -l <libc-dbg.names)" -gt "$(wc -l <libc-nodbg.names)"
	for v in dbg nodbg; do	# the function each address is in: its block's last name
		awk '/^0x/ { if (a != "") print a, n; a = $0; next } { n = $0 } END { print a, n }' \
			libc-$v.names >libc-$v.fn
	done
	check_diff "$name" libc-nodbg.fn libc-dbg.fn
fi

# --- malformed ELF files: one error naming the file, no crash, exit 2
: >empty.elf
head -c 64 inl >header-only.elf
head -c $(($(stat -c %s inl) / 2)) inl >truncated.elf
cp inl bad-shentsize.elf && printf '\x07\x00' | dd of=bad-shentsize.elf bs=1 seek=58 conv=notrunc 2>/dev/null
cp inl huge-shnum.elf && printf '\xff\xff' | dd of=huge-shnum.elf bs=1 seek=60 conv=notrunc 2>/dev/null
cp inl shoff-past-eof.elf && printf '\x00\x00\x00\x00\x00\x10\x00\x00' | dd of=shoff-past-eof.elf bs=1 seek=40 conv=notrunc 2>/dev/null
head -c 4096 /dev/urandom >random.elf
for f in empty header-only truncated bad-shentsize huge-shnum shoff-past-eof random; do
	printf '%s.elf 0x1139\n' "$f"
done | symb --no-cache >malformed.out 2>malformed.err
rc=$?
check_eq "malformed ELF files: exit status 2 or 0, never a crash" 1 \
	"$([ $rc -eq 0 ] || [ $rc -eq 2 ] && echo 1 || echo "rc=$rc")"
check_eq "malformed ELF files: one answer each" 7 "$(paste - - <malformed.out | wc -l)"
check "empty file: error names the file" grep -q "'empty.elf'" malformed.err

# --- bad input lines: line-numbered error, counted, the rest still printed
first=$(head -1 inl.addrs)
printf 'inl\n\ninl 0xzz\ninl %s\n' "$first" | symb --no-cache >badin.out 2>badin.err
rc=$?
check_eq "bad input lines: exit status 2" 2 "$rc"
check "bad input lines: line numbers in errors" grep -q 'line 1:' badin.err
check "bad input lines: line 3 reported" grep -q 'line 3:' badin.err
check_eq "bad input lines: good line still symbolized" \
	"$(addr2line -f -e inl "$first" | head -1)" "$(head -1 badin.out)"
check "bad input lines: counted" grep -q '2 bad lines' badin.err

# --- .gnu_debugdata (MiniDebugInfo): symbols of a fully stripped file
nm -D inl --format=posix --defined-only | awk '{print $1}' | sort >dynsyms
nm inl --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ {print $1}' | sort >funcsyms
comm -13 dynsyms funcsyms >keep
objcopy --only-keep-debug inl mini.full
objcopy -S --remove-section .comment --keep-symbols=keep mini.full mini
xz -f mini
strip --strip-all -o minidbg inl
objcopy --add-section .gnu_debugdata=mini.xz minidbg
sed 's/^/minidbg /' inl.addrs | symb --no-cache | paste - - | cut -f1 >mini.names
fixture_funcs inl "$CFUNCS" | awk '{print $3; print $3; print $3}' >mini.expect
check_diff ".gnu_debugdata (MiniDebugInfo): function names from its .symtab" \
	mini.expect mini.names

# --- debuginfod: served by a local HTTP server with the debuginfod layout
if command -v python3 >/dev/null; then
	mkdir -p "srv/buildid/$bidhex"
	cp "dbg/.build-id/${bidhex:0:2}/${bidhex:2}.debug" "srv/buildid/$bidhex/debuginfo"
	port=$((20000 + RANDOM % 20000))
	python3 -m http.server --bind 127.0.0.1 --directory srv "$port" >http.log 2>&1 &
	srv=$!
	for _ in $(seq 50); do grep -q Serving http.log && break; sleep 0.1; done
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$T/dcache \
		compare_a2l "debuginfod (DEBUGINFOD_URLS): same as addr2line on the original" \
		bid-stripped bid bid.addrs
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	start=$(date +%s)
	sed 's/^/bid-stripped /' bid.addrs | DEBUGINFOD_URLS=http://127.0.0.1:1 \
		DEBUGINFOD_CACHE_PATH=$T/dcache2 symb --no-cache >dnone.out 2>dnone.err
	check_eq "debuginfod unreachable: honest ??, quickly" "$(wc -l <bid.addrs)|1" \
		"$(paste - - <dnone.out | grep -c '^??	??:0$')|$([ $(($(date +%s) - start)) -lt 10 ] && echo 1)"
	check_eq "debuginfod unreachable: said once" 1 \
		"$(grep -c 'debuginfod (DEBUGINFOD_URLS=http://127.0.0.1:1): Connection refused' dnone.err)"
	# A server that accepts and never answers: one 5 s deadline, then the
	# process stops asking it (two stripped files, two build-ids).
	cc_fixture -O1 -Wl,--build-id=sha1 -o bid2 "$FIX/inl.c" && strip -o bid2-stripped bid2
	hang_server hang.port
	hang=$!
	for _ in $(seq 50); do [ -s hang.port ] && break; sleep 0.1; done
	start=$(date +%s)
	printf 'bid-stripped 0x1000\nbid2-stripped 0x1000\n' |
		DEBUGINFOD_URLS=http://127.0.0.1:$(cat hang.port) DEBUGINFOD_CACHE_PATH=$T/dcache3 \
		symb --no-cache >hang.out 2>&1
	took=$(($(date +%s) - start))
	kill "$hang" 2>/dev/null
	wait "$hang" 2>/dev/null
	check "debuginfod not answering: one deadline, not one per file (${took}s)" \
		test "$took" -ge 4 -a "$took" -le 9
else
	skip "debuginfod" "python3 (for a local HTTP server) not installed"
fi

# --- file offsets to ELF addresses (PT_LOAD), build-ids
if build_idxtest; then
	text_off() { readelf -lW "$1" | awk '$1 == "LOAD" && / R E / {print $2, $3; exit}'; }
	for f in inl inl-nopie; do
		read -r off vaddr <<<"$(text_off "$f")"
		check_eq "file offset -> vaddr ($f)" "$(printf '0x%x' $((vaddr + 0x10)))" \
			"$("$IDXT" off2vaddr "$f" $((off + 0x10)))"
	done
	check_eq "file offset past every segment -> none" none "$("$IDXT" off2vaddr inl 0x7fffffff)"
	check_eq "build-id read" "0 $bidhex" "$("$IDXT" buildid bid)"
	gcc -O2 -Wl,--build-id=none -o nobid "$FIX/inl.c"
	check_eq "no build-id: -ENOENT" "-2 " "$("$IDXT" buildid nobid)"
	check_eq "not ELF: -EINVAL" "-22 " "$("$IDXT" buildid "$FIX/inl.c")"
	check_eq "lookup reasons: no symbol table at all -> SYM_NO_SYMBOLS" "reason=4 nframes=0" \
		"$("$IDXT" lookup inl-stripped "$(head -1 inl.addrs)")"
	check_eq "lookup reasons: outside every function -> SYM_NOT_FOUND" "reason=5 nframes=0" \
		"$("$IDXT" lookup inl 0x10)"
	check_eq "caps: DWARF with inlines" "caps=1111" "$("$IDXT" open inl | grep caps=)"
	check_eq "caps: symbols only (MiniDebugInfo)" "caps=1000" "$("$IDXT" open minidbg | grep caps=)"
	check_eq "caps: stripped" "caps=0000" "$("$IDXT" open inl-stripped | grep caps=)"
	# libc's debug file (libc6-dbg: 2.3 MB of zlib DWARF, decompressed on
	# two threads): the worker thread must not malloc, or glibc makes it
	# an arena, a fresh heap (symbolizer/elf/elfcompress.c).  ASan's allocator
	# has no arenas to count.
	name="cold index of libc's compressed DWARF: no malloc arena made"
	libc_bid=$("$IDXT" buildid /lib/x86_64-linux-gnu/libc.so.6 | awk '{ print $2 }')
	libc_dbg=/usr/lib/debug/.build-id/${libc_bid:0:2}/${libc_bid:2}.debug
	if [ -n "${SANITIZE:-}" ]; then
		skip "$name" "AddressSanitizer's allocator"
	elif [ -z "$libc_bid" ] || [ ! -r "$libc_dbg" ]; then
		skip "$name" "libc6-dbg not installed"
	else
		check_eq "arena count sees a thread's malloc (control)" \
			"arenas_added=1" "$("$IDXT" arenas-control)"
		check "libc's .debug_info is compressed (the worker has work)" \
			sh -c "readelf -SW '$libc_dbg' | grep -q '\.debug_info .* C '"
		check_eq "$name" "arenas_added=0" \
			"$("$IDXT" arenas "$libc_dbg" | grep arenas_added=)"
	fi
	check_eq "demangle: C++ clone" "foo() [clone .cold]" "$("$IDXT" demangle _Z3foov.cold)"
	check_eq "demangle: C name untouched" "(raw)" "$("$IDXT" demangle main)"
	# Rust legacy: libiberty gives core::fmt::write; the __cxa_demangle
	# fallback must leave it mangled rather than keep the ::h<hash>.
	r=$("$IDXT" demangle _ZN4core3fmt5write17h0123456789abcdefE)
	case "$r" in
	core::fmt::write | "(raw)") pass "demangle: Rust legacy name, never with its hash ($r)" ;;
	*) fail "demangle: Rust legacy name, never with its hash" "got: $r" ;;
	esac
	lo=$(nm inl | awk '$3 == "outer" {print $1}')
	check_eq "lookup: SYM_OK, real function last, raw name kept" "reason=0|outer|outer" \
		"$("$IDXT" lookup inl "$lo" | awk -F'|' 'NR == 1 { r = $1; sub(/ .*/, "", r) } NR > 1 { n = $1; s = $2 } END { print r "|" n "|" s }')"
	lo=$(nm cxx | awk '$3 ~ /^_ZN2sf5labelB5cxx11Ei$/ {print $1}')
	check_eq "lookup: C++ name demangled, system_name raw" \
		"sf::label[abi:cxx11](int)|_ZN2sf5labelB5cxx11Ei" \
		"$("$IDXT" lookup cxx "$lo" | awk -F'|' 'NR > 1 { n = $1; s = $2 } END { print n "|" s }')"
else
	fail "build tests/unit/elfindex_test.c" "$(tail -5 "$T/idxt.err")"
fi

# --- an exec in a raw capture: one pid, two images (the pid field's high
# half), each with its own saved map.  Two non-PIE programs with the same
# code at the same addresses, different names: each image's samples are
# named from its own program, never from the map saved last.
for w in alpha beta; do
	cc -O1 -g -fno-omit-frame-pointer -fno-pie -no-pie -DWORK=${w}_work \
		-o "$T/exec_$w" "$TOP/tests/fixtures/live/execimg.c" 2>>"$T/img.err"
done
if [ -x "$T/exec_alpha" ] && [ -x "$T/exec_beta" ]; then
	w=$(nm "$T/exec_alpha" | awk '$3 == "alpha_work" { print $1 }')
	read -r off va memsz <<<"$(readelf -lW "$T/exec_alpha" | awk '$1 == "LOAD" && $(NF-1) ~ /E/ { print $2, $3, $6; exit }')"
	pid=4194002
	{
		for i in 1 2; do
			p=$(( (i << 32) | pid )) f=$T/exec_alpha
			[ "$i" = 2 ] && f=$T/exec_beta
			printf '#pid %d x\n#maps %d\n%x-%x r-xp %08x 00:00 0 %s\n#endmaps\n' "$p" "$p" \
				$((va & ~4095)) $(((va + memsz + 4095) & ~4095)) $((off & ~4095)) "$f"
		done
		printf '@stackfold_a[%d, %d, a, \n\t%x 0x%x ([unknown])\n, ]: 5\n' $(((1 << 32) | pid)) $pid $((0x$w + 4)) $((0x$w + 4))
		printf '@stackfold_a[%d, %d, b, \n\t%x 0x%x ([unknown])\n, ]: 3\n' $(((2 << 32) | pid)) $pid $((0x$w + 4)) $((0x$w + 4))
	} >"$T/img.raw"
	check_eq "exec: each image named from its own saved map" "a;alpha_work 5|b;beta_work 3" \
		"$("$STACKFOLD" -q "$T/img.raw" 2>&1 | paste -sd'|')"
	check_eq "exec: the pid field's image is not in the pid (--show-pid)" "a-$pid;alpha_work 5|b-$pid;beta_work 3" \
		"$("$STACKFOLD" -q --show-pid "$T/img.raw" 2>&1 | paste -sd'|')"
else
	fail "build tests/fixtures/live/execimg.c non-PIE" "$(tail -5 "$T/img.err")"
fi

# --- PLT stubs are named `name@plt`, as objdump -d (our oracle here,
# binutils' own synthesizer) and perf name them: .plt, .plt.got, and the
# IBT layout's .plt.sec; the lazy-binding PLT0 stays unnamed.  C++ names
# are demangled with the suffix kept.
plt_check() {	# NAME BIN: every stub, at its first and its last byte
	local name=$1 bin=$2 want got n
	want=$(objdump -d -C -j .plt -j .plt.got -j .plt.sec "$bin" |
		sed -n 's/^\([0-9a-f]*\) <\(.*@plt\)>:$/\1 \2/p')
	n=$(wc -l <<<"$want")
	got=$(while read -r a _; do
		printf '%s 0x%x\n%s 0x%x\n' "$bin" $((0x$a)) "$bin" $((0x$a + 7))
	done <<<"$want" | symb --no-cache | sed -n 'p;n' | paste -d' ' - - |
		paste -d' ' <(awk '{ print $1 }' <<<"$want") - | sed 's/ \(.*\) \1$/ \1/')
	check "$name: $n stubs found by objdump" test "$n" -ge 3
	check_eq "$name: every stub named name@plt at its first and last byte" \
		"$want" "$got"
	plt0=$(objdump -h "$bin" | awk '$2 == ".plt" { print $4 }')
	check_eq "$name: PLT0 (lazy binding) unnamed" "??" \
		"$(printf '%s 0x%s\n' "$bin" "$plt0" | symb --no-cache | head -1)"
}
printf '#include <stdlib.h>\n#include <string.h>\nint main(int c, char **v) { return atoi(v[c - 1]) + (int)strlen(v[0]) + abs(c); }\n' >plt.c
if gcc -O1 -o plt plt.c 2>>"$T/cc.err" &&
   gcc -O1 -fcf-protection=full -Wl,-z,ibtplt -o plt-ibt plt.c 2>>"$T/cc.err"; then
	plt_check "PLT, C" plt
	check "PLT, IBT: the program has .plt.sec" objdump -h plt-ibt -j .plt.sec
	plt_check "PLT, IBT (.plt.sec)" plt-ibt
else
	fail "build a PLT fixture" "$(tail -3 "$T/cc.err")"
fi
plt_check "PLT, C++ (demangled)" cxx
check "PLT, C++: a demangled name with the suffix" \
	grep -q '^std::.*(.*)@plt$' <(objdump -d -C -j .plt cxx | sed -n 's/^[0-9a-f]* <\(.*\)>:$/\1/p')

# --- an inline chain longer than the 32 frames a lookup holds keeps its
# innermost frames and, last, the function the code is in (with addr2line's
# line for it): the outermost frames are not cut, and the 32nd inlined
# helper is not shown as the function.
{
	echo 'volatile int sink;'
	echo 'static inline __attribute__((always_inline)) int f0(int x) { for (int i = 0; i < x; i++) sink += i; return sink; }'
	for i in $(seq 1 39); do
		echo "static inline __attribute__((always_inline)) int f$i(int x) { return f$((i - 1))(x + 1) + $i; }"
	done
	echo '__attribute__((noinline)) int outer_fn(int x) { return f39(x); }'
	echo 'int main(int c, char **v) { (void)v; return outer_fn(c * 100000); }'
} >deepinl.c
if gcc -O2 -g -o deepinl deepinl.c 2>>"$T/cc.err"; then
	lo=$(nm deepinl | awk '$3 == "outer_fn" { print $1 }')
	addr=""
	for ((a = 0x$lo; a < 0x$lo + 64; a++)); do
		if [ "$(addr2line -f -i -e deepinl "$(printf '0x%x' "$a")" | wc -l)" -ge 80 ]; then
			addr=$(printf '0x%x' "$a"); break
		fi
	done
	if [ -n "$addr" ]; then
		symb --no-cache <<<"deepinl $addr" | paste - - >deepinl.out
		check_eq "inline chain of 41: 32 frames, f0 first, outer_fn last" "32 f0 outer_fn" \
			"$(wc -l <deepinl.out) $(head -1 deepinl.out | cut -f1) $(tail -1 deepinl.out | cut -f1)"
		check_eq "inline chain of 41: outer_fn's line is addr2line's" \
			"$(addr2line -f -i -e deepinl "$addr" | tail -1 | sed 's/ (discriminator.*//')" \
			"$(tail -1 deepinl.out | cut -f2)"
	else
		fail "inline chain of 41: an address inside all 40 inlined calls" "none in outer_fn"
	fi
else
	fail "build an inline chain of 41" "$(tail -3 "$T/cc.err")"
fi

# --- a sized function with 20 sizeless @function labels inside it (an
# interpreter loop in assembly): an address between labels is the
# function's, past any number of labels (not only the first 16, then ??); a
# label's own address is the label's
{
	printf '.text\n.globl bigfn\n.type bigfn,@function\nbigfn:\n'
	for i in $(seq 0 19); do printf '.type lbl%d,@function\nlbl%d: nop; nop; nop\n' "$i" "$i"; done
	printf 'ret\n.size bigfn, .-bigfn\n.globl main\n.type main,@function\nmain: call bigfn; xor %%eax,%%eax; ret\n.size main, .-main\n'
	printf '.section .note.GNU-stack,"",@progbits\n'
} >labels.s
if gcc -o labels labels.s 2>>"$T/cc.err"; then
	b=$(nm labels | awk '$3 == "bigfn" { print $1 }')
	check_eq "20 sizeless labels in a sized function: between them, the function; on one, the label" \
		"bigfn lbl19" "$(printf 'labels 0x%x\nlabels 0x%x\n' $((0x$b + 0x3b)) $((0x$b + 0x39)) |
			symb --no-cache | sed -n '1p;3p' | paste -sd' ')"
else
	fail "build labels.s" "$(tail -3 "$T/cc.err")"
fi

# --- code removed by --gc-sections: its DWARF says address 0, where a
# PIE's first segment has the ELF header, _init, the PLT or _start.  Never
# named after the removed function (addr2line does), with or without
# -z separate-code.
{ echo 'volatile int sink;'; echo 'int unused_big(int x) {'
  for i in $(seq 300); do echo "  sink += x * $i; x ^= sink >> 3;"; done
  echo '  return x; }'; echo 'int main(void) { return sink; }'; } >gc.c
for z in separate-code noseparate-code; do
	if gcc -O1 -g -ffunction-sections -Wl,--gc-sections -Wl,-z,$z -o "gc_$z" gc.c 2>>"$T/cc.err"; then
		s=$(nm "gc_$z" | awk '$3 == "_start" { print $1 }')
		check_eq "--gc-sections, -z $z: _start is _start, not the removed function" "_start" \
			"$(printf 'gc_%s 0x%s\n' "$z" "$s" | symb --no-cache | head -1)"
	else
		fail "build gc.c -z $z" "$(tail -3 "$T/cc.err")"
	fi
done

# Its own read and write failures are said in one line, as the filter's
# (exit 4 and exit 2 do not come without a word)
echo "/bin/true 0x1000" | "$STACKFOLD" symbolize >/dev/full 2>"$T/full.err"
check_eq "symbolize > /dev/full: exit 4, one line" "4|stackfold symbolize: write '<stdout>': No space left on device" \
	"$?|$(cat "$T/full.err")"
"$STACKFOLD" symbolize </tmp >/dev/null 2>"$T/dir.err"
check_eq "symbolize < a directory: exit 2, one line" "2|stackfold symbolize: read '<stdin>': Is a directory" \
	"$?|$(cat "$T/dir.err")"
# A warning is said once: a cache dir that cannot be made is said once,
# not for every module (as bin/stackfold says it).
: >"$T/notadir"
printf 'inl 0x1000\ncxx 0x1000\ninl-nopie 0x1000\n' |
	"$STACKFOLD" symbolize --cache-dir "$T/notadir/c" >/dev/null 2>"$T/warnonce.err"
check_eq "symbolize: a cache dir that cannot be made, said once for three modules" 1 \
	"$(grep -c "cannot create cache dir '$T/notadir/c'" "$T/warnonce.err")"
