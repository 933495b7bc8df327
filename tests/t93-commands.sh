#!/usr/bin/env bash
# t93-commands: one table of subcommands feeds dispatch, the usage and the
# typo suggestions: every subcommand the usage lists runs (its --help
# exits 0), and a near miss of each, `query` included, is suggested.  The
# output formats are one table too: the front-ends ask a row's flags, the
# scripts ask `stackfold --list formats`.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
cd "$T" || exit 2

names=$("$STACKFOLD" --help | sed -n 's/^ *stackfold \([a-z]*\) .*/\1/p')
check_eq "the usage lists the six subcommands" "record continuous symbolize comments query" "$(printf %s "$names" | tr "\n" " ")"
for n in report $names; do
	timeout 10 "$STACKFOLD" "$n" --help >/dev/null 2>&1
	check_eq "stackfold $n --help: exit 0" 0 "$?"
	typo=${n:0:1}${n:2:1}${n:1:1}${n:3}	# second and third letters swapped
	timeout 10 "$STACKFOLD" "$typo" </dev/null >/dev/null 2>typo.err
	check "'stackfold $typo' suggests 'stackfold $n'" grep -q "did you mean 'stackfold $n'" typo.err
done
timeout 10 "$STACKFOLD" zzzzzzz </dev/null >/dev/null 2>far.err
check "a word near no subcommand: lists them all, query included" \
	grep -q "(report, record, continuous, symbolize, comments, query)" far.err

# Output formats: one table (collapse/output/out.c) whose rows carry what
# a format is (flags), so the front-ends ask the row, never compare its
# name, and the scripts ask the tool for the list.
fmts=$("$STACKFOLD" --list formats 2>&1)
check_eq "--list formats: the formats the usage lists, each with its suffix and flags" \
	"folded .folded diff|top .top shown|svg .svg pages,diff,stream|pprof .pb.gz binary,lines,profile" \
	"$(printf %s "$fmts" | tr '\n' '|')"
check "the usage's -f line lists the same formats" \
	grep -q -- "-f, --format LIST .*folded (default), top, svg, pprof" <("$STACKFOLD" --help)
cmp=$(grep -rnE 'strcmp\([^;]*"(folded|top|svg|pprof|\.pb\.gz)"' "$TOP/collapse/cmd" "$TOP/collapse/ingest" "$TOP/collapse/main.c" | sed "s#^$TOP/##")
check_eq "no front-end (cmd/, ingest/) compares a format's name or suffix (its row's flags say what it is)" "" "$cmp"
names=$(cut -d' ' -f1 <<<"$fmts" | paste -sd,)
check "scripts/profile: the default formats are the tool's" \
	grep -qxF "formats=$names" <("$TOP/scripts/profile" --dry-run -a 2>&1)
while read -r f _; do
	check "scripts/profile -f $f: taken" \
		grep -qxF "formats=$f" <("$TOP/scripts/profile" --dry-run -a -f "$f" 2>&1)
done <<<"$fmts"
"$TOP/scripts/profile" --dry-run -a -f flame >/dev/null 2>"$T/pf.err"
check_eq "scripts/profile -f flame: refused, exit 251 (usage)" "251:profile: unknown output 'flame' in -f" \
	"$?:$(cat "$T/pf.err")"
own=$(grep -nE "folded \| top|\*\.svg \||\(folded svg" "$TOP/scripts/profile")
check_eq "scripts/profile keeps no list of formats of its own" "" "$own"
