#!/usr/bin/env bash
# bench/python.sh - the figures of scripts/profile --python, on Debian's
# python3 running tests/fixtures/py/known.py (its call structure known):
#  1. capture cost per sample, --python against the default mode, side by
#     side on the same process: `scripts/profile [--python] -p PID -d SECS`
#     alternately, ROUNDS times each.  A run's cost is every process it
#     starts (a cpuacct cgroup of its own: the wrapper, bpftrace with its
#     start-up, stackfold; exited ones included) plus its BPF programs' run
#     time (kernel.bpf_stats_enabled; run_time_ns from the fdinfo of the
#     programs its processes hold, polled every 0.2 s: the last poll before
#     bpftrace exits is taken), divided by the samples in its folded output.
#     Target: --python at most 2x the default;
#  2. the same for scripts/continuous -a (every process: known.py's among
#     the machine's), three modes alternately, ROUNDS times each: the
#     default (bpftrace's maps read directly), --source text (what
#     --python reads) and --python; each run writes CWINDOWS windows of
#     CWIN seconds, then is stopped (SIGINT: its partial window written
#     too); cost as above over every window's samples, bpftrace's
#     start-up included.  Target: --python at most 2x the default;
#  3. from the --python runs' folded output: the share of python3's samples
#     with a Python frame (target >= 95%) and each function's inclusive
#     share of those against known.py's design (b's work per loop: a 200000,
#     rec, K.m, the lambda and gen 20000 each, keyf 4 x 20000).
# Environment: SECS (10), ROUNDS (3), CWIN (5), CWINDOWS (2).  Needs root, bpftrace, python3.11-dbg
# and cgroup v1's cpuacct.  Not a test: prints tables.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
CWIN=${CWIN:-5}
CWINDOWS=${CWINDOWS:-2}
PY=/usr/bin/python3
# shellcheck source=bench/cgrun.sh
. "$TOP/bench/cgrun.sh"
die() { echo "bench/python.sh: $*" >&2; exit 3; }
[ "$(id -u)" = 0 ] || die "needs root"
command -v bpftrace >/dev/null || die "bpftrace not found"
[ -d "$CG_ROOT" ] || die "no cpuacct cgroup at $CG_ROOT"
"$TOP/bin/stackfold" pyoffsets "$PY" >/dev/null 2>&1 ||
	die "no offsets for $PY (install python3.11-dbg)"

W=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
py=""
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	[ -n "$py" ] && kill "$py" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot set kernel.bpf_stats_enabled"
export STACKFOLD_NO_COUNTDOWN=1

# measure LABEL FOLDED... -- COMMAND...: COMMAND run in a cgroup of its
# own (with STOP set: stopped by SIGINT once the file pattern STOP names
# CWINDOWS files); prints "LABEL cpu_ns bpf_ns samples" (the samples of
# the FOLDED files, a glob)
measure() {
	local label=$1 folded=$2 n i
	shift 3
	cg_start "py-$label" "$W/$label.out" "$@" || die "cannot make a cgroup"
	if [ -n "${STOP:-}" ]; then
		for ((i = 0; i < 1200; i++)); do	# (at most 2 minutes)
			# shellcheck disable=SC2086 # a glob
			[ "$(ls $STOP 2>/dev/null | wc -l)" -ge "$CWINDOWS" ] && break
			kill -0 "$CG_LEAD" 2>/dev/null || break
			sleep 0.1
		done
		kill -INT "$CG_LEAD" 2>/dev/null
	fi
	cg_finish || echo "$label: capture failed: $(tail -n 3 "$W/$label.out")" >&2
	# shellcheck disable=SC2086 # a glob
	n=$(cat $folded 2>/dev/null | awk '{ s += $NF } END { printf "%d\n", s }')
	echo "$label $CG_CPU_NS $CG_BPF_NS ${n:-0}"
}

# run LABEL ARGS...: one capture of $py by scripts/profile
run() {
	local label=$1
	shift
	STOP="" measure "$label" "$W/$label.folded" -- \
		"$TOP/scripts/profile" "$@" -p "$py" -d "$SECS" -f folded -o "$W/$label"
}

