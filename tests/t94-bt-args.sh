#!/usr/bin/env bash
# t94-bt-args: scripts/profile and scripts/continuous give the bt/
# programs the processes to sample as arguments ($64 on: the mode, 16
# process slots, 16 thread slots), never as edits of the program: with
# bpftrace 0.17 and the kernel's BTF the program bpftrace is given is the
# file byte for byte, for -p, -t, -- COMMAND and -a, and for continuous
# -p, and --call-graph dwarf's (its copy's size, $5 and $6: the live
# checks of that size are t46's); more ids than slots
# are refused in one line.  A stand-in bpftrace (tests/lib.sh's
# fake_bpftrace: its argv saved, "#attached" printed, stopped by SIGINT):
# no capture, so it runs anywhere the scripts start.  Whether a real bpftrace samples exactly those
# processes is t20-live's (-p A,B, -p TID, -- COMMAND's descendants).
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$STACKFOLD" ] || { fail "$STACKFOLD is not built (make)"; exit 0; }
if [ ! -r /sys/kernel/btf/vmlinux ] || [ "$(id -u)" != 0 ]; then
	skip "bt arguments" "needs root and the kernel's BTF (the scripts' checks before they start bpftrace)"
	exit 0
fi

mkdir -p "$T/bin"
# shellcheck disable=SC2016 # the stand-in's code
fake_bpftrace "$T/bin/bpftrace" : 'if [ "$1" = --version ]; then echo "bpftrace v0.17.0"; exit 0; fi
printf "%s\0" "$@" >"$BT_ARGV_OUT"	# its argv, NUL-separated
echo "#attached Tracing stacks at 99 Hz... Hit Ctrl-C to end."'
export STACKFOLD_NO_COUNTDOWN=1

