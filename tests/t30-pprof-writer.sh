#!/usr/bin/env bash
# t30-pprof-writer: out_pprof_write() on profiles built through the
# profile.h API (tests/tools/pprof_gen.c), checked by the strict validator,
# go tool pprof and protoc --decode.  Covers what text inputs cannot easily
# produce: build-ids, the executable as mapping[0], unsymbolized addresses,
# synthetic marks, inline chains, bad UTF-8, zero samples, huge counts.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"

pprof_tools_build || exit 0

# --- the validator itself must catch violations (raw protobuf bytes) ----
bad() {	# NAME EXPECTED-SUBSTRING PRINTF-BYTES
	local out
	printf '%b' "$3" >"$T/bad.pb"
	if out=$("$PPROF_CHECK" --raw "$T/bad.pb" 2>&1); then
		fail "validator rejects $1" "accepted: $out"
	else
		case $out in *"$2"*) pass "validator rejects $1" ;;
		*) fail "validator rejects $1" "expected '$2'" "got: $out" ;; esac
	fi
}
bad "string_table[0] != \"\"" 'string_table[0]' '\x32\x01x'
bad "invalid UTF-8" 'not valid UTF-8' '\x32\x00\x32\x01\xff'
bad "samples without sample_type" 'no sample_type' '\x32\x00\x12\x00\x48\x01\x5a\x00'
bad "duplicate time_nanos" 'time_nanos appears 2' '\x32\x00\x48\x01\x48\x02\x5a\x00'
bad "missing period_type" 'period_type not set' '\x32\x00'
bad "location id 0" 'has id 0' '\x32\x00\x5a\x00\x22\x02\x18\x01'
bad "dangling location_id" 'location_id 5 does not exist' \
	'\x32\x00\x5a\x00\x0a\x00\x48\x01\x12\x05\x0a\x01\x05\x10\x01'
bad "dangling mapping_id" 'mapping_id 3 does not exist' '\x32\x00\x5a\x00\x22\x04\x08\x01\x10\x03'
bad "string index out of range" 'out of range' '\x32\x00\x5a\x02\x08\x07'
bad "wrong value count" '2 values for 1 sample types' \
	'\x32\x00\x5a\x00\x0a\x00\x48\x01\x12\x04\x12\x02\x01\x01'
bad "cpu time not count x period" 'is not value[0] 2 times the period 10' \
	'\x32\x00\x32\x0bnanoseconds\x0a\x00\x0a\x02\x10\x01\x48\x01\x5a\x00\x60\x0a\x12\x04\x12\x02\x02\x05'
bad "duplicate location id" 'location id 1 is not unique' '\x32\x00\x5a\x00\x22\x02\x08\x01\x22\x02\x08\x01'
bad "duplicate function id" 'function id 1 is not unique' '\x32\x00\x5a\x00\x2a\x02\x08\x01\x2a\x02\x08\x01'
bad "duplicate mapping id" 'mapping id 1 is not unique' '\x32\x00\x5a\x00\x1a\x02\x08\x01\x1a\x02\x08\x01'
bad "dangling function_id" 'function_id 5 does not exist' '\x32\x00\x5a\x00\x22\x06\x08\x01\x22\x02\x08\x05'
bad "line without function_id" 'line 0 has function_id 0' '\x32\x00\x5a\x00\x22\x04\x08\x01\x22\x00'
bad "samples without time_nanos" 'time_nanos missing' '\x32\x00\x0a\x00\x5a\x00\x12\x03\x12\x01\x01'
# and takes the same profile with its time_nanos (the cases above fail for
# what they name, not for something else)
printf '%b' '\x32\x00\x0a\x00\x5a\x00\x12\x03\x12\x01\x01\x48\x01' >"$T/good.pb"
check_eq "validator takes a minimal valid profile" "ok samples=1 total=1" "$("$PPROF_CHECK" --raw "$T/good.pb" 2>&1)"
printf 'not a profile' >"$T/plain"
if "$PPROF_CHECK" "$T/plain" >/dev/null; then fail "validator rejects ungzipped"; else pass "validator rejects ungzipped"; fi

# --- generated profiles ---------------------------------------------------
declare -A want=([mixed]=37 [main]=37 [procs]=17 [kernel]=9 [empty]=0
		 [bigcount]=4611686018427387904 [nullprof]=6)
