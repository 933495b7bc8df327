#!/usr/bin/env bash
# bench/symbolize.sh - side-by-side figures for `stackfold symbolize` (a
# measurement, not a test: it never fails on a number).
#
#  1. Speed: N random text addresses in libc (debug info from libc6-dbg)
#     through addr2line, eu-addr2line, llvm-symbolizer and stackfold (cold
#     cache, warm cache, no cache); median wall time of R runs each.
#  2. Name agreement with `addr2line -f -i -C` on AGREE_N random text
#     addresses in libc, in a C++ program with DWARF built here, and in a
#     big C++ library with only .dynsym (libLLVM), classified as: same
#     names; honest unknown (we print ??, a profile shows module+0xOFF:
#     the address is in padding or in a function the symbol table does not
#     describe, where addr2line names the nearest preceding symbol); alias
#     (another name of the same address); different.
#
# USAGE: bench/symbolize.sh            (N=1000 R=5 AGREE_N=100000 SEED=1)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
STACKFOLD=${STACKFOLD:-$TOP/bin/stackfold}
N=${N:-1000} R=${R:-5} AGREE_N=${AGREE_N:-100000} SEED=${SEED:-1}
W=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
# A private copy: a rebuild of bin/ during the run must not change it.
cp "$STACKFOLD" "$W/stackfold" || exit 2
STACKFOLD=$W/stackfold
echo "/bin/true 0x0" | "$STACKFOLD" symbolize --no-cache >/dev/null ||
	{ echo "bench: $STACKFOLD symbolize does not run" >&2; exit 2; }

LIBC=${LIBC:-$(ldd /bin/true | awk '/libc\.so\.6/ {print $3}')}
LLVM_SYM=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
EU=$(command -v eu-addr2line || true)

# random_text FILE COUNT SEED: hex addresses uniform over FILE's .text
random_text() {
	readelf -SW "$1" | python3 -c '
import random, re, sys
n, seed = int(sys.argv[1]), int(sys.argv[2])
for line in sys.stdin:
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        lo, sz = int(f[3], 16), int(f[5], 16)
random.seed(seed)
print("\n".join(hex(lo + random.randrange(sz)) for _ in range(n)))' "$2" "$3"
}

