#!/usr/bin/env bash
# t60-svg-cli: `stackfold -f svg` end to end: every SVG option reaches the
# writer (title, subtitle, width, minwidth in % and px, inverted, colors,
# no-hash, countname, flamechart), the default subtitle comes from the
# profile (samples and losses), the defaults equal the writer's (0.1%
# minwidth, 1200 px, hot by name), an unknown palette is an error, and
# output is the same bytes every run.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/svg_build.sh
. "$TOP/tests/tools/svg_build.sh"

svg_driver_build || exit 0
in=$TOP/tests/fixtures/svg/basic.folded
sf() { "$STACKFOLD" -f svg "$@" 2>"$T/err"; }

if sf "$in" >"$T/default.svg"; then
	check "default: xmllint" xmllint --noout "$T/default.svg"
	"$SVG_DRIVER" "$in" >"$T/driver.svg"
	svg_titles "$T/default.svg" >"$T/a"; svg_titles "$T/driver.svg" >"$T/b"
	check_diff "default: same frames and colours as the writer's defaults" "$T/b" "$T/a"
	grep -o 'fill="#[0-9a-f]*"' "$T/default.svg" >"$T/a"; grep -o 'fill="#[0-9a-f]*"' "$T/driver.svg" >"$T/b"
	check_diff "default: same colours (hot, keyed by name)" "$T/b" "$T/a"
	grep -q 'width="1200"' "$T/default.svg" && pass "default: 1200 px" || fail "default: 1200 px"
	grep -q '<text id="subtitle" x="600" y="48">100 samples</text>' "$T/default.svg" &&
		pass "default subtitle: sample count" || fail "default subtitle: sample count" "$(grep subtitle "$T/default.svg" | tail -1)"
	sf "$in" | cmp -s - "$T/default.svg" && pass "same bytes every run" || fail "same bytes every run"
else
	fail "stackfold -f svg" "$(tail -3 "$T/err")"
fi

if sf --title 'My & title' --subtitle 'sub <x>' --width 900 --minwidth 5% --inverted \
	--colors lang --no-hash --countname ms --flamechart "$in" >"$T/opts.svg"; then
	f=$T/opts.svg
	check "options: xmllint" xmllint --noout "$f"
	grep -q '>My &amp; title</text>' "$f" && pass "--title" || fail "--title"
	grep -q '>sub &lt;x&gt;</text>' "$f" && pass "--subtitle" || fail "--subtitle"
	grep -q 'width="900"' "$f" && pass "--width" || fail "--width"
	# (the lang palette's legend row is above the frames)
	grep -q '<title>all (100 ms, 100.00%)</title><rect x="10.0" y="84"' "$f" &&
		pass "--inverted (root on top) and --countname" || fail "--inverted and --countname" "$(grep -m1 '<title>all' "$f")"
	# 5% of 100 samples: next_char (12) stays, mul (4) goes
	grep -q '<title>next_char' "$f" && ! grep -q '<title>mul ' "$f" &&
		pass "--minwidth 5 (percent)" || fail "--minwidth 5 (percent)"
	"$SVG_DRIVER" --title 'My & title' --subtitle 'sub <x>' --width 900 --minwidth 5 --inverted \
		--colors lang --no-hash --countname ms --flamechart "$in" >"$T/opts.driver.svg"
	check_diff "options: same bytes as the writer given the same options" "$T/opts.driver.svg" "$f"
else
	fail "stackfold -f svg with every option" "$(tail -3 "$T/err")"
fi

# Npx: 1180 px for 100 samples, 50px keeps frames of >= 4.24 samples
if sf --minwidth 50px "$in" >"$T/px.svg"; then
	grep -q '<title>add (9 ' "$T/px.svg" && ! grep -q '<title>mul ' "$T/px.svg" &&
		pass "--minwidth 50px" || fail "--minwidth 50px"
