#!/usr/bin/env bash
# t80-labs-docs: the labs' pages quote their scripts exactly and answer every
# question; labs scripts pass shellcheck and the lab programs compile with
# -Werror; every bt/*.bt follows the header convention and has a man page;
# every man page has the required sections and no groff warnings;
# collapse/ includes only the symbolizer's public headers and no two files
# include each other's (scripts/check-layers, also on a doctored copy that
# it must reject); docs/ and the README name only source files that exist
# (also on a doctored page).  Runs without root.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
plain_run_only "labs pages and scripts" || exit 0	# no binary run here

# --- lab pages
for page in "$TOP"/labs/[0-9][0-9]-*.md; do
	name=$(basename "$page" .md)
	script=$TOP/labs/$name.sh
	if [ ! -f "$script" ]; then fail "$name.md has a script" "no $script"; continue; fi
	# The page's one ```bash block must be the script, byte for byte.
	awk '/^```bash$/ { on = 1; next } on && /^```$/ { exit } on' "$page" >"$T/$name.quoted"
	check_diff "$name.md quotes labs/$name.sh exactly" "$script" "$T/$name.quoted"
	missing=""
	for s in '## Background' '## Steps' '## What to look for' '## Questions' '## Answers'; do
		grep -qx "$s" "$page" || missing="$missing '$s'"
	done
	check_eq "$name.md has every section" "" "$missing"
	q=$(awk '/^## Questions$/ { on = 1; next } /^## / { on = 0 } on && /^[0-9]+\. / { n++ } END { print n + 0 }' "$page")
	# the answers are on a page of their own, so a student tries first
	a=$(awk '/^[0-9]+\. / { n++ } END { print n + 0 }' "$TOP/labs/answers/$name.md" 2>/dev/null)
	check "$name.md links its answers, not prints them" grep -q "^In \[answers/$name.md\](answers/$name.md)" "$page"
	if [ "$q" -ge 3 ] && [ "$q" = "$a" ]; then pass "$name.md: $q questions, $a answers"
	else fail "$name.md answers every question" "questions: $q, answers: $a"; fi
done
NLABS=18
n=$(find "$TOP/labs" -maxdepth 1 -name '[0-9][0-9]-*.md' | wc -l)
check_eq "$NLABS lab pages" "$NLABS" "$n"
# numbered 01..NLABS without a gap, each with its labs/check number
want=$(seq -f '%02g' 1 "$NLABS" | tr '\n' ' ')
got=$(find "$TOP/labs" -maxdepth 1 -name '[0-9][0-9]-*.md' -printf '%f\n' | cut -c1-2 | sort | tr '\n' ' ')
check_eq "lab pages numbered 01-$NLABS" "$want" "$got"
missing=""
for page in "$TOP"/labs/[0-9][0-9]-*.md; do
	n=$(basename "$page" | cut -c1-2)
	grep -q "^declare -f check_$n\|^check_$n()" "$TOP/labs/check" || missing="$missing $n"
	grep -q "labs/check $((10#$n))\b" "$page" || missing="$missing $n(page)"
done
check_eq "labs/check has a check per lab, and each page runs it" "" "$missing"
# Numbers that depend on the compiler are printed by the lab's script,
# not quoted: no code offsets or source line numbers in lab 7's page.
check_eq "lab 7's page quotes no build-specific offsets or lines" "" \
	"$(grep -noE '(\+0x[0-9a-f]{3,}|0x1[0-9a-f]{3}\b|shares\.c:[0-9]+)' "$TOP/labs/07-symbols.md")"
# No dated asides in the pages, exercises and lab sources.
check_eq "lab pages and sources carry no dates" "" \
	"$(grep -nE '\b20[0-9]{2}-[0-9]{2}-[0-9]{2}\b' "$TOP"/labs/*.md "$TOP"/labs/src/*.c)"
# The One-Liner Tutorial, further reading for lab 1
check "lab 1 links the bpftrace One-Liner Tutorial" grep -q 'tutorial_one_liners' "$TOP/labs/01-bpftrace.md"
# Every program a student writes has an outline and a solution, and the
# test suite a wrong one.
for f in count hist profile interval syscost sleeps orders execs latency runqlat; do
	check "exercise $f.bt: outline, solution and a wrong one" \
		test -s "$TOP/labs/exercises/$f.bt" -a -s "$TOP/labs/solutions/$f.bt" -a -s "$TOP/tests/labs-wrong/$f.bt"
done
# lab 17's wrong ones are tests/labs-wrong/17-biolat-HOW.bt
check "exercise biolat.bt: outline, solution and a wrong one" \
	test -s "$TOP/labs/exercises/biolat.bt" -a -s "$TOP/labs/solutions/biolat.bt" -a -s "$TOP/tests/labs-wrong/17-biolat.bt"

