#!/usr/bin/env bash
# t11-units: unit programs for collapse modules that every output and
# capture relies on, checked case by case: the loss-counter table
# (tests/unit/losses_test.c) and every place that names a counter from it
# (tests/unit/loss_places_test.c), the capture protocol
# (tests/unit/protocol_test.c), the size bound of pprof input
# (tests/unit/pprof_in_test.c), and the refreshes of a live process's map
# that stackfold record asks the report for (tests/unit/refresh_test.c).
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

unit_test losses_test losses_test.c -Wall -Wextra -Werror
unit_test loss_places_test loss_places_test.c -Wall -Wextra -Werror
unit_test protocol_test protocol_test.c -Wall -Wextra -Werror
unit_test pprof_in_test pprof_in_test.c -Wall -Wextra -Werror \
	-I"$TOP/.output/gen" -I"$TOP/.output-san/gen"
unit_test refresh_test refresh_test.c -Wall -Wextra -Werror