else
	fail "--minwidth 50px" "$(tail -3 "$T/err")"
fi
sf --minwidth 0px "$in" >"$T/all.svg" && grep -q '<title>mul (4 ' "$T/all.svg" &&
	pass "--minwidth 0px keeps every frame" || fail "--minwidth 0px keeps every frame"

if sf --colors no-such "$in" >"$T/bad.svg"; then
	fail "unknown palette is an error" "exit 0"
else
	grep -q "no-such" "$T/err" && pass "unknown palette is an error naming it" ||
		fail "unknown palette is an error naming it" "$(cat "$T/err")"
fi

# a bpftrace capture: the subtitle reports what was lost
bt=$TOP/tests/fixtures/bt/crlf-truncated.txt
if [ -f "$bt" ] && sf "$bt" >"$T/bt.svg"; then
	check "bpftrace input: xmllint" xmllint --noout "$T/bt.svg"
	grep -q '<text id="subtitle"[^>]*>[0-9]* samples\?; lost: ' "$T/bt.svg" &&
		pass "subtitle reports losses" || fail "subtitle reports losses" "$(grep -o '<text id="subtitle"[^<]*' "$T/bt.svg")"
else
	fail "bpftrace input" "$(tail -3 "$T/err")"
fi

# --flamechart: lines in input (time) order, a frame merged only with the
# same frame on the line before, from a file, a pipe or several files; an
# identical stack later in time is drawn again, not merged back.
printf 'a;b 1\na;c 1\na;b 1\nz 1\na;b 2\n' >"$T/chart1.folded"
chart_model "$T/chart1.folded" >"$T/chart1.want"
sf -v --flamechart --minwidth 0px "$T/chart1.folded" >"$T/chart1.svg"
svg_titles "$T/chart1.svg" | LC_ALL=C sort >"$T/chart1.got"
check_diff "flamechart from a file: repeated stacks stay in time order" "$T/chart1.want" "$T/chart1.got"
check "flamechart: the summary does not call a returning stack unique (5 stacks, 3 of them unique)" \
	grep -q 'read: 6 samples, 5 stacks$' "$T/err"
cat "$T/chart1.folded" | sf --flamechart --minwidth 0px >"$T/chart1p.svg"
check "flamechart from a pipe: the same SVG" cmp -s "$T/chart1.svg" "$T/chart1p.svg"
# several inputs are folded together first (they may mix bpftrace text and
# folded lines): nothing is lost
sf --flamechart "$TOP/tests/fixtures/bt/kstack.txt" "$T/chart1.folded" >"$T/chart12.svg"
check_eq "flamechart from two inputs: every sample drawn" \
	"$(( $(folded_total "$T/chart1.folded") + $("$STACKFOLD" -q "$TOP/tests/fixtures/bt/kstack.txt" | awk '{ n += $NF } END { print n }') ))" \
	"$(svg_titles "$T/chart12.svg" | awk -F'\t' '$1 == 0 { print $3 }')"

# folded input: the subtitle reports its unparsable lines too, from a file
# (streamed), a pipe (a tree) or beside another output (a fold)
printf 'a;b 3\nbad\nz;y 2\na;c 1\n' >"$T/bad.folded"
sf "$T/bad.folded" >"$T/bad1.svg"
sf <"$T/bad.folded" | cat >"$T/bad2.svg"
cat "$T/bad.folded" | sf >"$T/bad3.svg"
"$STACKFOLD" -q -f svg,folded -o "$T/bad4" "$T/bad.folded"
for f in bad1 bad2 bad3 bad4; do
	check "folded input with a bad line ($f): subtitle says so" \
		grep -q '<text id="subtitle"[^>]*>6 samples; lost: 1 unparsable line<' "$T/$f.svg"
done