# labs/check writes the output of the student's NAME.bt to NAME.txt in
# the lab's directory: no lab script may write a file of that name there,
# or the check of a second program (or a second check) reads the wrong one.
clash=""
for f in "$TOP"/labs/exercises/*.bt; do
	x=$(basename "$f" .bt)
	for s in "$TOP"/labs/[0-9][0-9]-*.sh; do
		! grep -q "\$OUT/$x\.txt" "$s" || clash="$clash $(basename "$s"): $x.txt;"
	done
done
check_eq "no lab script writes the file labs/check gives a student's program" "" "$clash"

# labs/check on a directory without the lab's files: a PROBLEM line and
# the summary, exit 1 (not lab.sh's failing-step exit of the lab scripts).
mkdir -p "$T/nolab"
why=""
for n in $(seq 1 "$NLABS"); do
	out=$(LAB_MINE=$T/nolab "$TOP/labs/check" "$n" "$T/nolab" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && grep -q '^PROBLEM: ' <<<"$out" && [ "$(tail -n 1 <<<"$out")" = "lab $n: not there yet (see PROBLEM lines)" ] &&
		! grep -q 'a step failed' <<<"$out" || why="$why lab $n (exit $rc: $(tail -n 1 <<<"$out"));"
done
check_eq "labs/check on missing files says which and ends with its summary" "" "$why"

# A correct lab 2 run on a busy machine (others' work took the CPUs: dd's
# read path is 2.9% of a whole-system profile, in 28 samples) passes: the
# check wants the finding in samples enough, not a share a quiet machine
# gives.
cp -r "$TOP/tests/labs-right/lab02-busy" "$T/lab02-busy"
printf '<svg>\n<title>vfs_read_[k] (1 samples, 1%%)</title>\n</svg>\n' >"$T/lab02-busy/trace.svg"
out=$("$TOP/labs/check" 2 "$T/lab02-busy" 2>&1)
check_eq "labs/check 2 accepts a correct run on a busy machine" "" "$(grep '^PROBLEM' <<<"$out")"

# --- shell and C hygiene
if command -v shellcheck >/dev/null 2>&1; then
	# From the top, so that the scripts' "source=" directives resolve.
	# shellcheck disable=SC2016 # $1 is expanded by the inner sh
	check "labs scripts pass shellcheck" sh -c 'cd "$1" && shellcheck -x labs/check labs/lib.sh labs/[0-9]*.sh tests/t80-labs*.sh' sh "$TOP"
	# every other shell script: no warning or error (style and info
	# notes, such as A && B || C, are allowed)
	# shellcheck disable=SC2016 # $1 is expanded by the inner sh
	check "scripts, bench and tests pass shellcheck -S warning" sh -c 'cd "$1" && shellcheck -x -S warning \
		scripts/profile scripts/continuous scripts/flame scripts/flame-range scripts/install-deps scripts/pids.sh scripts/caps.sh scripts/opts.sh scripts/sigint.sh scripts/check-layers tests/tools/bt_timeout \
		bench/*.sh tests/*.sh tests/run tests/tools/*.sh tests/fixtures/*/*.sh' sh "$TOP"
else
	skip "labs scripts pass shellcheck" "shellcheck not installed"
	skip "scripts, bench and tests pass shellcheck -S warning" "shellcheck not installed"
