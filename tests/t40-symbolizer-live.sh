#!/usr/bin/env bash
# t40-symbolizer-live.sh - snapshot real processes (tests/fixtures/proc/
# target.c) and symbolize them after they exit: deleted binaries, saved
# maps and build-id checks, mount and pid namespaces, JIT perf maps,
# [vdso], fd limits, unknown pids.  Needs root for namespaces.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fixtures/proc/build.sh
. "$TOP/tests/fixtures/proc/build.sh"
sym_build
ST=$T/st

# res OUT ADDR: "name module main" of the result line for ADDR
res() { awk -v a="$2" '$2 == a { n = m = x = ""
	for (i = 3; i <= NF; i++) { split($i, kv, "=")
		if (kv[1] == "name") n = kv[2]; if (kv[1] == "module") m = kv[2]; if (kv[1] == "main") x = kv[2] }
	print n, m, x; exit }' <<<"$1"; }
reason() { awk -v a="$2" '$2 == a { sub(/.* reason=/, ""); sub(/ name=.*/, ""); print; exit }' <<<"$1"; }

# --- process exits before symbolization ---------------------------------
start_target "$T/t1.out" "$T/target" || fail "exited: target did not start"
A=$(func_addr sf_target_alpha "$T/t1.out") B=$(func_addr sf_target_beta "$T/t1.out")
out=$("$ST" snap "$TPID" kill "$TPID" user "$TPID" "$A" user "$TPID" "$B" user "$TPID" "$B" ret user "$TPID" 0x10 stats)
check "exited: snapshot ok" grep -q "^snap $TPID 0 " <<<"$out"
check_eq "exited: function named after the process was killed" "sf_target_alpha $T/target 1" "$(res "$out" "$A")"
check_eq "exited: beta named" "sf_target_beta $T/target 1" "$(res "$out" "$B")"
check_eq "exited: return address at beta's first byte is the call site in alpha" \
	"sf_target_alpha" "$(awk -v a="$B" '$2 == a' <<<"$out" | sed -n 2p | sed 's/.* name=\([^ ]*\) .*/\1/')"
check_eq "exited: unmapped address" "address not mapped" "$(reason "$out" 0x10)"
check "exited: stats count the process and pinned files" grep -Eq 'processes=1 files_pinned=[1-9]' <<<"$out"
check "exited: process really gone from /proc maps" test ! -s "/proc/$TPID/maps"

# forgetting (the continuous mode, between windows): a refresh retires the
# old snapshot, drop_retired frees it, forget frees the live one and the
# pid then resolves as never seen
start_target "$T/tf.out" "$T/target" || fail "forget: target did not start"
A=$(func_addr sf_target_alpha "$T/tf.out")
out=$("$ST" snap "$TPID" refresh "$TPID" refresh "$TPID" dropretired dropretired \
	user "$TPID" "$A" refresh "$TPID" forget "$TPID" forget "$TPID" user "$TPID" "$A")
kill -9 "$TPID"
check_eq "forget: two refreshes retire two snapshots, freed once" "dropretired 2|dropretired 0" \
	"$(grep '^dropretired' <<<"$out" | paste -sd'|')"
check_eq "forget: the live snapshot still resolves after drop_retired" "sf_target_alpha $T/target 1" \
	"$(res "$(grep '^user' <<<"$out" | head -1)" "$A")"
check_eq "forget: frees the live and the retired snapshot, then nothing" "forget $TPID 2|forget $TPID 0" \
	"$(grep '^forget' <<<"$out" | paste -sd'|')"
check_eq "forget: a forgotten pid resolves as one never snapshotted" "process not snapshotted" \
	"$(reason "$(grep '^user' <<<"$out" | tail -1)" "$A")"

# images (an exec): snapshots of one pid's images live side by side, each
# looked up by its own image; an older image is never refreshed from the
# process as it is now (it runs the newer program), the newest one is;
# forget frees every image
start_target "$T/ti.out" "$T/target" || fail "images: target did not start"
A=$(func_addr sf_target_alpha "$T/ti.out")
out=$("$ST" snap "$TPID:1" snap "$TPID:2" user "$TPID:1" "$A" user "$TPID:2" "$A" \
	user "$TPID:3" "$A" refresh "$TPID:1" refresh "$TPID:2" forget "$TPID" user "$TPID:2" "$A")
kill -9 "$TPID"
check_eq "images: each image resolves from its own snapshot" \
	"sf_target_alpha $T/target 1|sf_target_alpha $T/target 1" \
	"$(grep '^user' <<<"$out" | head -2 | while read -r l; do res "$l" "$A"; done | paste -sd'|')"
check_eq "images: an image never snapshotted is not another's" "process not snapshotted" \
	"$(reason "$(grep '^user' <<<"$out" | sed -n 3p)" "$A")"
check_eq "images: the older image is not refreshed, the newest is" "refresh $TPID -3|refresh $TPID 0" \
	"$(grep '^refresh' <<<"$out" | paste -sd'|')"
