# labs/lib.sh - sourced by every labs/NN-*.sh: paths, settings, helpers.
#
# Settings (environment):
#   LAB_SECONDS  length of each capture (default 10; CI uses 3)
#   LAB_HZ       sampling rate for the labs that let you choose (default 99)
# Outputs go to the directory given as the script's argument, default
# labs/out/NN (git-ignored).  labs/check NN DIR reads them.
# shellcheck shell=bash

LABS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$LABS")
STACKFOLD=${STACKFOLD:-$TOP/bin/stackfold}
export PROFILE=$TOP/scripts/profile
BUILD=$LABS/build
LAB_SECONDS=${LAB_SECONDS:-10}
LAB_HZ=${LAB_HZ:-99}
export STACKFOLD

lab_die() { echo "lab: $*" >&2; exit 1; }

# lab_init NN [OUTDIR]: check what every lab needs, make OUT, record the
# settings in OUT/lab.env for labs/check.
lab_init() {
	OUT=${2:-$LABS/out/$1}
	[ "$(id -u)" = 0 ] || lab_die "run as root (bpftrace needs it): sudo $0"
	command -v bpftrace >/dev/null || lab_die "bpftrace is not installed (apt-get install bpftrace)"
	[ -x "$STACKFOLD" ] || lab_die "$STACKFOLD is not built: run make"
	[ -x "$BUILD/shares" ] || lab_die "the lab programs are not built: run make labs"
	case "$LAB_SECONDS" in '' | *[!0-9]*) lab_die "LAB_SECONDS wants whole seconds, not '$LAB_SECONDS'" ;; esac
	mkdir -p "$OUT" || lab_die "cannot create $OUT"
	printf 'lab=%s\nseconds=%s\nhz=%s\ncpus=%s\n' "$1" "$LAB_SECONDS" "$LAB_HZ" "$(nproc)" >"$OUT/lab.env"
	echo "lab $1: outputs in $OUT"
}

# capture SECONDS FILE CMD...: run CMD (a bpftrace command) with its output
# in FILE, and stop it with SIGINT (as Ctrl-C would) SECONDS after it has
# attached its probes.  bpftrace prints its maps when it stops.
capture() {
	local secs=$1 file=$2 pid waited=0
	shift 2
	"$@" >"$file" &
	pid=$!
	until grep -q '^Attaching' "$file" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return
		fi
		sleep 0.1
		waited=$((waited + 1))
		[ "$waited" -lt 600 ] || break
	done
	sleep "$secs"
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
}

# stop PID...: end the background workloads a lab started.
stop() {
	kill "$@" 2>/dev/null
	wait "$@" 2>/dev/null
	return 0
}
