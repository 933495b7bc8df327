#!/usr/bin/env bash
# t74-hostile-bounds: work and memory that another local user's files may
# cost root's profiler, each file made by an unprivileged user created
# here.  A binary whose .gnu_debugdata (MiniDebugInfo) is an xz bomb is
# decoded no further than the decompression bounds allow (CPU, peak RSS),
# the refusal said and counted, and the session's budget holds for it too;
# libdw's own decompression when the unwinder opens .debug_frame is held
# to the same bounds (a 512 MiB section hidden, a small one charged);
# a pprof file of empty samples (16 MiB unzipped from 16 KB) ends in the
# documented out-of-memory exit (4) at a small RSS, not in gigabytes, in
# `stackfold` and `stackfold comments`; a pprof file of 40,000 mappings and
# 100,000 locations reads in well under a second of CPU; a raw
# `@stackfold_dn_X: -1` line is a malformed record, not 2^64 partial
# samples; a /tmp/perf-PID.map owned by another user than the process's
# (or root) is not read, said and counted.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fixtures/proc/build.sh
. "$TOP/tests/fixtures/proc/build.sh"	# sym_build, start_target, $T/st
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v useradd >/dev/null; then
	fail "hostile bounds: needs root, setpriv and useradd (to act as other users)"
	exit 0
fi
for t in xz python3 objcopy /usr/bin/time; do
	command -v "$t" >/dev/null || { fail "hostile bounds: $t missing"; exit 0; }
done
sym_build
ST=$T/st
chmod 755 "$T"
cd "$T" || exit 2

# Two throwaway users: the attacker, and the user of a profiled process.
ATK=sf74atk$$ VIC=sf74vic$$
users_gone() { userdel "$ATK" 2>/dev/null; userdel "$VIC" 2>/dev/null; sym_cleanup; }
trap users_gone EXIT
for u in "$ATK" "$VIC"; do
	useradd --system --no-create-home --shell /usr/sbin/nologin "$u" ||
		{ fail "useradd $u"; exit 0; }
done
ATK_UID=$(id -u "$ATK")
# as USER CMD...: run CMD as USER (its own group, no others)
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --clear-groups "$@"
}
mkdir -p atk && chown "$ATK:$ATK" atk && chmod 755 atk
A=$T/atk

# measure NAME CMD...: run CMD (60 s at most) with stdin from NAME.in if
# it exists; NAME.out, .err, .rc; NAME.rss (KB) and NAME.cpu (ms, user +
# system) from /usr/bin/time
measure() {
	local n=$1 in=/dev/null
	shift
	[ -f "$n.in" ] && in=$n.in
	timeout -k 2 60 /usr/bin/time -o "$n.time" -f '%M %U %S' "$@" <"$in" >"$n.out" 2>"$n.err"
	echo $? >"$n.rc"
	# (the last line: a failed command's status comes first)
	read -r rss u s < <(tail -n 1 "$n.time") || { rss=9999999 u=99 s=99; }
	echo "$rss" >"$n.rss"
	awk -v u="$u" -v s="$s" 'BEGIN { printf "%d\n", (u + s) * 1000 }' >"$n.cpu"
}
val() { cat "$T/$1.$2"; }
# Sanitizers cost memory of their own (shadow; a quarantine that keeps
# what realloc left, 420 MB for the gzip bomb below): RSS bounds are
# tripled under SANITIZE=1, still below the unbounded figures.
RSS_X=1
[ "${SANITIZE:-}" = 1 ] && RSS_X=3

# ---- .gnu_debugdata: an xz bomb -------------------------------------------
# 256 MiB of zeros in 38 KB of xz, as the attacker's binary's MiniDebugInfo
cat >"$A/hot.c" <<'EOF'
__attribute__((noinline)) int hot_fn(int x) { return x * 3 + 1; }
int main(int c, char **v) { (void)v; return hot_fn(c) == 7; }
EOF
# shellcheck disable=SC2016
as "$ATK" bash -c 'cd "$1" && gcc -O1 -o hot hot.c && strip -o hot.stripped hot &&
	head -c 256M /dev/zero | xz -T1 -0 >bomb.xz &&
	objcopy --add-section .gnu_debugdata=bomb.xz hot.stripped hot.bomb &&
	xz -T1 -c hot >mini.xz && objcopy --add-section .gnu_debugdata=mini.xz hot.stripped hot.mini' \
	_ "$A" || { fail "the attacker builds hot.bomb and hot.mini"; exit 0; }
