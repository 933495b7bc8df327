# shellcheck shell=bash
# shellcheck disable=SC2034 # the PID_* variables are read by the scripts that source this
# pids.sh - sourced by scripts/profile and scripts/continuous: the -p list
# as a term of the bpftrace program's filter.
#
# pid_filter LIST (comma separated ids, already checked for digits) sets
#   PID_FILTER  "pid == A || tid == B ...": `pid == N` for a process
#               (bpftrace's pid is the thread group id: all its threads),
#               `tid == N` for a thread that is not its process's main
#               thread (/proc/N exists, its Tgid is another): that thread
#               alone, as perf record -t does;
#   PID_NOTES   one "PROG: N is a thread of process T: ..." line per thread
#               (PROG: $1's caller name, given as $2);
#   PID_MISSING the first id not found (then returns 1).
pid_filter() {
	local p tgid
	PID_FILTER="" PID_NOTES="" PID_MISSING=""
	for p in ${1//,/ }; do
		tgid=""
		[ -d "/proc/$p" ] && tgid=$(awk '/^Tgid:/ { print $2; exit }' "/proc/$p/status" 2>/dev/null)
		if [ -z "$tgid" ]; then
			PID_MISSING=$p
			return 1
		fi
		if [ "$tgid" = "$p" ]; then
			PID_FILTER="$PID_FILTER || pid == $p"
		elif [[ ",$1," == *",$tgid,"* ]]; then	# its process is given too
			PID_FILTER="$PID_FILTER || tid == $p"
			PID_NOTES="${PID_NOTES}$2: $p is a thread of process $tgid, which is given too: sampling all of $tgid's threads"$'\n'
		else
			PID_FILTER="$PID_FILTER || tid == $p"
			PID_NOTES="${PID_NOTES}$2: $p is a thread of process $tgid: sampling that thread only"$'\n'
		fi
	done
	PID_FILTER=${PID_FILTER# || }
}