# timed NAME CMD...: append "wall_ms cpu_ms" of one run to $W/t.NAME
timed() {
	local name=$1 TIMEFORMAT='%R %U %S'
	shift
	{ time "$@" >/dev/null 2>&1; } 2>"$W/one"
	awk '{ printf "%.1f %.1f\n", $1 * 1000, ($2 + $3) * 1000 }' "$W/one" >>"$W/t.$name"
}
# median COLUMN NAME: median of wall (1) or cpu (2) times of NAME
median() {
	[ -s "$W/t.$2" ] || { echo n/a; return; }
	cut -d' ' -f"$1" "$W/t.$2" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

echo "== machine: $(uname -n), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs"
echo "== stackfold: $(cd "$TOP" && git rev-parse --short HEAD 2>/dev/null), ldd: $(ldd "$STACKFOLD" | wc -l) libraries"
echo "== libc: $LIBC (build-id $(readelf -n "$LIBC" | awk '/Build ID/ {print $3}'))"
echo

# ---- 1. speed ----
random_text "$LIBC" "$N" "$SEED" >"$W/addrs"
sed "s|^|$LIBC |" "$W/addrs" >"$W/in.sf"
C=$W/cache
a2l() { addr2line -f -i -C -e "$LIBC" <"$W/addrs"; }
eu() { "$EU" -f -i -C -e "$LIBC" <"$W/addrs"; }
llvm() { "$LLVM_SYM" --obj="$LIBC" --output-style=GNU -f -i -C <"$W/addrs"; }
sf() { "$STACKFOLD" symbolize "$@" <"$W/in.sf"; }

sf --cache-dir "$W/warm" >/dev/null
# Rounds interleave the tools, so a load change on the machine hits all.
for ((r = 0; r < R; r++)); do
	timed a2l a2l
	[ -n "$EU" ] && timed eu eu
	[ -n "$LLVM_SYM" ] && timed llvm llvm
	rm -rf "$C"
	timed cold sf --cache-dir "$C"
	timed nocache sf --no-cache
	timed warm sf --cache-dir "$W/warm"
done
idx_bytes=$(cat "$C"/*.idx | wc -c)

printf '%s random .text addresses in libc, median of %s interleaved runs:\n' "$N" "$R"
printf '  %-40s %9s %9s %9s %9s\n' tool "wall ms" "vs a2l" "cpu ms" "vs a2l"
row() {
	local w c
	w=$(median 1 "$2") c=$(median 2 "$2")
	printf '  %-40s %9s %9s %9s %9s\n' "$1" "$w" \
		"$(awk -v a="$(median 1 a2l)" -v b="$w" 'BEGIN { if (b + 0 > 0) printf "%.1fx", a / b; else print "-" }')" "$c" \
		"$(awk -v a="$(median 2 a2l)" -v b="$c" 'BEGIN { if (b + 0 > 0) printf "%.1fx", a / b; else print "-" }')"
}
row "addr2line -f -i -C" a2l
row "eu-addr2line -f -i -C" eu
row "llvm-symbolizer -f -i -C" llvm
row "stackfold symbolize, cold (build+store)" cold
row "stackfold symbolize, --no-cache" nocache
row "stackfold symbolize, warm cache" warm
echo "  index cache entry: $idx_bytes bytes; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# ---- 2. name agreement ----
# agree LABEL MODULE SYMFILE: AGREE_N addresses; SYMFILE lists aliases
agree() {
	local label=$1 mod=$2 symfile=$3
	random_text "$mod" "$AGREE_N" "$SEED" >"$W/ag.addrs"
	addr2line -a -f -i -C -e "$mod" <"$W/ag.addrs" >"$W/ag.a2l"
	sed "s|^|$mod |" "$W/ag.addrs" | "$STACKFOLD" symbolize -a --no-cache >"$W/ag.sf"
	local dyn=
	[ -n "$(nm --defined-only "$symfile" 2>/dev/null | head -1)" ] || dyn=-D # .dynsym only
	nm $dyn -C --defined-only "$symfile" | sed 's/@.*//' >"$W/ag.syms" 2>/dev/null
	nm $dyn -S --defined-only "$symfile" >"$W/ag.sized" 2>/dev/null
	python3 - "$label" "$W/ag.syms" "$W/ag.a2l" "$W/ag.sf" "$W/ag.sized" <<'PY'
import bisect, re, sys
label, symf, a2lf, sff, sizedf = sys.argv[1:6]
addr = {}
for line in open(symf, errors="replace"):
    f = line.rstrip("\n").split(" ", 2)
    if len(f) == 3:
        addr.setdefault(f[2], set()).add(f[0])
# [lo, hi) of every sized code symbol, merged: an address outside them all
# is padding between functions (or code no symbol describes)
iv = []
for line in open(sizedf, errors="replace"):
    f = line.split()
    if len(f) >= 4 and f[2] in "TtWwi" and int(f[1], 16) > 0:
        iv.append((int(f[0], 16), int(f[0], 16) + int(f[1], 16)))
iv.sort()
los = [lo for lo, _ in iv]
his, m = [], 0
for lo, hi in iv:
    m = max(m, hi)
    his.append(m)
def covered(a):
    i = bisect.bisect_right(los, a) - 1
    return i >= 0 and a < his[i]
def blocks(path):
    out, cur = {}, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if re.fullmatch(r"0x[0-9a-f]+", line):
            cur = out[int(line, 16)] = []  # a repeated address: same answer
        elif cur is not None:
            cur.append(line)
    return {k: v[0::2] for k, v in out.items()}
a, s = blocks(a2lf), blocks(sff)
same = honest = alias = diff = inside = inside_same = 0
ex = []
for k, na in a.items():
    ns = s.get(k, [])
    if covered(k):
        inside += 1
        inside_same += na == ns
    if na == ns:
        same += 1
    elif ns == ["??"]:
        honest += 1
    elif len(na) == len(ns) and all(x == y or (addr.get(x, set()) & addr.get(y, set())) for x, y in zip(na, ns)):
        alias += 1
    else:
        diff += 1
        if len(ex) < 5:
            ex.append(f"      {k:#x}: a2l {' / '.join(na)} | ours {' / '.join(ns)}")
n = len(a) or 1
print(f"  {label:34s} {len(a):7d} addrs  same {100*same/n:6.2f}%  same-or-honest {100*(same+honest)/n:6.2f}%"
      f"  (honest ?? {honest}, alias {alias}, different {diff})")
print(f"  {'':34s} inside a sized symbol: {inside} addrs, same {100*inside_same/(inside or 1):6.2f}%")
if ex:
    print("    different, first ones:")
    print("\n".join(ex))
PY
}

echo "name agreement with addr2line -f -i -C, $AGREE_N random .text addresses each:"
LIBC_DBG=/usr/lib/debug/.build-id/$(readelf -n "$LIBC" | awk '/Build ID/ {b = $3; print substr(b, 1, 2) "/" substr(b, 3) ".debug"}')
agree "libc (libc6-dbg DWARF)" "$LIBC" "$LIBC_DBG"

# A C++ program with DWARF: templates, the STL, <regex>, built here.
cat >"$W/big.cc" <<'EOF'
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
template <int N> struct W {
	std::map<std::string, std::vector<int>> m;
	std::unordered_map<int, std::string> u;
	std::set<long> s;
	int run(const std::string &text) {
		std::regex re("([a-z]+)([0-9]{" + std::to_string(N % 3 + 1) + "})");
		int hits = 0;
		for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
			m[(*it)[1]].push_back(N + hits++);
			u[hits] = (*it)[2];
			s.insert(hits * N);
		}
		std::vector<std::pair<std::string, int>> v;
		for (auto &kv : m) v.emplace_back(kv.first, (int)kv.second.size());
		std::sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.second > b.second; });
		std::function<int(int)> f = [&](int x) { return x ? x + f(x - 1) : 0; };
		auto p = std::make_shared<std::ostringstream>();
		*p << v.size() << f(N % 10);
		return hits + (int)p->str().size() + (int)s.size();
	}
};
template <int N> int all(const std::string &t) { return W<N>().run(t) + all<N - 1>(t); }
template <> int all<0>(const std::string &t) { return W<0>().run(t); }
int main(int argc, char **argv) { std::cout << all<24>(argc > 1 ? argv[1] : "ab12 cd345 ef6") << "\n"; }
EOF
if g++ -O2 -g -o "$W/big" "$W/big.cc" 2>"$W/big.err"; then
	agree "C++ program, DWARF ($(($(stat -c %s "$W/big") / 1024)) KiB)" "$W/big" "$W/big"
else
	echo "  (C++ program did not build: $(head -1 "$W/big.err"))"
fi
LLVMSO=$(ls /usr/lib/x86_64-linux-gnu/libLLVM-1[0-9].so.1 2>/dev/null | head -1)
if [ -n "$LLVMSO" ] && [ "${BIG:-1}" = 1 ]; then
	agree "$(basename "$LLVMSO") (.dynsym only)" "$LLVMSO" "$LLVMSO"
fi
