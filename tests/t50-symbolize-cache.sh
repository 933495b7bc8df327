#!/usr/bin/env bash
# t50-symbolize-cache: the on-disk ELF index cache (symbolizer/elf/idxcache.c):
# hits, corrupt entries rebuilt with one warning, concurrent writers, LRU
# eviction under the byte cap, stale entries, an unusable cache dir, a
# cache dir on a full disk.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fixtures/sym/symlib.sh
. "$TOP/tests/fixtures/sym/symlib.sh"
cd "$T" || exit 2

if ! build_idxtest; then
	fail "build tests/unit/elfindex_test.c" "$(tail -5 "$T/idxt.err")"
	exit 0
fi
gcc -O2 -g -o inl "$FIX/inl.c" && g++ -O2 -g -o cxx "$FIX/cxx.cc" || {
	fail "build fixtures"
	exit 0
}
probe_addrs inl '^(main|outer|helper)$' | sed 's/^/inl /' >inl.in
symb --no-cache <inl.in >ref.out

C=$T/cache/sub
out=$("$IDXT" open inl "$C")
check_eq "first open builds the index" "cache=miss" "$(echo "$out" | grep cache=)"
check_eq "cache dir created with mode 700" 700 "$(stat -c %a "$C")"
check_eq "one entry per file" 1 "$(find "$C" -name '*.idx' | wc -l)"
out=$("$IDXT" open inl "$C")
check_eq "second open is a cache hit" "cache=hit" "$(echo "$out" | grep cache=)"
check_eq "cache hit has the same caps" "caps=1111" "$(echo "$out" | grep caps=)"
symb --cache-dir "$C" <inl.in >hit.out
check_diff "lookups from the cache equal a fresh build" ref.out hit.out

# --- symbol names are stored as in the table and demangled at lookup
probe_addrs cxx '::' | sed 's/^/cxx /' >cxx.in
DM=$T/cache-dm
symb --no-dwarf --cache-dir "$DM" <cxx.in >dm-cold.out
symb --no-dwarf --no-demangle --cache-dir "$DM" <cxx.in >dm-raw.out
symb --no-dwarf --cache-dir "$DM" <cxx.in >dm-warm.out
check "demangled names in the output" grep -q '::' dm-cold.out
check "raw names from the same entry" grep -q '^_Z' dm-raw.out
check_diff "demangled at lookup, warm: same names" dm-cold.out dm-warm.out
check "the entry holds raw names only" test "$(grep -ac '::' "$(find "$DM" -name '*.idx')")" = 0

# --- corrupt entries: detected, rebuilt, one warning, then valid again
entry=$(find "$C" -name '*.idx')
corrupt() {
	# an entry grows as runs read more of the DWARF: size it each time
	local size
	size=$(stat -c %s "$entry")
	case $1 in
	empty) : >"$entry" ;;
	truncated) truncate -s $((size / 2)) "$entry" ;;
	random) head -c "$size" /dev/urandom >"$entry" ;;
	checksum) printf '\xa5' | dd of="$entry" bs=1 seek=$((size - 9)) conv=notrunc 2>/dev/null ;;
	version) printf '\x63' | dd of="$entry" bs=1 seek=8 conv=notrunc 2>/dev/null ;;
	# a header field: the low byte of addr_base (after magic, version,
	# flags, length, crc, nsect, the 96-byte key and the 48-byte build-id),
	# which every line address is relative to (until format 11 the crc
	# did not cover the header: wrong names on every run, no warning)
	header) printf '\x40' | dd of="$entry" bs=1 seek=176 conv=notrunc 2>/dev/null ;;
	esac
}
for kind in empty truncated random checksum header version; do
	corrupt "$kind"
	out=$("$IDXT" open inl "$C")
	check_eq "corrupt entry ($kind): rebuilt" "cache=miss" "$(echo "$out" | grep cache=)"
	# another format version is no damage (an older or newer stackfold's
	# entry): replaced without a word
	want=1
	[ "$kind" = version ] && want=0
	check_eq "corrupt entry ($kind): $want warning" "$want" "$(echo "$out" | grep -c '^warning: cache entry')"
	out=$("$IDXT" open inl "$C")
	check_eq "corrupt entry ($kind): valid again, no warning" "cache=hit|0" \
		"$(echo "$out" | grep cache=)|$(echo "$out" | grep -c warning)"