for s in mixed main procs kernel empty bigcount nullprof; do
	f=$T/$s.pb.gz
	if ! "$PPROF_GEN" "$s" >"$f" 2>"$T/$s.err"; then
		fail "gen $s" "$(cat "$T/$s.err")"
		continue
	fi
	notime=
	[ "$s" = nullprof ] && notime=--no-time
	check_eq "validator ok: $s" "ok samples=$(case $s in mixed|main) echo 9 ;; procs) echo 6 ;; nullprof) echo 3 ;; empty) echo 0 ;; *) echo 1 ;; esac) total=${want[$s]}" \
		"$("$PPROF_CHECK" $notime "$f" 2>&1)"
	if gopprof -raw -symbolize=none "$f" >"$T/$s.raw" 2>"$T/$s.goerr"; then
		check_eq "go pprof -raw total: $s" "${want[$s]}" "$(raw_total "$T/$s.raw")"
	else
		fail "go pprof -raw accepts $s" "$(tail -5 "$T/$s.goerr")"
	fi
	check "go pprof -top accepts $s" gopprof -top "$f"
	if ! protoc_prereq "protoc --decode accepts $s"; then
		:
	elif pb_decode "$f" >"$T/$s.txt" 2>"$T/$s.perr"; then
		check_eq "protoc string_table[0]: $s" 'string_table: ""' \
			"$(grep -m1 '^string_table' "$T/$s.txt")"
	else
		fail "protoc --decode accepts $s" "$(head -3 "$T/$s.perr")"
	fi
done

raw=$T/mixed.raw
check_eq "mapping[0] is the executable (found by comm)" \
	"1: 0x400000/0x500000/0x0 /usr/bin/demo 0123456789abcdef [FN][FL][LN][IN]" \
	"$(grep -m1 '^1: ' "$raw")"
check_eq "mapping[0] is the executable (is_main)" \
	"1: 0x400000/0x500000/0x0 /usr/bin/demo 0123456789abcdef [FN][FL][LN][IN]" \
	"$(grep -m1 '^1: ' "$T/main.raw")"
