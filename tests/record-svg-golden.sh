#!/usr/bin/env bash
# tests/record-svg-golden.sh - regenerate tests/fixtures/svg/*.expected.svg
# after an intended change to the SVG writer; review the diff before
# committing.  Each NAME.folded is rendered by tests/tools/svg_driver.c with
# the options in NAME.args (one argument per line, may be absent).
#   make && tests/record-svg-golden.sh
set -eu
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/svg_build.sh
. "$TOP/tests/tools/svg_build.sh"
svg_driver_build || exit 1
for in in "$TOP"/tests/fixtures/svg/*.folded; do
	base=${in%.folded}
	args=()
	if [ -f "$base.args" ]; then
		mapfile -t args <"$base.args"
	fi
	"$SVG_DRIVER" "${args[@]}" "$in" >"$base.expected.svg"
	echo "recorded ${base#"$TOP"/}.expected.svg"
done