done
corrupt checksum
symb --cache-dir "$C" <inl.in >corrupt.out 2>corrupt.err
check_diff "symbolize over a corrupt entry: same output" ref.out corrupt.out
check_eq "symbolize over a corrupt entry: one warning" 1 "$(grep -c 'checksum' corrupt.err)"

# --- concurrent writers of one entry (libc: a build slow enough to overlap)
LIBC=$(ldd "$IDXT" | awk '/libc.so.6/ {print $3}')
CC2=$T/cc2
for i in 1 2 3 4; do "$IDXT" open "$LIBC" "$CC2" >"w$i.out" 2>&1 & done
wait
check_eq "concurrent writers: all succeeded" 4 "$(cat w?.out | grep -c '^cache=')"
check_eq "concurrent writers: one valid entry" 1 "$(find "$CC2" -name '*.idx' | wc -l)"
check_eq "concurrent writers: no temp files left" 0 "$(find "$CC2" -name '.*tmp*' | wc -l)"
out=$("$IDXT" open "$LIBC" "$CC2")
check_eq "concurrent writers: entry is a clean hit" "cache=hit|0" \
	"$(echo "$out" | grep cache=)|$(echo "$out" | grep -c warning)"

# --- LRU eviction under the byte cap
gcc -O1 -g -Wl,--build-id=sha1 -o other "$FIX/inl.c"
isize() { "$IDXT" open "$1" "$T/sizes" >/dev/null && stat -c %s "$T/sizes/b-$("$IDXT" buildid "$1" | cut -d' ' -f2).idx"; }
si=$(isize inl) sc=$(isize cxx) so=$(isize other)
cap=$((si + so + 16))
L=$T/lru
"$IDXT" open inl "$L" >/dev/null
sleep 0.05
"$IDXT" open cxx "$L" >/dev/null
sleep 0.05
"$IDXT" open inl "$L" >/dev/null # use inl: cxx is now least recently used
sleep 0.05
"$IDXT" open other "$L" "$cap" >/dev/null
check "LRU: recently used entry kept" test -e "$L/b-$("$IDXT" buildid inl | cut -d' ' -f2).idx"
check "LRU: newest entry kept" test -e "$L/b-$("$IDXT" buildid other | cut -d' ' -f2).idx"
check "LRU: least recently used entry evicted" test ! -e "$L/b-$("$IDXT" buildid cxx | cut -d' ' -f2).idx"
check "LRU: directory under the cap ($cap bytes, cxx alone is $sc)" \
	test "$(cat "$L"/*.idx | wc -c)" -le "$cap"
# files that are not stackfold's are left alone: an old foreign *.idx is
# not evicted, a foreign .*.tmp.* not removed;
# a stale temporary file of ours is removed
truncate -s 1M "$L/notes.idx"
: >"$L/.other.tmp.file"
: >"$L/.b-0123abcd.tmp.AbC123"
touch -d 2020-01-01 "$L/notes.idx" "$L/.other.tmp.file" "$L/.b-0123abcd.tmp.AbC123"
"$IDXT" open cxx "$L" "$cap" >/dev/null
check_eq "eviction: a foreign *.idx kept, a foreign .*.tmp.* kept, a stale one of ours removed" \
	"notes.idx=yes .other.tmp.file=yes .b-0123abcd.tmp.AbC123=no" \
	"$(for f in notes.idx .other.tmp.file .b-0123abcd.tmp.AbC123; do
		if [ -e "$L/$f" ]; then printf '%s=yes ' "$f"; else printf '%s=no ' "$f"; fi
	done | sed 's/ $//')"

# --- stale entry: a file without build-id replaced at the same path
gcc -O2 -g -Wl,--build-id=none -o nobid "$FIX/inl.c"
S=$T/stale
out=$("$IDXT" open nobid "$S")
check_eq "no build-id: keyed by the inode (f-DEV-INO-HASH of size, mtime, ctime)" 1 "$(find "$S" -name 'f-*.idx' | wc -l)"
sleep 0.05
gcc -O0 -g -Wl,--build-id=none -o nobid.new "$FIX/inl.c" && mv nobid.new nobid
out=$("$IDXT" open nobid "$S")
check_eq "replaced file: not served from the old entry" "cache=miss" "$(echo "$out" | grep cache=)"
addr=$(nm nobid | awk '$3 == "helper" {print $1}')
check_eq "replaced file: names from the new file" helper \
	"$(echo "nobid 0x$addr" | symb --cache-dir "$S" | head -1)"