check "build-ids visible in -raw" grep -q 'libc.so.6 aabbccdd00112233' "$raw"
check_eq "mappings used, each once" 3 "$(sed -n '/^Mappings/,$p' "$raw" | grep -c '^[0-9]*: ')"
check_eq "period = 1e9/hz" "Period: 20408163" "$(grep '^Period:' "$raw")"
check "value[1] = count * period" grep -qE '^ +5 +102040815: [0-9]+ [0-9]+ [0-9]+ $' "$raw"
check "labels pid/tid" grep -q 'pid:\[42\] tid:\[43\]' "$raw"
check "labels comm/thread_name" grep -q 'comm:\[demo\] thread_name:\[demo\]' "$raw"
check_eq "no labels when unknown (one such sample)" 1 "$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	s && /^ +[0-9]+ +[0-9]+:/ { if (p) n++; p = 1; next } s { p = 0 } END { print n + p }' "$raw")"
check "comment: loss counters" grep -q '^Comment: samples=37 lost_events=3 map_dropped=0 stackid_errors=0 unparsable_lines=0 incomplete_records=0 unsymbolized_frames=2' "$raw"
check "comment: capture metadata" grep -q '^Comment: bpftrace=v0.17.0 kernel=6.1.0-test host=host1 cmdline=stackfold record -- demo' "$raw"
# mapping of the location at ADDR (no lines), as its -raw Mappings line
map_of() { awk -v a="$1" '$2 == a && $3 ~ /^M=/ && NF == 3 { sub(/M=/, "", $3); m = $3 }
	/^Mappings/ { s = 1 } s && m != "" && index($0, m ": ") == 1 { print; exit }' "$2"; }
check "unsymbolized address keeps mapping, no line" grep -q 'libc.so.6' <<<"$(map_of 0x7f0000099000 "$raw")"
check "kernel address without mapping gets the kernel mapping" grep -q 'kernel.kallsyms' <<<"$(map_of 0xffffffff81099000 "$raw")"
check "synthetic mark kept as a function" grep -qE '^ +[0-9]+: 0x0 \[missed user stack\]' "$raw"
# shellcheck disable=SC2016
check "inline chain innermost first, with its address" awk '/^ +[0-9]+: 0x401000 M=1 inner_inlined demo.c:20/ { getline; if ($1 == "work") f = 1 } END { exit !f }' "$raw"
# One location per address (the issue's rule), even for two addresses on
# one line: pprof -disasm, -addresses and re-symbolization need them.
check_eq "symbolized: one location per address, with it (2 on main's line)" \
	"0x402000 M=1|0x402004 M=1" \
	"$(awk '$4 == "main" && $5 == "demo.c:20" { print $2, $3 }' "$raw" | sort | paste -sd'|')"
check_eq "no user frame with address 0 on a mapping" 0 \
	"$(awk '/^Mappings/ { s = 1 } s && /^[0-9]+: / && !/kernel/ { sub(/:.*/, ""); u["M=" $0] = 1 }
		/^ +[0-9]+: 0x0 M=/ { z[$3]++ } END { for (m in z) if (m in u) n += z[m]; print n + 0 }' "$raw")"
check_eq "validator: addresses (user, kernel, kernel frame named by text)" \
	"addresses user=7 kernel=2 zero_on_mapping=1 unmapped=0" \
	"$("$PPROF_CHECK" --addresses "$T/mixed.pb.gz" | sed -n '/^addresses/p')"
check_eq "go pprof -raw: addresses (all, user) each in its mapping's range" "9 7 0" "$(raw_addr_check "$raw")"
check "same stack at two addresses: two samples (3 + 3)" \
	test "$(grep -cE '^ +3 +61224489: [0-9]+ [0-9]+ $' "$raw")" = 2
if gopprof -top -addresses -symbolize=none "$T/mixed.pb.gz" >"$T/mixed.addrtop" 2>"$T/goerr"; then
	check_eq "go pprof -top -addresses: one row per address of main" \
		"0000000000402000 main demo.c:20|0000000000402004 main demo.c:20" \
		"$(grep -oE '[0-9a-f]{16} main demo.c:20$' "$T/mixed.addrtop" | sort | paste -sd'|')"
else
	fail "go pprof -top -addresses" "$(tail -5 "$T/goerr")"
fi
check "system_name kept" grep -q 'memcpy memcpy.S:20 s=10(__memcpy_avx_unaligned)' "$raw"
check "name with ';' and spaces intact" grep -q 'std::vec<\[T; 4\]> odd name' "$raw"
check "bad UTF-8 repaired to U+FFFD" grep -q $'bad\xef\xbf\xbd\xef\xbf\xbdutf8\xef\xbf\xbd' "$raw"
check "duration and time" grep -q '^Duration: 2s' "$raw"
check_eq "kernel-only: one synthetic [kernel.kallsyms] mapping, the kernel half (it has an address)" \
	"1: 0xffff800000000000/0xffffffffffffffff/0x0 [kernel.kallsyms]  [FN]" "$(sed -n '/^Mappings/,$p' "$T/kernel.raw" | grep '^[0-9]*: ')"
check_eq "kernel-only: every location on it" 3 "$(grep -cE '^ +[0-9]+: 0x[0-9a-f]+ M=1' "$T/kernel.raw")"
check "kernel-only: the unsymbolized address kept" grep -qE '^ +[0-9]+: 0xffffffffc0001234 M=1 *$' "$T/kernel.raw"
protoc_prereq "folded-only: no mappings (protoc)" &&
	check_eq "folded-only: no mappings (protoc)" 0 "$(grep -c -E '^(mapping \{|  mapping_id:)' "$T/nullprof.txt")"
check "folded-only: leaf first (sample 'a;b;c' -> 1 2 3, 1 is c)" \
	bash -c "grep -qE '^ +1 +[0-9]+: 1 2 3 \$' '$T/nullprof.raw' && grep -qE '^ +1: 0x0 (M=1 )?c :0' '$T/nullprof.raw'"
check_eq "bigcount: value[1] saturates" 9223372036854775807 \
	"$(awk '/^Samples:/{s=1;next} s && /^ *[0-9]+ +[0-9]+:/{print $2; exit}' "$T/bigcount.raw" | tr -d :)"

# --- bytes ------------------------------------------------------------------
"$PPROF_GEN" mixed >"$T/mixed2.pb.gz"
check "deterministic: same profile, same bytes" cmp "$T/mixed.pb.gz" "$T/mixed2.pb.gz"
check_eq "gzip header: deflate, mtime 0, OS 255" "1f 8b 08 00 00 00 00 00 00 ff" \
	"$(od -An -tx1 -N10 "$T/mixed.pb.gz" | sed 's/^ *//')"
"$PPROF_GEN" --raw mixed >"$T/mixed.pb"
gzip -dc "$T/mixed.pb.gz" >"$T/mixed.gunzipped"
check "pprof_no_gzip: raw protobuf, same message" cmp "$T/mixed.pb" "$T/mixed.gunzipped"
check "pprof_no_gzip: validator --raw ok" "$PPROF_CHECK" --raw "$T/mixed.pb"
check "pprof_no_gzip: go pprof accepts raw" gopprof -raw "$T/mixed.pb"

# An empty stack keeps its samples in every reader (go tool pprof drops
# samples without locations).
check "empty stack: one [no stack] frame" grep -qE '^ +4 +[0-9]+: [0-9]+ $' "$raw"
check "empty stack: labels kept" grep -q 'comm:\[nostack\]' "$raw"
check "empty stack: [no stack] function" grep -qE '^ +[0-9]+: 0x0 \[no stack\]' "$raw"

# One file mapped by several processes: one mapping per process, each with
# its range (go tool pprof merges them itself, translating addresses, so
# the file's own mappings are checked with protoc).
protoc_prereq "same file in 3 processes: 3 mappings, each with its range" &&
	check_eq "same file in 3 processes: 3 mappings, each with its range" \
		"memory_start: 139637976727552 memory_limit: 139637977776128|memory_start: 139710991171584 memory_limit: 139710992220160|memory_start: 139784005615616 memory_limit: 139784006664192" \
		"$(awk '/^mapping \{/ { m = 1; s = "" } m && /memory_(start|limit):/ { s = s (s ? " " : "") $1 " " $2 }
			m && /^\}/ { if (s ~ /1396|1397/) print s; m = 0 }' "$T/procs.txt" | sort | paste -sd'|')"