addr=0x$(nm "$A/hot" | awk '$3 == "hot_fn" { print $1 }')
echo "$A/hot.bomb $addr" >xzbomb.in
measure xzbomb "$STACKFOLD" symbolize --no-cache
check_eq "xz bomb ($(stat -c %s "$A/bomb.xz") bytes of .gnu_debugdata): symbolize exit 0" 0 "$(val xzbomb rc)"
check "xz bomb: peak RSS under $((60 * RSS_X)) MB (was 286 MB)" test "$(val xzbomb rss)" -lt $((60000 * RSS_X))
check "xz bomb: under 1 CPU-s (was 2)" test "$(val xzbomb cpu)" -lt 1000
check "xz bomb: the refusal said" grep -q "gnu_debugdata of '$A/hot.bomb' decompresses to more than .* past the bound" xzbomb.err
out=$("$ST" elf "$A/hot.bomb" "$addr" refused)
check_eq "xz bomb: the refusal counted (sym_stats bounds_refused)" "refused files=0 bounds=1" \
	"$(grep '^refused' <<<"$out")"
# a real MiniDebugInfo (the binary's own symbol table, xz'd) is read...
echo "$A/hot.mini $addr" >mini.in
measure mini "$STACKFOLD" symbolize --no-cache
check "MiniDebugInfo within the bounds: hot_fn named from it" grep -qx hot_fn mini.out
# ... and counts against the session's budget of decompressed bytes
cp mini.in mini-held.in
measure mini-held env STACKFOLD_INFLATE_MAX=1000 "$STACKFOLD" symbolize --no-cache
check "MiniDebugInfo past STACKFOLD_INFLATE_MAX: not read, said" \
	bash -c "! grep -qx hot_fn '$T/mini-held.out' && grep -q 'would pass the 1000 decompressed bytes this run may hold' '$T/mini-held.err'"

# libdw's own decompression, as the --call-graph dwarf unwinder opens a
# .debug_frame: a program without .eh_frame whose compressed .debug_macro
# claims 512 MiB of zeros (tests/unit/libdw_bound_test.c)
# shellcheck disable=SC2016
as "$ATK" bash -c 'cd "$1" && gcc -O1 -g -fno-asynchronous-unwind-tables -o hotdf hot.c &&
	objcopy --compress-debug-sections=zlib hotdf hotdf.z && truncate -s 512M zeros &&
	objcopy --add-section .debug_macro=zeros --set-section-flags .debug_macro=readonly,debug hotdf hotdf.big &&
	objcopy --compress-debug-sections=zlib hotdf.big hotdf.bomb && rm zeros hotdf.big' _ "$A" ||
	{ fail "the attacker builds hotdf.bomb"; exit 0; }
# (built here, not by unit_test: against $SF_TEST_LIB too, as $T/st is)
# shellcheck disable=SC2086 # SYM_SANFLAGS, SF_LDLIBS: lists of flags
if cc -std=gnu11 -O1 -g -D_GNU_SOURCE $SYM_SANFLAGS -I"$TOP" -I"$TOP/collapse" -I"$TOP/symbolizer" \
	-o "$T/libdw_bound_test" "$TOP/tests/unit/libdw_bound_test.c" \
	"${SF_TEST_LIB:-$TOP/$SYM_OUT/libstackfold.a}" $SF_LDLIBS 2>"$T/libdw.build"; then
	LIBDW_BOMB=$A/hotdf.bomb LIBDW_OK=$A/hotdf.z "$T/libdw_bound_test" >"$T/libdw.out" 2>&1
	while read -r st line; do
		case $st in
		ok) pass "$line" ;;
		*) fail "${line%%:*}" "${line#*: }" ;;
		esac
	done <"$T/libdw.out"
	[ -s "$T/libdw.out" ] || fail "libdw_bound_test printed nothing"
