#!/usr/bin/env bash
# t61-svg-browser: the SVG's script in a real browser.  Debian's chromium
# (never a downloaded one) driven by playwright-core from npm
# (tests/browser, installed on first run): hover details, search through
# the Search button's prompt and Ctrl-F with the share matched checked
# against the known answer (nested matches counted once), click-to-zoom
# (the frame becomes full width, unrelated frames hide), Reset Zoom, a
# bookmarked ?s= search, no script errors, no network.  Screenshots are kept
# in tests/artifacts/ (git-ignored).
# needs: browser
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
plain_run_only "browser test" || exit 0
# shellcheck source=tests/tools/svg_build.sh
. "$TOP/tests/tools/svg_build.sh"

need() {	# a missing tool skips, except in CI
	if [ "${CI:-}" = true ]; then fail "browser test: $1"; else skip "browser test" "$1"; fi
	exit 0
}
command -v node >/dev/null || need "node not installed"
[ -x /usr/bin/chromium ] || need "/usr/bin/chromium not installed"
B=$TOP/tests/browser
if [ ! -f "$B/node_modules/playwright-core/package.json" ]; then
	if ! out=$(cd "$B" && npm install --no-audit --no-fund 2>&1); then
		need "npm install playwright-core failed: $(printf '%s' "$out" | tail -n 2)"
	fi
fi
svg_driver_build || exit 0
ART=$TOP/tests/artifacts
mkdir -p "$ART"

# 1. a small graph with known answers: 100 samples; "lex" under parse
# (42) and under main (10, with a nested lex counted once) = 52%
cat >"$T/small.folded" <<'IN'
main;parse;lex 30
main;parse;lex;next_char 12
main;parse;expr 8
main;lex;lex 10
idle 40
IN
"$SVG_DRIVER" "$T/small.folded" >"$T/small.svg" || fail "small: writer failed"
cat >"$T/small.json" <<JSON
{"svg": "$T/small.svg", "shot": "$ART/svg-browser-small.png", "width": 1200,
 "hover": "parse",
 "search": [{"term": "pars", "pct": "50.00"}, {"term": "^lex\$", "pct": "52.00"}],
 "ctrlf": {"term": "idle|expr", "pct": "48.00"},
 "zoom": "parse", "hidden": "idle", "nested": "lex",
 "bookmark": {"term": "expr", "pct": "8.00"}}
JSON
node "$B/svg_test.mjs" "$T/small.json" | sed 's/^\(PASS\|FAIL\): /\1: small: /'

# the same as an icicle graph (root on top: depths run the other way)
"$SVG_DRIVER" --inverted "$T/small.folded" >"$T/icicle.svg" || fail "icicle: writer failed"
cat >"$T/icicle.json" <<JSON
{"svg": "$T/icicle.svg", "shot": "$ART/svg-browser-icicle.png", "width": 1200,
 "search": [{"term": "^lex\$", "pct": "52.00"}],
 "zoom": "parse", "hidden": "idle"}
JSON
node "$B/svg_test.mjs" "$T/icicle.json" | sed 's/^\(PASS\|FAIL\): /\1: icicle: /'

# 2. a generated profile, every frame drawn (0px): the share a search
# reports must equal the share of samples whose stack has a matching
# frame, computed here from the folded text
awk -v lines=3000 -v seed=3 -f "$TOP/bench/gen_folded.awk" >"$T/gen.folded"
"$SVG_DRIVER" --minwidth 0px "$T/gen.folded" >"$T/gen.svg" || fail "gen: writer failed"
share() {	# ERE over frame names (suffix _[x] dropped, as drawn)
	awk -v re="$1" '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += c
		n = split(s, f, ";"); for (i = 1; i <= n; i++) { x = f[i]; sub(/_\[[kjiw]\]$/, "", x)
		if (x ~ re) { m += c; break } } } END { printf "%.2f", 100 * m / t }' "$T/gen.folded"
}
p1=$(share 'kernel_fn_1[0-9]$'); p2=$(share '^Interp3[.]')
cat >"$T/gen.json" <<JSON
{"svg": "$T/gen.svg", "shot": "$ART/svg-browser-generated.png", "width": 1200,
 "search": [{"term": "kernel_fn_1[0-9]\$", "pct": "$p1"}, {"term": "^Interp3[.]", "pct": "$p2"}],
 "zoom": "proc-7", "hidden": "proc-8"}
JSON
node "$B/svg_test.mjs" "$T/gen.json" | sed 's/^\(PASS\|FAIL\): /\1: generated: /'
# the same at the default minimum width: frames left out leave gaps, whose
# neighbours carry their start (data-s)
"$SVG_DRIVER" "$T/gen.folded" >"$T/gen-min.svg" || fail "gen (0.1%): writer failed"
check "generated (0.1%): some frames carry data-s and data-x" \
	grep -q '<g data-s="[0-9]*" data-x="[0-9:,]*">' "$T/gen-min.svg"
cat >"$T/gen-min.json" <<JSON
{"svg": "$T/gen-min.svg", "shot": "$ART/svg-browser-generated-min.png", "width": 1200,
 "search": [], "zoom": "proc-7", "hidden": "proc-8"}
JSON
node "$B/svg_test.mjs" "$T/gen-min.json" | sed 's/^\(PASS\|FAIL\): /\1: generated (0.1%): /'

