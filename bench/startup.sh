#!/usr/bin/env bash
# bench/startup.sh - how long `scripts/profile -- sleep 1` takes to start
# sampling, where that time goes, and `perf record -g -- sleep 1` beside it
# (a benchmark, not a test: it prints figures and never fails on them).
# Needs root (or the capabilities scripts/profile asks for) and bpftrace.
#
#   bench/startup.sh            # RUNS (5) runs of each, medians
#   PROFILE=/other/checkout/scripts/profile bench/startup.sh   # another
#                               # version of the script (this bin/stackfold)
#
# For scripts/profile, from its invocation:
#   script     until `stackfold record` is run (option parse, the
#              `bpftrace --version` check, the program, the stopped command)
#   version    `bpftrace --version` alone (inside "script")
#   stackfold  stackfold record's start, until it runs bpftrace
#   bpftrace   bpftrace's start until the line `stackfold: sampling ...`
#              (its BEGIN probe has run): its compile (until it prints
#              "Attaching N probes") and its attach
#   to sample  the sum: invocation to sampling
#   CPU        CPU seconds of every process until sampling starts
#              (/proc, clock ticks), and of the whole run (bash `times`)
#   wall       the whole run, the outputs written (the command: 1 s)
#   the end   the command's exit to the outputs written (wall - to sample - 1 s)
# kallsyms: bpftrace reads /proc/kallsyms when it first prints a kernel
# stack (at a flush or the end, not at the start; stackfold names kernel
# frames itself only for --call-graph dwarf): `cat /proc/kallsyms` shows
# the kernel's share.  perf record: wall and CPU of the whole run (it prints nothing
# when it starts).
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
TOP=$PWD
PROFILE=${PROFILE:-$TOP/scripts/profile}
if ! command -v bpftrace >/dev/null || [ "$(id -u)" != 0 ]; then
	echo "bench/startup.sh: needs root and bpftrace; skipped"
	exit 0
fi
make -s all >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench-startup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Marks: a bpftrace found first in PATH and a STACKFOLD that write the
# time they start (and, for `bpftrace --version`, end) into $tmp/marks.
mkdir "$tmp/shim"
cat >"$tmp/shim/bpftrace" <<EOF
#!/usr/bin/env bash
PATH=\${PATH#$tmp/shim:}
if [ "\${1:-}" = --version ]; then
	echo "v0 \$EPOCHREALTIME" >>"$tmp/marks"
	bpftrace "\$@"; rc=\$?
	echo "v1 \$EPOCHREALTIME" >>"$tmp/marks"
	exit \$rc
fi
echo "bt \$EPOCHREALTIME \$\$" >>"$tmp/marks"
# its "Attaching N probes..." line: compiled, attaching (its stdout
# passed on line by line: a 1 s capture prints little)
exec bpftrace "\$@" > >(at=""; while IFS= read -r l; do
	[ -z "\$at" ] && [[ \$l == Attaching* ]] && at=1 && echo "at \$EPOCHREALTIME" >>"$tmp/marks"
	printf '%s\n' "\$l"
done)
EOF
cat >"$tmp/sf" <<EOF
#!/usr/bin/env bash
echo "sf \$EPOCHREALTIME \$\$" >>"$tmp/marks"
exec "$TOP/bin/stackfold" "\$@"
EOF
chmod +x "$tmp/shim/bpftrace" "$tmp/sf"
hz=$(getconf CLK_TCK)

# cpu_s VAR: VAR = user+system seconds of this shell's waited children
# (bash's times, run here: in a $(...) subshell it would count none)
cpu_s() {
	local u s
	times >"$tmp/times"
	{ read -r _; read -r u s; } <"$tmp/times"
	u=${u%s} s=${s%s}
	printf -v "$1" '%s' "$(awk -v u="$u" -v s="$s" 'BEGIN { split(u, a, "m"); split(s, b, "m")
		printf "%.3f", a[1] * 60 + a[2] + b[1] * 60 + b[2] }')"
}
# ticks PID [WITH_CHILDREN]: utime+stime (and cutime+cstime) of PID
ticks() {
	local f
	f=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	# shellcheck disable=SC2086 # the fields of /proc/PID/stat
	set -- $f "${2:-0}"
	if [ "${!#}" = 1 ]; then echo $((${12} + ${13} + ${14} + ${15})); else echo $((${12} + ${13})); fi
}
mark() { awk -v k="$1" '$1 == k { print $2; exit }' "$tmp/marks"; }
markpid() { awk -v k="$1" '$1 == k { print $3; exit }' "$tmp/marks"; }

