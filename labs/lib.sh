# labs/lib.sh - sourced by every labs/NN-*.sh: paths, settings, helpers.
#
# Settings (environment):
#   LAB_SECONDS  length of each capture (default 10; CI uses 3)
#   LAB_HZ       sampling rate for the labs that let you choose (default 99)
# Outputs go to the directory given as the script's argument, default
# labs/out/NN (git-ignored).  labs/check NN DIR reads them.
# shellcheck shell=bash

# A failing step ends the lab (its own message says why), rather than
# letting later steps work on missing files.
set -e

LABS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$LABS")
STACKFOLD=${STACKFOLD:-$TOP/bin/stackfold}
# shellcheck disable=SC2034 # used by the lab scripts
PROFILE=$TOP/scripts/profile
BUILD=${LAB_BUILD:-$LABS/build}	# LAB_BUILD: another copy of labs/build (tests)
LAB_SECONDS=${LAB_SECONDS:-10}
LAB_HZ=${LAB_HZ:-99}
export STACKFOLD

# BT: how to run bpftrace.  Tracepoints and kprobes are found through
# tracefs; where it is not mounted (some minimal VMs and containers),
# mount it for bpftrace alone, in a mount namespace of its own.  The pid
# stays bpftrace's: unshare and sh exec it.
# shellcheck disable=SC2034 # used by the lab scripts
BT=(bpftrace)
if [ ! -e /sys/kernel/tracing/events ] && [ ! -e /sys/kernel/debug/tracing/events ]; then
	# shellcheck disable=SC2016,SC2034 # expanded by the inner sh; used by the lab scripts
	BT=(unshare -m --propagation private sh -c \
		'mount -t tracefs nodev /sys/kernel/tracing && exec bpftrace "$@"' bpftrace)
fi

# shellcheck source=scripts/sigint.sh
. "$TOP/scripts/sigint.sh"	# sigint_ready, sigint_send

lab_die() { echo "lab: $*" >&2; exit 1; }

# A failing step ends the lab (set -e) with one line that says which.
lab_failed() {
	case "$2" in
	*PROFILE*)
		[ "$1" != 252 ] || lab_die "scripts/profile recorded no samples (exit 252): the workload died, or never ran"
		[ "$1" != 253 ] || lab_die "scripts/profile could not start (exit 253): the workload is gone, or see its message above" ;;
	esac
	lab_die "a step failed (exit $1): $2"
}
trap 'lab_failed $? "$BASH_COMMAND"' ERR

# However the lab ends (done, a failed step, Ctrl-C), end the workloads it
# started in the background.  Lab 12 calls this from its own EXIT trap.
lab_cleanup() {
	local p l
	p=$(jobs -p)
	# shellcheck disable=SC2086 # one pid per word
	[ -z "$p" ] || kill $p 2>/dev/null || true
	for l in "${LAB_LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
}
trap lab_cleanup EXIT