# --- unusable cache dir: one warning, symbolization still right
: >notadir
symb --cache-dir "$T/notadir/x" <inl.in >nodir.out 2>nodir.err
check_diff "unusable cache dir: same output" ref.out nodir.out
check "unusable cache dir: warned" grep -q 'not cached' nodir.err
# --- C25: a cache dir on a full disk (a 16 KiB tmpfs; libc's entry does not
# fit, with libc6-dbg its lazily read units neither): the same output, one
# warning (not one more when the units read are stored at exit), no
# temporary file left
mkdir -p full
if mount -t tmpfs -o size=16k tmpfs full; then
	LIBC=$(ldd "$IDXT" | awk '/libc.so.6/ {print $3}')
	{ nm -D --defined-only "$LIBC" | awk -v l="$LIBC" '$2 == "T" { print l, "0x" $1 }' |
		head -n 300; cat inl.in; } >full.in
	symb --no-cache <full.in >full.ref
	symb --cache-dir full/c <full.in >full.out 2>full.err
	check_diff "cache on a full disk: same output" full.ref full.out
	check_eq "cache on a full disk: one warning" "1 1" \
		"$(grep -c . full.err) $(grep -c 'No space left on device; index not cached' full.err)"
	check_eq "cache on a full disk: no temporary file left" "" "$(find full -name '.*tmp*')"
	umount full
else
	fail "cache on a full disk: mount a 16 KiB tmpfs"
fi

# --- default cache dir, and --no-cache
(
	unset STACKFOLD_CACHE_DIR XDG_CACHE_HOME
	export HOME=$T/home
	symb --no-cache <inl.in >/dev/null
	check "--no-cache creates no cache dir" test ! -e "$HOME/.cache/stackfold"
	symb <inl.in >/dev/null
	check "default cache dir is ~/.cache/stackfold" test -n "$(find "$HOME/.cache/stackfold" -name '*.idx')"
	XDG_CACHE_HOME=$T/xdg symb <inl.in >/dev/null
	check "\$XDG_CACHE_HOME/stackfold is used when set" test -n "$(find "$T/xdg/stackfold" -name '*.idx')"
	# a relative one is invalid (XDG spec): ignored, ~/.cache is used
	(cd "$T" && XDG_CACHE_HOME=relxdg symb <inl.in >/dev/null)
	check "a relative \$XDG_CACHE_HOME is ignored (no cache under the current directory)" \
		test ! -e "$T/relxdg"
)

# --- a debug file installed after the index was cached: rebuilt with it
gcc -O2 -g -Wl,--build-id=sha1 -o late "$FIX/inl.c"
bid=$("$IDXT" buildid late | cut -d' ' -f2)
strip -o late-stripped late
D=$T/latecache
addr=$(nm late | awk '$3 == "outer" {print $1}')
before=$(echo "late-stripped 0x$addr" | symb --cache-dir "$D" | head -1)
mkdir -p "$T/latedbg/.build-id/${bid:0:2}"
objcopy --only-keep-debug late "$T/latedbg/.build-id/${bid:0:2}/${bid:2}.debug"
after=$(echo "late-stripped 0x$addr" | STACKFOLD_DEBUG_DIRS=$T/latedbg symb --cache-dir "$D" | tail -1)
check_eq "debug file installed later: cached symbol-less index rebuilt" \
	"??|$(addr2line -f -i -e late "0x$addr" | tail -1)" "$before|$after"
out=$(STACKFOLD_DEBUG_DIRS=$T/latedbg "$IDXT" open late-stripped "$D")
check_eq "debug file installed later: then a plain hit" "cache=hit" "$(echo "$out" | grep cache=)"

# --- copies sharing a build-id: a stripped one cached first must not hide
# the unstripped one's symbols and DWARF
P=$T/poorer
strip -o late-stripped2 late
echo "late-stripped2 0x$addr" | symb --cache-dir "$P" >/dev/null
check_eq "same build-id, richer copy: rebuilt with its DWARF" \
	"$(addr2line -f -i -e late "0x$addr" | tail -1)" \
	"$(echo "late 0x$addr" | symb --cache-dir "$P" | tail -1)"