check_eq "images: forget frees every image (two live, one retired)" "forget $TPID 3" \
	"$(grep '^forget' <<<"$out")"
# the continuous mode frees the images before a pid's last exec between
# windows: the newest one stays
start_target "$T/tj.out" "$T/target" || fail "images: target did not start"
A=$(func_addr sf_target_alpha "$T/tj.out")
out=$("$ST" snap "$TPID:1" snap "$TPID:2" snap "$TPID:3" forgetolder "$TPID:3" \
	user "$TPID:2" "$A" user "$TPID:3" "$A" forgetolder "$TPID:3")
kill -9 "$TPID"
check_eq "images: forget_older frees the older images, once" "forgetolder $TPID 2|forgetolder $TPID 0" \
	"$(grep '^forgetolder' <<<"$out" | paste -sd'|')"
check_eq "images: ... and keeps the newest" "process not snapshotted|sf_target_alpha $T/target 1" \
	"$({ reason "$(grep '^user' <<<"$out" | head -1)" "$A"
	     res "$(grep '^user' <<<"$out" | tail -1)" "$A"; } | paste -sd'|')"
# images of two processes of one pid (bt/profile.bt: start time * 128 +
# execs), the start time wrapped between them: the later process has the
# smaller number.  Only images of one process are ordered: the later one
# is not "older" (that would refuse it for good), and
# forget_older with the pid's process frees the other process's.
old=$(( (0xffffff << 7) | 2 )) new=$(( (5 << 7) | 2 ))
start_target "$T/tw.out" "$T/target" || fail "images: target did not start"
out=$("$ST" snap "$TPID:$old" newer "$TPID:$new" snap "$TPID:$new" newer "$TPID:$new" \
	forgetolder "$TPID:$new" forgetolder "$TPID:$new")
kill -9 "$TPID"
check_eq "images across a start-time wrap: another process's is not newer" \
	"newer $TPID 0|newer $TPID 0" "$(grep '^newer' <<<"$out" | paste -sd'|')"
check_eq "images across a start-time wrap: forget_older frees the pid's other process, once" \
	"forgetolder $TPID 1|forgetolder $TPID 0" "$(grep '^forgetolder' <<<"$out" | paste -sd'|')"

# the start of stack the sample saw (the "#pid" line's): a process that
# has another now has run exec since, and its map is another program's.
# The snapshot is refused (-ESTALE) and remembered: refused again at once
# with the same start of stack or none (a lazy snapshot), tried with
# another one (the right one, or the start of the arguments: what a sample
# taken during the exec itself sees); a snapshot the image has stays
start_target "$T/tk.out" "$T/target" || fail "start of stack: target did not start"
A=$(func_addr sf_target_alpha "$T/tk.out")
read -r SS AS <<<"$(sed 's/.*) //' "/proc/$TPID/stat" | awk '{ print $26, $46 }')"
check "start of stack: read from /proc/PID/stat ($SS, arguments at $AS)" test "${SS:-0}" -gt 0 -a "${AS:-0}" -gt 0
out=$("$ST" snapstack "$TPID:1" $((SS + 16)) newer "$TPID:1" snap "$TPID:1" snapstack "$TPID:1" $((SS + 16)) \
	user "$TPID:1" "$A" snapstack "$TPID:1" "$AS" user "$TPID:1" "$A" \
	snapstack "$TPID:2" $((SS + 32)) snapstack "$TPID:2" "$SS" \
	snapstack "$TPID:2" $((SS + 16)) user "$TPID:2" "$A")
kill -9 "$TPID"
snaps() { grep '^snap' <<<"$out" | cut -d' ' -f3 | paste -sd' '; }
check_eq "start of stack: refused; again at once with the same or none; another tried; one kept" \
	"-116 -116 -116 0 -116 0 -116" "$(snaps)"
check_eq "start of stack: a refused image has no map; taken at the start of arguments, and kept" \
	"process not snapshotted|sf_target_alpha $T/target 1|sf_target_alpha $T/target 1" \
	"$({ reason "$(grep '^user' <<<"$out" | sed -n 1p)" "$A"
	     res "$(grep '^user' <<<"$out" | sed -n 2p)" "$A"
	     res "$(grep '^user' <<<"$out" | sed -n 3p)" "$A"; } | paste -sd'|')"
check_eq "start of stack: a refusal says nothing of newer images" "newer $TPID 0" "$(grep '^newer' <<<"$out")"

# bpftrace's own output of bt/profile.bt (pid field with an image, no saved
# maps): the live process is snapshotted on the spot, as for one-liners
start_target "$T/tl.out" "$T/target" || fail "lazy image: target did not start"
A=$(func_addr sf_target_alpha "$T/tl.out")
printf '@stackfold_a[%d, %d, target\\x00\\x00, \n\t%x 0x%x ([unknown])\n, ]: 5\n' \
	$(((3 << 32) | TPID)) "$TPID" "$A" "$A" >"$T/lazy.txt"
