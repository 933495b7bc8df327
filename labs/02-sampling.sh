#!/usr/bin/env bash
# Lab 2: sampling basics.  Usage: labs/02-sampling.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
export LAB_HZ=99	# the one-liner samples at 99 Hz (recorded in lab.env)
lab_init 02 "$@"

# Something for the kernel to do: dd copies zeros, so most of its time is
# spent inside read(2) and write(2).
dd if=/dev/zero of=/dev/null bs=64k 2>/dev/null &
dd=$!

# The one-liner: sample every CPU 99 times a second, count kernel stacks.
# (interval:s:N { exit(); } stops it after N seconds, instead of Ctrl-C.)
bpftrace -e "profile:hz:99 { @[kstack] = count(); }
             interval:s:$LAB_SECONDS { exit(); }" >"$OUT/trace.txt"
alive "$dd" dd
stop "$dd"

# bpftrace text -> folded stacks -> flame graph, and the top table.
"$STACKFOLD" "$OUT/trace.txt" >"$OUT/trace.folded"
nonempty "$OUT/trace.folded" "the folded stacks"
"$STACKFOLD" -f svg --title "Lab 2: kernel stacks at 99 Hz" "$OUT/trace.folded" >"$OUT/trace.svg"
"$STACKFOLD" -f top --top 10 "$OUT/trace.folded" | tee "$OUT/trace.top"