# folded text, from a file (streamed) or a pipe (a tree), gets flamegraph.pl's
# default minimum width, 0.1 px, not the writer's 0.1%: the f frames, each
# 0.06% and 0.8 px wide, are drawn
awk 'BEGIN { for (i = 0; i < 400; i++) printf "main;f%d;g%d 1\n", i % 50, i
	     print "main;big 12000" }' >"$T/narrow.folded"
sf "$T/narrow.folded" >"$T/narrow1.svg"
cat "$T/narrow.folded" | sf >"$T/narrow2.svg"
for f in narrow1 narrow2; do
	check_eq "folded text ($f): 0.1 px minimum width, 50 f frames" 50 \
		"$(grep -c '<title>f[0-9]* (' "$T/$f.svg")"
done

# option values refused up front (exit 1), not after reading the input
for a in "countname=a$(printf '\t')b" width=100000000 minwidth=nan minwidth=inf minwidth=1e999; do
	printf 'a;b 1\n' | "$STACKFOLD" -f svg "--${a%%=*}" "${a#*=}" >/dev/null 2>"$T/opt.err"
	check_eq "refused: --${a%%=*} ${a#*=} (exit 1, one line)" "1 1" "$? $(wc -l <"$T/opt.err")"
done
# --minwidth 0 and 0% keep every frame, as 0px does (they meant the default)
{ echo "big 100000"; echo "small;tiny 1"; } >"$T/tiny.folded"
for m in 0 0% 0px; do
	check "--minwidth $m keeps a 0.001% frame" grep -q '<title>tiny (' <(sf --minwidth "$m" "$T/tiny.folded")
done
check "default minimum width leaves it out" bash -c "! grep -q '<title>tiny (' <('$STACKFOLD' -q -f svg '$T/tiny.folded')"
# The default subtitle always shows the counts and losses: a long command
# line is cut to what the width leaves (uncut, a 200-character one would
# push them off the graph, and a 1 KiB one out of the subtitle).
long=$(printf 'x%.0s' $(seq 1 1100))
printf '# stackfold-capture 1\n#meta hz 99\n#meta duration_ns 2000000000\n#meta cmdline java -cp %s Main\n@[\n    leaf+1\n]: 3\n' "$long" >"$T/longcmd.txt"
"$STACKFOLD" -q -f svg "$T/longcmd.txt" >"$T/longcmd.svg"
sub=$(grep -o '<text id="subtitle"[^>]*>[^<]*' "$T/longcmd.svg" | sed 's/.*>//')
check "long command line: cut (..), then duration, rate and samples" \
	grep -Eqx 'java -cp x+\.\., 2\.0 s at 99 Hz, 3 samples' <<<"$sub"
check "long command line: the subtitle fits the width (1200 px: 167 characters)" test "${#sub}" -le 167
# The search's record of left-out frames is bounded: a graph of many deep,
# varied stacks passes the bound and the SVG says so (and gives each
# frame's left-out total, for a search's "up to"); a small one fits (exact).
awk -v lines=20000 -v seed=1 -f "$TOP/bench/gen_folded.awk" >"$T/deep.folded"
awk -v lines=300 -v seed=1 -f "$TOP/bench/gen_folded.awk" >"$T/deep-small.folded"
"$STACKFOLD" -q -f svg "$T/deep.folded" >"$T/deep.svg"
"$STACKFOLD" -q -f svg "$T/deep-small.folded" >"$T/deep-small.svg"
said='<!-- search: the frames narrower than the minimum width are too many'
check "record past its bound: the SVG says so" grep -q "$said" "$T/deep.svg"
check "record past its bound: left-out totals (data-e), no groups (data-x)" \
	bash -c "grep -q ' data-e=\"[0-9]' '$T/deep.svg' && ! grep -q ' data-x=' '$T/deep.svg'"
check "record within its bound: groups (data-x), nothing said" \
	bash -c "grep -q ' data-x=\"[0-9]' '$T/deep-small.svg' && ! grep -q '$said' '$T/deep-small.svg'"
