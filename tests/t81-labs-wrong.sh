#!/usr/bin/env bash
# t81-labs-wrong: labs/check runs the programs students write (labs 1, 9,
# 10) against workloads where each plausible mistake gives another
# answer: every wrong program of tests/labs-wrong/ (EXERCISE-HOW.bt, a
# doctored answer each) is refused, and every right one, the solutions
# and the other formulations of tests/labs-right/, is accepted.  Live:
# root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

live_prereq "labs" || exit 0
plain_run_only "labs" || exit 0
if out=$(make -s -C "$TOP/labs" 2>&1); then pass "labs build"
else fail "labs build" "$out"; exit 0; fi

lab_of() {
	case $1 in
	count | hist | profile | interval) echo 1 ;;
	syscost) echo 9 ;;
	sleeps) echo 10 ;;
	esac
}

# run_one FILE: labs/check on FILE as the program it is named for (the
# name up to the first '-'); OUT is what the check printed.
run_one() {
	local f=$1 base ex
	base=$(basename "$f" .bt)
	ex=${base%%-*}
	rm -rf "$T/mine"; mkdir -p "$T/mine"
	cp "$f" "$T/mine/$ex.bt"
	mkdir -p "$T/out-$base"
	OUT=$(LAB_ONLY=$ex LAB_MINE=$T/mine "$TOP/labs/check" "$(lab_of "$ex")" "$T/out-$base" 2>&1)
}

