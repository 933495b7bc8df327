#!/usr/bin/env bash
# tests/tools/manypids.sh BIN N - a stackfold raw capture of N processes
# (pids 100000...) that each ran BIN, each with its own saved map of BIN's
# text and libc's, at addresses that differ from one process to the next,
# and one sample each: malloc (libc) called from helper (BIN, which must
# have one: tests/fixtures/sym/inl.c).  Process i's comm is app(i % 50).
# Used by tests/t70-robust-input.sh (E38) and bench/manypids.sh.
set -eu
bin=$1 n=$2
libc=$(ldd "$bin" | awk '/libc\.so\.6/ { print $3 }')
exe_load() { readelf -lW "$1" | awk '$1 == "LOAD" && $(NF-1) ~ /E/ { print $2, $3; exit }'; }
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
read -r loff lva <<<"$(exe_load "$libc")"
read -r off va <<<"$(exe_load "$bin")"
lbid=$(build_id "$libc") bid=$(build_id "$bin")
malloc=$(nm -D "$libc" | awk '$3 ~ /^malloc@/ { print "0x" $1; exit }')
helper=$(nm "$bin" | awk '$3 == "helper" { print "0x" $1 }')
printf '# stackfold-capture 1\n#meta hz 99\n'
for ((i = 0; i < n; i++)); do
	s=$((0x555555554000 + (i % 512) * 0x1000000 + (va & ~4095)))
	l=$((0x7f0000000000 + (i % 777) * 0x1000000 + (lva & ~4095)))
	printf '#maps %d\n%x-%x r-xp %08x 00:00 0 %s\n#bid %x %s\n' $((100000 + i)) $s $((s + 8192)) $((off & ~4095)) "$bin" $s "$bid"
	printf '%x-%x r-xp %08x 00:00 0 %s\n#bid %x %s\n#main %x\n#endmaps\n' $l $((l + 0x180000)) $((loff & ~4095)) "$libc" $l "$lbid" $s
	printf '#pid %d app%d\n@stackfold[%d, %d, app%d, \n        0x%x\n        0x%x\n, ]: 1\n' \
		$((100000 + i)) $((i % 50)) $((100000 + i)) $((100000 + i)) $((i % 50)) \
		$((l - (lva & ~4095) + malloc + 1)) $((s - (va & ~4095) + helper + 1))
done
echo "@stackfold_total: $n"