out=$("$STACKFOLD" -q "$T/lazy.txt" 2>&1)
kill -9 "$TPID"
check_eq "lazy image: a pid field with an image, no saved maps: named from the live process" \
	"target;sf_target_alpha 5" "$out"

# sym_lookup_elf: addresses in the file's own ELF space, as nm prints them
E=$(printf '0x%x' "0x$(nm "$T/target" | awk '$3 == "sf_target_beta" { print $1 }')")
out=$("$ST" elf "$T/target" "$E" elf "$T/no-such-file" 0x1000)
check_eq "elf: nm address names the function" "sf_target_beta $T/target 0" "$(res "$out" "$E")"
check_eq "elf: missing file" "mapped file unavailable" "$(reason "$out" 0x1000)"

# the session passes its cache directory ($STACKFOLD_CACHE_DIR) to the
# index: the second run loads what the first built
c1=$(SF_TEST_CACHE=1 STACKFOLD_CACHE_DIR=$T/cache "$ST" elf "$T/target" "$E" stats)
c2=$(SF_TEST_CACHE=1 STACKFOLD_CACHE_DIR=$T/cache "$ST" elf "$T/target" "$E" stats)
check_eq "cache: first run builds, second loads from \$STACKFOLD_CACHE_DIR" \
	"index_builds=1 index_cache_hits=0 index_corrupt=0|index_builds=0 index_cache_hits=1 index_corrupt=0" \
	"$(grep -o 'index_builds=.*' <<<"$c1")|$(grep -o 'index_builds=.*' <<<"$c2")"