# 3. a zoom by 10,000 is exact (positions from sample counts, not from the
# file's 0.1 px rounding, with which ten equal children come out 98 or
# 197 px wide); ic is bookmarked; a bad regex clears the last search
{ echo "other 9990000"; for c in $(seq 10); do echo "main;P;c$c 1000"; done; } >"$T/deep.folded"
"$SVG_DRIVER" --minwidth 0px "$T/deep.folded" >"$T/deep.svg" || fail "deep zoom: writer failed"
cat >"$T/deep.json" <<JSON
{"svg": "$T/deep.svg", "shot": "$ART/svg-browser-deepzoom.png", "width": 1200,
 "search": [{"term": "^c[0-9]", "pct": "0.10"}], "badre": "(",
 "ic": {"term": "OTHER", "pct": "99.90"},
 "exact": {"zoom": "P", "kids": ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10"]}}
JSON
node "$B/svg_test.mjs" "$T/deep.json" | sed 's/^\(PASS\|FAIL\): /\1: deep zoom: /'
# a bookmark of a frame narrower than the file's 0.1 px reopens on it, not
# on a sibling drawn at the same rounded x (c5 to c9 all at x="10.1": a
# URL holding x and y would reopen on c5)
{ echo "other 9999000"; for c in $(seq 10); do echo "main;P;c$c 100"; done; } >"$T/narrow.folded"
"$SVG_DRIVER" --minwidth 0px "$T/narrow.folded" >"$T/narrow.svg" || fail "narrow: writer failed"
cat >"$T/narrow.json" <<JSON
{"svg": "$T/narrow.svg", "shot": "$ART/svg-browser-narrow.png", "width": 1200, "search": [],
 "exact": {"zoom": "P", "pick": "c7", "kids": ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10"]}}
JSON
node "$B/svg_test.mjs" "$T/narrow.json" | sed 's/^\(PASS\|FAIL\): /\1: narrow: /'
# the same at the default minimum width, with a wider sibling left out
# beside them (its samples in no drawn frame: the start of every frame
# after the gap is written, data-s)
{ echo "other 98600"; for c in 1 2 3 4; do echo "main;P;c$c 200"; done
  for c in $(seq 30); do echo "main;P;z$c 20"; done; } >"$T/gap.folded"
"$SVG_DRIVER" "$T/gap.folded" >"$T/gap.svg" || fail "gap zoom: writer failed"
cat >"$T/gap.json" <<JSON
{"svg": "$T/gap.svg", "shot": "$ART/svg-browser-gapzoom.png", "width": 1200,
 "search": [{"term": "^z", "text": "Matched: 0.60%"},
            {"term": "^P\$", "pct": "1.40"}],
 "exact": {"zoom": "P", "kids": ["c1", "c2", "c3", "c4"], "of": 7}}
JSON
node "$B/svg_test.mjs" "$T/gap.json" | sed 's/^\(PASS\|FAIL\): /\1: gap zoom: /'

# 4. search is exact with frames left out (narrower than the default
# 0.1%): the share equals the folded text's, through each way a graph is
# built: the writer on a fold (driver), a regular file read as a stream
# (the CLI), a pipe read into a frame tree (the CLI)
p3=$(share 'kernel_fn_[0-9]*5$'); p4=$(share '^Interp[0-9][.]run')
"$STACKFOLD" -f svg "$T/gen.folded" >"$T/gen-stream.svg" || fail "stream: writer failed"
# shellcheck disable=SC2002
cat "$T/gen.folded" | "$STACKFOLD" -f svg >"$T/gen-tree.svg" || fail "tree: writer failed"
check "frames were left out (the search must count them)" \
	test "$(grep -c '<g' "$T/gen-min.svg")" -lt "$(grep -c '<g' "$T/gen.svg")"
for way in min stream tree; do
	cat >"$T/gen-$way.json" <<JSON
{"svg": "$T/gen-$way.svg", "shot": "$ART/svg-browser-exact-$way.png", "width": 1200,
 "search": [{"term": "kernel_fn_[0-9]*5\$", "pct": "$p3"}, {"term": "^Interp[0-9][.]run", "pct": "$p4"},
            {"term": "kernel_fn_1[0-9]\$", "pct": "$p1"}],
 "reset": true}
JSON
	node "$B/svg_test.mjs" "$T/gen-$way.json" | sed "s/^\(PASS\|FAIL\): /\1: exact ($way): /"
done

# 5. a graph taller than the window (80 frames deep): the match result
# stays in view wherever the page is scrolled
awk 'BEGIN { s = "root"; for (i = 1; i <= 80; i++) { s = s ";f" i; print s, i } }' >"$T/tall.folded"
"$STACKFOLD" -f svg --minwidth 0 "$T/tall.folded" >"$T/tall.svg" || fail "tall: writer failed"
cat >"$T/tall.json" <<JSON
{"svg": "$T/tall.svg", "shot": "$ART/svg-browser-tall.png", "width": 1200,
 "search": [{"term": "^f4\$", "pct": "$(awk 'BEGIN { t = 0; m = 0; for (i = 1; i <= 80; i++) { t += i; if (i >= 4) m += i } printf "%.2f", 100 * m / t }')"}],
 "pin": true}
JSON
node "$B/svg_test.mjs" "$T/tall.json" | sed 's/^\(PASS\|FAIL\): /\1: tall: /'
