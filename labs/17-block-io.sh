#!/usr/bin/env bash
# Lab 17: block I/O latency.  Usage: labs/17-block-io.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 17 "$@"
bin=$BUILD/blockio

# A disk of the lab's own: a loop device over a 16 MiB file whose first
# half is on the disk and whose second half is a hole.  blockio reads
# it 200 times from each half (threads "data" then "hole"), O_DIRECT,
# 4-64 KiB a read, 1 ms apart; it waits for SIGUSR1, sent once bpftrace
# has attached.  For every block device, per device and the name of
# the thread that issued the request: issue to completion in
# microseconds, requests and bytes; and who was running when the loop
# device's requests completed.
disk_image "$OUT/disk.img" || lab_die "cannot write $OUT/disk.img"
loop_attach "$OUT/disk.img" || lab_die "no loop device for $OUT/disk.img (losetup --find failed)"
rm -f "$OUT/disk.img"	# the loop device keeps it until it is detached
echo "loop=$LOOP" >>"$OUT/lab.env"
echo "dev=$LOOPDEV" >>"$OUT/lab.env"
"$bin" "$LOOP" 200 1000 "$RANDOM" >"$OUT/blockio.out" &
p=$!
"${BT[@]}" -e "
BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
tracepoint:block:block_rq_issue {
	@start[args->dev, args->sector] = nsecs;
	@issuer[args->dev, args->sector] = comm;
}
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
	\$us = (nsecs - @start[args->dev, args->sector]) / 1000;
	\$who = @issuer[args->dev, args->sector];
	@usecs[args->dev, \$who] = hist(\$us);
	@total_us[args->dev, \$who] = sum(\$us);
	@requests[args->dev, \$who] = count();
	@bytes[args->dev, \$who] = sum(args->nr_sector * 512);
	if (args->dev == \$1) { @completed_by[comm] = count(); }
	delete(@start[args->dev, args->sector]);
	delete(@issuer[args->dev, args->sector]);
}
END { clear(@start); clear(@issuer); }
" "$LOOPDEV" >"$OUT/bio.txt" 2>"$OUT/bio.err" &
bt=$!
wait_attached "$bt" "$OUT/bio.txt" || lab_die "bpftrace did not start: $(grep -v RLIMIT "$OUT/bio.err" | head -n 3)"
kill -USR1 "$p"
wait "$p"
interrupt "$bt"
# the loop device's lines (device $LOOPDEV: $LOOP) and who completed its
# requests; every device's are in bio.txt
awk -v d="$LOOPDEV" '/^@/ { on = index($0, "[" d ", ") || /^@completed_by/ } on && !/^$/' "$OUT/bio.txt"
echo "blockio says ($LOOP, device $LOOPDEV):"
cat "$OUT/blockio.out"
