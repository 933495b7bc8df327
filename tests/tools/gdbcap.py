#!/usr/bin/env python3
"""gdbcap.py - a --call-graph dwarf raw capture of a program stopped by gdb
at chosen instructions: one sample per stop, with the registers and the
stack copy (from sp up to the stack's top, at most --stack-size bytes)
that bt/profile-dwarf.bt would have taken there.  A sample at an exact pc
(an epilogue's `ret`, the instruction after a restore_state) that timer
sampling hits only by chance.

usage: gdbcap.py OUT.raw [--stack-size N] [--stops N] --at LOC [--at LOC...]
                 -- PROG [ARGS...]
       gdbcap.py OUT.raw --starti N -- PROG [ARGS...]
LOC is a gdb location without the '*': an address or SYMBOL+OFFSET.
--starti N: one sample, N instructions after the process's first (in
ld.so: its entry code, then _dl_start).
Writes the earlier per-sample records (#U, #W), which stackfold reads.
"""
import json
import os
import subprocess
import sys
import tempfile

REGS = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"]

# runs inside gdb: stops at the breakpoints, writes one JSON line a stop
INGDB = r'''
import gdb, json, os
spec = json.loads(os.environ["GDBCAP_SPEC"])
out = open(spec["json"], "w")
for cmd in ("set pagination off", "set confirm off",
            "set startup-with-shell off", "set breakpoint pending on"):
    gdb.execute(cmd)
for loc in spec["at"]:
    gdb.execute("break *(" + loc + ")", to_string=True)
if spec["starti"] is not None:
    gdb.execute("starti", to_string=True)
    for _ in range(spec["starti"]):
        gdb.execute("stepi", to_string=True)
else:
    gdb.execute("run", to_string=True)
n = 0
while n < spec["stops"]:
    inf = gdb.selected_inferior()
    if not inf.pid or not gdb.selected_thread():
        break
    fr = gdb.newest_frame()
    regs = [int(fr.read_register(r)) & (2**64 - 1) for r in spec["regs"]]
    sp = regs[7]
    maps = open("/proc/%d/maps" % inf.pid).read().splitlines()
    top = sp
    for m in maps:
        lo, hi = (int(x, 16) for x in m.split()[0].split("-"))
        if lo <= sp < hi:
            top = hi
    want = min(top - sp, spec["size"])
    stack = bytes(inf.read_memory(sp, want))
    out.write(json.dumps({"pid": inf.pid, "tid": gdb.selected_thread().ptid[1],
                          "regs": regs, "stack": stack.hex(),
                          "cut": top - sp > want, "maps": maps}) + "\n")
    n += 1
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
out.close()
gdb.execute("kill", to_string=True)
'''


def build_id(path):
    try:
        r = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    except OSError:
        return None
    for line in r.stdout.splitlines():
        if "Build ID" in line:
            return line.split()[-1]
    return None


def maps_block(key, maps, exe, comm):
    lines = ["#maps %d" % key]
    bids, main = [], None
    for m in maps:
        f = m.split()
        if len(f) < 5 or "x" not in f[1]:
            continue
        lines.append(m)
        start = f[0].split("-")[0]
        path = f[5] if len(f) > 5 else ""
        if path.startswith("/"):
            bid = build_id(path)
            if bid:
                bids.append("#bid %s %s" % (start, bid))
            if main is None and os.path.realpath(path) == os.path.realpath(exe):
                main = start
    lines += bids
    if main:
        lines.append("#main " + main)
    lines += ["#endmaps", "#pid %d %s" % (key, comm)]
    return lines


def record(seq, key, s, comm_hex):
    stack = bytes.fromhex(s["stack"])
    n = (len(stack) + 383) // 384
    head = ["#U", "0", str(seq), str(key), str(s["tid"]), "3", str(n),
            "1" if s["cut"] else "0", comm_hex, str(len(stack))]
    lines = [" ".join(head + ["%x" % r for r in s["regs"]])]
    padded = stack + bytes(n * 384 - len(stack))
    for i in range(n):
        words = [int.from_bytes(padded[i * 384 + 8 * k:i * 384 + 8 * k + 8], "little")
                 for k in range(48)]
        lines.append("#W 0 %x " % (seq * 256 + i) + " ".join("%x" % w for w in words))
    return lines


def main(argv):
    if "--" not in argv or len(argv) < 4:
        sys.exit(__doc__)
    dash = argv.index("--")
    opts, prog = argv[1:dash], argv[dash + 1:]
    out, at, size, stops, starti = opts[0], [], 8192, 64, None
    i = 1
    while i < len(opts):
        if opts[i] == "--at":
            at.append(opts[i + 1])
        elif opts[i] == "--stack-size":
            size = int(opts[i + 1])
        elif opts[i] == "--stops":
            stops = int(opts[i + 1])
        elif opts[i] == "--starti":
            starti, stops = int(opts[i + 1]), 1
        else:
            sys.exit("gdbcap: unknown option " + opts[i])
        i += 2
    with tempfile.TemporaryDirectory() as d:
        spec = {"json": os.path.join(d, "stops.json"), "at": at, "size": size,
                "stops": stops, "regs": REGS, "starti": starti}
        script = os.path.join(d, "in_gdb.py")
        with open(script, "w") as f:
            f.write(INGDB)
        env = dict(os.environ, GDBCAP_SPEC=json.dumps(spec))
        subprocess.run(["gdb", "-q", "-nx", "-batch", "-x", script, "--args"] + prog,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False, timeout=120)
        with open(spec["json"]) as f:
            samples = [json.loads(line) for line in f]
    if not samples:
        sys.exit("gdbcap: no stop reached")
    comm = os.path.basename(prog[0])[:15]
    comm_hex = "".join("\\x%02x" % b for b in comm.encode().ljust(16, b"\0"))
    key = samples[0]["pid"]
    lines = ["# stackfold-capture 1", "#meta hz 99", "#meta start_ns 1700000000000000000"]
    lines += maps_block(key, samples[0]["maps"], prog[0], comm)
    for seq, s in enumerate(samples, 1):
        lines += record(seq, key, s, comm_hex)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(len(samples))


if __name__ == "__main__":
    main(sys.argv)