check_eq "cache: same name from the cached index" "$(res "$c1" "$E")" "$(res "$c2" "$E")"
for f in "$T"/cache/*.idx; do printf 'garbage' | dd of="$f" bs=1 seek=64 conv=notrunc 2>/dev/null; done
c4=$(SF_TEST_CACHE=1 STACKFOLD_CACHE_DIR=$T/cache "$ST" elf "$T/target" "$E" stats warnings)
check "cache: a corrupt entry is rebuilt and counted" \
	grep -q 'index_builds=1 index_cache_hits=0 index_corrupt=1' <<<"$c4"
check_eq "cache: a corrupt entry is warned once" 1 "$(grep -c '^warning: .*; rebuilt$' <<<"$c4")"
check_eq "cache: same name after the rebuild" "$(res "$c1" "$E")" "$(res "$c4" "$E")"
XDG_CACHE_HOME=$T/xdg SF_TEST_CACHE=1 STACKFOLD_CACHE_DIR='' "$ST" elf "$T/target" "$E" >/dev/null
check "cache: \$XDG_CACHE_HOME/stackfold is the fallback" test -n "$(ls "$T/xdg/stackfold" 2>/dev/null)"

# lookups are binary searches with no allocation: cheap once indexed
start_target "$T/tb.out" "$T/target" || fail "bench: target did not start"
A=$(func_addr sf_target_alpha "$T/tb.out")
ns=$("$ST" snap "$TPID" bench "$TPID" "$A" 1000000 | awk '$1 == "bench" { print $2 }')
limit=1000
[ "${SANITIZE:-}" = 1 ] && limit=5000
if [ -n "$ns" ] && [ "$ns" -lt "$limit" ]; then pass "bench: ${ns} ns per user lookup (< $limit)"; else fail "bench: lookups too slow" "ns=$ns limit=$limit"; fi
kill -9 "$TPID"

# --- deleted binary; saved maps; a different file at the same path ------
mkdir -p "$T/del"
cp "$T/target" "$T/del/prog"
start_target "$T/t2.out" "$T/del/prog" || fail "deleted: target did not start"
A=$(func_addr sf_target_alpha "$T/t2.out")
rm "$T/del/prog"
out=$("$ST" snap "$TPID" write "$TPID" "$T/del.maps" kill "$TPID" user "$TPID" "$A")
check "deleted: maps line records (deleted)" grep -q "$T/del/prog (deleted)\$" "$T/del.maps"
check "deleted: saved maps carry #bid and #main" grep -q '^#main ' "$T/del.maps"
check_eq "deleted binary named through the pinned fd after exit" "sf_target_alpha $T/del/prog 1" "$(res "$out" "$A")"
cp "$T/lib.so" "$T/del/prog"	# another ELF now at the same path
out=$("$ST" load "$TPID" "$T/del.maps" user "$TPID" "$A" stats warnings)
check_eq "deleted: replaced file is not used (build-id differs)" "mapped file unavailable" "$(reason "$out" "$A")"
check "deleted: replaced file counted in files_mismatched" grep -q 'files_mismatched=1 ' <<<"$out"
check "deleted: replaced file warned" grep -q "^warning: '$T/del/prog' changed since it was mapped" <<<"$out"
check "deleted: unresolved frame still carries module and file offset" \
	grep -Eq "module=$T/del/prog main=1 maddr=0x[0-9a-f]+ " <<<"$out"

# --- a binary rewritten in place (same inode) after its process exited ---
# The fd pinned while it ran reads the new contents: its build-id, read at
# the pin, tells, so the new file's names are not printed.
mkdir -p "$T/rw"
cp "$T/target" "$T/rw/prog"
start_target "$T/trw.out" "$T/rw/prog" || fail "rewritten: target did not start"
A=$(func_addr sf_target_alpha "$T/trw.out")
ino=$(stat -c %i "$T/rw/prog")
out=$("$ST" snap "$TPID" kill "$TPID" sh "cp '$T/lib.so' '$T/rw/prog'" user "$TPID" "$A" stats warnings)
check_eq "rewritten: the same inode, new contents" "$ino" "$(stat -c %i "$T/rw/prog")"
check_eq "rewritten in place: its new contents not used" "mapped file unavailable" "$(reason "$out" "$A")"
check "rewritten in place: counted in files_mismatched" grep -q 'files_mismatched=1 ' <<<"$out"
check "rewritten in place: warned" grep -q "^warning: '$T/rw/prog' changed since it was mapped" <<<"$out"
# without a build-id: its size and mtime at the pin tell
cc -O0 -g -fno-inline -Wl,--build-id=none -o "$T/rw/nobid" "$TOP/tests/fixtures/proc/target.c" -ldl 2>/dev/null
start_target "$T/trw2.out" "$T/rw/nobid" || fail "rewritten, no build-id: target did not start"
A=$(func_addr sf_target_alpha "$T/trw2.out")
out=$("$ST" snap "$TPID" kill "$TPID" sh "cp '$T/target' '$T/rw/nobid'" user "$TPID" "$A" stats)
check_eq "rewritten in place, no build-id: its new contents not used" "mapped file unavailable" "$(reason "$out" "$A")"

# --- saved maps of an exited process, files still on disk ---------------
start_target "$T/t3.out" "$T/target" || fail "saved: target did not start"
A=$(func_addr sf_target_alpha "$T/t3.out")
"$ST" snap "$TPID" write "$TPID" "$T/live.maps" kill "$TPID" >/dev/null
out=$("$ST" load "$TPID" "$T/live.maps" user "$TPID" "$A" stats)
check_eq "saved maps: exited process symbolized by path + build-id" "sf_target_alpha $T/target 1" "$(res "$out" "$A")"
check "saved maps: verbatim maps lines kept" \
	grep -Eq "^[0-9a-f]+-[0-9a-f]+ r-xp [0-9a-f]+ [0-9a-f]+:[0-9a-f]+ [0-9]+ +$T/target\$" "$T/live.maps"

# --- pid reuse: saved maps with another process's start time ------------
mkdir -p "$T/reuse"
cp "$T/target" "$T/reuse/prog"
start_target "$T/t4.out" "$T/reuse/prog" || fail "reuse: target did not start"
A=$(func_addr sf_target_alpha "$T/t4.out")
rm "$T/reuse/prog"	# only map_files can reach it now
"$ST" snap "$TPID" write "$TPID" "$T/reuse.maps" >/dev/null
sed 's/^#starttime .*/#starttime 1/' "$T/reuse.maps" >"$T/reuse-other.maps"
out=$("$ST" load "$TPID" "$T/reuse.maps" user "$TPID" "$A")
check_eq "pid reuse: same process (start time) opens through map_files" "sf_target_alpha" "$(res "$out" "$A" | cut -d' ' -f1)"
out=$("$ST" load "$TPID" "$T/reuse-other.maps" user "$TPID" "$A")
check_eq "pid reuse: another process under the pid is not trusted" "mapped file unavailable" "$(reason "$out" "$A")"
out=$("$ST" snap "$TPID" snap "$TPID" user "$TPID" "$A" stats)
check "pid reuse: a second snapshot replaces the first" grep -q 'processes=2 ' <<<"$out"
check_eq "pid reuse: lookups use the newest snapshot" "sf_target_alpha" "$(res "$out" "$A" | cut -d' ' -f1)"
kill -9 "$TPID"

# --- text remapped onto anonymous memory (huge-page remappers) ---------
start_target "$T/tr.out" "$T/target" --remap || fail "remap: target did not start"
A=$(func_addr sf_target_alpha "$T/tr.out")
R=$(word_addr remapped "$T/tr.out")
if [ -z "$R" ]; then
	fail "remap: target could not remap its text"
else
	check "remap: its text is anonymous in maps" grep -q "^${R#0x}-[0-9a-f]* r-xp 00000000 00:00 0 *\$" "/proc/$TPID/maps"
	out=$("$ST" snap "$TPID" write "$TPID" "$T/remap.maps" kill "$TPID" user "$TPID" "$A")
	check_eq "remap: named through the file mapped before it" "sf_target_alpha $T/target 1" "$(res "$out" "$A")"
	out=$("$ST" load "$TPID" "$T/remap.maps" user "$TPID" "$A")
	check_eq "remap: saved maps keep it (as the file mapping it replaced)" "sf_target_alpha $T/target 1" "$(res "$out" "$A")"
