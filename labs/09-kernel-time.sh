#!/usr/bin/env bash
# Lab 9: kernel time.  Usage: labs/09-kernel-time.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 09 "$@"

# syscalls spends most of its time in write(2), stat(2) and read(2).
# scripts/profile takes user and kernel stacks together (-U or -K for one).
"$BUILD/syscalls" 0 &
work=$!
"$PROFILE" -p "$work" -d "$LAB_SECONDS" -F "$LAB_HZ" -o "$OUT/syscalls" -f folded,svg
alive "$work" syscalls
stop "$work"
nonempty "$OUT/syscalls.folded" "the profile of syscalls"
"$STACKFOLD" -f top --top 15 "$OUT/syscalls.folded" | tee "$OUT/syscalls.top"

# Kernel frames carry the _[k] suffix: the share of samples in the kernel.
awk '{ n = $NF; all += n; if ($0 ~ /_\[k\]/) k += n }
     END { if (all) printf "kernel: %.1f%% of %d samples\n", 100 * k / all, all }' \
	"$OUT/syscalls.folded" | tee "$OUT/kernel-share.txt"
