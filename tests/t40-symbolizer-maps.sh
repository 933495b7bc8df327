#!/usr/bin/env bash
# t40-symbolizer-maps.sh - /proc/PID/maps parser, JIT perf maps and
# kallsyms, on fixture texts (tests/fixtures/proc/) and the live kernel.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fixtures/proc/build.sh
. "$TOP/tests/fixtures/proc/build.sh"
FX=$TOP/tests/fixtures/proc
sym_build

# --- maps parser --------------------------------------------------------
out=$("$T/st" maps "$FX/maps-basic.txt")
check_eq "maps: keeps only the 10 exec lines of 13" \
	"lines=13 kept=10 bad=0" "$(echo "$out" | grep -o 'lines=[0-9]* kept=[0-9]* bad=[0-9]*')"
check_eq "maps: kinds in order" \
	"file heap anon anon-named file file pseudo stack vdso vsyscall" \
	"$(echo "$out" | grep -o 'kind=[a-z-]*' | cut -d= -f2 | xargs)"
check "maps: ' (deleted)' stripped and recorded" \
	grep -q 'ino=123456789 kind=file deleted=1 path=/tmp/gone.so$' <<<"$out"
check "maps: path with spaces kept whole" \
	grep -q 'dev=fd:1 ino=2050 kind=file deleted=0 path=/opt/my app/lib with spaces.so$' <<<"$out"
check "maps: offset and device parsed" \
	grep -q '^KEPT 55d0c0a02000-55d0c0a08000 off=2000 dev=fd:1 ino=1311 ' <<<"$out"

out=$("$T/st" maps "$FX/maps-malformed.txt")
check_eq "maps: 14 malformed lines counted, the good one after them kept" \
	"lines=15 kept=1 bad=14 first_bad=1" \
	"$(echo "$out" | grep -o 'lines=[0-9]* kept=[0-9]* bad=[0-9]* first_bad=[0-9]*')"
check "maps: entry after garbage intact" grep -q 'path=/ok/after/garbage.so$' <<<"$out"

# text remapped onto anonymous (huge) pages continues the file mapping it
# follows; unrelated anonymous memory stays anonymous
out=$("$T/st" maps "$FX/maps-remapped.txt")
check_eq "maps: remapped text takes the file, offset and inode of the mapping before it" \
	"555555555000-555555600000 off=1000 dev=fd:1 ino=1311 kind=file deleted=0 remapped=1 path=/usr/bin/app|7f0fff001000-7f0fff002000 off=0 dev=0:0 ino=0 kind=anon deleted=0 path=|7f1000002000-7f1000200000 off=2000 dev=fd:1 ino=77 kind=file deleted=0 remapped=1 path=/lib/libx.so" \
	"$(grep -E '^KEPT (5555|7f0fff0|7f10000020)' <<<"$out" | cut -d' ' -f2- | paste -sd'|')"

check_eq "maps: anonymous exec memory right after a library's writable data stays anonymous (a JIT's, not the library's text)" \
	"7f2000002000-7f2000003000 off=0 dev=0:0 ino=0 kind=anon deleted=0 path=" \
	"$(grep '^KEPT 7f2000002000' <<<"$out" | cut -d' ' -f2-)"

# a remap guess whose line would be too long for a path of 4,300 bytes:
# the region stays anonymous and the lines after it are still read
long=/$(printf 'd%.0s' $(seq 4300))
printf '%s\n' "555555554000-555555555000 r--p 00000000 fd:01 1311 $long" \
	"555555555000-555555556000 r-xp 00000000 00:00 0 " \
	"7f1000001000-7f1000002000 r-xp 00001000 fd:01 77 /lib/libx.so" >"$T/longpath.maps"
out=$("$T/st" maps "$T/longpath.maps")
check_eq "maps: a remap guess with a too-long path stays anonymous, the next line kept" \
	"rc=0 lines=3 kept=2|555555555000-555555556000 off=0 dev=0:0 ino=0 kind=anon deleted=0 path=" \
	"$(echo "$out" | grep -o 'rc=[0-9-]* lines=[0-9]* kept=[0-9]*')|$(grep '^KEPT 555555555000' <<<"$out" | cut -d' ' -f2-)"