# after_e OUT: BT_E, the saved argv from -e's argument on: BT_E[0] is the
# program, BT_E[N] its positional parameter $N
after_e() {
	local -a a
	BT_E=()
	mapfile -d '' a <"$1"
	for ((i = 0; i < ${#a[@]}; i++)); do
		[ "${a[i]}" = -e ] && { BT_E=("${a[@]:i+1}"); return; }
	done
}
nargs_of() { after_e "$1"; echo $((${#BT_E[@]} - 1)); }	# OUT: how many parameters
prog_of() { after_e "$1"; printf '%s' "${BT_E[0]:-}"; }	# OUT: the program
arg_of() { after_e "$1"; printf '%s' "${BT_E[$2]:-}"; }	# OUT N: its $N

run_profile() {	# NAME ARGS...: scripts/profile with the stand-in
	local name=$1
	shift
	BT_ARGV_OUT=$T/$name.argv PATH=$T/bin:$PATH timeout 60 \
		"$TOP/scripts/profile" -d 1 -f folded -o "$T/$name" "$@" >"$T/$name.out" 2>&1
}

sleep 60 &
p1=$!
sleep 60 &
p2=$!
# a thread that is not its process's main one
/usr/bin/python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(60,)).start(); time.sleep(60)' &
py=$!
tid=""
for _ in $(seq 50); do
	tid=$(find "/proc/$py/task" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | grep -vx "$py" | head -n 1)
	[ -n "$tid" ] && break
	sleep 0.1
done

# -p A,B
run_profile plist -p "$p1,$p2"
check "-p A,B: bpftrace given bt/profile.bt as it is" cmp -s <(prog_of "$T/plist.argv") "$TOP/bt/profile.bt"
check_eq "-p A,B: \$2 0, \$64 1 (the list), \$65 A, \$66 B, \$67 0, \$96 0" \
	"0 1 $p1 $p2 0 0" "$(for n in 2 64 65 66 67 96; do printf '%s ' "$(arg_of "$T/plist.argv" "$n")"; done | sed 's/ $//')"
check_eq "-p A,B: 96 positional parameters" 96 "$(nargs_of "$T/plist.argv")"

# -t TID (a thread of py) with -p A
run_profile tlist -p "$p1" -t "$tid"
check "-p A -t TID: the program as it is" cmp -s <(prog_of "$T/tlist.argv") "$TOP/bt/profile.bt"
check_eq "-p A -t TID: \$64 1, \$65 A, \$66 0, \$81 TID, \$82 0" \
	"1 $p1 0 $tid 0" "$(for n in 64 65 66 81 82; do printf '%s ' "$(arg_of "$T/tlist.argv" "$n")"; done | sed 's/ $//')"

# -- COMMAND: $2 the wrapper's pid, $64 2 (its descendants)
run_profile cmd -- sleep 0.5
check "-- COMMAND: the program as it is" cmp -s <(prog_of "$T/cmd.argv") "$TOP/bt/profile.bt"
check_eq "-- COMMAND: \$64 2 (the command and its descendants)" 2 "$(arg_of "$T/cmd.argv" 64)"
w=$(arg_of "$T/cmd.argv" 2)
check "-- COMMAND: \$2 is the command's process (not 0)" test "${w:-0}" -gt 0

# --call-graph dwarf,16384 -p A: bt/profile-dwarf.bt as it is, its copy's
# size $5 16384 and turns $6 43 (16384 / 384 rounded up)
run_profile dwarf --call-graph dwarf,16384 -p "$p1"
check "--call-graph dwarf: bpftrace given bt/profile-dwarf.bt as it is" \
	cmp -s <(prog_of "$T/dwarf.argv") "$TOP/bt/profile-dwarf.bt"
check_eq "--call-graph dwarf,16384 -p A: \$5 16384, \$6 43, \$64 1, \$65 A" \
	"16384 43 1 $p1" "$(for n in 5 6 64 65; do printf '%s ' "$(arg_of "$T/dwarf.argv" "$n")"; done | sed 's/ $//')"

# -a: no arguments past SECS
run_profile all -a
check "-a: the program as it is" cmp -s <(prog_of "$T/all.argv") "$TOP/bt/profile.bt"
check_eq "-a: four positional parameters (HZ PID FLUSH SECS)" 4 "$(nargs_of "$T/all.argv")"

# the comparison shown refusing an edited program (one more pid term:
# the check compares bytes, not a pattern)
prog_of "$T/plist.argv" >"$T/plist.prog"
sed 's/pid == \$80 ||/pid == $80 || pid == $97 ||/' "$T/plist.prog" >"$T/doctored.bt"
check "the comparison refuses an edited program" bash -c '! cmp -s "$0" "$1" && ! cmp -s "$0" "$2"' \
	"$T/doctored.bt" "$T/plist.prog" "$TOP/bt/profile.bt"

# 17 processes: more than the slots, refused in one line (251, the
# profiler's usage error), bpftrace not run
many=()
for _ in $(seq 17); do many+=("$p1"); done
rm -f "$T/many.argv"
run_profile many -p "$(IFS=,; echo "${many[*]}")"
check_eq "-p with 17 ids: exit 251 (a usage error)" 251 "$?"
check "-p with 17 ids: says the bound" grep -q '^profile: -p and -t take at most 16 processes and 16 threads' "$T/many.out"
check "-p with 17 ids: bpftrace not started" test ! -e "$T/many.argv"

# scripts/continuous -p A: .continuous.bt is bt/continuous.bt (maps
# source, bpftrace 0.17: its stacks' depth kept), $64 1, $65 A
BT_ARGV_OUT=$T/cont.argv PATH=$T/bin:$PATH timeout 20 \
	"$TOP/scripts/continuous" -p "$p1" --window 1 -o "$T/cont" >"$T/cont.out" 2>&1 &
cpid=$!
for _ in $(seq 100); do [ -s "$T/cont.argv" ] && break; sleep 0.1; done
kill -INT "$cpid" 2>/dev/null
wait "$cpid" 2>/dev/null
check "continuous -p A: .continuous.bt is bt/continuous.bt" cmp -s "$T/cont/.continuous.bt" "$TOP/bt/continuous.bt"
mapfile -d '' ca <"$T/cont.argv" 2>/dev/null
# (argv: the program's file, then HZ PID WINDOW ...)
check_eq "continuous -p A: \$64 1, \$65 A, \$66 0" "1 $p1 0" "${ca[64]:-} ${ca[65]:-} ${ca[66]:-}"

kill "$p1" "$p2" "$py" 2>/dev/null
wait "$p1" "$p2" "$py" 2>/dev/null
exit 0