fi
for src in "$TOP"/labs/src/*.c; do
	check "$(basename "$src") compiles with -Wall -Wextra -Werror" \
		"${CC:-cc}" -O2 -Wall -Wextra -Werror -pthread -fsyntax-only "$src"
done

# --- layers: the symbolizer's public headers, no file cycles
check "collapse/ includes only the symbolizer's public headers; no file cycle" \
	"$TOP/scripts/check-layers"
# doctored copies it must reject: an internal header included from
# collapse/, and two headers that include each other
for doctor in 'collapse/cmd/cmd_symbolize.c:#include "elf/elfindex.h"' \
	'collapse/ingest/dwsample.h:#include "ingest/dwarfrec.h"'; do
	rm -rf "$T/layers" && mkdir -p "$T/layers" &&
		cp -r "$TOP/collapse" "$TOP/symbolizer" "$T/layers/" &&
		echo "${doctor#*:}" >>"$T/layers/${doctor%%:*}"
	out=$("$TOP/scripts/check-layers" "$T/layers" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -qF "${doctor%%:*}:" <<<"$out"; then
		pass "check-layers rejects ${doctor%%:*} + ${doctor#*:}"
	else
		fail "check-layers rejects ${doctor%%:*} + ${doctor#*:}" "exit $rc" "$out"
	fi
done

# --- docs name source files that exist.  stale_paths FILELIST DOC...: each
# path-looking string (x/y.c, y.h, z.sh, .bt, .proto, .md) of the DOCs that
# is neither a file of FILELIST nor the tail of one after a '/' (docs say
# cmd/x.c for collapse/cmd/x.c); placeholders (DIR/...) and dot-files
# (a run's .continuous.bt) are not sources.  One awk pass: under a second.
stale_paths() {
	local list=$1
	shift
	grep -oE '[A-Za-z0-9_./-]*[a-z_/]+\.(c|h|sh|bt|proto|md)\b' "$@" /dev/null |
		awk -F: 'NR == FNR { n = split($0, p, "/"); s = p[n]; have[s]
				for (i = n - 1; i >= 1; i--) { s = p[i] "/" s; have[s] }; next }
			{ q = $2; sub(/^(\.\.?\/)+/, "", q) }
			q ~ /^[A-Z]+\// || q ~ /^\./ || q ~ /^\/\// || (q in have) { next }
			{ print $1 ": " $2 }' "$list" -
}
(cd "$TOP" && { git ls-files 2>/dev/null || find . -type f ! -path './.git/*' | sed 's|^\./||'; }) >"$T/files"
check_eq "docs/*.md and README.md name only source files that exist" "" \
	"$(stale_paths "$T/files" "$TOP"/docs/*.md "$TOP/README.md")"
# a doctored page naming the pre-move paths must be reported
# shellcheck disable=SC2016 # Markdown backquotes, not a command substitution
printf 'In `symbolizer/base/util.c` and `collapse/output/atomic.h`, not `base/atomic.c`.\n' >"$T/doctored.md"
check_eq "the docs path check reports moved paths" \
	"$T/doctored.md: symbolizer/base/util.c $T/doctored.md: collapse/output/atomic.h " \
	"$(stale_paths "$T/files" "$T/doctored.md" | tr '\n' ' ')"

# --- bt/ family: header convention (house style), a man page each
for bt in "$TOP"/bt/*.bt; do
	name=$(basename "$bt")
	why=""
	[ "$(head -n 1 "$bt")" = "#!/usr/bin/env bpftrace" ] || why="$why no shebang;"
	sed -n 2p "$bt" | grep -q "^// $name	[A-Z]" || why="$why line 2 is not '// $name<TAB>Purpose';"
	grep -q '^// USAGE: ' "$bt" || why="$why no '// USAGE:' line;"
	grep -q '^// Example of usage' "$bt" || why="$why no '// Example of usage';"
	grep -q '^//   Attaching [0-9]* probes\.\.\.$' "$bt" || why="$why example output not captured (no 'Attaching N probes...');"
	grep -qE '^// [0-9]{2}-[A-Z][a-z]{2}-[0-9]{4}	' "$bt" || why="$why no dated history line;"
	grep -q 'Hit Ctrl-C to end' "$bt" || why="$why BEGIN banner does not say 'Hit Ctrl-C to end';"
	check_eq "bt/$name header convention" "" "$why"
	if [ -f "$TOP/man/$name.8" ]; then pass "bt/$name has man/$name.8"
	else fail "bt/$name has man/$name.8" "missing"; fi
done

# --- man pages: sections, and groff finds nothing to warn about.
for page in "$TOP"/man/*.[18]; do
	name=$(basename "$page")
	missing=""
	for s in NAME SYNOPSIS DESCRIPTION FIELDS OVERHEAD EXAMPLES "EXIT STATUS"; do
		grep -qE "^\.SH \"?$s\"?$" "$page" || missing="$missing $s;"
	done
	check_eq "man/$name has NAME ... EXIT STATUS" "" "$missing"
	if command -v groff >/dev/null 2>&1; then
		w=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
		check_eq "man/$name: no groff warnings" "" "$w"
	else
		skip "man/$name: no groff warnings" "groff not installed"
	fi
done
for p in stackfold.1 stackfold-profile.1 stackfold-continuous.1 stackfold-flame-range.1; do
	if [ -f "$TOP/man/$p" ]; then pass "man/$p exists"; else fail "man/$p exists"; fi
done

# --- make install: each command has the man page of its own name, and the
# service's Documentation= points at an installed file
I=$T/inst
if make -s -C "$TOP" install DESTDIR="$I" PREFIX=/usr/local >"$T/install.out" 2>&1; then
	for c in profile continuous flame-range; do
		check "installed: stackfold-$c runs" "$I/usr/local/bin/stackfold-$c" --help
		check "installed: man stackfold-$c" test -s "$I/usr/local/share/man/man1/stackfold-$c.1"
	done
	check "installed: stackfold-flame (flame-range's former name) runs" "$I/usr/local/bin/stackfold-flame" --help
	read -r -a docs <<<"$(sed -n 's|^Documentation=||p' "$TOP/scripts/stackfold-continuous.service")"
	for doc in "${docs[@]}"; do
		doc=${doc#file://}
		check "installed: the service's Documentation= ($doc)" test -s "$I$doc"
	done
else
	fail "make install DESTDIR=..." "$(tail -3 "$T/install.out")"
fi