protoc_prereq "one location per address (protoc): libc x3, jit.so, pre.so, kernel" &&
	check_eq "one location per address (protoc): libc x3, jit.so, pre.so, kernel" 6 "$(grep -c '^location {' "$T/procs.txt")"
check_eq "validator: procs addresses" "addresses user=4 kernel=1 zero_on_mapping=1 unmapped=0" \
	"$("$PPROF_CHECK" --addresses "$T/procs.pb.gz" | sed -n '/^addresses/p')"
check "mapping flags are the symbolizer's: jit.so has none, its location keeps its address" \
	bash -c "grep -qE '^[0-9]+: 0x7f3300000000/0x7f3300100000/0x0 /tmp/jit.so *\$' '$T/procs.raw' &&
		grep -qE '^ +[0-9]+: 0x7f3300000040 M=[0-9]+ memcpy' '$T/procs.raw'"
check "addressless lines on a flagless mapping: marked [FN] (else pprof looks up address 0)" \
	grep -qE '^[0-9]+: 0x7f4400000000/0x7f4400100000/0x0 /opt/pre.so  \[FN\]$' "$T/procs.raw"
protoc_prereq "mappings ordered: first used, then by file name (protoc)" &&
	check_eq "mappings ordered: first used, then by file name (protoc)" \
		"/usr/lib/libc.so.6 /opt/pre.so /tmp/jit.so /usr/lib/libc.so.6 /usr/lib/libc.so.6 [kernel.kallsyms]" \
		"$(awk '/^string_table:/ { s[n++] = $2 } /^mapping \{/ { m = 1 } m && /^  filename:/ { f[k++] = $2 } /^\}/ { m = 0 }
			END { for (i = 0; i < k; i++) printf "%s%s", (i ? " " : ""), s[f[i]]; print "" }' "$T/procs.txt" | tr -d '"')"
protoc_prereq "addresses ascending within a mapping, ids in that order (protoc)" &&
	check_eq "addresses ascending within a mapping, ids in that order (protoc)" "" \
		"$(awk '/^location \{/ { l = 1; id = ""; m = 0; a = 0 } l && /^  id:/ { id = $2 } l && /^  mapping_id:/ { m = $2 }
			l && /^  address:/ { a = $2 } l && /^\}/ { l = 0; if (id != pid + 1 || (m == pm && a + 0 < pa + 0)) print "bad", id; pid = id; pm = m; pa = a }' "$T/procs.txt")"

# A write error is reported (-EIO), not ignored.
if "$PPROF_GEN" mixed >/dev/full 2>"$T/full.err"; then
	fail "write error reported" "pprof_gen succeeded writing to /dev/full"
else
	check_eq "write error reported" "pprof_gen: pprof: write error" "$(cat "$T/full.err")"
fi