# saved maps of text taken as remapped keep the mark (#remap): an address
# the file cannot name is still asked of the JIT's perf map after a reload
# (a pid above the default pid_max's range of use: no process of it here)
JP=4194012
printf '%s\n' "555555554000-555555555000 r--p 00000000 00:00 0 $T/target" \
	"555555555000-555555600000 r-xp 00001000 00:00 0 $T/target" >"$T/remap-nomark.maps"
{ cat "$T/remap-nomark.maps"; echo "#remap 555555555000"; } >"$T/remap.maps"
echo '5555555f0000 100 jitted_fn' >"/tmp/perf-$JP.map"
ta=$(printf '0x%x' $((0x555555554000 + 0x$(nm "$T/target" | awk '$3 == "sf_target_alpha" { print $1 }'))))
out=$("$T/st" load "$JP" "$T/remap.maps" user "$JP" 0x5555555f0010 user "$JP" "$ta" write "$JP" "$T/remap-again.maps")
check "saved maps: #remap keeps the perf map's name for what the file cannot name" \
	grep -q 'reason=ok name=jitted_fn' <<<"$out"
# where the perf map has code, the guess was wrong: the region is the
# JIT's, all of it, so that one region is one module (one pprof mapping)
check_eq "saved maps: a remap guess where the perf map has code is all the JIT's" \
	"user $ta reason=anonymous memory name=- module=/tmp/perf-$JP.map" \
	"$(grep "^user $ta " <<<"$out" | sed 's/ main=.*//')"
check "saved maps: #remap written again" grep -qx '#remap 555555555000' "$T/remap-again.maps"
out=$("$T/st" load "$JP" "$T/remap-nomark.maps" user "$JP" 0x5555555f0010)
check "saved maps: without #remap, the file's (a file mapping like any other)" \
	bash -c "! grep -q 'name=jitted_fn' <<<'$out'"
rm -f "/tmp/perf-$JP.map"

# shared anonymous memory has a path in maps (/dev/zero, /anon_hugepage,
# /SYSV<key>, deleted): anonymous, never opened; a memfd stays a file (it
# may be an ELF image) that may also hold JIT code.  Both are asked of the
# JIT's perf map (.NET's code is in a memfd, a JIT may use shared memory).
printf '%s\n' "7f3000000000-7f3000001000 r-xs 00000000 00:01 1234 /dev/zero (deleted)" \
	"7f3000001000-7f3000002000 r-xs 00000000 00:0f 1235 /anon_hugepage (deleted)" \
	"7f3000002000-7f3000003000 r-xs 00000000 00:01 32768 /SYSV0000abcd (deleted)" \
	"7f3000003000-7f3000004000 r-xs 00000000 00:01 1236 /memfd:doublemapper (deleted)" \
	"7f3000004000-7f3000005000 r-xp 00000000 fd:01 1237 /dev/zero" >"$T/shm.maps"
out=$("$T/st" maps "$T/shm.maps")
check_eq "maps: /dev/zero, /anon_hugepage, /SYSV (deleted) are shared anonymous memory; a memfd a file; the device file a file" \
	"anon-shm anon-shm anon-shm file memfd=1 file" \
	"$(grep '^KEPT 7f300000' <<<"$out" | sed 's/.* kind=\([a-z-]*\).*\( memfd=1\).*/\1\2/; s/.* kind=\([a-z-]*\) .*/\1/' | xargs)"
echo '7f3000000100 10 jit_in_shm
7f3000003100 10 jit_in_memfd' >"/tmp/perf-$JP.map"
out=$("$T/st" load "$JP" "$T/shm.maps" user "$JP" 0x7f3000000104 user "$JP" 0x7f3000003104 warnings)
check_eq "saved maps: JIT code in shared anonymous memory and in a memfd, named by the perf map" \
	"jit_in_shm|jit_in_memfd" \
	"$(awk '$1 == "user" { sub(/.* name=/, ""); sub(/ .*/, ""); print }' <<<"$out" | paste -sd'|')"
check_eq "saved maps: shared anonymous memory is not opened as a file" "" \
	"$(grep -E "^warning: .*(dev/zero|anon_hugepage|SYSV)" <<<"$out")"
rm -f "/tmp/perf-$JP.map"

# saved maps with malformed lines: counted in sym_stats and warned once
out=$("$T/st" load 4242 "$FX/maps-malformed.txt" stats warnings)
check "load_maps: bad_maps_lines=14 in stats" grep -q 'bad_maps_lines=14 ' <<<"$out"
check_eq "load_maps: one warning naming the first bad line" 1 \
	"$(echo "$out" | grep -c '^warning: ignored 14 malformed line(s) in saved maps of process 4242 (first: line 1)')"