else
	fail "libdw bomb: build tests/unit/libdw_bound_test.c (elfidx_bound_libdw)" "$(tail -n 3 "$T/libdw.build")"
fi

# ---- pprof: memory bounded by what is kept ---------------------------------
cat >"$A/genpb.py" <<'EOF'
# genpb.py KIND ARGS: a gzipped perftools.profiles.Profile on stdout.
#   empty BYTES            string table, one sample type, then empty
#                          `sample` fields (2 bytes each) up to BYTES
#   mappings NMAP NLOC     NMAP mappings, NLOC locations without lines
#                          (each named from its mapping), one sample
import gzip, sys
def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)
def fld(f, payload): return varint(f << 3 | 2) + varint(len(payload)) + payload
def num(f, n): return varint(f << 3) + varint(n)
out = bytearray(b''.join(fld(6, s) for s in (b'', b'samples', b'count', b'lib.so')))
out += fld(1, num(1, 1) + num(2, 2))
if sys.argv[1] == 'empty':
    out += b'\x12\x00' * ((int(sys.argv[2]) - len(out)) // 2)
else:
    nm, nl = int(sys.argv[2]), int(sys.argv[3])
    for i in range(1, nm + 1):
        out += fld(3, num(1, i) + num(2, i << 16) + num(3, (i + 1) << 16) + num(5, 3))
    for j in range(nl):      # the last mappings: a scan from the first is longest
        m = nm - j % 8
        out += fld(4, num(1, j + 1) + num(2, m) + num(3, (m << 16) + 16 + j % 4096))
    out += fld(2, fld(1, b''.join(varint(j) for j in range(1, nl + 1, nl // 50))) + fld(2, varint(1)))
sys.stdout.buffer.write(gzip.compress(bytes(out), 9))
EOF
# shellcheck disable=SC2016
as "$ATK" bash -c 'cd "$1" && python3 genpb.py empty $((16 << 20)) >empty.pb.gz &&
	python3 genpb.py mappings 40000 100000 >maps.pb.gz' _ "$A" ||
	{ fail "the attacker writes empty.pb.gz and maps.pb.gz"; exit 0; }
measure amp "$STACKFOLD" -q -f folded -o "$T/amp.folded" "$A/empty.pb.gz"
check_eq "pprof of empty samples ($(stat -c %s "$A/empty.pb.gz") bytes, 16 MiB unzipped): exit 4 (out of memory, documented)" \
	4 "$(val amp rc)"
check "pprof of empty samples: the bound said" grep -q "past the 512 MiB this reader may hold (STACKFOLD_PPROF_MAX)" amp.err
# a gzip bomb: past a quarter of the bound unzipped, refused at that
# shellcheck disable=SC2016
as "$ATK" bash -c 'head -c 200M /dev/zero | gzip -1 >"$1/zeros.pb.gz"' _ "$A"
measure zbomb "$STACKFOLD" -q -f folded -o "$T/zbomb.folded" "$A/zeros.pb.gz"
check "pprof gzip bomb (200 MiB of zeros): exit 4, said, peak RSS under $((200 * RSS_X)) MB" \
	bash -c "[ \"\$(cat '$T/zbomb.rc')\" = 4 ] && grep -q 'decompresses past 128 MiB, a quarter of the 512 MiB' '$T/zbomb.err' &&
		[ \"\$(cat '$T/zbomb.rss')\" -lt $((200000 * RSS_X)) ]"
check "pprof of empty samples: peak RSS under $((100 * RSS_X)) MB (was 1 GB)" test "$(val amp rss)" -lt $((100000 * RSS_X))
check "pprof of empty samples: nothing written" test ! -e amp.folded
measure ampc "$STACKFOLD" comments "$A/empty.pb.gz"
check "stackfold comments of it: exit 4, said, peak RSS under $((100 * RSS_X)) MB" \
	bash -c "[ \"\$(cat '$T/ampc.rc')\" = 4 ] && grep -q STACKFOLD_PPROF_MAX '$T/ampc.err' && [ \"\$(cat '$T/ampc.rss')\" -lt $((100000 * RSS_X)) ]"
# the bound is the memory, not the file: a small profile past a small bound
printf 'main;a;b 3\nmain;c 2\n' >small.folded
"$STACKFOLD" -q -f pprof -o small.pb.gz small.folded
measure smallcap env STACKFOLD_PPROF_MAX=1000 "$STACKFOLD" -f folded small.pb.gz
check "STACKFOLD_PPROF_MAX=1000: a small profile past it, exit 4 and said" \
	bash -c "[ \"\$(cat '$T/smallcap.rc')\" = 4 ] && grep -q 'the 1000 bytes this reader may hold' '$T/smallcap.err'"
measure small "$STACKFOLD" -f folded small.pb.gz
check_eq "the same profile within the default bound reads back" "main;a;b 3|main;c 2" "$(sort small.out | paste -sd'|')"

# ---- pprof: 40,000 mappings x 100,000 locations ----------------------------
measure maps "$STACKFOLD" -q -f folded -o "$T/maps.folded" "$A/maps.pb.gz"
check_eq "pprof of 40k mappings x 100k locations: exit 0" 0 "$(val maps rc)"
check "pprof of 40k mappings x 100k locations: under 1.5 CPU-s (was 4.3)" test "$(val maps cpu)" -lt 1500
check "pprof of 40k mappings x 100k locations: locations named from their mapping" \
	grep -Eq '^lib\.so\+0x[0-9a-f]+;lib\.so\+0x' maps.folded

# ---- a raw @stackfold_dn_X count of 2^64-1 ---------------------------------
F=$TOP/tests/fixtures/unwind
for v in -1 18446744073709551615 4294967296; do
	# shellcheck disable=SC2016
	sed "s|@FIXDIR@|$F/elf|g" "$F/lib.raw" | as "$ATK" awk -v v="$v" \
		'/^@stackfold_dn_/ && !done { $2 = v; done = 1 } { print }' >"dn$v.raw"
	"$STACKFOLD" -v -U -f folded -o - "dn$v.raw" >"dn$v.folded" 2>"dn$v.err"
	check "@stackfold_dn_a: $v: a malformed record, counted and said" grep -q '1 malformed stack records' "dn$v.err"
	check_eq "@stackfold_dn_a: $v: no absurd count of partial samples" "" \
		"$(grep -Eo '[0-9]{10,} samples partial' "dn$v.err")"
done

# ---- /tmp/perf-PID.map: root's or the process's user's ---------------------
# the victim's JIT process writes its own map: read
start_target "$T/jit1.out" setpriv --reuid="$VIC" --regid="$VIC" --clear-groups "$T/target" --jit || fail "perf map: the victim's target did not start"
J=$(word_addr jit "$T/jit1.out")
out=$("$ST" snap "$TPID" kill "$TPID" user "$TPID" "$J" refused warnings)
rm -f "/tmp/perf-$TPID.map"
check "perf map of the process's own user: named from it" grep -q 'name=sf_jit_compiled_fn ' <<<"$out"
# the same map owned by the attacker (who made /tmp/perf-PID.map first,
# so the process wrote into her file, which she then rewrites)
start_target "$T/jit2.out" setpriv --reuid="$VIC" --regid="$VIC" --clear-groups "$T/target" --jit || fail "perf map: the victim's target did not start"
J=$(word_addr jit "$T/jit2.out")
chown "$ATK" "/tmp/perf-$TPID.map"
as "$ATK" sed -i 's/sf_jit_compiled_fn/attacker_chosen_fn/' "/tmp/perf-$TPID.map"
out=$("$ST" snap "$TPID" kill "$TPID" user "$TPID" "$J" refused warnings)
rm -f "/tmp/perf-$TPID.map"
check_eq "perf map of another user: not read (no name the attacker chose)" "name=- module=[anon]" \
	"$(grep "^user $J " <<<"$out" | grep -o 'name=[^ ]* module=[^ ]*')"
check "perf map of another user: said" \
	grep -q "^warning: perf map '/tmp/perf-$TPID.map' of process $TPID belongs to uid $ATK_UID, neither root nor the process's user: not read" <<<"$out"
check_eq "perf map of another user: counted (files not read)" "refused files=1 bounds=0" "$(grep '^refused' <<<"$out")"
