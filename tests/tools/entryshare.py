#!/usr/bin/env python3
"""entryshare.py (--folded FILE | --perf FILE) COMM [--min PCT]

The share of COMM's samples whose user stack is unwound to the program's
entry: the outermost user frame is _start, __libc_start_main,
__libc_start_call_main or main, or ld.so's entry point (stackfold names a
frame there LD.SO+0xOFF when the symbol is local), and the stack holds no
[unwind-error] and no [unknown] frame.  Input: stackfold's folded stacks
with kernel frames (no -U: "comm;user...;kernel_[k] N"), or `perf script
-F comm,tid,ip,sym,dso --no-inline` of `perf record --call-graph dwarf`.

Samples taken inside execve or exit have no user stack of their own to
unwind (the registers are the old program's over the new memory map, or
the map is being torn down): they are left out, for both tools, and
counted apart.  Prints "REACHED/TOTAL (PCT%), N in execve/exit"; with
--min, exits 1 when PCT is below it or TOTAL is 0.
"""
import re
import subprocess
import sys

ENTRY = {"_start", "__libc_start_main", "__libc_start_call_main", "main"}
NO_USER = re.compile(r"(execve|do_exit|exit_mmap|do_group_exit)")


def ldso_entry():
    """(basename, entry offset) of the system's ld.so, or None."""
    path = "/lib64/ld-linux-x86-64.so.2"
    try:
        out = subprocess.run(["readelf", "-h", path], capture_output=True,
                             text=True, check=False).stdout
    except OSError:
        return None
    m = re.search(r"Entry point address:\s+0x([0-9a-f]+)", out)
    return ("ld-linux-x86-64.so.2", int(m.group(1), 16)) if m else None


LDSO = ldso_entry()


def at_entry(frame):
    if frame in ENTRY:
        return True
    m = re.match(r"^(.+)\+0x([0-9a-f]+)$", frame)
    return bool(LDSO and m and m.group(1) == LDSO[0] and
                0 <= int(m.group(2), 16) - LDSO[1] < 0x40)


def folded(path, comm):
    """(user frames root first, kernel frames, bad, count) per line"""
    for line in open(path, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        parts = stack.split(";")
        if not n.isdigit() or parts[0] != comm:
            continue
        kern = [f for f in parts[1:] if f.endswith("_[k]")]
        user = [f for f in parts[1:] if not f.endswith("_[k]")]
        bad = any(f in ("[unwind-error]", "[unknown]") for f in user)
        user = [f for f in user if f not in ("[unwind-error]", "[truncated]")]
        yield user, kern, bad, int(n)


def perf(path, comm):
    cur = None
    for line in list(open(path, errors="replace")) + [""]:
        line = line.rstrip("\n")
        if not line.strip():
            if cur is not None and cur[0] == comm:
                user, kern = cur[1][::-1], cur[2]
                yield user, kern, any(f.startswith("[unknown]") for f in user), 1
            cur = None
            continue
        if not line.startswith(("\t", " ")):
            cur = (line.split()[0] if line.split() else "", [], [])
            continue
        m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line)
        if not m or cur is None:
            continue
        sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
        if "kernel.kallsyms" in m.group(2) or m.group(2).startswith("[kernel"):
            cur[2].append(sym)
        else:
            cur[1].append(sym)


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("--folded", "--perf"):
        sys.exit(__doc__)
    src = folded if sys.argv[1] == "--folded" else perf
    path, comm = sys.argv[2], sys.argv[3]
    minpct = float(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--min" else None
    reached = total = skipped = 0
    for user, kern, bad, n in src(path, comm):
        if any(NO_USER.search(k) for k in kern):
            skipped += n
            continue
        total += n
        if user and not bad and at_entry(user[0]):
            reached += n
    pct = 100.0 * reached / total if total else 0.0
    print("%d/%d (%.1f%%), %d in execve/exit" % (reached, total, pct, skipped))
    if minpct is not None and (not total or pct < minpct):
        sys.exit(1)


if __name__ == "__main__":
    main()
