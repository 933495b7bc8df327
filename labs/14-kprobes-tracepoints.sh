#!/usr/bin/env bash
# Lab 14: kprobes, tracepoints, an event a line.  Usage: labs/14-kprobes-tracepoints.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 14 "$@"
bin=$BUILD/spawner

# A tracepoint is a promise the kernel keeps: its name and its fields
# (bpftrace -lv prints them) stay from one kernel to the next.
"${BT[@]}" -lv tracepoint:syscalls:sys_enter_execve >"$OUT/tracepoint.txt"
cat "$OUT/tracepoint.txt"

# A kprobe goes on a kernel function by the name it has in this build:
# the functions that carry out execve here, the compiler's copies
# (.isra.0, .constprop.0, .cold) included.
awk '$2 ~ /^[tT]$/ && $3 ~ /execve/ { print $3 }' /proc/kallsyms | sort -u >"$OUT/functions.txt"
cat "$OUT/functions.txt"

# Kprobes need a kernel built with them (CONFIG_KPROBES), which then
# offers the kprobe event source.  Where it does, the same calls are
# counted at the function that the tracepoint's system call enters.
fn=$(grep -m 1 -E '^__(x64|arm64)_sys_execve$' "$OUT/functions.txt" || true)
kprobe=""
if [ -e /sys/bus/event_source/devices/kprobe ] && [ -n "$fn" ]; then
	echo "kprobes: yes, on $fn" >"$OUT/kprobes.txt"
	kprobe="kprobe:$fn /curtask->real_parent->tgid == \$1/ { @kprobe = count(); }"
else
	echo "kprobes: no (no kprobe event source: a kernel built without CONFIG_KPROBES)" >"$OUT/kprobes.txt"
fi
cat "$OUT/kprobes.txt"

# spawner's children, each an execve, as they happen: a line per call
# (printf, str() for the file, join() for its arguments) and a line per
# return (a failed execve returns -errno).  spawner waits for SIGUSR1,
# sent once bpftrace has attached, and prints what each child did.
n=$((10 + RANDOM % 10))
"$bin" "$n" "$RANDOM" >"$OUT/spawner.out" &
p=$!
"${BT[@]}" -e "
BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
tracepoint:syscalls:sys_enter_execve /curtask->real_parent->tgid == \$1/ {
	@tracepoint = count();
	printf(\"exec %d %s \", pid, str(args->filename));
	join(args->argv);
}
tracepoint:syscalls:sys_exit_execve /curtask->real_parent->tgid == \$1/ { printf(\"ret %d %d\\n\", pid, args->ret); }
$kprobe" "$p" >"$OUT/events.txt" 2>"$OUT/events.err" &
bt=$!
wait_attached "$bt" "$OUT/events.txt" || lab_die "bpftrace did not start: $(grep -v RLIMIT "$OUT/events.err" | head -n 3)"
kill -USR1 "$p"
wait "$p"
interrupt "$bt"
echo "spawner says:"
cat "$OUT/spawner.out"
echo "bpftrace saw:"
grep -v '^$' "$OUT/events.txt"