out=$("$IDXT" open late "$P")
check_eq "same build-id, richer copy: then a plain hit" "cache=hit" "$(echo "$out" | grep cache=)"

# --- names only (folded, top, SVG): no line tables.  Such a report does not
# decode .debug_line and caches its index apart (KEY-n); --lines and pprof
# need an index with lines, and a names-only report then uses that one.
lo=$(fixture_funcs inl '^outer$' | awk '{ print $1 }')
inl_at=
for k in $(seq 0 4 64); do
	a=$(printf '0x%x' $((0x$lo + k)))
	if echo "inl $a" | symb --no-cache | head -1 | grep -qx leaf; then
		inl_at=$a
		break
	fi
done
if [ -z "$inl_at" ]; then
	fail "names only: no address of outer has leaf inlined"
else
	mlo=$(fixture_funcs inl '^main$' | awk '{ print $1 }')
	raw_capture inl "$inl_at" $((0x$mlo + 8)) >names.raw
	N=$T/cache-names
	"$STACKFOLD" -q --cache-dir "$N" -f folded names.raw >names-cold.folded 2>names.err
	check_eq "names only: inline frames (_[i]) without line tables" "app;main;outer;mid_[i];leaf_[i] 5" \
		"$(cat names-cold.folded)"
	check_eq "names only: its index cached apart (KEY-n)" "b-$(readelf -n inl | awk '/Build ID/ { print $3 }')-n.idx" \
		"$(cd "$N" && ls)"
	out=$("$IDXT" open-names inl "$N")
	check_eq "names only: the entry says no files, no lines (caps)" "cache=hit caps=1001" \
		"$(echo "$out" | grep -E '^(cache|caps)=' | paste -sd' ')"
	cp -r "$N" "$N-copy"	# the helper stores what it builds
	out=$("$IDXT" open inl "$N-copy")
	check_eq "names only: a report with lines does not take that entry" "cache=miss caps=1111" \
		"$(echo "$out" | grep -E '^(cache|caps)=' | paste -sd' ')"
	"$STACKFOLD" -q --cache-dir "$N" -f folded --lines names.raw >names-lines.folded 2>>names.err
	check "names only: --lines then has the lines (a new entry)" grep -q ';leaf:inl\.c:8_\[i\] 5$' names-lines.folded
	check_eq "names only: beside the KEY-n one" 2 "$(find "$N" -name '*.idx' | wc -l)"
	rm -f "$N"/*-n.idx
	"$STACKFOLD" -q --cache-dir "$N" -f folded names.raw >names-warm.folded 2>>names.err
	check_diff "names only: the entry with lines answers too" names-cold.folded names-warm.folded
	check_eq "names only: and no KEY-n entry is made beside it" 0 "$(find "$N" -name '*-n.idx' | wc -l)"
	# a file without DWARF has no lines to leave out: one entry for all
	strip -g -o inl-nodw inl
	raw_capture inl-nodw "$inl_at" $((0x$mlo + 8)) >nodw.raw
	"$STACKFOLD" -q --cache-dir "$T/cache-nodw" -f folded nodw.raw >/dev/null 2>>names.err
	check_eq "names only: no DWARF, one plain entry (no KEY-n)" "b-$(readelf -n inl | awk '/Build ID/ { print $3 }').idx" \
		"$(cd "$T/cache-nodw" && ls)"
	check_eq "names only: no warnings" "" "$(cat names.err)"
fi

# --- an entry built from a poorer copy of a file is not kept for a richer one
printf 'static int __attribute__((noinline)) inner(int x) { return x * 3 + 1; }\nint main(int c, char **v) { (void)v; return inner(c); }\n' >dl.c
gcc -O1 -g -o dl dl.c
a=$(nm dl | awk '$3 == "inner" { print $1 }')
objcopy --only-keep-debug dl dl.dbg && objcopy --strip-all --add-gnu-debuglink=dl.dbg dl
mkdir -p away && mv dl.dbg away/
first=$(echo "$T/dl 0x$a" | symb --cache-dir "$T/c-dl" 2>/dev/null | head -1)
mv away/dl.dbg .	# mv keeps its old mtime: its ctime is new
check_eq "debuglink file put there after the entry was built: used (was ?? until rebuilt by hand)" \
	"?? inner" "$first $(echo "$T/dl 0x$a" | symb --cache-dir "$T/c-dl" 2>/dev/null | head -1)"
# a stripped copy indexed first (dynsym only), then the unstripped file
# with the same build-id: its .symtab names the static function
printf 'static int __attribute__((noinline)) hidden_helper(int x) { return x * 7; }\nint api(int x) { return hidden_helper(x) + 1; }\n' >lib.c
gcc -O2 -fPIC -shared -o libfull.so lib.c && cp libfull.so libstripped.so && strip libstripped.so
h=$(nm libfull.so | awk '$3 == "hidden_helper" { print $1 }')
echo "$T/libstripped.so 0x$h" | symb --cache-dir "$T/c-strip" >/dev/null 2>&1
check_eq "stripped copy first, then the unstripped file: its .symtab is read" "hidden_helper" \
	"$(echo "$T/libfull.so 0x$h" | symb --cache-dir "$T/c-strip" 2>/dev/null | head -1)"
check_eq "... and the stripped copy then gets the richer entry" "hidden_helper" \
	"$(echo "$T/libstripped.so 0x$h" | symb --cache-dir "$T/c-strip" 2>/dev/null | head -1)"
# a relative module path: the debug roots take its absolute directory
mkdir -p rel droot"$T"/rel && cp dl rel/ && cp dl.dbg droot"$T"/rel/
check_eq "relative module path: debuglink found under a debug root" "inner" \
	"$(echo "rel/dl 0x$a" | STACKFOLD_DEBUG_DIRS=$T/droot symb --no-cache 2>/dev/null | head -1)"
# no build-id: a file rewritten in place with its old size and mtime
# (cat > and touch -r) is another file: the key has its ctime
for f in alpha bravo; do
	printf 'int __attribute__((noinline)) %s_func(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return %s_func(c); }\n' $f $f >$f.c
	gcc -O1 -Wl,--build-id=none -o nobid_$f $f.c
done
fa=$(nm nobid_alpha | awk '$3 == "alpha_func" { print $1 }')
if [ "$fa" = "$(nm nobid_bravo | awk '$3 == "bravo_func" { print $1 }')" ] &&
   [ "$(stat -c %s nobid_alpha)" = "$(stat -c %s nobid_bravo)" ]; then
	cp nobid_alpha prog && touch -r nobid_alpha prog
	one=$(echo "$T/prog 0x$fa" | symb --cache-dir "$T/c-nobid" 2>/dev/null | head -1)
	sleep 0.02	# a ctime in another tick
	cat nobid_bravo >prog && touch -r nobid_alpha prog
	check_eq "no build-id, rewritten in place with size and mtime kept: new names" "alpha_func bravo_func" \
		"$one $(echo "$T/prog 0x$fa" | symb --cache-dir "$T/c-nobid" 2>/dev/null | head -1)"
else
	fail "no build-id fixtures: same size and address" "$(ls -l nobid_*)"
fi

# --- a file with the build-id of another but laid out otherwise: its
# separate debug file (its text segment has no bytes in the file), or a
# copy patchelf moved the segments of.  An entry built from one is not used
# for the other (the debug file's program headers, once cached, would
# leave every frame of the binary as inl+0x...).
objcopy --only-keep-debug inl inl.debug
capture_head "$T/inl" 4191 app >lay.raw
om=$(nm inl | awk '$3 == "outer" { print $1 }')
printf '@stackfold[4191, 4191, app, \n        0x%x\n, ]: 5\n' $((CAP_BASE + 0x$om + 1)) >>lay.raw
want=$("$STACKFOLD" -q --no-cache -f folded lay.raw 2>&1)
echo "$T/inl.debug 0x$om" | symb --cache-dir "$T/c-lay" >/dev/null 2>&1
check "the binary's frame named (no cache)" grep -q '^app;outer' <<<"$want"
check_eq "an entry built from the debug file (same build-id) is not used for the binary" \
	"$want" "$("$STACKFOLD" -q --cache-dir "$T/c-lay" -f folded lay.raw 2>&1)"
