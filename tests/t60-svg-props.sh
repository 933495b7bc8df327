#!/usr/bin/env bash
# t60-svg-props: properties of the SVG writer on a large generated profile
# (bench/gen_folded.awk: 20,000 deep stacks, names like "f" next to
# "f0"/"f.cold" that bytewise sorting interleaves).  The frame tree is
# rebuilt independently in awk from the folded text; the SVG must hold
# exactly its frames at least minwidth wide (depth, name, count), root
# total = input total, pass xmllint, and be the same bytes on every run.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/svg_build.sh
. "$TOP/tests/tools/svg_build.sh"

svg_driver_build || exit 0
in=$T/big.folded
awk -v lines=20000 -v seed=7 -f "$TOP/bench/gen_folded.awk" >"$in"
total=$(folded_total "$in")

# The frame tree, built independently: "depth<TAB>name<TAB>count" for
# every node (suffix _[x] dropped, as drawn), and the number of frames a
# plain bytewise-order merge (FlameGraph's flow()) would draw instead.
awk '
{
	c = $NF; s = $0; sub(/ [0-9]+$/, "", s); total += c
	n = split(s, f, ";"); p = 0
	for (i = 1; i <= n; i++) {
		k = p SUBSEP f[i]
		if (!(k in id)) { id[k] = ++nid; nm[nid] = f[i]; dep[nid] = i }
		p = id[k]; cnt[p] += c
	}
}
END {
	printf "0\tall\t%d\n", total
	for (j = 1; j <= nid; j++) {
		name = nm[j]; sub(/_\[[kjiw]\]$/, "", name)
		printf "%d\t%s\t%d\n", dep[j], name, cnt[j]
	}
}' "$in" >"$T/tree"
naive=$(awk '{ sub(/ [0-9]+$/, ""); print }' "$in" | LC_ALL=C sort |
	awk -F';' '{ i = 1; while (i <= NF && i <= pn && $i == prev[i]) i++
		n += NF - i + 1; for (j = 1; j <= NF; j++) prev[j] = $j; pn = NF }
		END { print n }')
nodes=$(($(wc -l <"$T/tree") - 1))

expected() {	# MODE ("pct" or "px") VALUE; 1200 px wide, 10 px margins
	awk -F'\t' -v mode="$1" -v m="$2" -v total="$total" '
	BEGIN { min = mode == "pct" ? total * m / 100 : m / (1180 / total) }
	$1 == 0 || ($3 > 0 && $3 >= min)' "$T/tree" | LC_ALL=C sort
}

run_case() {	# LABEL MODE VALUE DRIVER-ARGS...
	local label=$1 mode=$2 v=$3
	shift 3
	if ! "$SVG_DRIVER" "$@" "$in" >"$T/$label.svg" 2>"$T/err"; then
		fail "$label: writer failed" "$(cat "$T/err")"
		return
	fi
	check "$label: xmllint" xmllint --noout "$T/$label.svg"
	check_eq "$label: root total = input total" "$total" "$(svg_root_count "$T/$label.svg")"
	expected "$mode" "$v" >"$T/$label.want"
	svg_titles "$T/$label.svg" | LC_ALL=C sort >"$T/$label.got"
	[ "$(wc -l <"$T/$label.want")" -gt 50 ] || fail "$label: too few frames to mean anything"
	check_diff "$label: exactly the frames >= minwidth" "$T/$label.want" "$T/$label.got"
}

run_case "default 0.1%" pct 0.1
run_case "minwidth 0.01%" pct 0.01 --minwidth 0.01
run_case "minwidth 0.1px" px 0.1 --minwidth 0.1px
run_case "inverted" pct 0.1 --inverted

# the bytewise order of the input really does split frames (otherwise the
# test above proves nothing about the frame-wise order)
[ "$naive" -gt "$nodes" ] && pass "input interleaves equal frames ($naive > $nodes)" ||
	fail "input interleaves equal frames" "naive merge $naive, tree $nodes"
run_case "minwidth 0px: every node" pct 0 --minwidth 0px

"$SVG_DRIVER" "$in" >"$T/again.svg"
check "same input, same bytes" cmp "$T/default 0.1%.svg" "$T/again.svg"

