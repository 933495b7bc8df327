# shellcheck shell=bash
# caps.sh - sourced by scripts/profile and scripts/continuous: may this
# process run bpftrace, and which bpftrace is it?
#
# version_ge A B succeeds when version A is B or later (sort -V).
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }

# bpf_caps_ok succeeds when the effective capability set has CAP_BPF (39)
# and CAP_PERFMON (38), or CAP_SYS_ADMIN (21), which stands for both on
# kernels before 5.8 and still does for bpftrace.  The set is read, not the
# uid: root in a container, or under capsh --drop, can lack them, and
# bpftrace would then fail after its seconds of start-up with less clear
# words.
bpf_caps_ok() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
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
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
	[ -n "$eff" ] && (( (0x$eff >> 21 & 1) == 1 ))
}

# bpftrace_uid_ok VERSION succeeds when bpftrace VERSION will run as this
# user: as root always; otherwise only from 0.25, the first release after
# bpftrace/bpftrace#4773 (merged 2025-10-26) replaced its own "only
# supports running as the root user" check with a capability check.
bpftrace_uid_ok() {
	[ "$(id -u)" = 0 ] || version_ge "$1" 0.25
}

# bpftrace_ready MIN PROG succeeds when this process may run a bpftrace of
# version MIN or later, and sets bt_version to the one found; otherwise it
# sets CAPS_ERR to one line saying what is missing (PROG is the command a
# "try: sudo" hint names) and fails.  The caller dies with CAPS_ERR, exit 3.
bpftrace_ready() {
	local min=$1 prog=$2
	CAPS_ERR=""
	if ! bpf_caps_ok; then
		CAPS_ERR="need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to run bpftrace, as root has; try: sudo $prog ..."
	elif ! command -v bpftrace >/dev/null 2>&1; then
		CAPS_ERR="bpftrace not found (need >= $min; Debian: apt-get install bpftrace)"
	else
		bt_version=$(bpftrace --version 2>/dev/null | sed -n 's/^bpftrace v\{0,1\}\([0-9][0-9.]*\).*/\1/p')
		if [ -z "$bt_version" ]; then
			CAPS_ERR="cannot tell bpftrace's version from 'bpftrace --version'"
		elif ! version_ge "$bt_version" "$min"; then
			CAPS_ERR="bpftrace $bt_version is too old (need >= $min)"
		elif ! bpftrace_uid_ok "$bt_version"; then
			CAPS_ERR="bpftrace $bt_version runs as root only (it checks the uid itself; capabilities suffice from 0.25); try: sudo $prog ..."
		fi
	fi
	[ -z "$CAPS_ERR" ]
}
