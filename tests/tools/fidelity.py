#!/usr/bin/env python3
"""fidelity.py STACKFOLD.folded PERF.script [--check]

Compare stackfold's user stacks (folded, -U: "comm;root;...;leaf N") with
perf's for the same process and time (`perf script -F comm,tid,ip,sym,dso
--no-inline` of `perf record --call-graph dwarf`): mean user depth, the
share of samples reaching the program's entry (main,
__libc_start_call_main or _start) and the total variation distance of the
leaf functions' shares.  Prints one line of figures; with --check, exits 1
unless depth is within 10% of perf's, >= 90% reach the entry and the leaf
TVD is <= 0.10.  Stack marks ([truncated], [unwind-error]) are not frames.
"""
import re
import sys

ENTRY = {"main", "__libc_start_call_main", "_start"}
MARKS = {"[truncated]", "[unwind-error]"}


def norm(name, dso=None):
    """One spelling for both tools: a frame without a symbol is "[unknown
    in MODULE]" (stackfold writes MODULE+0xOFF, perf "[unknown]" and the
    DSO), symbol versions (@@GLIBC_2.34) dropped."""
    if dso is not None:
        if name.startswith("[unknown]"):
            return "[unknown in %s]" % dso.rsplit("/", 1)[-1]
    else:
        m = re.match(r"^(.+)\+0x[0-9a-f]+$", name)
        if m:
            return "[unknown in %s]" % m.group(1)
    return re.sub(r"@.*$", "", re.sub(r"\+0x[0-9a-f]+$", "", name))


def stackfold(path):
    out = []
    for line in open(path, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = [f for f in stack.split(";")[1:] if f not in MARKS]
        frames = [norm(f) for f in frames if not f.endswith("_[k]")]
        out.append((frames[::-1], int(n)))  # leaf first
    return out


def perf(path):
    out, cur, insample = [], [], False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            if insample:
                out.append((cur, 1))
            cur, insample = [], False
            continue
        if not line.startswith(("\t", " ")):
            insample = True
            continue
        m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line)
        if not m or "kernel.kallsyms" in m.group(2) or m.group(2).startswith("[kernel"):
            continue
        cur.append(norm(m.group(1), m.group(2)))
    if insample:
        out.append((cur, 1))
    return out


def figures(samples):
    total = sum(n for _, n in samples)
    if not total:
        return 0, 0.0, 0.0, {}
    depth = sum(len(f) * n for f, n in samples) / total
    entry = sum(n for f, n in samples if ENTRY & set(f)) / total
    leaves = {}
    for f, n in samples:
        if f:
            leaves[f[0]] = leaves.get(f[0], 0) + n
    return total, depth, entry, {k: v / total for k, v in leaves.items()}


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    if len(args) != 2:
        sys.exit(__doc__)
    n1, d1, e1, l1 = figures(stackfold(args[0]))
    n2, d2, e2, l2 = figures(perf(args[1]))
    tvd = sum(abs(l1.get(k, 0) - l2.get(k, 0)) for k in set(l1) | set(l2)) / 2
    ratio = d1 / d2 if d2 else 0
    print("samples %d/%d depth %.2f/%.2f (%.3f) entry %.1f%%/%.1f%% leaf_tvd %.3f"
          % (n1, n2, d1, d2, ratio, 100 * e1, 100 * e2, tvd))
    if "--check" in sys.argv:
        ok = n1 > 0 and n2 > 0 and abs(ratio - 1) <= 0.10 and e1 >= 0.90 and tvd <= 0.10
        sys.exit(0 if ok else 1)


main()
