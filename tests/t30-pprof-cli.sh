#!/usr/bin/env bash
# t30-pprof-cli: `stackfold -f pprof` on the fixtures in tests/fixtures/pprof
# (bpftrace text, stackfold raw capture, folded text): every output passes
# the strict validator, go tool pprof and protoc --decode; samples are
# conserved (pprof total == folded total == counts in the input); pprof's
# top table agrees with `stackfold -f top`; output is deterministic.  Then
# a raw capture of a program built here: one location per user address,
# inside its mapping, shown by go tool pprof -raw and -top -addresses, and
# re-symbolized by pprof itself to the same lines.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"

pprof_tools_build || exit 0
FX=$TOP/tests/fixtures/pprof

# Samples in an input, counted independently of stackfold.
input_total() {
	case $1 in
	*.folded) folded_total "$1" ;;
	*) awk '/\]: [0-9]+$/ { s += $NF } END { print s + 0 }' "$1" ;;
	esac
}

# "flat cum name" rows of a top table, names normalised: the _[k]/_[j]/_[i]
# annotations dropped (pprof keeps kind in the mapping), ';' as ':' (the
# fold's escaping), runs of non-ASCII bytes as '?' (pprof repairs bad UTF-8
# to U+FFFD).
norm() { LC_ALL=C sed -e 's/_\[[kji]\]$//' -e 's/;/:/g' -e 's/[\x80-\xff][\x80-\xff]*/?/g'; }
sf_top() {	# stackfold -f top: "SELF% SELF TOTAL% TOTAL FUNCTION"
	awk '/^ +SELF%/ { s = 1; next } s && NF == 0 { exit }
	     s { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", n); print $2, $4, n }' "$1" | norm | LC_ALL=C sort
}
go_top() {	# go tool pprof -top: "flat flat% sum% cum cum% name"
	awk '/^ +flat +flat%/ { s = 1; next }
	     s { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", n); sub(/ \(inline\)$/, "", n); print $1, $4, n }' "$1" | norm | LC_ALL=C sort
}

for in in "$FX"/*; do
	name=$(basename "$in")
	out=$T/$name.pb.gz
	want=$(input_total "$in")
	if ! "$STACKFOLD" -q -f pprof -o "$out" "$in" 2>"$T/err"; then
		fail "$name: stackfold -f pprof" "$(tail -5 "$T/err")"
		continue
	fi
	"$STACKFOLD" -q -f folded "$in" >"$T/$name.folded" 2>/dev/null
	notime=--no-time
	grep -q '^#meta start_ns ' "$in" && notime=
	res=$("$PPROF_CHECK" $notime "$out" 2>&1)
	case $res in
	"ok samples="*" total=$want") pass "$name: valid, pprof total == input total ($want)" ;;
	*) fail "$name: valid, pprof total == input total ($want)" "$res" ;;
	esac
	check_eq "$name: folded total == input total" "$want" "$(folded_total "$T/$name.folded")"
	if gopprof -raw -symbolize=none "$out" >"$T/$name.raw" 2>"$T/goerr"; then
		check_eq "$name: go pprof -raw total" "$want" "$(raw_total "$T/$name.raw")"
	else
		fail "$name: go pprof -raw" "$(tail -5 "$T/goerr")"
	fi
	gopprof -top -sample_index=samples -nodecount=1000000 -nodefraction=0 \
		-edgefraction=0 -symbolize=none "$out" >"$T/$name.gotop" 2>/dev/null
	check_eq "$name: go pprof -top total" "$want" \
		"$(sed -n 's/^Showing nodes accounting for [0-9]*, [0-9.]*% of \([0-9]*\) total$/\1/p' "$T/$name.gotop")"
	if ! protoc_prereq "$name: protoc --decode accepts"; then
		:
	elif pb_decode "$out" >"$T/$name.txt" 2>"$T/perr"; then
		pass "$name: protoc --decode accepts"
	else
		fail "$name: protoc --decode accepts" "$(head -3 "$T/perr")"
	fi
	"$STACKFOLD" -q -f pprof -o "$T/again.pb.gz" "$in" 2>/dev/null
	check "$name: deterministic (two runs, same bytes)" cmp "$out" "$T/again.pb.gz"
	# Top functions: only where every frame has a name (raw addresses are
	# shown as module+off by stackfold, by address in pprof).
	case $name in live-*) continue ;; esac
	"$STACKFOLD" -q -f top --top 100000 "$in" >"$T/$name.sftop" 2>/dev/null
	sf_top "$T/$name.sftop" >"$T/$name.sfrows"
	go_top "$T/$name.gotop" >"$T/$name.gorows"
	if [ -s "$T/$name.gorows" ] &&
		missing=$(LC_ALL=C comm -13 "$T/$name.sfrows" "$T/$name.gorows") && [ -z "$missing" ]; then
		pass "$name: every pprof top row (flat, cum, name) is in stackfold's top"
	else
		fail "$name: every pprof top row (flat, cum, name) is in stackfold's top" \
			"pprof rows not in stackfold top:" "$missing"
	fi
	check_eq "$name: same functions with self samples" \
		"$(awk '$1 > 0' "$T/$name.sfrows")" "$(awk '$1 > 0' "$T/$name.gorows")"
done

# -U and -K act on pprof as on every other output: the same functions with
# self samples as stackfold's top table with the same option (pprof does
# not keep every frame).
for in in "$FX"/capture.txt "$FX"/kernel.folded "$FX"/kstack.bt.txt "$FX"/simple.folded; do
	name=$(basename "$in")
	for side in -U -K; do
		"$STACKFOLD" -q "$side" -f pprof -o "$T/side.pb.gz" "$in" 2>/dev/null
		"$STACKFOLD" -q "$side" -f top --top 100000 "$in" 2>/dev/null | sf_top /dev/stdin >"$T/side.sfrows"
		gopprof -top -sample_index=samples -nodecount=1000000 -nodefraction=0 \
			-edgefraction=0 -symbolize=none "$T/side.pb.gz" 2>/dev/null | go_top /dev/stdin >"$T/side.gorows"
		check_eq "$name $side: pprof has stackfold's self rows" \
			"$(awk '$1 > 0' "$T/side.sfrows")" "$(awk '$1 > 0' "$T/side.gorows")"
	done
done
check "-U and -K: kernel frames in the input" grep -q '_\[k\]' "$T/capture.txt.folded"

# --offsets is for the text outputs: pprof keeps addresses, and its
# functions keep their plain names (frames bpftrace named at two offsets
# are two locations of one function).
for in in "$FX"/capture.txt "$FX"/kstack.bt.txt; do
	name=$(basename "$in")
	"$STACKFOLD" -q --offsets -f pprof -o "$T/off.pb.gz" "$in" 2>/dev/null
	check_eq "$name --offsets: pprof valid, same total" \
		"ok total=$(input_total "$in")" \
		"$("$PPROF_CHECK" --no-time "$T/off.pb.gz" 2>&1 | sed 's/samples=[0-9]* //')"
	gopprof -top -sample_index=samples -nodecount=1000000 -nodefraction=0 \
		-edgefraction=0 -symbolize=none "$T/off.pb.gz" 2>/dev/null | go_top /dev/stdin >"$T/off.gorows"
	check_eq "$name --offsets: pprof's top rows as without it" \
		"$(cat "$T/$name.gorows")" "$(cat "$T/off.gorows")"
	check "$name --offsets: the folded text has offsets" \
		grep -q '+0x[0-9a-f]*\(_\[k\]\)\?[; ]' <("$STACKFOLD" -q --offsets "$in")
done

# Capture metadata and loss counters reach the profile.
raw=$T/capture.txt.raw
check "capture: time_nanos from #meta start_ns" grep -q '^Time: 2025-11-21 04:40:00 +0000 UTC' "$raw"
check "capture: period from #meta hz 49" grep -q '^Period: 20408163$' "$raw"
check "capture: duration" grep -q '^Duration: 2s' "$raw"
check "capture: metadata comment" grep -q '^Comment: bpftrace=v0.17.0 kernel=6.1.0-test host=fixture-host cmdline=stackfold record -F 49 -- sleep 2$' "$raw"
check "capture: counters comment" grep -q '^Comment: samples=105 lost_events=0 ' "$raw"
# The same capture as a continuous window, read back as a store reads it
# (store/window.c, through the pprof reader): times, rate, host, kernel,
# the sample count and the stored loss counters from the pprof, the
# stacks from the .folded.  A text without bpftrace's total cannot tell
# drops: unknown.
mkdir -p "$T/win"
{ head -1 "$FX/capture.txt"; printf '#meta duration_ns 2000000000\n#meta lost 7\n#meta stackid_errors 2\n'
  tail -n +2 "$FX/capture.txt"; } >"$T/wcap.txt"
"$STACKFOLD" -q -f pprof,folded -o "$T/win/20251121T044000Z" "$T/wcap.txt"
check_eq "a window as a store reads it: the capture's metadata and counters" \
	"start_ns=1763700000000000000 duration_ns=2000000000 hz=49 host=fixture-host kernel=6.1.0-test samples=105 map_dropped=0 over_total=0 stackid_errors=2 lost_events=7 map_full_warnings=0 captures_cut=0 unparsable_lines=0 incomplete_records=0 maps_unsaved=0 losses_unknown=1 stacks=3 total=105" \
	"$("$WINDOW_DUMP" "$T/win" 20251121T044000Z | paste -sd' ')"
# What an input cannot tell is "unknown", not 0:
# folded text records no capture losses; a text without bpftrace's sample
# total (this fixture's, a one-liner's) cannot tell drops.
check "capture without a sample total: drops unknown" \
	grep -q '^Comment: samples=105 lost_events=0 map_dropped=unknown stackid_errors=0 .* over_total=unknown$' "$raw"
check "folded input: capture losses unknown" \
	grep -q '^Comment: samples=[0-9]* lost_events=unknown map_dropped=unknown stackid_errors=unknown unparsable_lines=0 incomplete_records=0 unsymbolized_frames=0 truncated_stacks=unknown over_total=unknown$' "$T/simple.folded.raw"
check_eq "kstack: kernel frames on one [kernel.kallsyms] mapping" \
	"1: 0x0/0x0/0x0 [kernel.kallsyms]  [FN]" \
	"$(sed -n '/^Mappings/,$p' "$T/kstack.bt.txt.raw" | grep '^[0-9]*: ')"
check_eq "kstack: default period 1e9/99" "Period: 10101010" "$(grep '^Period:' "$T/kstack.bt.txt.raw")"

# Folded input: a function-only profile (no mappings, no labels).
txt=$T/simple.folded.txt
if protoc_prereq "folded input: a function-only profile (protoc --decode)"; then
	check_eq "folded input: no mappings" 0 "$(grep -c '^mapping {' "$txt")"
	check_eq "folded input: no labels" 0 "$(grep -c '^  label {' "$txt")"
	check_eq "folded input: one function per distinct frame" \
		"$(tr ';' '\n' <"$FX/simple.folded" | sed 's/ [0-9]*$//' | sort -u | wc -l)" \
		"$(grep -c '^function {' "$txt")"
fi

# Odd names survive: ';' and spaces intact, bad UTF-8 repaired.
check "odd names: ';' kept in the function name" grep -q '<\[T; 4\] as core::fmt::Debug>::fmt' "$T/oddnames.bt.txt.raw"
check "odd names: spaces kept" grep -q ' with space ' "$T/oddnames.bt.txt.raw"
check "odd names: latin-1 byte repaired to U+FFFD" grep -q $'caf\xef\xbf\xbd_latin1' "$T/oddnames.bt.txt.raw"
check "odd folded: latin-1 byte repaired" grep -q $'caf\xef\xbf\xbd' "$T/odd.folded.raw"

# Labels from bpftrace keys (comm, pid, tid).
check "live-mixed: pid/tid labels" grep -qE 'pid:\[[0-9]+\] tid:\[[0-9]+\]' "$T/live-mixed.bt.txt.raw"
check "live-mixed: comm label" grep -q 'comm:\[cc1\]' "$T/live-mixed.bt.txt.raw"

# Several formats with -o PREFIX; --no-gzip.
if "$STACKFOLD" -q -f folded,pprof -o "$T/multi" "$FX/kstack.bt.txt" 2>"$T/err"; then
	check "-o PREFIX: PREFIX.pb.gz same bytes as the single-format run" \
		cmp "$T/multi.pb.gz" "$T/kstack.bt.txt.pb.gz"
else
	fail "-f folded,pprof -o PREFIX" "$(cat "$T/err")"
fi
"$STACKFOLD" -q -f pprof --no-gzip -o "$T/nogz.pb" "$FX/kstack.bt.txt" 2>/dev/null
gzip -dc "$T/kstack.bt.txt.pb.gz" >"$T/gunz.pb"
check "--no-gzip: the same message, uncompressed" cmp "$T/nogz.pb" "$T/gunz.pb"
"$STACKFOLD" -q -f folded,pprof --no-gzip -o "$T/nogzp" "$FX/kstack.bt.txt" 2>/dev/null
check "--no-gzip with -o PREFIX: PREFIX.pb, not a PREFIX.pb.gz that is not gzip" \
	bash -c "cmp '$T/nogzp.pb' '$T/gunz.pb' && test ! -e '$T/nogzp.pb.gz'"
"$STACKFOLD" -q -o "$T/nodir/x.folded" "$FX/kstack.bt.txt" 2>"$T/nodir.err"
check_eq "missing output directory: the error names the output, not our temporary" \
	"stackfold: cannot write '$T/nodir/x.folded': No such file or directory" "$(cat "$T/nodir.err")"

# Folded input with FlameGraph's _[k] frames: kernel frames (suffix gone)
# on one [kernel.kallsyms] mapping, user frames on none, no addresses.
raw=$T/kernel.folded.raw
check_eq "folded _[k]: kernel frames on [kernel.kallsyms]" "copy_user vfs_read" \
	"$(awk '/^ +[0-9]+: 0x0 M=/ { print $4 }' "$raw" | sort | paste -sd' ')"
check_eq "folded _[k]: user frames without mapping" "demo main read" \
	"$(awk '/^ +[0-9]+: 0x0 [^M]/ { print $3 }' "$raw" | sort | paste -sd' ')"
check_eq "folded _[k]: the only mapping" "1: 0x0/0x0/0x0 [kernel.kallsyms]  [FN]" \
	"$(sed -n '/^Mappings/,$p' "$raw" | grep '^[0-9]*: ')"

# Folded input's inline mark: `work;inner_[i]` is inner inlined into
# work, one location with two lines (inner first), not a function named
# "inner_[i]" beside the real inner; folded output gives the text back.
printf '%s\n' 'app;main;work;inner_[i] 5' 'app;main;inner 2' 'app;main;work;inner_[i];deep_[i];leaf 1' >"$T/inl.folded"
"$STACKFOLD" -q -f pprof -o "$T/inl.pb.gz" "$T/inl.folded" 2>/dev/null
gopprof -raw -symbolize=none "$T/inl.pb.gz" >"$T/inl.raw" 2>&1
check_eq "folded _[i]: no function keeps the mark" 0 "$(grep -c '_\[i\]' "$T/inl.raw")"
check_eq "folded _[i]: inline chains as one location's lines, innermost first" \
	"inner,work|deep,inner,work" \
	"$(sed -n '/^Locations/,/^Mappings/p' "$T/inl.raw" | awk '/^ +[0-9]+: / { if (c) print c; c = $4; next } /^ +[a-z]/ { c = c "," $1 } END { if (c) print c }' | grep , | paste -sd'|')"
# ... also with pprof and top written in the same run, and for a chain
# deeper than one location takes (64 lines: the rest are frames of their
# own, marked), an _[i] with nothing before it, and a bare "_[i]" (a name,
# as in the fold's direct path: fuzz_folded found them apart, F16)
{ cat "$T/inl.folded"; echo 'inl_[i];x 1'; echo 'x;_[i];a 2'
  echo "app;main;$(seq -f 'f%g_[i]' 1 70 | paste -sd';') 5"; } >"$T/inl-in.txt"
"$STACKFOLD" -q -f folded,pprof,top -o "$T/inl2" "$T/inl-in.txt" 2>/dev/null
check_eq "folded _[i]: folded output gives the same stacks back" "$(sort "$T/inl-in.txt")" \
	"$(sort "$T/inl2.folded")"
check_eq "folded _[i]: the leaf of a 70-deep chain keeps its self time" "5 f70_[i]" \
	"$(awk '$NF == "f70_[i]" { print $2, $NF }' "$T/inl2.top")"

# Capture metadata pprof cannot carry (a period under 1 ns, times past
# int64) is left out, not wrapped into negative times or a 0 period.
printf '%s\n' '# stackfold-capture 1' '#meta hz 2000000000' '#meta start_ns 18446744073709551615' \
	'#meta duration_ns 9223372036854775808' '@[' '    ffffffff81001010' ']: 3' >"$T/meta.txt"
"$STACKFOLD" -q -f pprof -o "$T/meta.pb.gz" "$T/meta.txt" 2>/dev/null
check_eq "out-of-range metadata: valid profile, all 3 samples" "ok samples=1 total=3" \
	"$("$PPROF_CHECK" --no-time "$T/meta.pb.gz" 2>&1)"
gopprof -raw -symbolize=none "$T/meta.pb.gz" >"$T/meta.raw" 2>&1
check_eq "out-of-range metadata: the default period (99 Hz), no negative duration" \
	"Period: 10101010|" "$(grep -o '^Period: [0-9-]*' "$T/meta.raw")|$(grep -o 'Duration: -.*' "$T/meta.raw")"

# The kernel's mapping says it has functions only if kallsyms named some
# of its frames: with kptr_restrict's zeros, none are, and a reader should
# know to symbolize them itself.
printf 'Attaching 1 probe...\n@[\n    ffffffff81001010\n    ffffffff81001020\n]: 3\n' >"$T/kraw.txt"
for ks in small restricted; do
	STACKFOLD_KALLSYMS=$TOP/tests/fixtures/proc/kallsyms-$ks.txt STACKFOLD_MODULES=/dev/null \
		"$STACKFOLD" -q -f pprof -o "$T/k-$ks.pb.gz" "$T/kraw.txt" 2>/dev/null
	gopprof -raw -symbolize=none "$T/k-$ks.pb.gz" >"$T/k-$ks.raw" 2>&1
done
check_eq "kernel mapping: [FN] when kallsyms names its frames" \
	"1: 0xffff800000000000/0xffffffffffffffff/0x0 [kernel.kallsyms]  [FN]" "$(grep '^1: ' "$T/k-small.raw")"
check_eq "kernel mapping: no [FN] when kallsyms hides the addresses" \
	"1: 0xffff800000000000/0xffffffffffffffff/0x0 [kernel.kallsyms]" "$(grep '^1: ' "$T/k-restricted.raw" | sed 's/ *$//')"

# A raw capture with user addresses, without root: a small program built
# here (known build-id), a saved map of a process that no longer runs, and
# two stacks at addresses inside leaf/mid/main.  The profile must carry one
# location per address, each with its address inside its mapping, visible
# in `go tool pprof -raw` and `-top -addresses`, and pprof must be able to
# re-symbolize those addresses itself to the same functions and lines.
addr_capture() {	# DIR: writes DIR/app, DIR/cap.raw; 1 when tools are missing
	local d=$1 bid=73746163666f6c642d7070726f662d746573742d pid=4194001
	command -v nm >/dev/null && command -v readelf >/dev/null || return 1
	printf '%s\n' 'int leaf(int n) { return n * 3; }' \
		'int mid(int n) { return leaf(n) + 1; }' \
		'int main(void) { return mid(3); }' >"$d/app.c"
	cc -O0 -g -fno-inline -Wl,--build-id=0x$bid -o "$d/app" "$d/app.c" || return 1
	addr_of() { printf '0x%x' $((CAP_BASE + 0x$(nm "$d/app" | awk -v f="$1" '$3 == f { print $1 }') + $2)); }
	{
		capture_head "$d/app" $pid app || return 1
		printf '@stackfold[%d, %d, app, \n    %s\n    %s\n    %s\n, ]: 5\n' \
			$pid $pid "$(addr_of leaf 4)" "$(addr_of mid 9)" "$(addr_of main 9)"
		printf '@stackfold[%d, %d, app, \n    %s\n    %s\n, \n\tffffffff815e150d unmap_page_range+1245\n]: 2\n' \
			$pid $((pid + 1)) "$(addr_of mid 9)" "$(addr_of main 9)"
	} >"$d/cap.raw"
	printf '%s %s %s %x %x %x\n' "$(addr_of leaf 4)" "$(addr_of mid 9)" "$(addr_of main 9)" \
		"$CAP_START" "$CAP_LIMIT" "$CAP_OFF" >"$d/addrs"
}
mkdir -p "$T/addr"
if ! addr_capture "$T/addr"; then
	skip "raw capture with user addresses" "cc, nm or readelf missing"
elif ! "$STACKFOLD" -q -f pprof -o "$T/addr/p.pb.gz" "$T/addr/cap.raw" 2>"$T/err"; then
	fail "raw capture with user addresses: stackfold -f pprof" "$(tail -5 "$T/err")"
else
	read -r a_leaf a_mid a_main m_start m_limit m_off <"$T/addr/addrs"
	# mid+9 is a return address in the first stack and the user leaf of
	# the second (interrupted in the kernel): two locations
	check_eq "addresses: validator (4 user, 1 kernel, each in its mapping)" \
		"ok samples=2 total=7|addresses user=4 kernel=1 zero_on_mapping=0 unmapped=0" \
		"$("$PPROF_CHECK" --addresses "$T/addr/p.pb.gz" | paste -sd'|')"
	gopprof -raw -symbolize=none "$T/addr/p.pb.gz" >"$T/addr/raw" 2>"$T/goerr" ||
		fail "addresses: go pprof -raw" "$(tail -5 "$T/goerr")"
	# non-leaf frames are return addresses, written as the call's last
	# byte (profile.proto: "a non-leaf address may be in the middle of a
	# call instruction"), which is what was looked up
	r_mid=$(printf '0x%x' $((a_mid - 1)))
	r_main=$(printf '0x%x' $((a_main - 1)))
	check_eq "addresses: -raw, one location per address, with lines" \
		"$a_leaf M=1 leaf|$r_mid M=1 mid|$a_mid M=1 mid|$r_main M=1 main" \
		"$(awk '/^ +[0-9]+: 0x[0-9a-f]+ M=1 / { print $2, $3, $4 }' "$T/addr/raw" | sort | paste -sd'|')"
	check_eq "addresses: -raw mapping with the saved range and offset" \
		"1: 0x$m_start/0x$m_limit/0x$m_off $T/addr/app" "$(grep -oE '^1: [^ ]+ [^ ]+' "$T/addr/raw")"
	check_eq "addresses: -raw, each in its mapping's range (all, user, outside)" "5 4 0" \
		"$(raw_addr_check "$T/addr/raw")"
	if gopprof -top -addresses -symbolize=none "$T/addr/p.pb.gz" >"$T/addr/top" 2>"$T/goerr"; then
		check_eq "addresses: go pprof -top -addresses, a row per address" \
			"$(printf '%016x leaf|%016x main|%016x mid|%016x mid' "$a_leaf" "$r_main" "$r_mid" "$a_mid")" \
			"$(grep -oE '[0-9a-f]{16} (leaf|mid|main)' "$T/addr/top" | sort -k2,2 -k1,1 | paste -sd'|')"
	else
		fail "addresses: go pprof -top -addresses" "$(tail -5 "$T/goerr")"
	fi
	# pprof's own symbolizer (addr2line) on our addresses and mapping:
	# its functions have no start line (s=0), ours do.
	if command -v addr2line >/dev/null || command -v llvm-symbolizer >/dev/null; then
		gopprof -raw -symbolize=local:force "$T/addr/p.pb.gz" >"$T/addr/force" 2>/dev/null
		check_eq "addresses: pprof re-symbolizes them to the same functions and lines" \
			"leaf $T/addr/app.c:1 s=0|main $T/addr/app.c:3 s=0|mid $T/addr/app.c:2 s=0|mid $T/addr/app.c:2 s=0" \
			"$(awk '/^ +[0-9]+: 0x[0-9a-f]+ M=1 / { print $4, $5, $6 }' "$T/addr/force" | sort | paste -sd'|')"
	else
		skip "addresses: pprof re-symbolizes them" "no addr2line or llvm-symbolizer"
	fi
	# a return address one past the end of its mapping (a call as the
	# text's last instruction): the location stays inside the mapping
	sed '/^@stackfold/,$d' "$T/addr/cap.raw" >"$T/addr/end.raw"
	printf '@stackfold[4194001, 4194001, app, \n    %s\n    0x%x\n, ]: 3\n' "$a_leaf" "0x$m_limit" >>"$T/addr/end.raw"
	"$STACKFOLD" -q -f pprof -o "$T/addr/end.pb.gz" "$T/addr/end.raw" 2>"$T/err"
	check_eq "addresses: a return address at its mapping's end stays in the mapping" \
		"ok samples=1 total=3|addresses user=2 kernel=0 zero_on_mapping=0 unmapped=0" \
		"$("$PPROF_CHECK" --addresses "$T/addr/end.pb.gz" | paste -sd'|')"
fi

# Inlined frames from real DWARF, end to end: a leaf inside inner(),
# inlined into mid(), inlined into outer(), gives one location whose Line
# entries are innermost first, each function with its start line, and a
# mapping that says it has inline frames.
mkdir -p "$T/inl3"
printf '%s\n' 'static inline __attribute__((always_inline)) int inner(int n) { return n * 3 + 1; }' \
	'static inline __attribute__((always_inline)) int mid(int n) { return inner(n) ^ 5; }' \
	'__attribute__((noinline)) int outer(int n) { return mid(n) + 7; }' \
	'int main(int c, char **v) { (void)v; return outer(c); }' >"$T/inl3/inl.c"
if cc -O2 -g -o "$T/inl3/app" "$T/inl3/inl.c" && command -v nm >/dev/null &&
	chain=$(addr2line -f -i -e "$T/inl3/app" "$(nm "$T/inl3/app" | awk '$3 == "outer" { print $1 }')" | sed -n 'p;n' | paste -sd' ') &&
	[ "$chain" = "inner mid outer" ]; then
	{ capture_head "$T/inl3/app" 4194002 app
	  printf '@stackfold[4194002, 4194002, app, \n    0x%x\n, ]: 3\n' \
		$((CAP_BASE + 0x$(nm "$T/inl3/app" | awk '$3 == "outer" { print $1 }'))); } >"$T/inl3/cap.raw"
	"$STACKFOLD" -q -f folded,pprof -o "$T/inl3/o" "$T/inl3/cap.raw" 2>"$T/err"
	check_eq "inlined frames: folded" "app;outer;mid_[i];inner_[i] 3" "$(cat "$T/inl3/o.folded")"
	gopprof -raw -symbolize=none "$T/inl3/o.pb.gz" >"$T/inl3/raw" 2>"$T/goerr"
	check_eq "inlined frames: one location, Lines innermost first, with start lines" \
		"M=1 inner $T/inl3/inl.c:1 s=1|mid $T/inl3/inl.c:2 s=2|outer $T/inl3/inl.c:3 s=3" \
		"$(sed -n '/^Locations/,/^Mappings/p' "$T/inl3/raw" | sed -n '2,4p' | sed 's/^ *1: 0x[0-9a-f]* //; s/^ *//' | paste -sd'|')"
	check "inlined frames: the mapping has functions, files, lines and inline frames" \
		grep -qE '^1: .*/app [0-9a-f]+ \[FN\]\[FL\]\[LN\]\[IN\]' "$T/inl3/raw"
else
	skip "inlined frames from DWARF" "cc, nm or addr2line missing, or no inline chain at outer's start"
fi

# A user stack whose leaf is in the vsyscall page (0xffffffffff600000,
# above the kernel half, but user text): its frames stay user frames, on
# no kernel mapping.
if [ -s "$T/addr/cap.raw" ]; then
	sed '/^@stackfold/,$d' "$T/addr/cap.raw" >"$T/addr/vsys.raw"
	printf '@stackfold[4194001, 4194001, app, \n    0xffffffffff600400\n    %s\n, ]: 4\n' "$a_main" >>"$T/addr/vsys.raw"
	"$STACKFOLD" -q -f folded,pprof -o "$T/addr/vsys" "$T/addr/vsys.raw" 2>"$T/err"
	check_eq "vsyscall leaf: user frames, no kernel frame" "app;main;[unknown] 4" "$(cat "$T/addr/vsys.folded")"
	check_eq "vsyscall leaf: valid, none on the kernel mapping" \
		"ok samples=1 total=4|addresses user=1 kernel=0 zero_on_mapping=0 unmapped=0" \
		"$("$PPROF_CHECK" --addresses "$T/addr/vsys.pb.gz" 2>&1 | paste -sd'|')"
fi

# JIT code mapped after the process's last snapshot (a JIT's code space
# made after a short command's first sample, the command gone by the
# end): named by the process's perf map, a return address at address-1,
# as JIT frames on no mapping; an address the perf map does not name stays
# [unknown], as does everything without the perf map.
if [ -s "$T/addr/cap.raw" ]; then
	pm=/tmp/perf-4194001.map
	sed '/^@stackfold/,$d' "$T/addr/cap.raw" >"$T/addr/jit.raw"
	printf '@stackfold[4194001, 4194001, app, \n    0x7f0000001010\n    0x7f0000002010\n    %s\n, ]: 5\n' \
		"$a_main" >>"$T/addr/jit.raw"
	printf '@stackfold[4194001, 4194001, app, \n    0x7f0000009000\n    %s\n, ]: 2\n' "$a_main" >>"$T/addr/jit.raw"
	printf '7f0000001000 100 jit_leaf\n7f0000002000 10 jit_caller\n7f0000002010 10 jit_after\n' >"$pm"
	"$STACKFOLD" -v -f folded,pprof -o "$T/addr/jit" "$T/addr/jit.raw" 2>"$T/addr/jit.err"
	rm -f "$pm"
	check_eq "JIT code outside the saved map: named by the perf map" \
		"app;main;[unknown] 2|app;main;jit_caller_[j];jit_leaf_[j] 5" "$(paste -sd'|' "$T/addr/jit.folded")"
	check "JIT code outside the saved map: only the address it does not name is unsymbolized" \
		grep -q "; 2 unsymbolized frame samples" "$T/addr/jit.err"
	# (the one it does not name is the shared synthetic [unknown])
	check_eq "JIT code outside the saved map: valid pprof, its locations on no mapping" \
		"ok samples=2 total=7|addresses user=1 kernel=0 zero_on_mapping=0 unmapped=2" \
		"$("$PPROF_CHECK" --addresses "$T/addr/jit.pb.gz" 2>&1 | paste -sd'|')"
	check "JIT code outside the saved map: pprof has the JIT functions" \
		grep -q "jit_caller" <(gzip -dc "$T/addr/jit.pb.gz")
	"$STACKFOLD" -q -f folded -o "$T/addr/nojit.folded" "$T/addr/jit.raw" 2>/dev/null
	check_eq "JIT code outside the saved map: without a perf map, [unknown]" \
		"app;main;[unknown] 2|app;main;[unknown];[unknown] 5" "$(paste -sd'|' "$T/addr/nojit.folded")"
fi

# Kernel frames bpftrace named (0.17 prints them with their address): a
# return address is a location of its own, written as the call's last byte,
# apart from the same number as a leaf, as user frames are.
if [ -s "$T/addr/cap.raw" ]; then
	sed '/^@stackfold/,$d' "$T/addr/cap.raw" >"$T/addr/kn.raw"
	printf '@stackfold[4194001, 4194001, app, \n    %s\n, \n\tffffffff81000110 a_fn+16\n\tffffffff81000220 b_fn+32\n]: 3\n' \
		"$a_main" >>"$T/addr/kn.raw"
	printf '@stackfold[4194001, 4194001, app, \n    %s\n, \n\tffffffff81000220 b_fn+32\n]: 2\n' "$a_main" >>"$T/addr/kn.raw"
	"$STACKFOLD" -q -f folded,pprof -o "$T/addr/kn" "$T/addr/kn.raw" 2>"$T/err"
	check_eq "named kernel frames: folded by name" "app;main;b_fn_[k] 2|app;main;b_fn_[k];a_fn_[k] 3" \
		"$(paste -sd'|' "$T/addr/kn.folded")"
	if gopprof -raw -symbolize=none "$T/addr/kn.pb.gz" >"$T/addr/kn.out" 2>"$T/goerr"; then
		check_eq "named kernel frames: a leaf at its address, a return address at the call's byte" \
			"0xffffffff81000110 a_fn|0xffffffff8100021f b_fn|0xffffffff81000220 b_fn" \
			"$(awk '/^ +[0-9]+: 0xffffffff/ { print $2, $4 }' "$T/addr/kn.out" | sort | paste -sd'|')"
	else
		fail "named kernel frames: go pprof -raw" "$(tail -5 "$T/goerr")"
	fi
fi

# A program whose path has "perf-" in it is no JIT: its frames are not
# marked _[j] (they were, when JIT frames were told by their module's name).
if [ -s "$T/addr/cap.raw" ] && mkdir -p "$T/addr/perf-tools" && cp "$T/addr/app" "$T/addr/perf-tools/app" &&
	capture_head "$T/addr/perf-tools/app" 4194001 app >"$T/addr/pt.raw"; then
	printf '@stackfold[4194001, 4194001, app, \n    %s\n, ]: 3\n' "$a_main" >>"$T/addr/pt.raw"
	check_eq "a program under a perf-* directory: not a JIT frame" "app;main 3" \
		"$("$STACKFOLD" -q -f folded "$T/addr/pt.raw" 2>&1)"
fi

# A leaf at the instruction after a call, and that call's return address:
# the same number, two places.  f_ends_in_call's last instruction calls
# the noreturn die(), so its return address is g_after's first byte.  Each
# must keep its own name in either order of input.
noret_capture() {	# DIR ORDER: writes DIR/ORDER.raw
	local d=$1 pid=4194002 g r1
	at() { printf '0x%x' $((CAP_BASE + 0x$(nm "$d/nr" | awk -v f="$1" '$3 == f { print $1 }') + $2)); }
	g=$(printf '@stackfold[%d, %d, nr, \n    %s\n    %s\n, ]: 2\n' $pid $pid "$(at g_after 0)" "$(at main 4)")
	r1=$(printf '@stackfold[%d, %d, nr, \n    %s\n    %s\n    %s\n, ]: 3\n' $pid $pid "$(at die 2)" "$(at g_after 0)" "$(at main 4)")
	capture_head "$d/nr" $pid nr
	if [ "$2" = leaf-first ]; then printf '%s\n%s\n' "$g" "$r1"; else printf '%s\n%s\n' "$r1" "$g"; fi
}
mkdir -p "$T/nr"
printf '%s\n' '__attribute__((noreturn, noinline)) void die(void) { for (;;) ; }' \
	'__attribute__((noinline)) void f_ends_in_call(void) { die(); }' \
	'__attribute__((noinline)) int g_after(int n) { return n + 1; }' \
	'int main(int argc, char **argv) { (void)argv; if (argc > 5) f_ends_in_call(); return g_after(argc); }' >"$T/nr/nr.c"
if ! cc -O0 -g -fno-inline -o "$T/nr/nr" "$T/nr/nr.c" 2>"$T/err"; then
	fail "leaf after a noreturn call: cc" "$(tail -3 "$T/err")"
elif ! nr_f=0x$(nm "$T/nr/nr" | awk '$3 == "f_ends_in_call" { print $1 }') ||
	! nr_g=0x$(nm "$T/nr/nr" | awk '$3 == "g_after" { print $1 }') || [ $((nr_g - nr_f)) != 9 ]; then
	skip "leaf after a noreturn call" "this compiler does not put g_after right after f_ends_in_call's call"
else
	for order in leaf-first return-first; do
		noret_capture "$T/nr" $order >"$T/nr/$order.raw"
		"$STACKFOLD" -q -f folded,pprof -o "$T/nr/$order" "$T/nr/$order.raw" 2>"$T/err"
		check_eq "leaf after a noreturn call, $order: each frame its own function" \
			"nr;main;f_ends_in_call;die 3|nr;main;g_after 2" "$(sort "$T/nr/$order.folded" | paste -sd'|')"
		check_eq "leaf after a noreturn call, $order: the return address written as the call's byte" \
			"$(printf '0x%x f_ends_in_call|0x%x g_after' $((nr_g + CAP_BASE - 1)) $((nr_g + CAP_BASE)))" \
			"$(gopprof -raw -symbolize=none "$T/nr/$order.pb.gz" 2>/dev/null | awk '/^ +[0-9]+: 0x[0-9a-f]+ M=1 (f_ends_in_call|g_after) / { print $2, $4 }' | sort | paste -sd'|')"
	done
fi

# has_functions says every location on the mapping has a function: a
# stripped library's static function, unnamed, leaves it unset, so a reader
# with the unstripped file symbolizes the mapping (go tool pprof
# -symbolize=local); a mapping whose every location is named keeps it.
mkdir -p "$T/hf/full"
printf '%s\n' 'static int __attribute__((noinline)) hidden_spin(int x) { for (int i = 0; i < x; i++) __asm__ volatile(""); return x; }' \
	'int plug_run(int x) { return hidden_spin(x) + 1; }' >"$T/hf/lib.c"
# (no build-id: Debian's go 1.19 pprof reads none from gcc's files and then
# refuses the local file as a "build-id mismatch")
if cc -O1 -g -fPIC -shared -Wl,--build-id=none -o "$T/hf/full/libhf.so" "$T/hf/lib.c" 2>"$T/err"; then
	strip --strip-unneeded -o "$T/hf/libhf.so" "$T/hf/full/libhf.so"
	hs=0x$(nm "$T/hf/full/libhf.so" | awk '$3 == "hidden_spin" { print $1 }')
	pr=0x$(nm "$T/hf/full/libhf.so" | awk '$3 == "plug_run" { print $1 }')
	flags() {	# RAW: the mapping's flags as go tool pprof -raw prints them
		"$STACKFOLD" -q -f pprof -o "$T/hf/x.pb.gz" "$1" 2>/dev/null
		gopprof -raw -symbolize=none "$T/hf/x.pb.gz" 2>/dev/null | awk '/^Mappings/ { m = 1; next } m && /libhf/ { print $NF }'
	}
	{ capture_head "$T/hf/libhf.so" 4194002 app
	  printf '@stackfold[4194002, 4194002, app, \n    0x%x\n    0x%x\n, ]: 5\n' $((CAP_BASE + hs + 4)) $((CAP_BASE + pr + 8)); } >"$T/hf/unres.raw"
	{ capture_head "$T/hf/libhf.so" 4194002 app
	  printf '@stackfold[4194002, 4194002, app, \n    0x%x\n, ]: 5\n' $((CAP_BASE + pr + 8)); } >"$T/hf/named.raw"
	check_eq "has_functions: unset on a mapping with an unnamed location" "" "$(flags "$T/hf/unres.raw" | grep -o '\[FN\]')"
	check_eq "has_functions: set when every location on it is named" "[FN]" "$(flags "$T/hf/named.raw" | grep -o '\[FN\]')"
	"$STACKFOLD" -q -f pprof -o "$T/hf/u.pb.gz" "$T/hf/unres.raw" 2>/dev/null
	check "has_functions: go tool pprof with the unstripped file names it" grep -q hidden_spin \
		<(cd "$T/hf" && HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath \
		  PPROF_BINARY_PATH=$T/hf/full go tool pprof -top -symbolize=local u.pb.gz 2>/dev/null)
else
	fail "has_functions: build a library" "$(tail -3 "$T/err")"
fi
# pprof re-symbolizes a mapping only when none of functions, filenames and
# line numbers is set: a library with DWARF and one unnamed location (in a
# sizeless asm label) says it has none of them: with filenames and line
# numbers kept, a reader with the binary would never look.
printf '%s\n' '__asm__(".text\nasm_spin:\n nop\n nop\n nop\n nop\n nop\n ret\n");' \
	'void asm_spin(void);' 'int plug_run(int x) { asm_spin(); return x + 1; }' >"$T/hf/asm.c"
if cc -O1 -g -fPIC -shared -Wl,--build-id=none -o "$T/hf/libhf.so" "$T/hf/asm.c" 2>"$T/err"; then
	as=0x$(nm "$T/hf/libhf.so" | awk '$3 == "asm_spin" { print $1 }')
	pr=0x$(nm "$T/hf/libhf.so" | awk '$3 == "plug_run" { print $1 }')
	{ capture_head "$T/hf/libhf.so" 4194002 app
	  printf '@stackfold[4194002, 4194002, app, \n    0x%x\n    0x%x\n, ]: 5\n' $((CAP_BASE + as + 2)) $((CAP_BASE + pr + 8)); } >"$T/hf/asm.raw"
	"$STACKFOLD" -q -f folded -o "$T/hf/asm.folded" "$T/hf/asm.raw" 2>/dev/null
	check_eq "has_*: the asm label is unnamed, its caller named" "app;plug_run;libhf.so+$(printf '0x%x' $((as + 2))) 5" "$(cat "$T/hf/asm.folded")"
	check_eq "has_*: none set on a mapping with DWARF and an unnamed location" "" "$(flags "$T/hf/asm.raw" | grep -o '\[[A-Z]*\]')"
	{ capture_head "$T/hf/libhf.so" 4194002 app
	  printf '@stackfold[4194002, 4194002, app, \n    0x%x\n, ]: 5\n' $((CAP_BASE + pr + 8)); } >"$T/hf/asmn.raw"
	check_eq "has_*: all set on it when every location is named" "[FN][FL][LN]" "$(flags "$T/hf/asmn.raw" | grep -o '\[[A-Z]*\]' | paste -sd '' -)"
else
	fail "has_*: build a library" "$(tail -3 "$T/err")"
fi

# A bare "_[k]" or "_[j]" is a name too: through a profile (pprof also
# written) it was an empty frame, marked ("[empty]_[j]"), while folded
# alone kept "_[j]" (found by an audit against failure-cases.md, F12)
printf 'a;_[k];b 3\na;_[j];b 2\na;x_[j];y_[k] 1\n' >"$T/bare.folded"
"$STACKFOLD" -q "$T/bare.folded" >"$T/bare1.out"
"$STACKFOLD" -q -f folded,pprof -o "$T/bare2" "$T/bare.folded"
check_eq "bare _[k], _[j]: folded the same with and without pprof" "$(cat "$T/bare1.out")" \
	"$(cat "$T/bare2.folded")"
check_eq "bare _[k], _[j]: names, the same as the input" "$(sort "$T/bare.folded")" \
	"$(sort "$T/bare2.folded")"

# An empty stack and empty frames of folded input: named in pprof as the
# folded text names them, through a fold or through a profile alike
printf ' 7\n;; 2\nmain;x 3\n' >"$T/empty.folded"
"$STACKFOLD" -q "$T/empty.folded" >"$T/empty1.out"
"$STACKFOLD" -q -f folded,pprof -o "$T/empty2" "$T/empty.folded"
check_eq "empty stack and frames: folded the same with and without pprof" "$(cat "$T/empty1.out")" "$(cat "$T/empty2.folded")"
check_eq "empty stack and frames: pprof's names" "[empty] [no stack] main x" \
	"$(gopprof -top "$T/empty2.pb.gz" 2>/dev/null | awk '/^ +[0-9.]+[a-z]* +[0-9.]+%/ { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }' | sort | paste -sd' ')"

# --hz: the rate of a one-liner's output, which does not say it (99 unless
# given; taken outside `record` too); a capture's own rate wins
printf '@[\n        schedule+5\n]: 10\n' >"$T/hz.txt"
if protoc_prereq "--hz: the period written (protoc --decode)"; then
	"$STACKFOLD" -q -F 49 -f pprof -o "$T/hz49.pb.gz" "$T/hz.txt"
	check_eq "--hz 49 on one-liner text: period 1e9/49" "period: 20408163" "$(pb_decode "$T/hz49.pb.gz" | grep '^period:')"
	"$STACKFOLD" -q -f pprof -o "$T/hz99.pb.gz" "$T/hz.txt"
	check_eq "no --hz: 99" "period: 10101010" "$(pb_decode "$T/hz99.pb.gz" | grep '^period:')"
	{ printf '#meta hz 999\n'; cat "$T/hz.txt"; } >"$T/hzmeta.txt"
	"$STACKFOLD" -q -F 49 -f pprof -o "$T/hzm.pb.gz" "$T/hzmeta.txt"
	check_eq "--hz does not override the input's own rate" "period: 1001001" "$(pb_decode "$T/hzm.pb.gz" | grep '^period:')"
fi

# Several captures: their rate must agree (samples of two rates weigh
# differently: refused, exit 2), and the profile spans from the earliest
# start to the latest end (the last input's rate, start and duration do
# not win, and a 99 Hz capture's samples do not weigh as 49 Hz ones).
mcap() { printf '#meta hz %s\n#meta start_ns %s\n#meta duration_ns %s\n@[\n        schedule+5\n]: 10\n' "$@"; }
mcap 99 1000000000000 2000000000 >"$T/m1.txt"
mcap 99 1005000000000 3000000000 >"$T/m2.txt"
mcap 49 1001000000000 1000000000 >"$T/m3.txt"
"$STACKFOLD" -q -f pprof -o "$T/m12.pb.gz" "$T/m2.txt" "$T/m1.txt"
protoc_prereq "two captures: from the earliest start to the latest end" &&
	check_eq "two captures: from the earliest start to the latest end" \
		"time_nanos: 1000000000000|duration_nanos: 8000000000" \
		"$(pb_decode "$T/m12.pb.gz" | grep -E '^(time|duration)_nanos:' | paste -sd '|')"
"$STACKFOLD" -q -f folded "$T/m1.txt" "$T/m3.txt" >/dev/null 2>"$T/m13.err"
check_eq "captures of two rates: refused, exit 2, one line naming the input" \
	"2|stackfold: $T/m3.txt: sampled at 49 Hz, an earlier input at 99 Hz: samples of different rates cannot be added into one profile" \
	"$?|$(cat "$T/m13.err")"

# --countname: counts that are not samples (bt/offcpu.bt's nanoseconds)
# are one value type in their unit, period 1: `go tool pprof` shows the
# example of offcpu.bt's header, 1.8 s off-CPU, as 1.80s (written as
# samples times 1e9/HZ they would read 5057 hours, and a sum past ~913 s
# would overflow in the reader).
sed -n '/^\/\/   @offcpu/,/^\/\/   \]:/p' "$TOP/bt/offcpu.bt" | sed 's#^//   ##' >"$T/offex.txt"
"$STACKFOLD" -q --countname ns -f pprof -o "$T/offex.pb.gz" "$T/offex.txt"
protoc_prereq "--countname ns: one value type, nanoseconds, period 1" &&
	check_eq "--countname ns: one value type, nanoseconds, period 1" \
		"n_sample_type=1|unit=nanoseconds|period=1" \
		"n_sample_type=$(pb_decode "$T/offex.pb.gz" | grep -c '^sample_type {')|unit=$(gopprof -raw -symbolize=none "$T/offex.pb.gz" 2>/dev/null | sed -n 's/^PeriodType: ns //p')|period=$(pb_decode "$T/offex.pb.gz" | sed -n 's/^period: //p')"
check "--countname ns: go tool pprof shows 1.80s" \
	grep -q 'accounting for 1.80s, 100% of 1.80s total' <(gopprof -top "$T/offex.pb.gz" 2>/dev/null)
check_eq "--countname ns: valid by every rule, total the nanoseconds" "ok samples=1 total=1802299353" \
	"$("$PPROF_CHECK" --no-time "$T/offex.pb.gz" 2>&1 | grep -o '^ok samples=[0-9]* total=[0-9]*')"

# A NUL byte in a frame name is '?', in pprof as in folded text: the pprof
# name is not cut at it ("b\0c" is not "b") and not merged with another
# function b.
printf 'a;b\000c;d 5\na;b 1\n' >"$T/nul.folded"
"$STACKFOLD" -q -f pprof -o "$T/nul.pb.gz" "$T/nul.folded"
check_eq "NUL in a name: its own function b?c, apart from b" "b|b?c" \
	"$(gopprof -raw -symbolize=none "$T/nul.pb.gz" 2>/dev/null | awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l && ($4 == "b" || $4 == "b?c") { print $4 }' | sort | paste -sd '|')"

# One file in two processes whose maps lines differ in device (overlayfs
# shows the mount's device with the lower layer's inode) is one mapping
# when it has a build-id, its identity; without one, device and inode are
# all that tells two files at one path apart: two mappings.
devcap() {	# DIR BUILDID-FLAG
	local d=$1 a=4194101 b=4194102
	printf 'int spin(void) { for (;;) ; }\nint main(void) { return spin(); }\n' >"$d/dv.c"
	cc -O0 -Wl,--build-id="$2" -o "$d/dv" "$d/dv.c" || return 1
	local at
	at=$(printf '0x%x' $((0x555555554000 + 0x$(nm "$d/dv" | awk '$3 == "spin" { print $1 }') + 4)))
	{
		capture_head "$d/dv" $a dv | sed 's/ 00:00 0 / fe:00 77 /'
		printf '@stackfold[%d, %d, dv, \n    %s\n, ]: 3\n' $a $a "$at"
		capture_head "$d/dv" $b dv | sed '1,3d; s/ 00:00 0 / fe:01 77 /'
		printf '@stackfold[%d, %d, dv, \n    %s\n, ]: 2\n' $b $b "$at"
	} >"$d/dv.raw"
	"$STACKFOLD" -q -f pprof -o "$d/dv.pb.gz" "$d/dv.raw" 2>/dev/null &&
		"$PPROF_CHECK" --sizes "$d/dv.pb.gz" | awk '$1 == "size" && $2 == "mapping" { sub(/n=/, "", $3); print $3 }'
}
mkdir -p "$T/dev1" "$T/dev2"
check_eq "one file under two devices, with a build-id: one mapping" 1 "$(devcap "$T/dev1" sha1)"
check_eq "... without one: two mappings (two files at one path)" 2 "$(devcap "$T/dev2" none)"
