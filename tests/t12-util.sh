#!/usr/bin/env bash
# t12-util: base/util.c pieces without a caller that reaches every
# case (tests/unit/util_test.c): the bump arena behind the pprof writer, and
# the malloc heap on huge pages that main() sets up.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

unit_test util_test util_test.c
