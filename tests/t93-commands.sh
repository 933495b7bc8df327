#!/usr/bin/env bash
# t93-commands: one table of subcommands feeds dispatch, the usage and the
# typo suggestions: every subcommand the usage lists runs (its --help
# exits 0), and a near miss of each, `query` included, is suggested.
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