fi

# --- unknown pid, kernel thread ------------------------------------------
out=$("$ST" user 999999999 0x401000 snap 999999999 snap 2 user 2 0x401000)
check_eq "unknown pid: reason" "process not snapshotted" "$(reason "$out" 0x401000)"
check "unknown pid: snapshot fails with -ESRCH" grep -q '^snap 999999999 -3 ' <<<"$out"
check "kernel thread: snapshot has no mappings, lookup is unmapped" \
	grep -q 'reason=address not mapped' <<<"$(echo "$out" | tail -n1)"

# a zombie (killed, parent does not reap) has no memory left: -ESRCH
sh -c "'$T/target' >/dev/null & exec sleep 1000" &
ZP=$!
disown "$ZP"
SYM_PIDS="$SYM_PIDS $ZP"
for _ in $(seq 100); do ZC=$(pgrep -P "$ZP"); [ -n "$ZC" ] && break; sleep 0.05; done
kill -9 "$ZC"
for _ in $(seq 100); do [ "$(awk '{ print $3 }' "/proc/$ZC/stat" 2>/dev/null)" = Z ] && break; sleep 0.05; done
check "zombie: snapshot of a killed, unreaped process fails with -ESRCH" \
	grep -q "^snap $ZC -3 " <<<"$("$ST" snap "$ZC")"
kill -9 "$ZP"

# --- [vdso] ------------------------------------------------------------
start_target "$T/t5.out" "$T/target" || fail "vdso: target did not start"
V=$(word_addr vdso "$T/t5.out")
if [ -z "$V" ]; then
	fail "vdso: target found no __vdso_clock_gettime"
else
	out=$("$ST" snap "$TPID" kill "$TPID" user "$TPID" "$V")
	check "vdso: symbolized from the process's image" \
		grep -Eq 'reason=ok name=(__vdso_)?clock_gettime module=\[vdso\] ' <<<"$out"
fi
# a second 64-bit process's [vdso] is our own image: compared once (the
# first process), not read again; both still named from it
start_target "$T/t5v.out" "$T/target" || fail "vdso: target did not start"
P1=$TPID V=$(word_addr vdso "$T/t5v.out")
start_target "$T/t5c.out" "$T/target" || fail "vdso: second target did not start"
V2=$(word_addr vdso "$T/t5c.out")
if [ -n "$V" ] && [ -n "$V2" ]; then
	out=$("$ST" snap "$TPID" snap "$P1" kill "$TPID" kill "$P1" \
		user "$TPID" "$V2" user "$P1" "$V" stats)
	check_eq "vdso: two processes, both named from the one image" 2 \
		"$(grep -Ec 'reason=ok name=(__vdso_)?clock_gettime module=\[vdso\] ' <<<"$out")"
	check "vdso: read from one process's memory only" grep -qx 'vdso_reads 1' <<<"$out"
fi
# the name comes from /proc/PID/stat's comm: the same as status's Name:,
# also with a space and a ')' in it
cp "$T/target" "$T/t a)b"
start_target "$T/t5d.out" "$T/t a)b" || fail "name: target did not start"
check_eq "name: /proc/PID/stat's comm, as status's Name: says" \
	"name $TPID $(awk -F'\t' '$1 == "Name:" { print $2 }' "/proc/$TPID/status")" \
	"$("$ST" snap "$TPID" name "$TPID" | grep '^name')"
kill -9 "$TPID" 2>/dev/null

# [vsyscall] and other pseudo-mappings are labelled, never opened
if grep -q '\[vsyscall\]$' "/proc/self/maps"; then
	start_target "$T/t5b.out" "$T/target" || fail "vsyscall: target did not start"
	out=$("$ST" snap "$TPID" user "$TPID" 0xffffffffff600400 stats)
	check "vsyscall: labelled, no file opened for it" \
		grep -q 'reason=anonymous memory name=- module=\[vsyscall\] ' <<<"$out"
	kill -9 "$TPID"
else
	skip "vsyscall" "no [vsyscall] mapping on this kernel"
fi

