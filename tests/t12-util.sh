#!/usr/bin/env bash
# t12-util: symbolizer/util.c pieces without a caller that reaches every
# case (tests/unit/util_test.c): the bump arena behind the pprof writer, and
# the malloc heap on huge pages that main() sets up.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

out=.output flags=()
if [ "${SANITIZE:-}" = 1 ]; then
	out=.output-san
	# shellcheck disable=SC2054 # the comma is -fsanitize's list
	flags=(-fsanitize=address,undefined -fno-sanitize-recover=all)
fi
# shellcheck disable=SC2086 # SF_LDLIBS is a list of -l flags
if ! cc -std=gnu11 -O1 -g -D_GNU_SOURCE "${flags[@]}" -I"$TOP/symbolizer" \
	-o "$T/util_test" "$TOP/tests/unit/util_test.c" "$TOP/$out/libstackfold.a" \
	$SF_LDLIBS 2>"$T/build.err"; then
	fail "build tests/unit/util_test.c" "$(tail -5 "$T/build.err")"
	exit 0
fi
"$T/util_test" >"$T/out" 2>&1
rc=$?
while read -r st name; do
	case $st in
	ok) pass "$name" ;;
	skip) skip "${name%%:*}" "${name#*: }" ;;
	FAIL) fail "${name%%:*}" "${name#*: }" ;;
	*) fail "util_test output" "$st $name" ;;
	esac
done <"$T/out"
[ "$rc" = 0 ] || grep -q FAIL "$T/out" || fail "util_test exit status" "rc=$rc"
[ -s "$T/out" ] || fail "util_test printed nothing" "rc=$rc"
