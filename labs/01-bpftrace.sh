#!/usr/bin/env bash
# Lab 1: bpftrace itself.  Usage: labs/01-bpftrace.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 01 "$@"

# Probes: what bpftrace can attach to (-l lists them, -lv with arguments).
"${BT[@]}" -l 'tracepoint:syscalls:sys_enter_read*' | tee "$OUT/probes.txt"
"${BT[@]}" -lv tracepoint:syscalls:sys_enter_read | tee -a "$OUT/probes.txt"
grep -q 'size_t count' "$OUT/probes.txt" ||
	lab_die "bpftrace lists no tracepoint syscalls:sys_enter_read (is tracefs there?)"

# Two workloads: dd copies 64 KiB blocks of zeros, shares computes.
dd if=/dev/zero of=/dev/null bs=64k 2>/dev/null &
dd=$!
"$BUILD/shares" 0 &
shares=$!

# One program with a probe of each kind, for LAB_SECONDS ($1 is dd's pid,
# $2 shares'): the page explains it line by line.
# shellcheck disable=SC2016 # $1 and $2 are bpftrace's
capture "$LAB_SECONDS" "$OUT/tour.txt" "${BT[@]}" -e '
BEGIN { printf("Hit Ctrl-C to end.\n"); }
tracepoint:syscalls:sys_enter_read /pid == $1/ {
	@reads = count();
	@bytes = hist(args->count);
}
profile:hz:99 /pid == $1/ { @kernel[kstack(4)] = count(); }
profile:hz:99 /pid == $2/ { @user[ustack(3)] = count(); }
interval:s:1 { print(@reads); }
' "$dd" "$shares"
alive "$dd" dd
alive "$shares" shares
stop "$dd" "$shares"

grep -q '^@reads: [1-9]' "$OUT/tour.txt" || lab_die "the capture counted no read(2) of dd ($OUT/tour.txt)"
echo "== each second: @reads so far"
grep '^@reads:' "$OUT/tour.txt"
echo "== dd's read sizes (hist)"
awk '/^@bytes:/ { on = 1 } on && /^$/ { exit } on' "$OUT/tour.txt"
echo "== the hottest user stack of shares (ustack(3): three frames)"
awk '/^@user\[/ { s = ""; next } /^]: / { if ($2 > max) { max = $2; top = s } next }
     /^ +/ { sub(/^ +/, ""); s = s "  " $0 "\n" } END { printf "%s  (%d samples)\n", top, max }' "$OUT/tour.txt"

# Your programs: labs/check 1 runs the four in labs/mine/ (LAB_MINE);
# start from the outlines in labs/exercises/ (kept if you have begun).
MINE=${LAB_MINE:-$LABS/mine}
mkdir -p "$MINE"
for f in count hist profile interval; do
	[ -e "$MINE/$f.bt" ] || cp "$LABS/exercises/$f.bt" "$MINE/$f.bt"
done
echo "== now write $MINE/{count,hist,profile,interval}.bt, then: labs/check 1"
