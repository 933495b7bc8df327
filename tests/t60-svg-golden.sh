#!/usr/bin/env bash
# t60-svg-golden: out_svg_write() on small folded inputs, byte for byte
# against tests/fixtures/svg/NAME.expected.svg (options in NAME.args, one
# argument per line).  After an intended change to the writer run
# tests/record-svg-golden.sh and review the diff.  Every expected file must
# also pass xmllint and be reproduced exactly on a second run.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/svg_build.sh
. "$TOP/tests/tools/svg_build.sh"

svg_driver_build || exit 0
n=0
for in in "$TOP"/tests/fixtures/svg/*.folded; do
	name=$(basename "$in" .folded)
	base=${in%.folded}
	args=()
	[ -f "$base.args" ] && mapfile -t args <"$base.args"
	if ! "$SVG_DRIVER" "${args[@]}" "$in" >"$T/$name.svg" 2>"$T/err"; then
		fail "golden $name: writer failed" "$(cat "$T/err")"
		continue
	fi
	check_diff "golden $name: same bytes" "$base.expected.svg" "$T/$name.svg"
	check "golden $name: xmllint" xmllint --noout "$T/$name.svg"
	"$SVG_DRIVER" "${args[@]}" "$in" >"$T/$name.again.svg"
	check "golden $name: deterministic" cmp "$T/$name.svg" "$T/$name.again.svg"
	n=$((n + 1))
done
[ "$n" -ge 10 ] && pass "golden: $n cases ran" || fail "golden: only $n cases ran"

# A few facts the expected files pin, asserted directly so a careless
# re-record cannot bless a regression.
fx=$TOP/tests/fixtures/svg
grep -q '<title>f (57 samples, 79.17%)</title>' "$fx/order.expected.svg" &&
	[ "$(grep -cE '<g( [^>]*)?><title>f \(' "$fx/order.expected.svg")" = 1 ] &&
	pass "order: 'f' merged once around 'f.cold' and 'f0'" ||
	fail "order: 'f' merged once around 'f.cold' and 'f0'"
grep -q '<title>comm-1 (6 samples' "$fx/order.expected.svg" &&
	pass "order: comm-1 merged around comm-12" || fail "order: comm-1 merged around comm-12"
grep -q '<text id="title" x="600" y="24">Flame Chart</text>' "$fx/flamechart.expected.svg" &&
	[ "$(grep -cE '<g( [^>]*)?><title>init \(' "$fx/flamechart.expected.svg")" = 2 ] &&
	pass "flamechart: time order, init drawn twice" || fail "flamechart: time order, init drawn twice"
grep -q '<title>big (989 samples' "$fx/minwidth.expected.svg" &&
	! grep -q '<title>tiny' "$fx/minwidth.expected.svg" &&
	pass "minwidth: narrow frames dropped, parent keeps their width" ||
	fail "minwidth: narrow frames dropped, parent keeps their width"
# ... and the search still counts them: big holds the groups tiny1: 5 and
# tiny2: 4 (chains of one name each: no parent chain, -1)
grep -q '<g data-x="0:5,1:4"><title>big (989' "$fx/minwidth.expected.svg" &&
	grep -q '^en: \["tiny1","tiny2"\],$' "$fx/minwidth.expected.svg" &&
	grep -q '^es: \[-1,0,-1,1\]};$' "$fx/minwidth.expected.svg" &&
	pass "minwidth: the dropped frames' samples embedded for the search" ||
	fail "minwidth: the dropped frames' samples embedded for the search"
grep -q '>Allocations &amp; &lt;friends&gt;<' "$fx/icicle.expected.svg" &&
	grep -q '<title>all (100 bytes, 100.00%)</title><rect x="10.0" y="60"' "$fx/icicle.expected.svg" &&
	pass "icicle: escaped title, countname, root on top" || fail "icicle: escaped title, countname, root on top"

# colours keyed by name: the same function has the same colour wherever it
# is and in another graph; --no-hash keys them by position instead
printf 'main;lex 5\nmain;parse;lex 7\nidle;lex;lex 3\n' >"$T/c1.folded"
printf 'other;deeper;lex 9\n' >"$T/c2.folded"
fills() { grep -o "<title>lex ([^<]*</title><rect [^>]*fill=\"#[0-9a-f]*\"" "$1" | sed 's/.*fill="//; s/"$//' | sort -u; }
"$SVG_DRIVER" "$T/c1.folded" >"$T/c1.svg"; "$SVG_DRIVER" "$T/c2.folded" >"$T/c2.svg"
check_eq "hash: 'lex' one colour at 4 places" 1 "$(fills "$T/c1.svg" | wc -l)"
check_eq "hash: 'lex' same colour in another graph" "$(fills "$T/c1.svg")" "$(fills "$T/c2.svg")"
"$SVG_DRIVER" --no-hash "$T/c1.folded" >"$T/c1n.svg"
[ "$(fills "$T/c1n.svg" | wc -l)" -gt 1 ] && pass "no-hash: 'lex' coloured by position" ||
	fail "no-hash: 'lex' coloured by position" "$(fills "$T/c1n.svg")"
