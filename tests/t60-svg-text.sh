#!/usr/bin/env bash
# t60-svg-text: any bytes in, well-formed XML out (failure case 29).
# Frame names with & < > " ', every control byte, invalid UTF-8
# (stray continuation, overlong, surrogate, truncated, U+FFFE/U+FFFF,
# above U+10FFFF), and 5000-byte names of 1-, 2-, 3- and 4-byte
# characters; also nasty --title/--subtitle/--countname.  The SVG must
# pass xmllint and iconv, keep each full name in its <title>, and cut
# labels at character boundaries with "..".
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/svg_build.sh
. "$TOP/tests/tools/svg_build.sh"

svg_driver_build || exit 0
in=$T/nasty.folded
rep() { local i; for ((i = 0; i < $2; i++)); do printf '%b' "$1"; done; }
{
	printf 'markup;a&b<c>d"e'"'"'f 7\n'
	for c in 01 02 08 0b 0c 0e 1b 1f 7f; do printf 'ctl;x\\x%sy 1\n' "$c"; done | while IFS= read -r l; do printf '%b\n' "$l"; done
	printf 'utf;stray\x80cont 2\n'
	printf 'utf;overlong\xc0\xaf 2\n'
	printf 'utf;surrogate\xed\xa0\x80 2\n'
	printf 'utf;truncated\xe2\x82 2\n'
	printf 'utf;nonchar\xef\xbf\xbf\xef\xbf\xbe 2\n'
	printf 'utf;toobig\xf4\x90\x80\x80 2\n'
	printf 'utf;ff\xff\xfe 2\n'
	printf 'long;%s 40\n' "$(rep 'x' 5000)"
	printf 'long;%s 40\n' "$(rep '\xc3\xa9' 2500)"
	printf 'long;%s 40\n' "$(rep '\xe2\x82\xac' 1666)ab"
	printf 'long;%s 40\n' "$(rep '\xf0\x9f\x94\xa5' 1250)"
	printf 'long;%s\xff 40\n' "$(rep '\xe2\x82\xac' 1666)"
} >"$in"
check_eq "input has 22 stacks" 22 "$(wc -l <"$in")"

args=(--minwidth 0px --title $'T<&>"\'\x01\xff' --subtitle $'sub\x1b]]>' --countname $'ms</script>]]>"\\\x02')
if ! "$SVG_DRIVER" "${args[@]}" "$in" >"$T/out.svg" 2>"$T/err"; then
	fail "writer failed" "$(cat "$T/err")"
	exit 0
fi
check "xmllint --noout" xmllint --noout "$T/out.svg"
check "valid UTF-8 throughout" iconv -f UTF-8 -t UTF-8 -o /dev/null "$T/out.svg"
! LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f]' "$T/out.svg" &&
	pass "no control bytes" || fail "no control bytes"
grep -q '<title>a&amp;b&lt;c&gt;d&quot;e&#39;f (7 ' "$T/out.svg" &&
	pass "markup escaped in title" || fail "markup escaped in title"
check_eq "C0 control bytes as '?'" 8 "$(grep -c '<title>x?y (1 ' "$T/out.svg")"
check_eq "DEL kept (XML 1.0 allows it)" 1 "$(grep -c $'<title>x\x7fy (1 ' "$T/out.svg")"
grep -q '<title>stray�cont (' "$T/out.svg" && grep -q '<title>overlong�� (' "$T/out.svg" &&
	grep -q '<title>surrogate��� (' "$T/out.svg" && grep -q '<title>truncated�� (' "$T/out.svg" &&
	grep -q '<title>nonchar������ (' "$T/out.svg" && grep -q '<title>toobig���� (' "$T/out.svg" &&
	grep -q '<title>ff�� (' "$T/out.svg" &&
	pass "invalid UTF-8 as U+FFFD, one per bad byte" || fail "invalid UTF-8 as U+FFFD, one per bad byte" "$(grep -o '<title>[^<]*' "$T/out.svg" | grep -a 'utf\|stray\|over\|surr\|trunc\|nonch\|toob\|ff' | head)"

# long names: the whole name in the title, the label cut at a character
# boundary with ".." and no wider than the frame allows
for pat in 'x' 'é' '€' '🔥'; do
	# (not the '€' name that ends in a bad byte)
	t=$(grep -o "<title>${pat}${pat}${pat}[^<]*" "$T/out.svg" | grep -v '�' | head -1 | sed 's/<title>//; s/ ([0-9,]* .*//')
	l=$(grep -o "<text x=\"[0-9.]*\" y=\"[0-9.]*\">${pat}${pat}${pat}[^<]*</text>" "$T/out.svg" | head -1 | sed 's/<[^>]*>//g')
	tc=$(printf '%s' "$t" | wc -m); lc=$(printf '%s' "$l" | wc -m)
	case $pat in x) want=5000 ;; é) want=2500 ;; €) want=1668 ;; 🔥) want=1250 ;; esac
	check_eq "long '$pat': full name in title ($want chars)" "$want" "$tc"
	case $l in *..) [ "$lc" -gt 3 ] && [ "$lc" -lt 60 ] && pass "long '$pat': label cut with .. ($lc chars)" ||
		fail "long '$pat': label cut with .." "label: $l" ;;
	*) fail "long '$pat': label cut with .." "label: $l" ;; esac
done
grep -q '€€€€€€€€[^<]*�' "$T/out.svg" && pass "long name ending in a bad byte keeps its U+FFFD in the title" ||
	fail "long name ending in a bad byte keeps its U+FFFD in the title"

# an 11-million-character name: the title is cut at a million characters
# (6 MB at most escaped), so xmllint reads the file without --huge
{ printf 'a;'; head -c 11000000 /dev/zero | tr '\0' B; printf ';c 5\n'; } >"$T/huge.folded"
"$STACKFOLD" -q -f svg "$T/huge.folded" >"$T/huge.svg"
check "an 11 MB name: the SVG passes xmllint --noout" xmllint --noout "$T/huge.svg"
check_eq "an 11 MB name: its title cut to a million characters with .." 1000000 \
	"$(grep -o '<title>BBB[^ ]*' "$T/huge.svg" | awk '{ print length($0) - 7 }')"
rm -f "$T/huge.folded" "$T/huge.svg"

# options: escaped in the markup, and the countname is a safe JS string
grep -q '<text id="title" x="600" y="24">T&lt;&amp;&gt;&quot;&#39;?�</text>' "$T/out.svg" &&
	pass "--title escaped" || fail "--title escaped" "$(grep 'id="title"' "$T/out.svg")"
grep -q '<text id="subtitle" x="600" y="48">sub?]]&gt;</text>' "$T/out.svg" &&
	pass "--subtitle escaped" || fail "--subtitle escaped" "$(grep 'id="subtitle"' "$T/out.svg")"
grep -q 'cn: "ms\\u003c/script\\u003e]]\\u003e\\u0022\\u005c\\u0002"' "$T/out.svg" &&
	pass "--countname as a JS string" || fail "--countname as a JS string" "$(grep '^var FG' "$T/out.svg")"
check_eq "exactly one CDATA end in the script and one in the style" 2 "$(grep -c ']]>' "$T/out.svg")"

# the same through the real front-end, which may clean names itself
if "$STACKFOLD" -f svg --minwidth 0px "$in" >"$T/cli.svg" 2>"$T/cli.err"; then
	check "stackfold -f svg: xmllint" xmllint --noout "$T/cli.svg"
	check "stackfold -f svg: valid UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null "$T/cli.svg"
else
	fail "stackfold -f svg on nasty input" "$(tail -3 "$T/cli.err")"
fi
