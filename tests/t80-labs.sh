#!/usr/bin/env bash
# t80-labs: every lab end to end, as a student would run it (shorter: 3
# to 10 s captures at 999 Hz), then labs/check on what it produced, and
# on doctored copies of it (each must be refused); the bt/ family each
# alone through bpftrace and stackfold.  Live: root and bpftrace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/lab_secs.sh
. "$(dirname "$0")/tools/lab_secs.sh"

live_prereq "labs" || exit 0
plain_run_only "labs" || exit 0

if out=$(make -s -C "$TOP/labs" 2>&1); then pass "labs build (-Wall -Wextra -Werror)"
else fail "labs build" "$out"; exit 0; fi

# --- the bt/ family: lint with bpftrace -d (parse, semantic checks), then a
# real run whose output stackfold must accept.
# Every bt/*.bt (HZ PID FLUSH where it takes them; extra arguments are
# ignored), not only the labs' own.
# bt/profile-python.bt also takes SECS, the interpreter's offsets and its
# file (stackfold pyoffsets), its inode, device and hold flag, and --unsafe
# for its signal(); bt/continuous-python.bt the offsets, inode and device.
pyargs=$("$STACKFOLD" pyoffsets --bt-args "$(readlink -f /usr/bin/python3)" 2>&1) ||
	fail "stackfold pyoffsets --bt-args python3 (python3.11-dbg installed?)" "$pyargs"