check "load_maps: good line still used" grep -q '^load 4242 0' <<<"$out"

# huge: 200,000 lines, one exec line in 1000
awk 'BEGIN { for (i = 0; i < 200000; i++)
	printf "%012x-%012x %s %08x fd:01 %d                 /usr/share/data/file%d.bin\n",
		268435456 + i * 4096, 268435456 + i * 4096 + 4096,
		(i % 1000 == 7) ? "r-xp" : "r--s", 0, 1000 + i, i }' >"$T/huge.maps"
out=$("$T/st" maps "$T/huge.maps")
check_eq "maps: 200k-line file keeps the 200 exec entries" "lines=200000 kept=200 bad=0" \
	"$(echo "$out" | grep -o 'lines=[0-9]* kept=[0-9]* bad=[0-9]*')"
ms=$(echo "$out" | sed -n 's/.* ms=\([0-9]*\).*/\1/p' | head -n1)
limit=300
[ "${SANITIZE:-}" = 1 ] && limit=900
if [ -n "$ms" ] && [ "$ms" -lt "$limit" ]; then pass "maps: 200k lines parsed in ${ms} ms (< $limit)"; else fail "maps: 200k lines too slow" "ms=$ms limit=$limit"; fi

# memory: streamed through a fixed buffer, only exec entries stored
: >"$T/empty.maps"
base=$("$T/st" maps "$T/empty.maps" | sed -n 's/.* maxrss_kb=\([0-9]*\).*/\1/p')
big=$(sed -n 's/.* maxrss_kb=\([0-9]*\).*/\1/p' <<<"$out" | head -n1)
if [ -n "$base" ] && [ -n "$big" ] && [ $((big - base)) -lt 4096 ]; then
	pass "maps: 200k lines ($(($(stat -c %s "$T/huge.maps") / 1024)) KiB) cost $((big - base)) KiB of memory (< 4096)"
else
	fail "maps: 200k lines use too much memory" "base=$base big=$big (KiB)"
fi

out=$("$T/st" maps /proc/self/maps)
check "maps: live /proc/self/maps parses with no bad line" grep -q 'bad=0 first_bad=0' <<<"$out"
check "maps: live maps show [vdso] as vdso" grep -q 'kind=vdso deleted=0 path=\[vdso\]$' <<<"$out"

# --- perf maps ----------------------------------------------------------
: >"$T/empty.map"
check_eq "perfmap: empty file is an empty map" "perfmap rc=0 entries=0 bad=0 name=-" \
	"$("$T/st" perfmap "$T/empty.map" 0x1000)"
{ printf 'g'; head -c 3000 /dev/urandom | tr '\n\0' 'x'; } >"$T/garbage.map"
printf '\nzz 10 x\n1000\n1000 zz name\n1000 0 zero\n' >>"$T/garbage.map"
check_eq "perfmap: garbage lines skipped and counted" "perfmap rc=0 entries=0 bad=5 name=-" \
	"$("$T/st" perfmap "$T/garbage.map" 0x1000)"
printf '1000 100 old_fn\n0x2000 0x10 other\n1040 20 new_fn with spaces\n' >"$T/ok.map"
check_eq "perfmap: overlapping ranges, the later line wins" \
	"perfmap rc=0 entries=3 bad=0 name=new_fn with spaces" "$("$T/st" perfmap "$T/ok.map" 0x1050)"
check_eq "perfmap: outside the later range, the older still covers" \
	"perfmap rc=0 entries=3 bad=0 name=old_fn" "$("$T/st" perfmap "$T/ok.map" 0x1070)"
check_eq "perfmap: end of range is exclusive" \
	"perfmap rc=0 entries=3 bad=0 name=-" "$("$T/st" perfmap "$T/ok.map" 0x2010)"

# --- kallsyms (fixtures through the STACKFOLD_KALLSYMS hook) -------------
kern() { STACKFOLD_KALLSYMS=$FX/$1 STACKFOLD_MODULES=$FX/$2 "$T/st" "${@:3}"; }
name_of() { sed -n 's/.* name=\([^ ]*\) module=\([^ ]*\) .*/\1 \2/p'; }
check_eq "kallsyms: marker _text loses to the function at its address" "startup_64 [kernel]" \
	"$(kern kallsyms-small.txt modules-small.txt kern 0xffffffff81000000 | name_of)"
