#!/usr/bin/env bash
# t14-record-cost: the "stackfold: cpu:" line of `stackfold record` counts
# the CPU of this capture only.  A process keeps its CPU time, and that of
# the children it has reaped, across exec: scripts/profile's shell execs
# stackfold after running `bpftrace --version` (0.24 CPU-s here), awk, sed
# and itself, none of which is stackfold's or the capture's bpftrace's.
# No bpftrace needed: a stand-in burns a known amount of CPU.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
export LC_ALL=C	# times(1)'s decimal point
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }

# burn S: a child spending S seconds of user CPU (times(2) itself is
# called seldom: it is a system call, whose time would count too)
burn() { perl -e 'my $s = shift; while ((times)[0] < $s) { for (1 .. 100000) {} }' "$1"; }
export -f burn

# The stand-in burns 0.4 s in a child before "#attached", then on SIGINT
# (record's stop at -D) prints one stack, as bpftrace prints its map.
fake_bpftrace "$T/fakebt" 'printf "@[\n\tleaf\n\troot\n]: 3\n"' 'burn 0.4
echo "#attached"'
chmod +x "$T/fakebt"

# Before the exec: 1 s in a reaped child, and 0.3 s or more in the shell
# itself (its own time is written down, to check it really was spent).
bash -c '
	burn 1
	times >"$T/times"	# (not in a pipe: a subshell would report its own)
	until awk "NR == 1 { gsub(/[ms]/, \" \"); exit !(\$2 + \$4 >= 0.3) }" "$T/times"; do
		i=0; while [ "$i" -lt 20000 ]; do i=$((i + 1)); done
		times >"$T/times"
	done
	exec "$STACKFOLD" record -v -D 1 -f folded -o "$T/c" -- "$T/fakebt"' \
	>/dev/null 2>"$T/c.err"
check_eq "record after an exec: exit 0" 0 "$?"
check_eq "record after an exec: the stack written" "root;leaf 3" "$(cat "$T/c.folded" 2>&1)"
# times: "0m0.812s 0m0.004s" (the shell), then its children
shell_s=$(awk 'NR == 1 { gsub(/[ms]/, " "); print $2 + $4 }' "$T/times")
kids_s=$(awk 'NR == 2 { gsub(/[ms]/, " "); print $2 + $4 }' "$T/times")
check "the shell spent 0.2 s or more before the exec ($shell_s s)" \
	awk -v s="$shell_s" 'BEGIN { exit !(s >= 0.2) }'
check "its reaped child spent 0.9 s or more ($kids_s s)" \
	awk -v s="$kids_s" 'BEGIN { exit !(s >= 0.9) }'
line=$(grep '^stackfold: cpu:' "$T/c.err")
sf=$(printf '%s\n' "$line" | sed -n 's/.*stackfold \([0-9.]*\) s,.*/\1/p')
bt=$(printf '%s\n' "$line" | sed -n 's/.*bpftrace \([0-9.]*\) s .*/\1/p')
if [ -z "$sf" ] || [ -z "$bt" ]; then
	fail "record prints its cpu line" "$(cat "$T/c.err")"
else
	# stackfold reads 6 lines here: far under the shell's time
	check "stackfold's cpu leaves out the shell it replaced ($sf s < $shell_s s - 0.1)" \
		awk -v a="$sf" -v b="$shell_s" 'BEGIN { exit !(a < b - 0.1) }'
	# the stand-in's 0.4 s is counted, the 1 s reaped before the exec is not
	check "bpftrace's cpu is the stand-in's 0.4 s, not the 1 s reaped before ($bt s)" \
		awk -v a="$bt" 'BEGIN { exit !(a >= 0.35 && a < 0.9) }'
fi
