#!/usr/bin/env bash
# t50-symbolize-fuzz: byte-flipped ELF files and cache entries (with a
# recomputed checksum, so only the reference checks stand between them and
# the lookups) never crash `stackfold symbolize`; under SANITIZE=1 they run
# through ASan+UBSan.  Deterministic (fixed seeds).
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fixtures/sym/symlib.sh
. "$TOP/tests/fixtures/sym/symlib.sh"
cd "$T" || exit 2

gcc -O2 -g -o inl "$FIX/inl.c" || { fail "build inl.c"; exit 0; }
probe_addrs inl '^(main|outer|helper)$' >addrs
# every other mutant starts from zlib- or zstd-compressed debug sections
objcopy --compress-debug-sections=zlib inl inl-zlib
objcopy --compress-debug-sections=zstd inl inl-zstd 2>/dev/null || cp inl-zlib inl-zstd
NMUT=${NMUT:-100}
NCACHE=${NCACHE:-30}

# crashed FILE RC: a crash is a signal exit or a sanitizer report
crashed() { [ "$2" -ge 128 ] || [ "$2" -eq 1 ] || grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$1"; }

RANDOM=42
bases=(inl inl-zlib inl-zstd)
for ((i = 0; i < NMUT; i++)); do
	base=${bases[i % 3]}
	cp "$base" "m$i"
	size=$(stat -c %s "$base")
	for ((k = 0; k < 6; k++)); do
		# bias half of the flips into the first 4 KiB (headers)
		if ((k % 2)); then off=$((RANDOM % 4096)); else off=$(((RANDOM * 32768 + RANDOM) % size)); fi
		printf "\\x$(printf %02x $((RANDOM % 256)))" |
			dd of="m$i" bs=1 seek="$off" conv=notrunc 2>/dev/null
	done
	sed "s/^/m$i /" addrs
done >mut.in
symb -a --no-cache <mut.in >mut.out 2>mut.err
rc=$?
if crashed mut.err $rc; then
	fail "$NMUT byte-flipped ELF files: no crash" "exit $rc" "$(grep -m3 -E 'runtime error|Sanitizer' mut.err)"
else
	pass "$NMUT byte-flipped ELF files: no crash (exit $rc)"
fi
check_eq "byte-flipped ELF files: one answer per address" "$(wc -l <mut.in)" \
	"$(grep -c '^0x' mut.out)"

# Same through the cache: entries built from the mutants, then read back.
# Mutants that kept the original build-id share one entry, by design (a
# build-id names one content): each reads the DWARF units it needs from
# its own bytes and the entry keeps every unit read, so the first warm run
# may answer a mutant from another's units; from then on the entry holds
# every unit and cache hits repeat themselves.
symb -a --cache-dir "$T/mc" <mut.in >mut2.out 2>mut2.err
symb -a --cache-dir "$T/mc" <mut.in >mut3.out 2>mut3.err
rc=$?
check "byte-flipped ELF files via the cache: no crash" test "$rc" -lt 128
symb -a --cache-dir "$T/mc" <mut.in >mut4.out 2>mut4.err
check_diff "byte-flipped ELF files: cache hits repeat themselves" mut3.out mut4.out
check_eq "byte-flipped ELF files via the cache: one answer per address" \
	"$(wc -l <mut.in)" "$(grep -c '^0x' mut2.out)"

# Flips inside the compressed .debug_info payload (zlib: the data, not
# the headers), where only the decompressor stands guard.
for base in inl-zlib inl-zstd; do
	read -r off len <<<"$(readelf -SW "$base" | awk '{ for (i = 1; i < NF; i++) if ($i == ".debug_info") print $(i + 3), $(i + 4) }')"
	[ -n "${len:-}" ] || continue
	off=$((16#$off)) len=$((16#$len))
	for ((i = 0; i < 20; i++)); do
		cp "$base" "z$base$i"
		printf "\\x$(printf %02x $((RANDOM % 256)))" |
			dd of="z$base$i" bs=1 seek=$((off + 24 + RANDOM % (len - 24))) conv=notrunc 2>/dev/null
		sed "s/^/z$base$i /" addrs
	done
done >zmut.in
symb --no-cache <zmut.in >zmut.out 2>zmut.err
rc=$?
if crashed zmut.err $rc; then
	fail "corrupt compressed debug sections: no crash" "exit $rc" "$(grep -m3 -E 'runtime error|Sanitizer' zmut.err)"
else
	pass "corrupt compressed debug sections: no crash ($(wc -l <zmut.in) lookups, exit $rc)"
fi

# Cache entries with flipped body bytes and a valid CRC.
if ! command -v python3 >/dev/null; then
	skip "flipped cache entries with valid CRC" "python3 not installed"
	exit 0
fi
C=$T/c
sed 's/^/inl /' addrs | symb --cache-dir "$C" >ref.out
entry=$(find "$C" -name '*.idx')
bad=0 accepted=0
for ((i = 0; i < NCACHE; i++)); do
	python3 - "$entry" "$i" <<'PY' || exit 2
import random, struct, sys, zlib
path, seed = sys.argv[1], int(sys.argv[2])
d = bytearray(open(path, "rb").read())
hdr = 8 + 4 + 4 + 8 + 4 + 4 + 96 + 48 + 8 + 6 * 8 * 2  # struct idx_hdr
rnd = random.Random(seed)
for _ in range(rnd.randint(1, 8)):
    d[rnd.randrange(hdr, len(d))] = rnd.randrange(256)
struct.pack_into("<I", d, 24, zlib.crc32(bytes(d[hdr:])) & 0xffffffff)
open(path, "wb").write(d)
PY
	cp "$entry" "$T/saved.idx"
	sed 's/^/inl /' addrs | symb --cache-dir "$C" >"f$i.out" 2>"f$i.err"
	rc=$?
	if crashed "f$i.err" $rc; then
		bad=$((bad + 1))
		cp "$T/saved.idx" "$T/crash$i.idx"
	fi
	grep -q 'corrupt index' "f$i.err" || accepted=$((accepted + 1))
	# put a valid entry back for the next round
	rm -f "$C"/*.idx
	sed 's/^/inl /' addrs | symb --cache-dir "$C" >/dev/null 2>&1
done
check_eq "$NCACHE flipped cache entries with a valid CRC: no crash" 0 "$bad"
echo "    ($accepted of $NCACHE flipped entries passed validation, the rest were rejected and rebuilt)"
