#!/usr/bin/env bash
# t60-svg-diff: differential flame graphs (difffolded.pl + flamegraph.pl
# semantics): widths from AFTER, each frame coloured by the change of the
# samples that end in it (white none, towards red growth, towards blue
# shrinkage, saturating at the largest change), tooltips with that same
# change as a share of the AFTER total, as flamegraph.pl prints it (not
# the whole frame's change, with which a frame coloured as grown could say
# it shrank).  Through the writer
# ("STACK BEFORE AFTER" lines) and through stackfold --diff BEFORE AFTER.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/svg_build.sh
. "$TOP/tests/tools/svg_build.sh"

svg_driver_build || exit 0
printf 'a;b 10\na;c 10\na;d 5\na;gone 4\na;grow 5\n' >"$T/before.folded"
printf 'a;b 20\na;c 5\na;d 5\na;e 5\na;grow 6\n' >"$T/after.folded"
# the same as difffolded.pl's three columns
printf 'a;b 10 20\na;c 10 5\na;d 5 5\na;gone 4 0\na;grow 5 6\na;e 0 5\n' >"$T/diff.folded"

fill() { grep -o "<title>$2 ([^<]*</title><rect [^>]*fill=\"#[0-9a-f]*\"" "$1" | sed 's/.*fill="//; s/"$//'; }
title() { grep -o "<title>$2 ([^<]*</title>" "$1" | sed 's/<[^>]*>//g'; }

checks() {	# LABEL SVG
	local l=$1 f=$2
	check "$l: xmllint" xmllint --noout "$f"
	check_eq "$l: width from after (root)" 41 "$(svg_root_count "$f")"
	check_eq "$l: b +10, the largest growth: full red" "#ff0000" "$(fill "$f" b)"
	check_eq "$l: e new with +5: half red" "#ff6969" "$(fill "$f" e)"
	check_eq "$l: grow +1: light red" "#ffbdbd" "$(fill "$f" grow)"
	check_eq "$l: c -5: half blue" "#6969ff" "$(fill "$f" c)"
	check_eq "$l: d unchanged: white" "#ffffff" "$(fill "$f" d)"
	check_eq "$l: gone (0 after) not drawn" "" "$(title "$f" gone)"
	check_eq "$l: b tooltip: after count and +change" "b (20 samples, 48.78%; +24.39%)" "$(title "$f" b)"
	check_eq "$l: c tooltip: -change" "c (5 samples, 12.20%; -12.20%)" "$(title "$f" c)"
	check_eq "$l: a tooltip: the change of its own samples (none), as its colour" "a (41 samples, 100.00%; 0.00%)" "$(title "$f" a)"
	grep -q '<text id="subtitle"[^>]*>Differential' "$f" && pass "$l: says it is differential" ||
		fail "$l: says it is differential"
}

if "$SVG_DRIVER" "$T/diff.folded" >"$T/w.svg" 2>"$T/err"; then
	checks writer "$T/w.svg"
else
	fail "writer failed" "$(cat "$T/err")"
fi
# (counts compared, as the writer given difffolded.pl's columns; the
# default compares shares: tests/t90-ux-stackfold.sh)
if "$STACKFOLD" -f svg --no-normalize --diff "$T/before.folded" "$T/after.folded" >"$T/c.svg" 2>"$T/err"; then
	checks "stackfold --diff" "$T/c.svg"
	svg_titles "$T/w.svg" | sort >"$T/w.frames"
	svg_titles "$T/c.svg" | sort >"$T/c.frames"
	check_diff "stackfold --diff: same frames as the writer on difffolded columns" "$T/w.frames" "$T/c.frames"
else
	fail "stackfold -f svg --diff" "$(tail -3 "$T/err")"
fi

# Each input's losses in the subtitle, named by side (a differential
# subtitle has them too, not stderr only)
printf 'not a line\n' | cat "$T/before.folded" - >"$T/before-bad.folded"
{ cat "$T/after.folded"; printf 'x\ny\n'; } >"$T/after-bad.folded"
"$STACKFOLD" -q -f svg --diff "$T/before-bad.folded" "$T/after-bad.folded" >"$T/lossy.svg" 2>/dev/null
check "stackfold --diff: each side's losses in the subtitle" grep -q \
	'<text id="subtitle"[^>]*>Differential[^<]*; after lost: 2 unparsable lines; before lost: 1 unparsable line<' \
	"$T/lossy.svg"
check "stackfold --diff: no losses, none said" bash -c "! grep -q 'lost:' '$T/c.svg'"

# a plain graph of the same after profile has no delta in its tooltips
"$SVG_DRIVER" "$T/after.folded" >"$T/plain.svg"
check_eq "non-differential tooltip has no delta" "b (20 samples, 48.78%)" "$(title "$T/plain.svg" b)"

# A frame whose own samples grew while its subtree shrank: red, and its
# tooltip says +, with or without --flamechart (half red: d lost 10).
printf 'main;c;d 10\nmain;x 10\n' >"$T/sb.folded"
printf 'main;c 5\nmain;x 10\n' >"$T/sa.folded"
for o in "" --flamechart; do
	"$STACKFOLD" -f svg $o --no-normalize --diff "$T/sb.folded" "$T/sa.folded" >"$T/s.svg" 2>/dev/null
	check_eq "grown own samples ${o:-(plain)}: red, and + in the tooltip" \
		"#ff6969 c (5 samples, 33.33%; +33.33%)" "$(fill "$T/s.svg" c) $(title "$T/s.svg" c)"
done
# AFTER gives the widths: an empty one is "no samples", as one empty input is
: >"$T/empty.folded"
"$STACKFOLD" -f svg --diff "$T/sb.folded" "$T/empty.folded" >"$T/e.svg" 2>"$T/e.err"
check_eq "--diff with an empty AFTER: exit 2" 2 $?
check_eq "--diff with an empty AFTER: says so" "stackfold: no samples found in $T/empty.folded" "$(cat "$T/e.err")"
# The top table and pprof have no form for two profiles: refused (not
# written from AFTER alone, exit 0)
for f in top pprof; do
	"$STACKFOLD" -f "$f" -o "$T/d-$f" --diff "$T/sb.folded" "$T/sa.folded" >/dev/null 2>"$T/d.err"
	check_eq "--diff -f $f: exit 1, nothing written" "1|" "$?|$(ls "$T"/d-"$f"* 2>/dev/null)"
	check "--diff -f $f: says svg and folded only" grep -q "^stackfold: --diff writes svg and folded only, not $f" "$T/d.err"
done
# A shrink too small to show in two decimals still says it shrank ("-0.00%"),
# as its blue does (not "0.00%", as an unchanged frame)
printf 'm;a 3\nm;b 20000\nm;c 1\n' >"$T/b2.folded"
printf 'm;a 2\nm;b 20000\nm;c 2\nm;d 5000\n' >"$T/a2.folded"
"$STACKFOLD" -f svg --minwidth 0px --no-normalize --diff "$T/b2.folded" "$T/a2.folded" >"$T/d2.svg" 2>/dev/null
check_eq "--diff: a tiny shrink -0.00%, a tiny growth +0.00%, no change 0.00%" \
	"a -0.00%|b 0.00%|c +0.00%" \
	"$(grep -o '<title>[abc] ([^)]*)' "$T/d2.svg" | sed 's/<title>\([abc]\) .*; \(.*\))/\1 \2/' | sort | paste -sd '|')"
