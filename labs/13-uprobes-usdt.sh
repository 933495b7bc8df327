#!/usr/bin/env bash
# Lab 13: uprobes and USDT.  Usage: labs/13-uprobes-usdt.sh [OUTDIR]
. "$(dirname "$0")/lib.sh"
lab_init 13 "$@"
bin=$BUILD/orders

# What the binary offers: its USDT probes, which the sys/sdt.h macros
# leave as ELF notes (.note.stapsdt: provider, name, address, arguments),
# and its functions, each a place for a uprobe.
readelf -n "$bin" | grep -A 4 'stapsdt' >"$OUT/notes.txt"
"${BT[@]}" -l "usdt:$bin:*" >"$OUT/usdt-list.txt"
"${BT[@]}" -l "uprobe:$bin:pri*" >"$OUT/uprobe-list.txt"
cat "$OUT/usdt-list.txt" "$OUT/uprobe-list.txt"

# One run of orders, traced from its first quote to its last: price()'s
# calls (uprobe) and what it returned (uretprobe), the orders the USDT
# probe announced and their amounts (its second argument).  orders waits
# for SIGUSR1, sent once bpftrace has attached, and prints what it did.
quotes=$((2000 + RANDOM % 2000))
"$bin" "$quotes" "$RANDOM" >"$OUT/orders.out" &
p=$!
"${BT[@]}" -e "
BEGIN { printf(\"Hit Ctrl-C to end.\\n\"); }
uprobe:$bin:price /pid == $p/ { @quotes = count(); }
uretprobe:$bin:price /pid == $p/ { @quoted = sum(retval); }
usdt:$bin:orders:order /pid == $p/ { @orders = count(); @amount = sum(arg1); }
" >"$OUT/trace.txt" 2>"$OUT/trace.err" &
bt=$!
wait_attached "$bt" "$OUT/trace.txt" || lab_die "bpftrace did not start: $(head -n 3 "$OUT/trace.err")"
kill -USR1 "$p"
wait "$p"
interrupt "$bt"
echo "orders says:  $(cat "$OUT/orders.out")"
echo "bpftrace saw: $(grep '^@' "$OUT/trace.txt" | tr '\n' ' ')"