# one_profile: one run; appends "script version stackfold bpftrace
# to_sample cpu_to_sample wall cpu" to $tmp/profile.runs
one_profile() {
	local c0 c1 t0 ts="" line spid cs=0 sf bt
	rm -f "$tmp/marks" "$tmp/err"
	mkfifo "$tmp/err"
	cpu_s c0
	t0=$EPOCHREALTIME
	PATH=$tmp/shim:$PATH STACKFOLD=$tmp/sf "$PROFILE" -o "$tmp/p" -- sleep 1 \
		>/dev/null 2>"$tmp/err" &
	spid=$!
	while IFS= read -r line; do
		if [ -z "$ts" ] && [[ $line == "stackfold: sampling"* ]]; then
			ts=$EPOCHREALTIME
			sf=$(markpid sf) bt=$(markpid bt)
			cs=$(($(ticks "$spid" 1) + $(ticks "$sf") + $(ticks "$bt")))
		fi
	done <"$tmp/err"
	wait "$spid" || true
	local t1=$EPOCHREALTIME
	cpu_s c1
	rm -f "$tmp/err"
	awk -v t0="$t0" -v v0="$(mark v0)" -v v1="$(mark v1)" -v sf="$(mark sf)" \
		-v bt="$(mark bt)" -v at="$(mark at)" -v ts="${ts:-0}" -v t1="$t1" -v cs="$cs" -v hz="$hz" \
		-v c0="$c0" -v c1="$c1" 'BEGIN {
		printf "%.3f %.3f %.3f %.3f %.3f %.2f %.3f %.3f %.3f %.3f\n", sf - t0, v1 - v0,
			bt - sf, ts - bt, ts - t0, cs / hz, t1 - t0, c1 - c0, at - bt, ts - at }' >>"$tmp/profile.runs"
}

one_perf() {
	local c0 c1 t0
	cpu_s c0
	t0=$EPOCHREALTIME
	perf record -q -g -o "$tmp/perf.data" -- sleep 1 >/dev/null 2>&1 || true
	local t1=$EPOCHREALTIME
	cpu_s c1
	awk -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" \
		'BEGIN { printf "%.3f %.3f\n", t1 - t0, c1 - c0 }' >>"$tmp/perf.runs"
}

# median of column $1 of file $2
med() { sort -n -k"$1,$1" "$2" | awk -v k="$1" '{ v[NR] = $k } END { print v[int((NR + 1) / 2)] }'; }

echo "machine: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), bpftrace $(bpftrace --version 2>/dev/null | awk '{ print $2 }')"
: >"$tmp/profile.runs"
: >"$tmp/perf.runs"
for ((i = 0; i < RUNS; i++)); do
	one_profile
	command -v perf >/dev/null && one_perf
done
r=$tmp/profile.runs
echo "$PROFILE -- sleep 1 (median of $RUNS; seconds from its invocation):"
printf '  script (parse, checks, program, the stopped command): %s wall  (bpftrace --version in it: %s)\n' "$(med 1 "$r")" "$(med 2 "$r")"
printf '  stackfold record, until it runs bpftrace:             %s wall\n' "$(med 3 "$r")"
printf '  bpftrace compile and attach, until sampling:          %s wall  (compile %s, attach %s)\n' "$(med 4 "$r")" "$(med 9 "$r")" "$(med 10 "$r")"
printf '  invocation to "stackfold: sampling ...":              %s wall, %s CPU-s\n' "$(med 5 "$r")" "$(med 6 "$r")"
printf '  the whole run (outputs written):                      %s wall, %s CPU-s\n' "$(med 7 "$r")" "$(med 8 "$r")"
awk '{ $11 = $7 - $5 - 1 } 1' "$r" >"$tmp/end.runs"
printf '  the end (the command exited to outputs written):      %s wall\n' "$(med 11 "$tmp/end.runs")"
: >"$tmp/ks.runs"
for ((i = 0; i < RUNS; i++)); do
	t0=$EPOCHREALTIME c0=""; cpu_s c0
	cat /proc/kallsyms >/dev/null
	t1=$EPOCHREALTIME c1=""; cpu_s c1
	awk -v a="$t0" -v b="$t1" -v ca="$c0" -v cb="$c1" 'BEGIN { printf "%.3f %.3f\n", b - a, cb - ca }' >>"$tmp/ks.runs"
done
printf '  kallsyms, read by bpftrace at its first kernel stack printed (a flush or the end, not the start):\n'
printf '    cat /proc/kallsyms                                  %s wall, %s CPU-s\n' "$(med 1 "$tmp/ks.runs")" "$(med 2 "$tmp/ks.runs")"
if [ -s "$tmp/perf.runs" ]; then
	echo "perf record -g -- sleep 1 (median of $RUNS):"
	printf '  the whole run (perf.data written):                    %s wall, %s CPU-s\n' \
		"$(med 1 "$tmp/perf.runs")" "$(med 2 "$tmp/perf.runs")"
else
	echo "perf record: not installed (linux-perf); not compared"
fi