# loop_attach FILE: attach FILE to a free loop device with direct I/O (its
# requests go to FILE with O_DIRECT: to the disk under it, not through the
# page cache), its path in LOOP and its number as the block tracepoints
# give it (major << 20 | minor) in LOOPDEV.  lab_cleanup detaches it (a
# device still open is detached by the kernel at its last close).
LAB_LOOPS=()
loop_attach() {
	local mm
	command -v losetup >/dev/null || { echo "lab: losetup is not installed (apt-get install mount)" >&2; return 1; }
	LOOP=$(losetup --direct-io=on --find --show "$1") || return 1
	LAB_LOOPS+=("$LOOP")
	mm=$(stat -c '%t %T' "$LOOP") || return 1
	# shellcheck disable=SC2034 # used by the lab scripts and labs/check
	LOOPDEV=$(( (0x${mm% *} << 20) | 0x${mm#* } ))
}

# disk_image FILE: a new 16 MiB FILE whose first half is written to the
# disk (random bytes, O_DIRECT: not left in the page cache) and whose
# second half is a hole (no blocks: a read of it is zeros from the
# filesystem, without the disk).
disk_image() {
	rm -f "$1"
	dd if=/dev/urandom of="$1" bs=1M count=8 oflag=direct status=none && truncate -s 16M "$1"
}

# lab_init NN [OUTDIR]: check what every lab needs, make OUT, record the
# settings in OUT/lab.env for labs/check.
lab_init() {
	OUT=${2:-$LABS/out/$1}
	[ "$(id -u)" = 0 ] || lab_die "run as root, bpftrace needs it (from a root shell, or: sudo $0)"
	command -v bpftrace >/dev/null || lab_die "bpftrace is not installed (apt-get install bpftrace)"
	[ -x "$STACKFOLD" ] || lab_die "$STACKFOLD is not built: run make"
	[ -x "$BUILD/shares" ] || lab_die "the lab programs are not built: run make labs"
	case "$LAB_SECONDS" in '' | *[!0-9]*) lab_die "LAB_SECONDS wants whole seconds, not '$LAB_SECONDS'" ;; esac
	mkdir -p "$OUT" || lab_die "cannot create $OUT"
	printf 'lab=%s\nseconds=%s\nhz=%s\ncpus=%s\n' "$1" "$LAB_SECONDS" "$LAB_HZ" "$(nproc)" >"$OUT/lab.env"
	echo "lab $1: outputs in $OUT"
}

# mark WHEN NAME PID: record in OUT/lab.env the CPU time process PID has
# had (ns, all threads) and the wall clock (ns) WHEN (start or end) of a
# capture: labs/check compares the sample count with the rate times the
# CPU time the workload had.
mark() {
	local ns
	ns=$(cat /proc/"$3"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }')
	printf 'cpu_%s_%s=%s\nwall_%s_%s=%s\n' "$1" "$2" "${ns:-0}" "$1" "$2" "$(date +%s%N)" >>"$OUT/lab.env"
}

# cpu_watch NAME PID: in the background, note every 0.1 s the wall clock
# and the CPU time PID has had (ns, all threads) in OUT/cpu-NAME.txt until
# PID ends: labs/check reads from it the CPU time PID had during the
# capture (the raw capture's "#meta start_ns" and "duration_ns").
# Builtins only, but for the sleep: little load of its own.
cpu_watch() {
	local f=$OUT/cpu-$1.txt pid=$2
	: >"$f"
	(	while [ -d "/proc/$pid/task" ]; do
			s=0
			for t in /proc/"$pid"/task/*/schedstat; do read -r a _ <"$t" 2>/dev/null && s=$((s + a)); done
			echo "${EPOCHREALTIME/./}000 $s"
			sleep 0.1
		done >>"$f" 2>/dev/null
	) &
}

# wait_attached PID FILE: wait (at most 60 s) until the bpftrace PID, with
# its output in FILE, has printed its BEGIN banner ("... Hit Ctrl-C to
# end."): BEGIN runs once every probe is attached, and its output is
# printed by the loop that also acts on SIGINT.  A SIGINT that comes
# earlier can be lost (seen with 0.17 on a loaded machine), so also make
# sure bpftrace catches SIGINT.  Fails when bpftrace exits first.
wait_attached() {
	local i=0
	until grep -q 'Hit Ctrl-C to end' "$2" 2>/dev/null && sigint_ready "$1"; do
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
		[ "$i" -lt 600 ] || return 1
	done
}

# interrupt PID: what Ctrl-C does to bpftrace (it prints its maps and
# exits), then wait for it (sigint_send: SIGINT again while one is lost,
# SIGTERM 60 s on).
interrupt() {
	local pid=$1 stopper rc=0
	sigint_send "$pid" lab &
	stopper=$!
	wait "$pid" || rc=$?
	kill "$stopper" 2>/dev/null || true
	wait "$stopper" 2>/dev/null || true
	return "$rc"
}

# capture SECONDS FILE CMD...: run CMD (a bpftrace command) with its output
# in FILE, and stop it as Ctrl-C would, SECONDS after it has attached its
# probes.  bpftrace prints its maps when it stops.  With CAPTURE_MARK set
# to "NAME PID", mark the CPU time of PID from attach to stop, as NAME.
capture() {
	local secs=$1 file=$2 pid rc=0 t0
	shift 2
	"$@" >"$file" &
	pid=$!
	if ! wait_attached "$pid" "$file"; then
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		echo "lab: bpftrace printed no 'Hit Ctrl-C to end' banner within 60 s" >&2
	fi
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # NAME PID
	[ -z "${CAPTURE_MARK:-}" ] || mark start $CAPTURE_MARK
	sleep "$secs"
	interrupt "$pid" || rc=$?
	# how long the probes were attached: up to bpftrace's exit, as it
	# prints its maps with them still attached (a slow print makes a
	# 3 s capture measure 5 s of off-CPU time); the checks bound by it
	printf 'captured=%s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')" \
		>>"$OUT/lab.env"
	# shellcheck disable=SC2086 # NAME PID
	[ -z "${CAPTURE_MARK:-}" ] || mark end $CAPTURE_MARK
	return "$rc"
}

# alive PID NAME: the workload NAME is still running (it must run through
# the capture; a profile of a dead workload would mislead).
alive() {
	kill -0 "$1" 2>/dev/null || lab_die "the workload $2 (pid $1) died during the capture; see its messages above"
}

# nonempty FILE WHAT: a capture gave something.
nonempty() {
	[ -s "$1" ] || lab_die "$2 came out empty ($1): nothing was sampled"
}

# stop PID...: end the background workloads a lab started.
stop() {
	local w
	kill "$@" 2>/dev/null || true
	# SIGKILL 5 s on: a child signalled right after its fork, before it
	# ran its command, was once seen to outlive the SIGTERM and hang here
	(	# short sleeps: no long-lived child keeps a pipe open
		for _ in $(seq 50); do sleep 0.1; done
		kill -KILL "$@" 2>/dev/null
	) &
	w=$!
	wait "$@" 2>/dev/null || true
	kill "$w" 2>/dev/null || true
	wait "$w" 2>/dev/null || true
}
