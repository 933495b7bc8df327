# shellcheck shell=bash
# shellcheck disable=SC2034 # the PID_* and BT_* variables are read by the scripts that source this
# pids.sh - sourced by scripts/profile and scripts/continuous: the -p/-t
# lists as the bpftrace program's arguments ($64 on: bt/profile.bt says
# what they are), and what a program needs without the kernel's BTF.
#
# pid_filter LIST PROG (comma separated ids, already checked for digits)
#   appends to
#   PID_PROCS   the ids that are processes (bpftrace's pid is the thread
#               group id: all its threads);
#   PID_THREADS the ids of threads that are not their process's main
#               thread (/proc/N exists, its Tgid is another): that thread
#               alone, as perf record -t does;
#   PID_NOTES   one "PROG: N is a thread of process T: ..." line per thread;
#   PID_MISSING the first id not found (then returns 1).
PID_PROCS=() PID_THREADS=() PID_NOTES="" PID_MISSING=""
pid_filter() {
	local p tgid
	for p in ${1//,/ }; do
		tgid=""
		[ -d "/proc/$p" ] && tgid=$(awk '/^Tgid:/ { print $2; exit }' "/proc/$p/status" 2>/dev/null)
		if [ -z "$tgid" ]; then
			PID_MISSING=$p
			return 1
		fi
		if [ "$tgid" = "$p" ]; then
			PID_PROCS+=("$p")
		elif [[ ",$1," == *",$tgid,"* ]]; then	# its process is given too
			PID_THREADS+=("$p")
			PID_NOTES="${PID_NOTES}$2: $p is a thread of process $tgid, which is given too: sampling all of $tgid's threads"$'\n'
		else
			PID_THREADS+=("$p")
			PID_NOTES="${PID_NOTES}$2: $p is a thread of process $tgid: sampling that thread only"$'\n'
		fi
	done
}

# The programs' slots: 16 processes ($65...$80) and 16 threads ($81...$96).
PID_SLOTS=16

# pid_slots_ok: are PID_PROCS and PID_THREADS within the program's slots?
# (bpftrace takes no list argument: the program compares with each slot)
pid_slots_ok() {
	[ ${#PID_PROCS[@]} -le $PID_SLOTS ] && [ ${#PID_THREADS[@]} -le $PID_SLOTS ]
}

# bt_filter_args NOWN MODE sets BT_FILTER, the arguments that follow the
# program's own NOWN: zeros up to $63, then $64 MODE (0: the program's $2
# alone, 0 every process; 1: PID_PROCS and PID_THREADS; 2: -- COMMAND, $2
# and its descendants), $65... PID_PROCS and $81... PID_THREADS, each
# padded with 0 (no process: bpftrace's pid and tid are never 0 there).
# Nothing for mode 0 (unset arguments are 0).
BT_FILTER=()
bt_filter_args() {
	local i
	BT_FILTER=()
	[ "$2" = 0 ] && return 0
	for ((i = $1 + 1; i < 64; i++)); do BT_FILTER+=(0); done
	BT_FILTER+=("$2")
	for ((i = 0; i < PID_SLOTS; i++)); do BT_FILTER+=("${PID_PROCS[i]:-0}"); done
	for ((i = 0; i < PID_SLOTS; i++)); do BT_FILTER+=("${PID_THREADS[i]:-0}"); done
}

# bt_without_btf TEXT: TEXT (a bt/ program) with each field of curtask it
# reads replaced by 0, for a kernel without BTF (or a bpftrace that cannot
# read it): the programs read nothing else through BTF.  The result is in
# BT_TEXT.  Every pid is then image 1, and -- COMMAND's walk up its
# ancestors finds none: the command alone is sampled.
bt_without_btf() {
	local f
	BT_TEXT=$1
	for f in self_exec_id parent_exec_id 'group_leader->start_time' 'mm->start_stack' \
		'group_leader->real_parent->mm->start_stack' \
		'group_leader->real_parent->self_exec_id' \
		'group_leader->real_parent->parent_exec_id' \
		'group_leader->real_parent->tgid' \
		'group_leader->real_parent->group_leader->start_time' real_parent; do
		BT_TEXT=${BT_TEXT//"(uint64)curtask->$f"/0}
	done
	# -- COMMAND's walk (its task pointer, $t)
	for f in tgid real_parent; do
		BT_TEXT=${BT_TEXT//"(uint64)((struct task_struct *)\$t)->$f"/0}
	done
}
