# bench/cgrun.sh - sourced by benches, not run: a command run to its end in
# a cpuacct cgroup of its own (every process it starts, exited ones
# included), with the run time of the BPF programs its processes load.
# Needs root and cgroup v1's cpuacct at CG_ROOT.
#
#   cg_start NAME LOG COMMAND...   start it (stdout and stderr to LOG)
#   ...                            (the caller may stop it meanwhile: $CG_LEAD)
#   cg_finish                      wait for it; sets CG_CPU_NS and CG_BPF_NS,
#                                  returns COMMAND's exit status
# Called in the benchmark's own shell, never in $(...): a subshell cannot
# wait for the command.
# shellcheck shell=bash
CG_ROOT=${CG_ROOT:-/sys/fs/cgroup/cpuacct}

# cg_bpf_poll CG OUT: while CG has processes, "prog_id run_time_ns" of the
# BPF programs they hold, appended to OUT every 0.2 s (bpf_stats set on
# each time: another benchmark ending may have switched it off)
cg_bpf_poll() {
	local p
	while grep -q . "$1/cgroup.procs" 2>/dev/null; do
		sysctl -q -w kernel.bpf_stats_enabled=1
		while read -r p; do
			awk '/^prog_id:/ { id = $2 } /^run_time_ns:/ && id { print id, $2; id = "" }' \
				/proc/"$p"/fdinfo/* 2>/dev/null || true	# (gone meanwhile)
		done <"$1/cgroup.procs" >>"$2"
		sleep 0.2
	done
}

cg_start() {
	local name=$1 log=$2
	shift 2
	CG_DIR=$CG_ROOT/stackfold-bench-$name-$$
	mkdir "$CG_DIR" || return 1
	CG_BPF_LOG=$(mktemp) || return 1
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG_DIR" "$@" >"$log" 2>&1 </dev/null &
	CG_LEAD=$!
	sleep 0.1	# (in the cgroup before the poller looks)
	cg_bpf_poll "$CG_DIR" "$CG_BPF_LOG" &
	CG_POLLER=$!
}

# The BPF time of a program is the largest run_time_ns seen of it: the last
# poll before its process exited.
cg_finish() {
	local rc=0
	wait "$CG_LEAD" || rc=$?
	wait "$CG_POLLER"
	# shellcheck disable=SC2034 # (both read by the caller)
	CG_CPU_NS=$(cat "$CG_DIR/cpuacct.usage")
	# shellcheck disable=SC2034
	CG_BPF_NS=$(awk '{ if ($2 > m[$1]) m[$1] = $2 } END { for (i in m) s += m[i]; printf "%.0f\n", s }' "$CG_BPF_LOG")
	rmdir "$CG_DIR"
	rm -f "$CG_BPF_LOG"
	return "$rc"
}
