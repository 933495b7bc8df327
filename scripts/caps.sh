# shellcheck shell=bash
# caps.sh - sourced by scripts/profile and scripts/continuous: may this
# process run bpftrace, and which bpftrace is it?
#
# The checks below use no external command: a capture's whole CPU,
# wrapper included, is budgeted (docs/performance.md), and each fork of
# sort, head or awk cost a few ms.
#
# version_ge A B succeeds when version A is B or later, compared as dotted
# numbers (what `sort -V` does for versions like 0.17.0 and 0.18).
version_ge() {
	local IFS=. i x y
	local -a a b
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	for (( i = 0; i < ${#a[@]} || i < ${#b[@]}; i++ )); do
		x=${a[i]:-0} y=${b[i]:-0}
		(( 10#$x > 10#$y )) && return 0
		(( 10#$x < 10#$y )) && return 1
	done
	return 0
}

# cap_eff prints the effective capability set (hex), from /proc/self/status.
cap_eff() {
	local k v
	while read -r k v; do
		[ "$k" = CapEff: ] && { echo "$v"; return; }
	done </proc/self/status 2>/dev/null
}

# bpf_caps_ok succeeds when the effective capability set has CAP_BPF (39)
# and CAP_PERFMON (38), or CAP_SYS_ADMIN (21), which stands for both on
# kernels before 5.8 and still does for bpftrace.  The set is read, not the
# uid: root in a container, or under capsh --drop, can lack them, and
# bpftrace would then fail after its seconds of start-up with less clear
# words.
bpf_caps_ok() {
	local eff
	eff=$(cap_eff)
	[ -n "$eff" ] || return 1
	(( (0x$eff >> 38 & 3) == 3 || (0x$eff >> 21 & 1) == 1 ))
}

# bpftrace_btf_ok VERSION succeeds when bpftrace VERSION can read the
# kernel's BTF (curtask's fields): the kernel has it, and bpftrace before
# 0.18 finds it through BPF_BTF_GET_FD_BY_ID, which needs CAP_SYS_ADMIN
# (0.18 reads /sys/kernel/btf/vmlinux itself: bpftrace/bpftrace#2527).
# With CAP_BPF and CAP_PERFMON alone, 0.17 refused the whole program
# ("Unknown struct/union: 'struct task_struct'").
bpftrace_btf_ok() {
	local eff
	[ -r /sys/kernel/btf/vmlinux ] || return 1
	version_ge "$1" 0.18 && return 0
	eff=$(cap_eff)
	[ -n "$eff" ] && (( (0x$eff >> 21 & 1) == 1 ))
}

# bpftrace_uid_ok VERSION succeeds when bpftrace VERSION will run as this
# user: as root always; otherwise only from 0.25, the first release whose
# own check asks for capabilities instead of "only supports running as the
# root user".
bpftrace_uid_ok() {
	[ "$EUID" = 0 ] || version_ge "$1" 0.25
}

# bpftrace_ready MIN PROG succeeds when this process may run a bpftrace of
# version MIN or later, and sets bt_version to the one found (read from
# the fd BT_VERSION_FD when set: a `bpftrace --version` the caller started
# early, closed here); otherwise it
# sets CAPS_ERR to one line saying what is missing (PROG is the command a
# "try: sudo" hint names; $STACKFOLD_SUDO_HINT, when set, is the whole
# hint: make flame sets "sudo make flame") and fails.  The caller dies with CAPS_ERR (stackfold's exit 3; scripts/profile: 253).
bpftrace_ready() {
	local min=$1 hint=${STACKFOLD_SUDO_HINT:-"sudo $2 ..."}
	CAPS_ERR=""
	if ! bpf_caps_ok; then
		CAPS_ERR="need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to run bpftrace, as root has; try: $hint"
	elif ! command -v bpftrace >/dev/null 2>&1; then
		CAPS_ERR="bpftrace not found (need >= $min; Debian: apt-get install bpftrace)"
	else
		bt_version=""
		# started early by the caller; its fd checked, as one named in
		# the environment may be none (then bpftrace is asked here)
		if [[ ${BT_VERSION_FD:-} =~ ^[0-9]+$ ]] && [ -e "/proc/$$/fd/$BT_VERSION_FD" ]; then
			read -r -u "$BT_VERSION_FD" bt_version
			exec {BT_VERSION_FD}<&-
		fi
		BT_VERSION_FD=""
		[ -n "$bt_version" ] || bt_version=$(bpftrace --version 2>/dev/null)
		if [[ $bt_version =~ ^bpftrace\ v?([0-9][0-9.]*) ]]; then
			bt_version=${BASH_REMATCH[1]}
		else
			bt_version=""
		fi
		if [ -z "$bt_version" ]; then
			CAPS_ERR="cannot tell bpftrace's version from 'bpftrace --version'"
		elif ! version_ge "$bt_version" "$min"; then
			CAPS_ERR="bpftrace $bt_version is too old (need >= $min)"
		elif ! bpftrace_uid_ok "$bt_version"; then
			CAPS_ERR="bpftrace $bt_version runs as root only (it checks the uid itself; capabilities suffice from 0.25); try: $hint"
		fi
	fi
	[ -z "$CAPS_ERR" ]
}