for f in "$TOP"/tests/labs-wrong/*.bt; do
	run_one "$f"
	rc=$?
	p=$(grep "^PROBLEM: " <<<"$OUT" | head -n 1)
	if [ "$rc" = 1 ] && [ -n "$p" ]; then
		pass "labs/check refuses tests/labs-wrong/$(basename "$f"): $(cut -c10-150 <<<"$p")"
	else
		fail "labs/check refuses tests/labs-wrong/$(basename "$f")" "exit $rc" "$OUT"
	fi
done
for f in "$TOP"/labs/solutions/*.bt "$TOP"/tests/labs-right/*.bt; do
	run_one "$f"
	rc=$?
	if [ "$rc" = 0 ]; then
		pass "labs/check accepts ${f#"$TOP"/}: $(grep '^ok: ' <<<"$OUT" | head -n 1 | cut -c5-150)"
	else
		fail "labs/check accepts ${f#"$TOP"/}" "exit $rc" "$OUT"
	fi
done

# --- doctored profiles: one real run of labs 3, 4, 5 and 11, then each
# doctored answer the check must refuse.  A doctored folded file comes
# with its pprof made again from it, so that the refusal is the one the
# case is about.
export LAB_SECONDS=${LAB_SECONDS:-5} LAB_HZ=${LAB_HZ:-999}
# (lab 5 for twice as long: to tell prepare's 5% from compress's 10% it
# needs some 1,000 samples of shares-fp, and a busy machine gives it less
# than a CPU)
for s in 03-flame-graph 04-statistics 05-frame-pointers 06-dwarf 07-symbols 08-jit 11-pprof 12-overhead; do
	secs=$LAB_SECONDS
	[ "$s" != 05-frame-pointers ] || secs=$((2 * LAB_SECONDS))
	if LAB_SECONDS=$secs "$TOP/labs/$s.sh" "$T/lab${s%%-*}" >"$T/$s.log" 2>&1; then pass "lab $s runs"
	else fail "lab $s runs" "$(tail -n 5 "$T/$s.log")"; fi
done
for lab in 03 04 05 06 07 08 11 12; do
	out=$("$TOP/labs/check" "$((10#$lab))" "$T/lab$lab" 2>&1)
	check_eq "labs/check $lab accepts the run it is given" "" "$(grep '^PROBLEM' <<<"$out")"
done

# swap FILE A B, scale FILE K: FILE's frames A and B swapped; its counts
# times K.  Both in place.
swap() {
	awk -v a="$2" -v b="$3" '{ n = split($1, f, ";"); s = f[1]
		for (i = 2; i <= n; i++) { x = f[i]; if (x == a) x = b; else if (x == b) x = a; s = s ";" x }
		$1 = s; print }' "$1" >"$1.new" && mv "$1.new" "$1"
}
scale() { awk -v k="$2" '{ $NF = int($NF * k + 0.5); print }' "$1" >"$1.new" && mv "$1.new" "$1"; }
# repb NAME: NAME.pb.gz made again from NAME.folded
repb() { "$STACKFOLD" -q -f pprof "$1.folded" >"$1.pb.gz"; }
# windows FILE: windows.raw made again from windows.txt FILE
windows() { awk '{ printf "@[1]: %d\n@[0]: %d\nwindow\n", $2, $3 - $2 }' "$1" >"$(dirname "$1")/windows.raw"; }

# doctored LAB NAME FUNCTION: a copy of lab LAB's run, changed by
# FUNCTION (run in the copy), checked; PASS when the check refuses it.
doctored() {
	local lab=$1 name=$2 d=$T/bad$1-$RANDOM out rc
	rm -rf "$d"; cp -r "$T/lab$lab" "$d"
	(cd "$d" && "$3")
	out=$("$TOP/labs/check" "$((10#$lab))" "$d" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -q '^PROBLEM: ' <<<"$out"; then
		pass "labs/check $lab refuses $name: $(grep '^PROBLEM: ' <<<"$out" | head -n 1 | cut -c10-170)"
	else
		fail "labs/check $lab refuses $name" "exit $rc" "$out"
	fi
}
d3_swap() { swap shares.folded parse_record compress; repb shares; }
d3_bogus() {	# matrix_multiply 70% -> 55%, bogus_function 15%
	awk '$1 ~ /;matrix_multiply$/ { b = int($NF * 15 / 70 + 0.5); x = $1
		sub(/;matrix_multiply$/, ";bogus_function", x); if (b) print x, b; $NF -= b } $NF > 0 { print }' shares.folded >x
	mv x shares.folded; repb shares
}
d3_junk() { head -c 300 /dev/urandom | gzip >shares.pb.gz; }
d3_scaled() { scale shares.folded 1.5; repb shares; }
doctored 03 "parse_record and compress swapped" d3_swap
doctored 03 "an invented bogus_function in half the matrix_multiply stacks" d3_bogus
doctored 03 "a junk shares.pb.gz" d3_junk
doctored 03 "counts x1.5" d3_scaled

d4_thin() { awk '{ $2 = int($2 * 0.7); print }' windows.txt >x; mv x windows.txt; }
d4_scaled() { awk '{ $2 = int($2 * 1.5); $3 = int($3 * 1.5); print }' windows.txt >x; mv x windows.txt; }
d4_first10() { head -n 10 windows.txt >x; mv x windows.txt; }
d4_twice() { awk '{ print; print }' windows.txt | awk '{ $1 = NR; print }' >x; mv x windows.txt; }
d4_sorted() {	# by heads' share of the window
	awk '{ print $2 / $3, $0 }' windows.txt | sort -k1,1g | cut -d' ' -f2- | awk '{ $1 = NR; print }' >x
	mv x windows.txt
}
d4_synthetic() {
	awk 'BEGIN { srand(7) } { h = 0; for (i = 0; i < $3; i++) h += rand() < 0.25; $2 = h; print }' windows.txt >x
	mv x windows.txt
}
# the same with bpftrace's output (windows.raw) made to match
d4_scaled_raw() { d4_scaled; windows windows.txt; }
d4_first10_raw() { d4_first10; windows windows.txt; }
d4_twice_raw() { d4_twice; windows windows.txt; }
d4_sorted_raw() { d4_sorted; windows windows.txt; }
for c in thin scaled first10 twice sorted synthetic scaled_raw first10_raw twice_raw sorted_raw; do
	doctored 04 "windows: $c" "d4_$c"
done

d5_swap() { swap fp.folded prepare compress; swap nofp.folded prepare compress; }
d5_x100() { scale fp.folded 100; scale nofp.folded 100; }
d5_top2() { sort -t' ' -k2,2rn nofp.folded | head -n 2 >x; mv x nofp.folded; }
d5_oneline() { head -n 1 nofp.folded >x; mv x nofp.folded; }
d5_fp_as_nofp() { sed 's/^shares-fp;/shares-nofp;/' fp.folded >nofp.folded; }
for c in swap x100 top2 oneline fp_as_nofp; do doctored 05 "$c" "d5_$c"; done

d11_junk() { head -c 300 /dev/urandom | gzip >before.pb.gz; }
d11_top() { printf '      flat  flat%%   sum%%        cum   cum%%\n     700ms 70.00%% 70.00%%      700ms 70.00%%  matrix_multiply\n' >before.pprof-top.txt; }
d11_svg() { printf '<svg><g><title>all (1 samples, 100%%; -30%%)</title></g>\n<g><title>matrix_multiply (1 samples, 100%%; -30%%)</title></g></svg>\n' >diff.svg; }
for c in junk top svg; do doctored 11 "$c" "d11_$c"; done

d6_fp_as_dwarf() {
	sed 's/^shares-fp;/shares-nofp;/' fp.folded >dwarf.folded
	sed 's/^shares-fp;/shares-nofp;/' fp.folded >perf.folded
}
d6_size() { sed 's/[0-9]* bytes a sample/800 bytes a sample/' perf-size.txt >x; mv x perf-size.txt; }
d6_noraw() { rm -f dwarf.raw; }
for c in fp_as_dwarf size noraw; do doctored 06 "$c" "d6_$c"; done

d7_copied() {
	{ grep -v -e '^shares-dbglink;' -e '^shares-buildid;' symbols.folded
	  grep '^shares-sym;' symbols.folded | sed 's/^shares-sym;/shares-dbglink;/'
	  grep '^shares-sym;' symbols.folded | sed 's/^shares-sym;/shares-buildid;/'; } >x
	mv x symbols.folded
}
doctored 07 "shares-sym's lines copied in as dbglink and buildid" d7_copied

d8_6337() { awk '$1 ~ /^jit-map;/ && $1 ~ /jit_hot_\[j\]/ { $NF = int($NF * 0.57 + 0.5) } $NF > 0 { print }' jit.folded >x; mv x jit.folded; }
d8_inverted() {
	awk '{ n = split($1, f, ";"); s = f[1]; for (i = n; i >= 2; i--) s = s ";" f[i]; $1 = s; print }' jit.folded >x
	mv x jit.folded
}
d8_three() {
	printf '%s\n' 'jit-map;main;run_jitted;jit_hot_[j] 750' 'jit-map;main;run_jitted;jit_cold_[j] 250' \
		'jit-nomap;main;run_jitted;[anon]+0x10 1000' >jit.folded
}
for c in 6337 inverted three; do doctored 08 "$c" "d8_$c"; done

d12_bpf1() { sed -i 's/^\(mode=aggregate .*\)runs=[0-9]* \(.*\)bpf_run_ns=[0-9]*/\1runs=1 \2bpf_run_ns=1/' aggregate.stats; cat aggregate.stats printf.stats printf-cached.stats >overhead.txt; }
d12_three() {
	printf '%s\n' 'mode=aggregate seconds=3 runs=6000 bpftrace_cpu_ns=1000000 bpf_run_ns=3000000 emitted=3000 printed=0 emitted_total=3000 printed_total=0 lost_total=0' \
		'mode=printf seconds=3 runs=6000 bpftrace_cpu_ns=300000000 bpf_run_ns=9000000 emitted=3000 printed=3000 emitted_total=3000 printed_total=3000 lost_total=0' \
		'mode=printf-cached seconds=3 runs=6000 bpftrace_cpu_ns=30000000 bpf_run_ns=9000000 emitted=3000 printed=3000 emitted_total=3000 printed_total=3000 lost_total=0' >overhead.txt
}
for c in bpf1 three; do doctored 12 "$c" "d12_$c"; done