# every drawn frame is at least minwidth wide, and widths add up
awk -v min=1.18 '/^<g( [^>]*)?><title>/ { w = $0; sub(/.* width="/, "", w); sub(/".*/, "", w)
	if (w + 0.1 < min) { print "narrow: " w; bad = 1 } } END { exit bad }' \
	"$T/default 0.1%.svg" >"$T/narrow" && pass "no drawn frame under 0.1% (1.18 px)" ||
	fail "no drawn frame under 0.1% (1.18 px)" "$(head -3 "$T/narrow")"

# flame chart: lines in input (= first-seen) order, a frame merged only
# with the same frame on the line before; rebuilt here the same way (on
# the first 5000 lines: every frame is drawn)
head -n 5000 "$in" >"$T/chart.folded"
if "$SVG_DRIVER" --flamechart --minwidth 0px "$T/chart.folded" >"$T/chart.svg"; then
	check "flamechart: xmllint" xmllint --noout "$T/chart.svg"
	check_eq "flamechart: root total" "$(folded_total "$T/chart.folded")" "$(svg_root_count "$T/chart.svg")"
	chart_model "$T/chart.folded" >"$T/chart.want"
	svg_titles "$T/chart.svg" | LC_ALL=C sort >"$T/chart.got"
	check_diff "flamechart: exactly the time-ordered frames" "$T/chart.want" "$T/chart.got"
	"$SVG_DRIVER" --minwidth 0px "$T/chart.folded" >"$T/merged.svg"
	a=$(wc -l <"$T/chart.got"); b=$(grep -cE '^<g( [^>]*)?><title>' "$T/merged.svg")
	[ "$a" -gt "$b" ] && pass "flamechart draws more frames than the merged graph ($a > $b)" ||
		fail "flamechart draws more frames than the merged graph" "$a vs $b frames"
else
	fail "flamechart: writer failed"
fi

# Without a fold: an svg alone from one folded file (named, or as stdin)
# whose lines come in the fold's order (stackfold's folded output) is laid
# out as the file is read; a file out of that order (FlameGraph's bytewise
# sort, which splits "f" around "f.cold", or no order at all) is read again
# into a frame tree, as a pipe is.  With another output it goes through a
# fold.  Every way gives the same bytes and the same summary.
"$STACKFOLD" -f folded -o "$T/ours.folded" "$in" 2>/dev/null
LC_ALL=C sort "$in" >"$T/bytewise.folded"
for f in ours bytewise big; do
	for args in "" "--minwidth 0px" "--minwidth 0.1px --inverted --width 900"; do
		# shellcheck disable=SC2086 # args is a list of options
		"$STACKFOLD" -f svg $args "$T/$f.folded" >"$T/s.svg" 2>"$T/s.err"
		# shellcheck disable=SC2086
		"$STACKFOLD" -f svg $args <"$T/$f.folded" >"$T/r.svg" 2>"$T/r.err"
		# shellcheck disable=SC2086,SC2002 # a pipe, on purpose
		cat "$T/$f.folded" | "$STACKFOLD" -f svg $args >"$T/p.svg" 2>"$T/p.err"
		# shellcheck disable=SC2086
		"$STACKFOLD" -f svg,top $args -o "$T/f" "$T/$f.folded" >/dev/null 2>"$T/f.err"
		# shellcheck disable=SC2016 # expanded by the inner sh
		check "$f order${args:+ ($args)}: file, < file, pipe and fold give the same bytes" \
			sh -c 'cmp "$1/s.svg" "$1/r.svg" && cmp "$1/s.svg" "$1/p.svg" &&
				cmp "$1/s.svg" "$1/f.svg"' sh "$T"
		check_eq "$f order${args:+ ($args)}: same summary from file, < file and pipe" \
			"$(cat "$T/p.err")|$(cat "$T/p.err")" "$(cat "$T/s.err")|$(cat "$T/r.err")"
	done