check_eq "kallsyms: T preferred over W alias, inside the function" "vfs_read [kernel]" \
	"$(kern kallsyms-small.txt modules-small.txt kern 0xffffffff810011ff | name_of)"
check_eq "kallsyms: return address looks up addr-1 (__pfx_ padding is not a function)" "secondary_startup_64 [kernel]" \
	"$(kern kallsyms-small.txt modules-small.txt kern 0xffffffff81001000 ret | name_of)"
check_eq "kallsyms: data symbols are not boundaries, _etext is" "vfs_write [kernel]" \
	"$(kern kallsyms-small.txt modules-small.txt kern 0xffffffff81001fff | name_of)"
check_eq "kallsyms: nothing past _etext" "- [kernel]" \
	"$(kern kallsyms-small.txt modules-small.txt kern 0xffffffff81002000 | name_of)"
check_eq "kallsyms: last symbol of a module up to the module's end" "ext4_last_fn [ext4]" \
	"$(kern kallsyms-small.txt modules-small.txt kern 0xffffffffc0100fff | name_of)"
check_eq "kallsyms: not past the module's end" "- [kernel]" \
	"$(kern kallsyms-small.txt modules-small.txt kern 0xffffffffc0101000 | name_of)"
check_eq "kallsyms: without /proc/modules a module's last symbol matches exactly only" "- [kernel]" \
	"$(kern kallsyms-small.txt no-such-modules kern 0xffffffffc0100900 | name_of)"
out=$(kern kallsyms-restricted.txt no-such-modules kern 0xffffffff81001000 kern 0xffffffff81001004 warnings)
check_eq "kallsyms: kptr_restrict gives no name, reason says why" 2 \
	"$(echo "$out" | grep -c 'reason=kernel addresses hidden (kptr_restrict) name=- module=\[kernel\]')"
check_eq "kallsyms: kptr_restrict warned exactly once" 1 "$(echo "$out" | grep -c '^warning: kernel symbol addresses are hidden')"
out=$(kern no-such-kallsyms no-such-modules kern 0xffffffff81001000 warnings)
check "kallsyms: unreadable file is a warning, not a name" grep -q 'reason=no symbol table name=- ' <<<"$out"

# live kernel: vfs_read from /proc/kallsyms
a=$(awk '$3 == "vfs_read" && ($2 == "T" || $2 == "t") { print $1; exit }' /proc/kallsyms)
if [ "$(id -u)" != 0 ] || [ -z "$a" ] || [ "$a" = 0000000000000000 ]; then
	skip "kallsyms: live vfs_read" "kallsyms hidden (not root?)"
else
	out=$("$T/st" kern "0x$a" kern "$(printf '0x%x' $((0x$a + 5)))" kern "0x$a" ret)
	check_eq "kallsyms: live vfs_read at its address and inside" "vfs_read vfs_read" \
		"$(echo "$out" | head -n2 | name_of | cut -d' ' -f1 | xargs)"
	check "kallsyms: live return address at vfs_read names its predecessor" \
		bash -c "! sed -n 3p <<<'$out' | grep -q 'name=vfs_read '"
	# a function of a loaded module names the module
	read -r ma mf mm < <(awk 'NF == 4 && ($2 == "T" || $2 == "t") && $4 ~ /^\[[a-z0-9_]+\]$/ && $4 != "[bpf]" && $4 !~ /^\[__builtin/ && $3 !~ /^__pfx_/ { print $1, $3, $4; exit }' /proc/kallsyms)
	if [ -n "${ma:-}" ]; then
		check_eq "kallsyms: live module function $mf" "$mf $mm" "$("$T/st" kern "0x$ma" | name_of)"
	else
		skip "kallsyms: live module function" "no kernel module loaded"
	fi
	for fn in schedule ksys_write do_sys_openat2; do
		a=$(awk -v f="$fn" '$3 == f && ($2 == "T" || $2 == "t") { print $1; exit }' /proc/kallsyms)
		[ -n "$a" ] || continue
		check_eq "kallsyms: live $fn (+0x4)" "$fn [kernel]" \
			"$("$T/st" kern "$(printf '0x%x' $((0x$a + 4)))" | name_of)"
	done
fi