# --- mount namespace: the binary exists only inside ----------------------
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	skip "mount namespace" "needs root and unshare"
else
	mkdir -p "$T/ns"
	start_target "$T/t6.out" unshare -m --propagation private sh -c \
		"mount -t tmpfs none '$T/ns' && cp '$T/target' '$T/ns/prog' && exec '$T/ns/prog'" ||
		fail "mntns: target did not start" "$(cat "$T/t6.out")"
	A=$(func_addr sf_target_alpha "$T/t6.out")
	check "mntns: binary not visible outside the namespace" test ! -e "$T/ns/prog"
	out=$("$ST" snap "$TPID" write "$TPID" "$T/ns.maps" user "$TPID" "$A" kill "$TPID" user "$TPID" "$A")
	check_eq "mntns: named (live and after exit) through /proc/PID" \
		"sf_target_alpha $T/ns/prog 1|sf_target_alpha $T/ns/prog 1" \
		"$(awk -v a="$A" '$2 == a { print }' <<<"$out" | while read -r l; do res "$l" "$A"; done | paste -sd'|')"
fi

# the same without CAP_SYS_ADMIN (map_files refused): only
# /proc/PID/root reaches the file
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v setpriv >/dev/null &&
	id nobody >/dev/null 2>&1; then
	mkdir -p "$T/ns2"
	chmod 755 "$T"
	start_target "$T/t6b.out" unshare -m --propagation private sh -c \
		"mount -t tmpfs none '$T/ns2' && cp '$T/target' '$T/ns2/prog' &&
		 exec setpriv --reuid=nobody --regid=nogroup --clear-groups '$T/ns2/prog'" ||
		fail "mntns-nobody: target did not start" "$(cat "$T/t6b.out")"
	A=$(func_addr sf_target_alpha "$T/t6b.out")
	V=$(word_addr vdso "$T/t6b.out")
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$ST" snap "$TPID" user "$TPID" "$A" user "$TPID" "${V:-0x1}" 2>&1)
	check "mntns-nobody: map_files is refused to an unprivileged user" \
		bash -c "! setpriv --reuid=nobody --regid=nogroup --clear-groups cat /proc/$TPID/map_files/* >/dev/null 2>&1"
	check_eq "mntns-nobody: named through /proc/PID/root" "sf_target_alpha $T/ns2/prog 1" "$(res "$out" "$A")"
	check "mntns-nobody: [vdso] named (its image, or ours: same kernel and ELF class)" \
		grep -Eq 'reason=ok name=(__vdso_)?clock_gettime module=\[vdso\] ' <<<"$out"
	kill -9 "$TPID"
else
	skip "mount namespace without CAP_SYS_ADMIN" "needs root, unshare, setpriv and user nobody"
fi

# --- JIT perf map, also in a pid + mount namespace ----------------------
start_target "$T/t7.out" "$T/target" --jit || fail "jit: target did not start"
J=$(word_addr jit "$T/t7.out")
out=$("$ST" snap "$TPID" kill "$TPID" user "$TPID" "$J" user "$TPID" "$(printf '0x%x' $((J - 0x123 + 0x300)))" warnings)
rm -f "/tmp/perf-$TPID.map"
check_eq "jit: perf map names anonymous exec memory" "sf_jit_compiled_fn /tmp/perf-$TPID.map 0" "$(res "$out" "$J")"
# ... and in the same mapping (one region, one pprof mapping, not a second
# "[anon]" beside the perf map's)
check "jit: address outside perf map entries is anonymous, in the perf map's region" \
	grep -q "reason=anonymous memory name=- module=/tmp/perf-$TPID.map" <<<"$out"
check "jit: garbage perf map line warned" grep -q "^warning: ignored malformed lines in perf map" <<<"$out"
# a perf map last written before the process started is an earlier
# process's with the same pid: not read, and said so
start_target "$T/t7b.out" "$T/target" --jit || fail "jit stale: target did not start"
J=$(word_addr jit "$T/t7b.out")
touch -d '1 hour ago' "/tmp/perf-$TPID.map"
out=$("$ST" snap "$TPID" kill "$TPID" user "$TPID" "$J" warnings)
rm -f "/tmp/perf-$TPID.map"
check_eq "jit stale: not named from a perf map older than the process" "- [anon] 0" "$(res "$out" "$J")"
check_eq "jit stale: one warning" 1 "$(grep -c "^warning: perf map '/tmp/perf-$TPID.map' is older than process $TPID" <<<"$out")"

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	skip "jit in pid namespace" "needs root and unshare"
else
	# the target's /tmp is a private tmpfs: its perf-1.map is reachable only
	# through /proc/PID/root, under its namespace pid (NSpid)
	unshare -m -p -f --propagation private sh -c \
		"exec 3<'$T/target'; mount -t tmpfs none /tmp && exec /proc/self/fd/3 --jit" >"$T/t8.out" 2>&1 &
	UPID=$!
	disown "$UPID"
	SYM_PIDS="$SYM_PIDS $UPID"
	for _ in $(seq 100); do grep -q '^ready' "$T/t8.out" && break; sleep 0.05; done
	NPID=$(pgrep -P "$UPID" | head -n1)
	SYM_PIDS="$SYM_PIDS $NPID"
	J=$(word_addr jit "$T/t8.out")
	if [ -z "$NPID" ] || [ -z "$J" ]; then
		fail "jit pidns: target did not start" "$(cat "$T/t8.out")"
	else
		nsp=$(awk '/^NSpid/ { print $NF }' "/proc/$NPID/status")
		check "jit pidns: perf map not visible on the host" test ! -e "/tmp/perf-$nsp.map" -o "$nsp" = "$NPID"
		# killed before the lookup: its /tmp went with it, the map was
		# read at the snapshot
		out=$("$ST" snap "$NPID" kill "$NPID" user "$NPID" "$J")
		check_eq "jit pidns: named through /proc/PID/root and NSpid, after exit" \
			"sf_jit_compiled_fn /tmp/perf-$nsp.map 0" "$(res "$out" "$J")"
	fi
	kill -9 "$UPID" "$NPID" 2>/dev/null
