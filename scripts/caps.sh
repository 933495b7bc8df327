# shellcheck shell=bash
# caps.sh - sourced by scripts/profile and scripts/continuous: may this
# process run bpftrace?
#
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
