# tests/tools/svg_build.sh - sourced by tests/t60-svg*.sh and
# t61-svg-browser.sh after lib.sh.  Builds tests/tools/svg_driver.c (the
# SVG writer alone, on folded text) into $SVG_DRIVER against the current
# build (.output, or .output-san with SANITIZE=1), and gives helpers:
#   svg_titles F      "depth<TAB>name<TAB>count" of every frame, from the
#                     <title>s and rect y's (names still XML-escaped)
#   svg_root_count F  the sample count in the root frame's title
#   chart_model F...  the frames a flame chart of folded files F... must
#                     draw (lines in order, a frame merged only with the
#                     same frame on the line before), sorted like
#                     svg_titles' output piped to `LC_ALL=C sort`
# svg_driver_build returns 1 (after a FAIL line) when it cannot build.
# shellcheck shell=bash

SVG_DRIVER=$T/svg_driver

svg_driver_build() {
	local b=.output san="" out
	if [ "${SANITIZE:-}" = 1 ]; then
		b=.output-san
		san="-fsanitize=address,undefined -fno-sanitize-recover=all"
	fi
	local lib=$TOP/$b/libstackfold.a
	if [ ! -f "$lib" ]; then
		fail "svg driver: $lib missing (run make first)"
		return 1
	fi
	# shellcheck disable=SC2086
	if ! out=$(cc -std=gnu11 -O1 -g $san -Wall -Wextra -Werror \
		-D_GNU_SOURCE -I"$TOP" -I"$TOP/collapse" -I"$TOP/symbolizer" \
		-o "$SVG_DRIVER" "$TOP/tests/tools/svg_driver.c" "$lib" \
		$SF_LDLIBS 2>&1); then
		fail "svg driver: build" "$out"
		return 1
	fi
	return 0
}

# Frames of an SVG written by out_svg_write: depth from the rect's y
# against FG.base/FG.step in the script, count from the title.
svg_titles() {
	awk '
	/^var FG = / {
		match($0, /base: -?[0-9]+/); base = substr($0, RSTART + 6, RLENGTH - 6)
		match($0, /step: -?[0-9]+/); step = substr($0, RSTART + 6, RLENGTH - 6)
	}
	/^<g( [^>]*)?><title>/ { lines[n++] = $0 }
	END {
		for (i = 0; i < n; i++) {
			l = lines[i]
			t = l; sub(/^<g( [^>]*)?><title>/, "", t); sub(/<\/title>.*/, "", t)
			y = l; sub(/.*<rect x="[0-9.]+" y="/, "", y); sub(/".*/, "", y)
			# NAME (COUNT COUNTNAME, P%...)
			c = t; sub(/.* \(/, "", c); sub(/ .*/, "", c); gsub(/,/, "", c)
			name = t; sub(/ \([0-9,]+ [^(]*$/, "", name)
			printf "%d\t%s\t%s\n", (y - base) / step, name, c
		}
	}' "$1"
}

svg_root_count() {
	svg_titles "$1" | awk -F'\t' '$1 == 0 { print $3; exit }'
}

chart_model() {
	cat "$@" | awk '
	function out(j,   x) { x = p[j]; sub(/_\[[kjiw]\]$/, "", x); printf "%d\t%s\t%d\n", j, x, cnt[j] }
	{
		c = $NF; s = $0; sub(/ [0-9]+$/, "", s); total += c
		n = split(s, f, ";"); i = 1
		while (i <= n && i <= pn && f[i] == p[i]) i++
		for (j = pn; j >= i; j--) out(j)
		for (j = i; j <= n; j++) { p[j] = f[j]; cnt[j] = 0 }
		pn = n
		for (j = 1; j <= n; j++) cnt[j] += c
	}
	END { for (j = pn; j >= 1; j--) out(j); printf "0\tall\t%d\n", total }' | LC_ALL=C sort
}