done
# names that need rewriting (control bytes, empty frames), in the fold's
# order once rewritten, and a bad line
printf ';w 1\na;b\tc;d 2\nx;;y 1\nnot a line\nz;\001q 3\n' >"$T/odd.folded"
"$STACKFOLD" -f svg --minwidth 0px "$T/odd.folded" >"$T/s.svg" 2>"$T/s.err"
# shellcheck disable=SC2002 # a pipe, on purpose
cat "$T/odd.folded" | "$STACKFOLD" -f svg --minwidth 0px >"$T/p.svg" 2>"$T/p.err"
"$STACKFOLD" -f svg,top --minwidth 0px -o "$T/f" "$T/odd.folded" >/dev/null 2>&1
# shellcheck disable=SC2016 # expanded by the inner sh
check "rewritten names: file, pipe and fold give the same bytes" \
	sh -c 'cmp "$1/s.svg" "$1/p.svg" && cmp "$1/s.svg" "$1/f.svg"' sh "$T"
check_eq "a bad line is reported once, from a file as from a pipe" \
	"$(sed 's/<stdin>/FILE/' "$T/p.err")" "$(sed "s|$T/odd.folded|FILE|" "$T/s.err")"

# Memory follows the frames, not the input.  Streamed: 8 times the lines,
# the same RSS, also as stdin.  A tree (from a pipe): the same stacks 8
# times over (out of order at each copy, so the tree is indexed), about
# the same RSS as twice.
awk -v lines=160000 -v seed=3 -f "$TOP/bench/gen_folded.awk" | "$STACKFOLD" -f folded 2>/dev/null >"$T/large.folded"
rss() { /usr/bin/time -f '%M' -o "$T/rss" "$@" >/dev/null 2>&1; cat "$T/rss"; }
small=$(rss "$STACKFOLD" -f svg "$T/ours.folded")
large=$(rss "$STACKFOLD" -f svg "$T/large.folded")
folded=$(rss "$STACKFOLD" -f svg,top -o "$T/f" "$T/large.folded")
# shellcheck disable=SC2016 # expanded by the inner sh
redirected=$(rss sh -c '"$1" -f svg <"$2"' sh "$STACKFOLD" "$T/large.folded")
# (within 16 MiB: the heap is on huge pages, and whether the kernel has one
# to give moves max RSS by 2 MiB either way from run to run, more under
# load; buffering the input would be 70 MiB more)
check "streamed as stdin too: max RSS ${redirected} KiB (named: ${large} KiB)" \
	test "$redirected" -le $((large + 16384))
mb=$(($(wc -c <"$T/large.folded") / 1048576))
if [ "$large" -lt $((small + 16384)) ] && [ $((large * 2)) -lt "$folded" ]; then
	pass "streamed: max RSS ${large} KiB for a ${mb} MiB input (${small} KiB for 1/8 of it; ${folded} KiB through a fold)"
else
	fail "streamed: memory follows the input" "RSS ${small} KiB (20k lines), ${large} KiB (160k lines), ${folded} KiB through a fold"
fi
for _ in 1 2 3 4 5 6 7 8; do cat "$T/ours.folded"; done >"$T/x8.folded"
cat "$T/ours.folded" "$T/ours.folded" >"$T/x2.folded"
# shellcheck disable=SC2016 # expanded by the inner sh
twice=$(rss sh -c 'cat "$2" | "$1" -f svg' sh "$STACKFOLD" "$T/x2.folded")
# shellcheck disable=SC2016 # expanded by the inner sh
eight=$(rss sh -c 'cat "$2" | "$1" -f svg' sh "$STACKFOLD" "$T/x8.folded")
# shellcheck disable=SC2002 # a pipe, on purpose
cat "$T/x8.folded" | "$STACKFOLD" -f svg 2>"$T/x8.err" | svg_root_count /dev/stdin >"$T/x8.total"
check_eq "tree: 8 copies of the stacks count 8 times the samples" "$((total * 8))" "$(cat "$T/x8.total")"
if [ "$eight" -lt $((twice + twice / 8 + 1024)) ]; then
	pass "tree: max RSS ${eight} KiB for 8 copies of the stacks, ${twice} KiB for 2"
else
	fail "tree: memory follows the input" "RSS ${twice} KiB for 2 copies, ${eight} KiB for 8"
fi