for bt in "$TOP"/bt/*.bt; do
	if [ "$(basename "$bt")" = profile-python.bt ]; then
		# shellcheck disable=SC2086 # the offsets, one word each
		check "bt/$(basename "$bt") passes bpftrace -d" bpftrace --unsafe -d "$bt" 99 0 10 0 $pyargs 0 0 1
		continue
	fi
	if [ "$(basename "$bt")" = continuous-python.bt ]; then
		# the offsets (not the file), inode, device
		# shellcheck disable=SC2086 # the offsets, one word each
		check "bt/$(basename "$bt") passes bpftrace -d" bpftrace -d "$bt" 99 0 10 ${pyargs%%$'\n'*} 0 0
		continue
	fi
	check "bt/$(basename "$bt") passes bpftrace -d" bpftrace -d "$bt" 99 0 10
done

# run_bt SECONDS OUT ARGS...: bpftrace ARGS with stdout in OUT, stopped as
# Ctrl-C would SECONDS after it attached (labs/lib.sh's capture).
run_bt() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	bash -c '. "$1"; shift; capture "$@"' bash "$TOP/labs/lib.sh" "$1" "$2" bpftrace "${@:3}" 2>"$2.err"
}

"$TOP/labs/build/syscalls" 0 &
work=$!
run_bt 1 "$T/kprofile.txt" "$TOP/bt/kprofile.bt" 99
run_bt 1 "$T/threads.txt" "$TOP/bt/threads.bt" 99 "$work"
kill "$work"; wait "$work" 2>/dev/null
if "$STACKFOLD" -q "$T/kprofile.txt" >"$T/kprofile.folded" 2>"$T/err" &&
	grep -q '^syscalls;.*_\[k\] [0-9]*$' "$T/kprofile.folded"; then
	pass "bt/kprofile.bt output -> stackfold: kernel stacks of the workload"
else
	fail "bt/kprofile.bt output -> stackfold" "$(cat "$T/err")" "$(head -n 5 "$T/kprofile.folded")"
fi
n=$("$STACKFOLD" -q --tid "$T/threads.txt" 2>"$T/err" | awk -v p="syscalls/$work" '$1 == p { print $2 }')
# buf(comm, 16): "syscalls" and its NUL padding, 8 bytes printed as \x00
pad=$(printf '\\x00%.0s' 1 2 3 4 5 6 7 8)
raw=$(K="@threads[$work, $work, syscalls$pad]:" awk 'index($0, ENVIRON["K"]) == 1 { print $NF }' "$T/threads.txt")
if [ -n "$raw" ] && [ "$raw" -gt 0 ] && [ "${n:-}" = "$raw" ]; then
	pass "bt/threads.bt output -> stackfold --tid: syscalls/$work, $n samples as bpftrace counted"
else
	fail "bt/threads.bt output -> stackfold --tid" "bpftrace: '${raw:-}' samples, stackfold: '${n:-}'" "$(cat "$T/err")"
fi

# --- each lab: the script, then labs/check on its output.  The labs where
# students write bpftrace (1, 9, 10, 13-17) are checked with the solutions in
# labs/solutions/.
# 999 Hz: enough samples to judge a 5% share in 3 s even when the
# workload gets a third of a CPU.
# The labs whose doctored outputs are refused below (3, 4, 6, 7, 8, 11,
# 12) run for LAB_SECONDS_LONG (default 5), lab 5 for twice that
# (tests/tools/lab_secs.sh, shared with tests/labs-loaded): the
# planted differences must be several standard errors apart (lab 8's hot
# 75% against a doctored 63% needs some 2,500 samples of jit-map; to
# tell lab 5's prepare 5% from compress 10%, some 1,000 samples of
# shares-fp, when a busy machine gives it less than a CPU).  One run
# serves both the check of the right answer and the doctored ones.
export LAB_SECONDS=${LAB_SECONDS:-3} LAB_HZ=${LAB_HZ:-999}
LONG=${LAB_SECONDS_LONG:-5}
SOL=$TOP/labs/solutions
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
has_dwarf=0
RAN=""	# the labs that ran
"$TOP/scripts/profile" --help 2>&1 | grep -q -- '--call-graph' && has_dwarf=1
for script in "$TOP"/labs/[0-9][0-9]-*.sh; do
	name=$(basename "$script" .sh)
	n=${name%%-*}
	dir=$T/lab$n
	if [ "$n" = 06 ] && [ "$has_dwarf" = 0 ]; then
		# Until scripts/profile has --call-graph: one clear line, exit 1.
		"$script" "$dir" >"$T/$name.out" 2>"$T/$name.err"
		rc=$?
		if [ "$rc" = 1 ] && [ "$(grep -c . "$T/$name.err")" = 1 ] && grep -q -- '--call-graph' "$T/$name.err"; then
			pass "lab $name without scripts/profile --call-graph stops with one line: $(cat "$T/$name.err")"
		else
			fail "lab $name without --call-graph stops with one line" "exit $rc" "$(head -n 5 "$T/$name.err")"
		fi
		if [ "${CI:-}" = true ]; then fail "lab $name runs" "scripts/profile has no --call-graph dwarf"
		else skip "lab $name runs" "scripts/profile has no --call-graph dwarf yet"; fi
		continue
	fi
	secs=$(lab_secs "$n" "$LAB_SECONDS" "$LONG")
	start=$(date +%s)
	LAB_SECONDS=$secs LAB_MINE=$T/mine "$script" "$dir" >"$T/$name.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		pass "lab $name runs ($(( $(date +%s) - start )) s)"
		RAN="$RAN $n"
	else
		why="exit status $rc"
		[ "$rc" -le 128 ] || why="$why (killed by signal $((rc - 128)))"
		fail "lab $name runs" "$why" "$(tail -n 15 "$T/$name.log")"
		continue
	fi
	start=$(date +%s)
	if out=$(LAB_MINE=$SOL "$TOP/labs/check" "$n" "$dir" 2>&1); then
		pass "labs/check $n: the finding is visible ($(( $(date +%s) - start )) s)"
	else
		fail "labs/check $n" "$(grep -v '^ok:' <<<"$out")"
	fi
done
check_eq "lab 12 restores kernel.bpf_stats_enabled" "$stats_before" "$(sysctl -n kernel.bpf_stats_enabled)"
check "lab 1 gave the student the outlines" test -s "$T/mine/count.bt" -a -s "$T/mine/interval.bt"

# --- labs/check must say no to wrong programs: the wrong ones in
# tests/labs-wrong/ (each named in a PROBLEM line) and the untouched
# outlines of labs/exercises/.
wrong_programs() {	# LAB PROGRAM...
	local lab=$1 out p missed=""
	shift
	if out=$(LAB_MINE=$TOP/tests/labs-wrong "$TOP/labs/check" "$lab" "$T/lab$lab" 2>&1); then
		fail "labs/check $lab rejects wrong programs" "it accepted:" "$out"
		return
	fi
	for p in "$@"; do grep -q "^PROBLEM: $p" <<<"$out" || missed="$missed $p"; done
	check_eq "labs/check $lab rejects each wrong program (tests/labs-wrong)" "" "$missed"
	[ -z "$missed" ] || printf '    %s\n' "$out"
}
[ -d "$T/lab01" ] && wrong_programs 01 count.bt hist.bt matrix_multiply interval.bt
[ -d "$T/lab09" ] && wrong_programs 09 syscost.bt
[ -d "$T/lab10" ] && wrong_programs 10 sleeps.bt
[ -d "$T/lab13" ] && wrong_programs 13 orders.bt
[ -d "$T/lab14" ] && wrong_programs 14 execs.bt
[ -d "$T/lab15" ] && wrong_programs 15 latency.bt
[ -d "$T/lab16" ] && wrong_programs 16 runqlat.bt
# lab 17's wrong programs (tests/labs-wrong/17-*) are t81's.  Its output
# doctored: the hole's histogram made the data half's (the counts kept),
# the planted difference gone.
if [ -d "$T/lab17" ]; then
	rm -rf "$T/bad17"; cp -r "$T/lab17" "$T/bad17"
	dev=$(awk -F= '$1 == "dev" { print $2 }' "$T/lab17/lab.env")
	awk -v dh="@usecs[$dev, data]:" -v hh="@usecs[$dev, hole]:" '
		NR == FNR { if (index($0, dh) == 1) on = 1; else if (/^@/ || /^$/) on = 0; else if (on) d = d $0 "\n"; next }
		index($0, hh) == 1 { print; printf "%s", d; skip = 1; next }
		skip && (/^@/ || /^$/) { skip = 0 }
		!skip' "$T/lab17/bio.txt" "$T/lab17/bio.txt" >"$T/bad17/bio.txt"
	out=$(LAB_MINE=$T/nomine "$TOP/labs/check" 17 "$T/bad17" 2>&1)
	if grep -q "^PROBLEM: 95% of the data half" <<<"$out"; then
		pass "labs/check 17 refuses a hole as slow as the data half: $(grep -m1 '^PROBLEM: 95%' <<<"$out" | cut -c10-150)"
	else
		fail "labs/check 17 refuses a hole as slow as the data half" "$out"
	fi
fi
if [ -d "$T/lab01" ]; then
	out=$(LAB_MINE=$TOP/labs/exercises "$TOP/labs/check" 1 "$T/lab01" 2>&1)
	n=$(grep -c '^PROBLEM:' <<<"$out")
	if [ "$n" -ge 4 ]; then pass "labs/check 1 rejects the untouched outlines ($n problems)"
	else fail "labs/check 1 rejects the untouched outlines" "$out"; fi
fi

# --- labs/check must say no to doctored outputs.  For each lab, its main
# file with a function removed, two shares swapped, another lab's file in
# its place, or emptied; the check must fail with a PROBLEM line about the
# profile (not about the student's programs, left out here).
# lab: FILE FRAMES-TO-REMOVE (a regular expression) SWAP-A SWAP-B
# ANOTHER-LAB'S-FILE
doctor_spec() {
	case $1 in
	02) echo 'trace.folded ^vfs_read_\[k\]$ vfs_read_[k] vfs_write_[k] lab03/shares.folded' ;;
	03) echo "shares.folded ^checksum$ matrix_multiply compress lab02/trace.folded" ;;
	05) echo "fp.folded ^main$ fp.folded nofp.folded lab03/shares.folded" ;;
	06) echo "dwarf.folded ^read_data$ dwarf.folded nofp.folded lab09/syscalls.folded" ;;
	07) echo "symbols.folded ^matrix_multiply$ shares-sym shares-strip lab05/nofp.folded" ;;
	08) echo 'jit.folded ^jit_cold_\[j\]$ jit-map jit-nomap lab07/symbols.folded' ;;
	09) echo "syscalls.folded ^sum_user$ sum_user tiny_writes lab10/offcpu.folded" ;;
	10) echo "offcpu.folded futex sleeper reader lab09/syscalls.folded" ;;
	11) echo "before.folded ^matrix_multiply$ before.folded after.folded lab09/syscalls.folded" ;;
	12) echo "overhead.txt - aggregate printf lab03/shares.folded" ;;
	04) echo "windows.txt - - - lab03/shares.folded" ;;
	esac
}
# swap_names FILE A B: every frame (or word) A becomes B and B becomes A.
swap_names() {
	awk -v a="$2" -v b="$3" '{ n = split($1, f, ";"); s = ""
		for (i = 1; i <= n; i++) { x = f[i]; if (x == a) x = b; else if (x == b) x = a
			s = s (i > 1 ? ";" : "") x }
		$1 = s; print }' "$1"
}
doctor() {	# LAB KIND: make $T/bad$LAB-KIND from $T/labLAB
	local lab=$1 kind=$2 file frame sa sb other d
	read -r file frame sa sb other <<<"$(doctor_spec "$lab")"
	d=$T/bad$lab-$kind
	rm -rf "$d"; cp -r "$T/lab$lab" "$d"
	case $kind in
	removed)
		case $lab in
		04) awk '{ $2 = 0; print }' "$T/lab$lab/$file" >"$d/$file" ;;
		12) grep -v '^mode=printf-cached ' "$T/lab$lab/$file" >"$d/$file" ;;
		*) RE=$frame awk '{ n = split($1, f, ";"); s = ""
			for (i = 1; i <= n; i++) if (f[i] !~ ENVIRON["RE"]) s = s (s == "" ? "" : ";") f[i]
			$1 = s; print }' "$T/lab$lab/$file" >"$d/$file" ;;
		esac ;;
	swapped)
		case $lab in
		04) awk '{ $2 = $3 - $2; print }' "$T/lab$lab/$file" >"$d/$file" ;;
		12) sed 's/^mode=aggregate /mode=TMP /; s/^mode=printf /mode=aggregate /; s/^mode=TMP /mode=printf /' \
			"$T/lab$lab/$file" >"$d/$file" ;;
		05 | 06 | 11) cp "$T/lab$lab/$sb" "$d/$sa"; cp "$T/lab$lab/$sa" "$d/$sb" ;;
		*) swap_names "$T/lab$lab/$file" "$sa" "$sb" >"$d/$file" ;;
		esac ;;
	other) cp "$T/$other" "$d/$file" ;;
	empty) : >"$d/$file" ;;
	esac
}
mkdir -p "$T/nomine"
for lab in 02 03 04 05 06 07 08 09 10 11 12; do
	read -r file frame sa sb other <<<"$(doctor_spec "$lab")"
	[ -s "$T/lab$lab/$file" ] || continue
	[ -s "$T/$other" ] || other=lab02/trace.folded
	for kind in removed swapped other empty; do
		doctor "$lab" "$kind"
		out=$(LAB_MINE=$T/nomine "$TOP/labs/check" "$lab" "$T/bad$lab-$kind" 2>&1)
		rc=$?
		if [ "$rc" = 1 ] && grep '^PROBLEM:' <<<"$out" | grep -qv "$T/nomine"; then
			pass "labs/check $lab fails on $file $kind: $(grep '^PROBLEM:' <<<"$out" | grep -v "$T/nomine" | head -n 1 | cut -c10-130)"
		else
			fail "labs/check $lab fails on $file $kind" "exit $rc" "$out"
		fi
	done
done

# --- more doctored answers, each a plausible wrong one (a student's
# mistake or a made-up file): a copy of the lab's run above, changed,
# must be refused.  A doctored folded file comes with its pprof made
# again from it, so that the refusal is the one the case is about.

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
# windows FILE: windows.raw made again from windows.txt FILE, its Nth
# window with the CPU time (@cpu) of the run's Nth window with samples.
windows() {
	awk '/^@\[[01]\]:/ { n += $2 } /^@cpu:/ { c = $2 } /^window$/ { if (n) print c; n = 0 }' \
		"$(dirname "$1")/windows.raw" >"$(dirname "$1")/cpus"
	awk 'FNR == NR { c[FNR] = $1; next }
		{ printf "@[1]: %d\n@[0]: %d\n", $2, $3 - $2; if (FNR in c) printf "@cpu: %s\n", c[FNR]; print "window" }' \
		"$(dirname "$1")/cpus" "$1" >"$(dirname "$1")/windows.raw"
}

# doctored LAB NAME FUNCTION: a copy of lab LAB's run, changed by
# FUNCTION (run in the copy), checked; PASS when the check refuses it.
doctored() {
	local lab=$1 name=$2 d=$T/bad$1-$RANDOM out rc
	[[ " $RAN " == *" $lab "* ]] || return 0	# its run failed (said above)
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
# made up whole: as many windows, each with the run's mean count and
# heads drawn at 25%, and a windows.raw to match (no CPU times: a file
# written without a run has none)
d4_synthetic_raw() {
	awk 'BEGIN { srand(7) } { n[NR] = $3; s += $3 } END { m = int(s / NR + 0.5)
		for (i = 1; i <= NR; i++) { h = 0; for (j = 0; j < m; j++) h += rand() < 0.25; print i, h, m } }' windows.txt >x
	mv x windows.txt
	awk '{ printf "@[1]: %d\n@[0]: %d\nwindow\n", $2, $3 - $2 }' windows.txt >windows.raw
}
# the same with bpftrace's output (windows.raw) made to match
d4_scaled_raw() { d4_scaled; windows windows.txt; }
d4_first10_raw() { d4_first10; windows windows.txt; }
d4_twice_raw() { d4_twice; windows windows.txt; }
d4_sorted_raw() { d4_sorted; windows windows.txt; }
for c in thin scaled first10 twice sorted synthetic synthetic_raw scaled_raw first10_raw twice_raw sorted_raw; do
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

# restat MODE: MODE.stats worked out again from MODE.readings and
# MODE.txt, as the lab's script does (a doctored answer made consistent);
# overhead: overhead.txt the three .stats put together.
restat() {
	awk -v m="$1" -f "$TOP/labs/overhead-stats.awk" "$1.readings" >"$1.stats"
	printf ' emitted_total=%s printed_total=%s lost_total=%s\n' "$(awk '/^@emitted: / { print $2 }' "$1.txt")" \
		"$(grep -c '^sample ' "$1.txt")" "$(awk '/^Lost/ { s += $2 } END { print s + 0 }' "$1.txt")" >>"$1.stats"
}
overhead() { cat aggregate.stats printf.stats printf-cached.stats >overhead.txt; }
# edit_stats KEY FORMULA: KEY's value in every .stats line becomes the
# awk FORMULA of it (v), overhead.txt to match.
edit_stats() {
	local m
	for m in aggregate printf printf-cached; do
		awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) { v = kv[2]; $i = k "=" sprintf("%.0f", '"$2"') } } print }' \
			"$m.stats" >x && mv x "$m.stats"
	done
	overhead
}
# edit_readings KEY FORMULA: the same in every reading (the end one's
# value only, for runs and BPF time: on bpftool's line), then the .stats
# and overhead.txt worked out again.
edit_readings() {
	local m
	for m in aggregate printf printf-cached; do
		awk -v k="$1" '$1 == "reading" { r = $2 } $1 == k { v = $2; $2 = sprintf("%.0f", '"$2"') }
			$1 == "bpftool" && r == "end" { for (i = 2; i < NF; i++) if ($i == k) { v = $(i + 1); $(i + 1) = sprintf("%.0f", '"$2"') } }
			{ print }' "$m.readings" >x && mv x "$m.readings"
		restat "$m"
	done
	overhead
}
d12_cpu10() { edit_stats bpftrace_cpu_ns 'v / 10'; }
d12_cpu10_readings() { edit_readings bpftrace_cpu_ns 'v / 10'; }
d12_bpf1() { sed -i 's/ runs=[0-9]* / runs=1 /; s/ bpf_run_ns=[0-9]* / bpf_run_ns=1 /' aggregate.stats; overhead; }
d12_bpf1_readings() {	# the end reading one run and 1 ns after the start one
	local m s0 c0
	for m in aggregate printf printf-cached; do
		read -r s0 c0 <<<"$(awk '$1 == "reading" { r = $2 } $1 == "bpftool" && r == "start" { for (i = 2; i < NF; i++) { if ($i == "run_time_ns") s = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } } END { print s, c }' "$m.readings")"
		edit_readings_one "$m" run_time_ns "$((s0 + 1))"
		edit_readings_one "$m" run_cnt "$((c0 + 1))"
		restat "$m"
	done
	overhead
}
edit_readings_one() {	# MODE KEY VALUE: the end reading's bpftool KEY
	awk -v k="$2" -v x="$3" '$1 == "reading" { r = $2 } $1 == "bpftool" && r == "end" { for (i = 2; i < NF; i++) if ($i == k) $(i + 1) = x } { print }' \
		"$1.readings" >x && mv x "$1.readings"
}
d12_three() {
	printf '%s\n' 'mode=aggregate seconds=3 runs=6000 bpftrace_cpu_ns=1000000 bpf_run_ns=3000000 emitted=3000 printed=0 emitted_total=3000 printed_total=0 lost_total=0' \
		'mode=printf seconds=3 runs=6000 bpftrace_cpu_ns=300000000 bpf_run_ns=9000000 emitted=3000 printed=3000 emitted_total=3000 printed_total=3000 lost_total=0' \
		'mode=printf-cached seconds=3 runs=6000 bpftrace_cpu_ns=30000000 bpf_run_ns=9000000 emitted=3000 printed=3000 emitted_total=3000 printed_total=3000 lost_total=0' >overhead.txt
}
d12_three_stats() {	# the same in the .stats files, in their format
	printf '%s\n' 'mode=aggregate window_ns=5000000000 runs=9970 bpf_run_ns=3000000 bpftrace_cpu_ns=1000000 bpftrace_ps_ns=0 work_cpu_ns=5000000000 emitted=4985 printed=0 emitted_total=6000 printed_total=0 lost_total=0' >aggregate.stats
	printf '%s\n' 'mode=printf window_ns=5000000000 runs=9970 bpf_run_ns=9000000 bpftrace_cpu_ns=900000000 bpftrace_ps_ns=900000000 work_cpu_ns=5000000000 emitted=4985 printed=4985 emitted_total=6000 printed_total=6000 lost_total=0' >printf.stats
	printf '%s\n' 'mode=printf-cached window_ns=5000000000 runs=9970 bpf_run_ns=9000000 bpftrace_cpu_ns=90000000 bpftrace_ps_ns=90000000 work_cpu_ns=5000000000 emitted=4985 printed=4985 emitted_total=6000 printed_total=6000 lost_total=0' >printf-cached.stats
	overhead
}
for c in cpu10 cpu10_readings bpf1 bpf1_readings three three_stats; do doctored 12 "$c" "d12_$c"; done

# lab 18: each doctored answer of tests/labs-wrong/18-*.sh (a script run
# in a copy of the lab's outputs) refused
d18() { bash "$D18"; }
for f in "$TOP"/tests/labs-wrong/18-*.sh; do D18=$f doctored 18 "$(basename "$f")" d18; done

# --- lab 7: the debug file gone, with a warm symbol cache.  The warm
# cache alone would still name shares-dbglink's functions; the lab
# symbolizes with an empty cache, so its check sees the file is gone.
if [ -d "$T/lab07" ]; then
	cp -a "$TOP/labs/build" "$T/build-nodebug"
	mm=$(nm "$T/build-nodebug/shares-sym" | awk '$3 == "matrix_multiply" { print $1 }')
	dbg=$T/build-nodebug/shares-dbglink
	echo "$dbg 0x$mm" | STACKFOLD_CACHE_DIR=$T/warm "$STACKFOLD" symbolize >/dev/null 2>&1
	rm "$T/build-nodebug/.debug/shares-dbglink.debug"
	warm=$(echo "$dbg 0x$mm" | STACKFOLD_CACHE_DIR=$T/warm "$STACKFOLD" symbolize 2>/dev/null | head -n 1)
	check_eq "a warm cache still names shares-dbglink without its debug file" matrix_multiply "$warm"
	if STACKFOLD_CACHE_DIR=$T/warm LAB_BUILD=$T/build-nodebug "$TOP/labs/07-symbols.sh" "$T/lab07-nodebug" >"$T/nodebug.log" 2>&1; then
		out=$("$TOP/labs/check" 7 "$T/lab07-nodebug" 2>&1)
		if grep -q '^PROBLEM: .*shares-dbglink' <<<"$out"; then
			pass "labs/check 7 sees the debug file gone, even with a warm cache"
		else
			fail "labs/check 7 sees the debug file gone" "$out"
		fi
	else
		fail "lab 07 runs without shares-dbglink's debug file" "$(tail -n 5 "$T/nodebug.log")"
	fi
	# The page's answer 1: the middle offset of offsets.txt is in run.
	mid=$(sed -n 2p "$T/lab07/offsets.txt")
	check_eq "lab 7's offsets.txt: the middle offset is in run (answer 1)" run "$(awk '{ print $2 }' <<<"$mid")"
fi

# --- a run too short to judge any designed share is not a pass: lab 3 at
# 3 Hz for 2 s gives a handful of samples, each share "not tested"
if LAB_SECONDS=2 LAB_HZ=3 LAB_MINE=$T/mine "$TOP/labs/03-flame-graph.sh" "$T/lab03-few" >"$T/few.log" 2>&1; then
	out=$("$TOP/labs/check" 3 "$T/lab03-few" 2>&1)
	check "labs/check 3 refuses a run too short to judge any share" \
		grep -q '^PROBLEM: none of the 6 shares this lab is built to show could be judged' <<<"$out"
else
	# no sample at all: the lab itself says so, also not a pass
	check "lab 03 at 3 Hz for 2 s: no sample, said" grep -q 'no samples' "$T/few.log"
fi

# --- a lab stops with one clear last line when its workload dies at once
# or during the capture (2 s in: on a loaded machine, perhaps before
# scripts/profile has started, which it then says).
cp -a "$TOP/labs/build" "$T/build-dead"
printf '#!/bin/sh\nexit 3\n' >"$T/build-dead/shares"
printf '#!/bin/sh\nsleep 2\nexit 3\n' >"$T/build-dead/shares-fp"
for c in "03-flame-graph:(no samples|could not start|shares .* died)" \
	"05-frame-pointers:(shares-fp .pid [0-9]*. died|could not start)"; do
	LAB_BUILD=$T/build-dead "$TOP/labs/${c%%:*}.sh" "$T/dead" >/dev/null 2>"$T/dead.err"
	rc=$?
	last=$(tail -n 1 "$T/dead.err")
	if [ "$rc" = 1 ] && grep -Eq "^lab: .*${c#*:}" <<<"$last"; then
		pass "lab ${c%%:*} with a dead workload stops with: $last"
	else
		fail "lab ${c%%:*} with a dead workload stops with one clear line" "exit $rc" "$(tail -n 5 "$T/dead.err")"
	fi
done

"$TOP/labs/check" 99 /tmp >/dev/null 2>&1
check_eq "labs/check with no such lab is a usage error (exit 2)" 2 "$?"