fi

# --- fd limit: many mapped files under ulimit -n 32 ----------------------
mkdir -p "$T/libs"
libs=()
for i in $(seq 60); do cp "$T/lib.so" "$T/libs/l$i.so"; libs+=("$T/libs/l$i.so"); done
start_target "$T/t9.out" "$T/target" "${libs[@]}" || fail "fds: target did not start"
lookups=()
while read -r _ _ addr; do lookups+=(user "$TPID" "$addr"); done < <(grep '^lib ' "$T/t9.out")
# live: files closed by the LRU are reopened through map_files
out=$(ulimit -n 32; "$ST" snap "$TPID" fds "${lookups[@]}" fds stats 2>&1)
# exited: files closed by the LRU are reopened by path, checked by build-id
out2=$(ulimit -n 32; "$ST" snap "$TPID" kill "$TPID" "${lookups[@]}" fds stats 2>&1)
check_eq "fds: 60 libraries mapped" 60 "$(grep -c '^lib ' "$T/t9.out")"
# count_ok NAME N OUT: N lookups named sf_lib_func, else show what was not
count_ok() {
	local ok='reason=ok name=sf_lib_func module=.*/libs/l[0-9]*.so '
	local n
	n=$(grep -c "$ok" <<<"$3")
	if [ "$n" = "$2" ]; then pass "$1"; else
		fail "$1" "expected $2, got $n" "$(grep -v "$ok" <<<"$3" | grep -v '^KEPT' | head -n 8)"
	fi
}
# the same with the process left a zombie (its parent does not reap it)
sh -c "'$T/target' ${libs[*]} >'$T/t9z.out' & exec sleep 1000" &
ZP=$!
disown "$ZP"
SYM_PIDS="$SYM_PIDS $ZP"
for _ in $(seq 100); do grep -q '^ready' "$T/t9z.out" 2>/dev/null && break; sleep 0.05; done
ZC=$(pgrep -P "$ZP")
zl=()
while read -r _ _ addr; do zl+=(user "$ZC" "$addr"); done < <(grep '^lib ' "$T/t9z.out")
out3=$(ulimit -n 32; "$ST" snap "$ZC" kill "$ZC" "${zl[@]}" 2>&1)
kill -9 "$ZP"
count_ok "fds: every library function named under ulimit -n 32 (live)" 60 "$out"
count_ok "fds: every library function named under ulimit -n 32 (zombie)" 60 "$out3"
count_ok "fds: every library function named under ulimit -n 32 (after exit)" 60 "$out2"
out="$out
$out2"
nf=$(awk '$1 == "fds" { n = $2 } END { print n }' <<<"$out")
if [ -n "$nf" ] && [ "$nf" -lt 32 ]; then pass "fds: stays under the limit ($nf open)"; else fail "fds: too many open" "$out"; fi
check "fds: each library pinned once" grep -Eq 'files_pinned=(6[0-9]) ' <<<"$out2"
check_eq "fds: 60 copies with one build-id share one index" "index_builds=1 index_cache_hits=59 index_corrupt=0" \
	"$(grep -o 'index_builds=.*' <<<"$out2")"

# deleted files evicted by the LRU are indexed first (no path reaches them
# after the process exits)
start_target "$T/t10.out" "$T/target" "${libs[@]}" || fail "fds-deleted: target did not start"
for i in $(seq 20); do rm "$T/libs/l$i.so"; done
lookups=()
while read -r _ _ addr; do lookups+=(user "$TPID" "$addr"); done < <(grep -E '^lib [^ ]*/l([1-9]|1[0-9]|20)\.so ' "$T/t10.out")
# at most 16 fds stay pinned under ulimit -n 32: most of the 20 were evicted
out=$(ulimit -n 32; "$ST" snap "$TPID" kill "$TPID" "${lookups[@]}" stats 2>&1)
count_ok "fds: 20 deleted libraries evicted by the LRU still named after exit" 20 "$out"