# run_cont LABEL ARGS...: scripts/continuous -a, CWINDOWS windows
run_cont() {
	local label=$1
	shift
	STOP="$W/$label.d/*.pb.gz" measure "$label" "$W/$label.d/*.folded" -- \
		"$TOP/scripts/continuous" -a "$@" --window "$CWIN" --folded -q -o "$W/$label.d"
}

# table ROWS A B: the rows' cost per sample, mode A's against mode B's
# (a row's mode: its label less its round number)
table() {
	awk -v a="$2" -v b="$3" '{ c = $2 / 1e9; k = $3 / 1e9
		printf "%-10s %10.3f %10.4f %10.3f %8d %12.0f\n", $1, c, k, c + k, $4, $4 ? 1e6 * (c + k) / $4 : 0
		m = $1; sub(/[0-9]+$/, "", m); t[m] += c + k; s[m] += $4; bp[m] += k; seen[m] = 1; if (!(m in o)) o[m] = ++no }
		END { for (m in seen) u[m] = s[m] ? 1e6 * t[m] / s[m] : 0
		for (i = 1; i <= no; i++) for (m in o) if (o[m] == i)
			printf "%-9s %6.0f us/sample (%.1f us of it BPF)\n", m ":", u[m], s[m] ? 1e6 * bp[m] / s[m] : 0
		printf "ratio %s/%s: %6.2fx (target <= 2x)\n", a, b, u[b] ? u[a] / u[b] : 0 }' "$1"
}

"$PY" "$TOP/tests/fixtures/py/known.py" 100000 &
py=$!
sleep 1
printf '\n== capture cost per sample, --python against the default, -p PID -d %s, %s rounds (%s, %s CPUs, load %s)\n' \
	"$SECS" "$ROUNDS" "$(uname -n)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %10s %10s %10s %8s %12s\n' run "cpu s" "bpf s" "total s" samples "us/sample"
for r in $(seq "$ROUNDS"); do
	run "native$r"
	run "python$r" --python
done >"$W/rows"
table "$W/rows" python native

printf '\n== scripts/continuous -a: cost per sample, --python against the default and --source text, %s windows of %s s, %s rounds (%s, %s CPUs, load %s)\n' \
	"$CWINDOWS" "$CWIN" "$ROUNDS" "$(uname -n)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %10s %10s %10s %8s %12s\n' run "cpu s" "bpf s" "total s" samples "us/sample"
for r in $(seq "$ROUNDS"); do
	run_cont "cmaps$r"
	run_cont "ctext$r" --source text
	run_cont "cpython$r" --python
done >"$W/crows"
table "$W/crows" cpython cmaps
cat "$W"/cpython[0-9]*.d/*.folded 2>/dev/null |
	awk '$0 ~ /^python3-[0-9]+;/ { t += $NF; if ($0 ~ / \([^();]+:[0-9]+\)(;| [0-9]+$)/) p += $NF }
	END { printf "continuous --python: python3 samples with Python frames: %d of %d, %.1f%%\n", p, t, t ? 100 * p / t : 0 }'

cat "$W"/python[0-9]*.folded >"$W/all.folded" 2>/dev/null
printf '\n== scripts/profile --python output, %s runs pooled\n' "$ROUNDS"
awk '$0 ~ /^python3;/ { t += $NF; if ($0 ~ / \([^();]+:[0-9]+\)(;| [0-9]+$)/) p += $NF }
	END { printf "samples with Python frames: %d of %d, %.1f%% (target >= 95%%)\n", p, t, t ? 100 * p / t : 0 }' "$W/all.folded"
printf '%-24s %8s %8s\n' "function (inclusive)" measured design
awk 'BEGIN { n = split("a rec keyf K.m main.<locals>.<lambda> gen", f, " ")
		split("55.6 5.6 22.2 5.6 5.6 5.6", d, " ") }
	/ \(known\.py:[0-9]+\)/ { t += $NF
		for (i = 1; i <= n; i++) if (index($0, ";" f[i] " (known.py:")) c[i] += $NF }
	END { for (i = 1; i <= n; i++)
		printf "%-24s %7.1f%% %7.1f%%\n", f[i], t ? 100 * c[i] / t : 0, d[i] }' "$W/all.folded"