# --- one inode, another file: a program rewritten in place after its
# process exited (as a reused inode would be).  The second process must
# be named from the new file, not from the index of the old one, and its
# saved map must carry the new build-id.
mkdir -p "$T/reuse"
for v in alpha gamma; do
	printf '%s\n' '#include <stdio.h>' '#include <unistd.h>' \
		"__attribute__((noinline)) void ${v}_fn(void) { for (;;) pause(); }" \
		"int main(void) { puts(\"ready ${v}\"); fflush(stdout); ${v}_fn(); }" >"$T/reuse/$v.c"
	cc -O0 -no-pie -fno-pie -o "$T/reuse/$v" "$T/reuse/$v.c" 2>>"$T/reuse/cc.err"
done
a_alpha=0x$(nm "$T/reuse/alpha" 2>/dev/null | awk '$3 == "alpha_fn" { print $1 }')
a_gamma=0x$(nm "$T/reuse/gamma" 2>/dev/null | awk '$3 == "gamma_fn" { print $1 }')
if [ "$a_alpha" = 0x ] || [ "$a_alpha" != "$a_gamma" ]; then
	fail "inode reuse: two programs with the function at one address" "$(cat "$T/reuse/cc.err") alpha=$a_alpha gamma=$a_gamma"
else
	cp "$T/reuse/alpha" "$T/reuse/app"
	# two processes of the first program: a snapshot after the file was
	# indexed leaves its fd open (the same inode, then rewritten under it)
	start_target "$T/reuse/p0.out" "$T/reuse/app" || fail "inode reuse: first process did not start"
	P0=$TPID
	start_target "$T/reuse/p1.out" "$T/reuse/app" || fail "inode reuse: first process did not start"
	cat >"$T/reuse/step2.sh" <<EOS
cat '$T/reuse/gamma' >'$T/reuse/app'
'$T/reuse/app' >'$T/reuse/p2.out' 2>&1 &
echo \$! >'$T/reuse/p2.pid'
for _ in \$(seq 100); do grep -q ready '$T/reuse/p2.out' && break; sleep 0.05; done
EOS
	ino1=$(stat -c %i "$T/reuse/app")
	out=$("$ST" snap "$P0" user "$P0" "$a_alpha" snap "$TPID" kill "$TPID" kill "$P0" sh "sh $T/reuse/step2.sh" \
		snap "@$T/reuse/p2.pid" user "@$T/reuse/p2.pid" "$a_gamma" write "@$T/reuse/p2.pid" "$T/reuse/p2.maps")
	check_eq "inode reuse: the same inode" "$ino1" "$(stat -c %i "$T/reuse/app")"
	check_eq "inode reuse: the first process named from the first file" "alpha_fn" \
		"$(awk '$1 == "user" { sub(/.* name=/, ""); sub(/ .*/, ""); print; exit }' <<<"$out")"
	check_eq "inode reuse: the second process named from the file it maps" "gamma_fn" \
		"$(awk '$1 == "user" { n++ } $1 == "user" && n == 2 { sub(/.* name=/, ""); sub(/ .*/, ""); print }' <<<"$out")"
	bid1=$(readelf -n "$T/reuse/alpha" | awk '/Build ID/ { print $3 }')
	bid2=$(readelf -n "$T/reuse/gamma" | awk '/Build ID/ { print $3 }')
	check "inode reuse: the two programs' build-ids differ" test "$bid1" != "$bid2"
	check "inode reuse: the second process's saved map has the new build-id" \
		grep -q " $bid2\$" "$T/reuse/p2.maps"
	kill "$(cat "$T/reuse/p2.pid")" 2>/dev/null
fi

# ... and without CAP_SYS_ADMIN (map_files cannot be read): the same
# through the process's root, run as nobody
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || [ "$a_alpha" = 0x ]; then
	skip "inode reuse as nobody" "needs root (to become nobody), setpriv and the programs above"
else
	nb=$(mktemp -d /tmp/stackfold-nobody.XXXXXX)
	chmod 755 "$nb"
	cp "$ST" "$nb/st"
	cp "$T/reuse/alpha" "$nb/app"
	cp "$T/reuse/gamma" "$nb/gamma"
	cat >"$nb/run.sh" <<EOS
cd '$nb' || exit 1
start() { ./app >"\$1.out" 2>&1 & echo \$! >"\$1.pid"; for _ in \$(seq 100); do grep -q ready "\$1.out" && break; sleep 0.05; done; }
start p1
printf '%s\n' 'cat gamma >app' '. ./start.sh; start p2' >step2.sh
declare -f start >start.sh
./st snap @p1.pid user @p1.pid $a_alpha kill @p1.pid sh 'bash step2.sh' snap @p2.pid user @p2.pid $a_gamma
kill "\$(cat p2.pid)"
EOS
	chown -R 65534:65534 "$nb"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash "$nb/run.sh" 2>&1)
	check_eq "inode reuse as nobody: each process named from the file it maps" "alpha_fn|gamma_fn" \
		"$(awk '$1 == "user" { sub(/.* name=/, ""); sub(/ .*/, ""); print }' <<<"$out" | paste -sd'|')"
	rm -rf "$nb"
fi
