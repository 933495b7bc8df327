#!/usr/bin/env bash
# t91-ux-scripts: what a newcomer meets first.  The scripts' options parse
# as getopt_long does (a table of command lines against the parse each
# must give, through --dry-run), one line for a bad option, --help and
# --version under the name the command was run by; the README stays true
# (its size, its links, and each of its commands run or listed here with
# the reason it is not); the man pages render without groff warnings,
# name the installed commands, SEE ALSO only pages that exist, and
# man -k stackfold finds them; install-deps says what it installs; make
# flame by a non-root user suggests sudo make flame; folded and pprof
# outputs open in speedscope (headless chromium).  Live (root and
# bpftrace): outputs named on stderr, the previous run kept as .old,
# -o out.svg, a command's exit status, a raw capture reported again, a
# capture with no samples explained.  Each check is also run on doctored
# input (a wrong expectation, a broken page, a corrupt profile) that it
# must reject.  Under SANITIZE=1 the install-deps, make, man page
# and browser sections are left to the plain run (no stackfold-san in them).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

P=$TOP/scripts/profile C=$TOP/scripts/continuous R=$TOP/scripts/flame-range

# --- 1. option parsing: command line -> the parse (--dry-run) -------------
# parse_is NAME SCRIPT EXPECT ARGS...: the --dry-run lines of SCRIPT ARGS
# include every KEY=VALUE of EXPECT (space separated; '~' stands for a space)
parse_is() {
	local name=$1 script=$2 expect=$3 out kv miss="" rc
	shift 3
	out=$("$script" --dry-run "$@" 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "parse: $name" "exit $rc: $out"
		return
	fi
	for kv in $expect; do
		grep -qxF -- "${kv//\~/ }" <<<"$out" || miss="$miss ${kv//\~/ };"
	done
	if [ -z "$miss" ]; then pass "parse: $name"; else fail "parse: $name" "missing:$miss" "got: $(tr '\n' ' ' <<<"$out")"; fi
}
me=$$
parse_is "-p$me -F99 (attached values)" "$P" "pids=$me hz=99 secs=10 prefix=profile" "-p$me" -F99
parse_is "-ad5 (bundled, value last)" "$P" "all=1 secs=5 pids=" -ad5
parse_is "long forms with =" "$P" "pids=$me hz=199 secs=3 prefix=out formats=svg" --pid=$me --freq=199 --duration=3 --output=out --format=svg
parse_is "long forms with a separate value" "$P" "all=1 hz=50 secs=2" --all-cpus --freq 50 --duration 2
parse_is "-p given twice: the lists add up" "$P" "pids=$me,1" -p "$me" -p 1
parse_is "a command without --: its own options stay its own" "$P" "command=sh~-c~true~-F~5 hz=99 secs=0" sh -c true -F 5
parse_is "-- COMMAND" "$P" "command=sh~-x" -- sh -x
parse_is "-g accepted (perf record -g)" "$P" "all=1" -g -a
parse_is "-Ug and --kernel-stacks-only" "$P" "side=-U" -Uga
parse_is "--kernel-stacks-only" "$P" "side=-K" --kernel-stacks-only -a
parse_is "-vv counts" "$P" "verbose=2" -vva
parse_is "report options pass through" "$P" "report=--lines~--tid~--title~a\\~b~--top~5~--minwidth~1" -a --lines --tid --title 'a b' --top 5 --minwidth 1
parse_is "--provenance passes through to the report" "$P" "report=--provenance" -a --provenance
parse_is "-o out.svg -f svg names out.svg" "$P" "prefix=out formats=svg" -a -o out.svg -f svg
parse_is "-o x.pb.gz: prefix x" "$P" "prefix=$T/x" -a -o "$T/x.pb.gz"
parse_is "--call-graph fp" "$P" "callgraph=fp" -a --call-graph fp
parse_is "continuous: -o DIR -ap? no: -o/tmp/d -F99 --window=5" "$C" "dir=$T/d hz=99 window=5 extra=" "-o$T/d" -F99 --window=5
parse_is "continuous: pass-through options" "$C" "extra=--quiet~--folded~--max-age~7d all=1" -o "$T/d" -aq --folded --max-age 7d
parse_is "continuous: --pid list" "$C" "pids=$me" -o "$T/d" --pid "$me"
parse_is "continuous: --inline, and --dwarf its former name, passed on" "$C" "extra=--inline~--dwarf" -o "$T/d" --inline --dwarf
parse_is "continuous: --python -a" "$C" "python=1 all=1" -o "$T/d" --python -a
parse_is "flame-range: DIR after options, -fsvg,top" "$R" "dir=$T since=15m formats=svg,top" --since 15m -fsvg,top "$T"
parse_is "flame-range: -o last.svg names last.svg" "$R" "prefix=last" "$T" -o last.svg
# the check itself: a wrong expectation fails
out=$(parse_is "doctored" "$P" "hz=98" -a -F99)
check "parse check fails on a wrong expectation" grep -q '^FAIL: parse: doctored' <<<"$out"

# bad options: one line naming the option and --help; exit 1, or 251 for
# scripts/profile (its own statuses are kept apart from a COMMAND's)
bad() {	# NAME WANT SCRIPT ARGS...
	local name=$1 want=$2 err rc code=1
	shift 2
	[ "$1" = "$P" ] && code=251
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	check_eq "bad option: $name: exit $code, one line" "$code 1 $want" "$rc $(grep -c . <<<"$err") $err"
}
bad "--frobnicate" "profile: unknown option '--frobnicate' (see --help)" "$P" --frobnicate
bad "-Z" "profile: unknown option '-Z' (see --help)" "$P" -Z
bad "-d without a value" "profile: option '-d' needs a value (see --help)" "$P" -a -d
bad "--all-cpus=1" "profile: option '--all-cpus' takes no value (see --help)" "$P" --all-cpus=1
bad "-U with -K" "profile: -U and -K exclude each other (see --help)" "$P" -a -U -K
bad "-xpid (a long option with one dash)" "profile: unknown option '-xpid' (long options take two dashes: '--xpid'; see --help)" "$P" -xpid
bad "continuous --frobnicate" "continuous: unknown option '--frobnicate' (see --help)" "$C" --frobnicate
bad "continuous --python --source maps" "continuous: --python reads bpftrace's text: give --source text or auto, not maps" "$C" -o "$T/d" --python --source maps
bad "continuous --python -p A,B" "continuous: --python profiles one process: give one -p PID (or -a)" "$C" -o "$T/d" --python -p "$me,1"
bad "flame-range --frobnicate" "flame-range: unknown option '--frobnicate' (see --help)" "$R" --frobnicate
bad "--call-graph xyz" "profile: --call-graph wants fp or dwarf[,BYTES], not 'xyz'" "$P" -a --call-graph xyz

# --help under the name run by; --version: VERSION and the bpftrace found
for s in profile continuous flame-range; do
	check_eq "scripts/$s --help: usage names scripts/$s" "usage: scripts/$s" \
		"$("$TOP/scripts/$s" --help | head -n 1 | cut -d' ' -f1-2)"
	v=$("$TOP/scripts/$s" -V)
	check "scripts/$s -V: the VERSION file's $(cat "$TOP/VERSION"), and bpftrace" \
		grep -qxF "scripts/$s $(cat "$TOP/VERSION") (stackfold)" <<<"$v"
	check "scripts/$s --version names bpftrace" grep -q '^bpftrace: ' <<<"$v"
done
check_eq "scripts/flame (former name) runs flame-range" "usage: scripts/flame-range" \
	"$("$TOP/scripts/flame" --help | head -n 1 | cut -d' ' -f1-2)"

# --- 2. install-deps: says what it installs, shows apt's progress ---------
# (sections 2-4 run scripts, make and man, none of stackfold-san: the
# plain run checks them)
if plain_run_only "install-deps, make flame as a user, man pages"; then
mkdir -p "$T/fake"
chmod 711 "$T"	# the fakes run as a user too (below)
chmod 755 "$T/fake"
cat >"$T/fake/dpkg-query" <<'EOF'
#!/bin/sh
# every package installed but bpftrace
for a; do p=$a; done
[ "$p" = bpftrace ] && { echo "deinstall ok config-files"; exit 0; }
echo "install ok installed"
EOF
cat >"$T/fake/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*"
echo "Setting up bpftrace (0.17.0-2) ..."
EOF
chmod +x "$T/fake/dpkg-query" "$T/fake/apt-get"
if [ "$(id -u)" = 0 ]; then
	PATH=$T/fake:$PATH "$TOP/scripts/install-deps" >"$T/deps.out" 2>"$T/deps.err"
	check_eq "install-deps: exit 0, nothing on stdout" "0 " "$? $(cat "$T/deps.out")"
	check "install-deps: says what it is about to install" \
		grep -qx 'install-deps: installing 1 Debian package(s) with apt-get: bpftrace' "$T/deps.err"
	check "install-deps: apt's progress shown" grep -q '^Setting up bpftrace' "$T/deps.err"
else
	skip "install-deps as root" "not root"
fi
setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$T/fake:$PATH" "$TOP/scripts/install-deps" 2>"$T/deps2.err"
check_eq "install-deps as a user: exit 3, the packages and the sudo line" \
	"3 install-deps: missing packages: bpftrace (run as root, or: sudo apt-get install bpftrace)" "$? $(cat "$T/deps2.err")"

# install-deps says up front what it will install, dependencies and
# download included; --test-quick (make test-quick) never installs the
# browser.  Until issue 45 `make test` installed chromium and ~150
# packages naming only the packages asked for.
mkdir -p "$T/fake2"
cat >"$T/fake2/dpkg-query" <<'EOF'
#!/bin/sh
# every package installed but bpftrace and chromium
for a; do p=$a; done
case $p in bpftrace | chromium) echo "deinstall ok config-files"; exit 0 ;; esac
echo "install ok installed"
EOF
cat >"$T/fake2/apt-get" <<'EOF'
#!/bin/sh
case "$*" in
"install -s "*) for i in $(seq 150); do echo "Inst pkg$i (1.0 Debian:12 [amd64])"; done ;;
"install --assume-no "*) echo "Need to get 250 MB of archives."; echo Abort.; exit 1 ;;
*) echo "apt-get $*" ;;
esac
EOF
printf '#!/bin/sh\necho "npm $*"\n' >"$T/fake2/npm"
chmod 755 "$T/fake2" "$T/fake2/dpkg-query" "$T/fake2/apt-get" "$T/fake2/npm"
if [ "$(id -u)" = 0 ]; then
	PATH=$T/fake2:$PATH "$TOP/scripts/install-deps" --test >/dev/null 2>"$T/deps3.err"
	check_eq "install-deps --test: the first line says all it installs, with the dependencies and the download" \
		"install-deps: installing 2 Debian package(s) with apt-get (150 with their dependencies, 250 MB to download): bpftrace chromium" \
		"$(head -n 1 "$T/deps3.err")"
	check "install-deps --test: says chromium is for the browser tests, and make test-quick" \
		grep -q "chromium and the npm packages are for the browser tests: make test-quick does without them" "$T/deps3.err"
	PATH=$T/fake2:$PATH "$TOP/scripts/install-deps" --test-quick >/dev/null 2>"$T/deps4.err"
	check_eq "install-deps --test-quick: no browser" \
		"install-deps: installing 1 Debian package(s) with apt-get (150 with their dependencies, 250 MB to download): bpftrace" \
		"$(head -n 1 "$T/deps4.err")"
else
	skip "install-deps --test as root" "not root"
fi
# make test and make test-quick say how long they take, before installing
mt=$(make -n -s -C "$TOP" test 2>/dev/null | head -n 3)
# shellcheck disable=SC2016 # the inner shell's
check "make test: says first it takes about 30 minutes on 2 CPUs, and names make test-quick" \
	bash -c 'head -n 2 <<<"$0" | grep -q "about 30 minutes on 2 CPUs (make test-quick" && ! head -n 1 <<<"$0" | grep -q install-deps' "$mt"
# shellcheck disable=SC2016 # the inner shell's
check "make test-quick: says how long, runs tests/run with QUICK=1" \
	bash -c 'grep -q "about 8 minutes on 2 CPUs" <<<"$0" && grep -q "QUICK=1 tests/run" <<<"$0"' "$(make -n -s -C "$TOP" test-quick 2>/dev/null)"

# tests/run QUICK=1 leaves out the files that need live captures or a
# browser, counts them apart (never as passes) and says so in its closing
# line; without QUICK, every file runs and the line is as before (CI).
mkdir -p "$T/qt"
cp "$TOP/tests/run" "$T/qt/run"
printf '#!/bin/bash\necho "PASS: plain"\necho "SKIP: plain2 (why)"\n' >"$T/qt/t01-plain.sh"
printf '#!/bin/bash\nif live_prereq "x"; then :; fi\necho "PASS: live"\n' >"$T/qt/t02-live.sh"
printf '#!/bin/bash\n# needs: browser\necho "PASS: browser"\n' >"$T/qt/t03-browser.sh"
QUICK=1 "$T/qt/run" >"$T/qt.out" 2>&1
check_eq "QUICK=1: the closing line counts the files left out, not as passes" \
	"0|1 passed, 0 failed, 1 skipped; left out: 2 test files that need live captures or a browser (not run: make test runs them)" \
	"$?|$(tail -n 1 "$T/qt.out")"
# shellcheck disable=SC2016 # the inner shell's
check "QUICK=1: each file left out is named" \
	bash -c 'grep -qx "== t02-live.sh: left out (needs live captures or a browser)" "$0" && grep -qx "== t03-browser.sh: left out (needs live captures or a browser)" "$0"' "$T/qt.out"
check "QUICK=1: .ci/run's tally still reads the closing line" grep -Eq '^[0-9]+ passed, [0-9]+ failed' "$T/qt.out"
env -u QUICK "$T/qt/run" >"$T/qt2.out" 2>&1
check_eq "without QUICK: every file runs, the closing line as before" "3 passed, 0 failed, 1 skipped" "$(tail -n 1 "$T/qt2.out")"
check_eq "QUICK=1 on this suite: t20-live and t61-svg-browser left out, t12-util run" "left out: 1 test files|left out: 1 test files|1 runs" \
	"$(QUICK=1 "$TOP/tests/run" t20-live 2>/dev/null | tail -n 1 | grep -o 'left out: [0-9]* test files')|$(QUICK=1 "$TOP/tests/run" t61 2>/dev/null | tail -n 1 | grep -o 'left out: [0-9]* test files')|$(QUICK=1 "$TOP/tests/run" t12-util 2>/dev/null | grep -c '^== t12-util.sh$') runs"

# --- 3. make flame as a user: sudo make flame -----------------------------
make -s -C "$TOP" all demo >/dev/null 2>&1
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	make -s --no-print-directory -C "$TOP" flame SECONDS=1 OUT=/tmp/t91-user-flame >"$T/mf.out" 2>"$T/mf.err"
rc=$?
check "make flame as a user: fails, suggests 'sudo make flame' (exit $rc)" \
	bash -c '[ "$0" != 0 ] && grep -q "try: sudo make flame$" "$1"' "$rc" "$T/mf.err"

# --- 4. man pages -----------------------------------------------------------
# lint_man FILE: font-alternating macros whose unquoted arguments hold
# two plain words in a row (they render joined: ".IR a b c d" is "abcd")
lint_man() {
	python3 - "$1" <<'PY'
import re, shlex, sys
bad = []
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    m = re.match(r'\.(IR|RI|BR|RB|BI|IB) (.*)', line)
    if not m:
        continue
    toks = re.findall(r'"[^"]*"|\S+', m.group(2))
    plain = [re.fullmatch(r"[a-z]{2,}[,.;:]?", t) is not None for t in toks]
    if any(a and b for a, b in zip(plain, plain[1:])):
        bad.append(f"{sys.argv[1]}:{n}: {line.strip()}")
print("\n".join(bad))
PY
}
for page in "$TOP"/man/*.[18]; do
	name=${page##*/}
	check_eq "man/$name: no joined words in .IR/.BR lines" "" "$(lint_man "$page")"
	w=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
	check_eq "man/$name: groff -ww: no warnings" "" "$w"
	out=$(MANWIDTH=80 man -l "$page" 2>&1)
	check "man/$name: man -l renders it" grep -q '^NAME' <<<"$out"
done
sed 's|^\.IR NAME / unit );$|.IR NAME / unit ); one location per sampled address|' "$TOP/man/stackfold.1" >"$T/doctored.1"
check "man lint fails on a doctored page (joined .IR)" test -n "$(lint_man "$T/doctored.1")"

I=$T/inst
if make -s -C "$TOP" install DESTDIR="$I" PREFIX=/usr >"$T/install.out" 2>&1; then
	M=$I/usr/share/man
	for c in profile continuous flame-range; do
		check_eq "installed stackfold-$c --help: usage names stackfold-$c" "usage: stackfold-$c" \
			"$("$I/usr/bin/stackfold-$c" --help | head -n 1 | cut -d' ' -f1-2)"
		check "installed stackfold-$c --version finds VERSION" \
			grep -qxF "stackfold-$c $(cat "$TOP/VERSION") (stackfold)" <<<"$("$I/usr/bin/stackfold-$c" --version)"
		check_eq "man stackfold-$c: NAME is stackfold-$c" "stackfold-$c" \
			"$(lexgrog "$M/man1/stackfold-$c.1" | sed 's/^[^"]*"\([^ ]*\) - .*/\1/')"
	done
	# SEE ALSO: every page named is installed here, or on the system
	# see_also DIR: the pages SEE ALSO names that exist nowhere
	see_also() {
		local page ref n s
		for page in "$1"/man1/*.1 "$1"/man8/*.8; do
			sed -n '/^\.SH SEE ALSO/,/^\.SH/p' "$page" | sed -n 's/^\.BR \([^ ]*\) (\([0-9]\)).*/\1 \2/p' |
			while read -r ref s; do
				n=${ref//\\/}
				[ -f "$1/man$s/$n.$s" ] || man -w "$s" "$n" >/dev/null 2>&1 || echo "${page##*/}: $n($s)"
			done
		done
	}
	check_eq "SEE ALSO names only pages that exist after install" "" "$(see_also "$M")"
	cp -r "$M" "$T/man-doctored"
	sed -i 's/^\.BR stackfold (1),$/.BR profile (1),/' "$T/man-doctored/man1/stackfold-profile.1"
	check "the SEE ALSO check fails on a doctored page (profile(1), bcc's)" test -n "$(see_also "$T/man-doctored")"
	# man -k stackfold: every installed page, found through mandb's index
	if (cd "$M" && mandb -q -u . >/dev/null 2>&1); then
		k=$(MANPATH=$M apropos stackfold 2>/dev/null | sed 's/ (\([0-9]\)).*/.\1/' | sort | tr '\n' ' ')
		want=$(for f in "$M"/man1/*.1 "$M"/man8/*.8; do echo "${f##*/}"; done | sort | tr '\n' ' ')
		check_eq "man -k stackfold finds every installed page" "$want" "$k"
	else
		fail "mandb indexes the installed pages"
	fi
else
	fail "make install DESTDIR=..." "$(tail -3 "$T/install.out")"
fi

fi

# --- 5. the README ---------------------------------------------------------
RM=$TOP/README.md
words=$(wc -w <"$RM")
check "README: at most 1,500 words ($words)" test "$words" -le 1500
first=$(awk '/^```sh$/ { on = 1; next } /^```/ { if (on) exit } on' "$RM" | sed 's/[[:space:]]*#.*$//' | tr '\n' ' ')
check_eq "README: its first commands are make flame, make test and make test-quick" "make flame make test make test-quick " "$first"
check "README: a Troubleshooting section" grep -q '^## Troubleshooting' "$RM"
# every relative link and picture points at a file
links=$(grep -o '](\([^)#]*\))' "$RM" | sed 's/^](//; s/)$//' | grep -v '^https\?:')
missing=""
for l in $links; do [ -e "$TOP/$l" ] || missing="$missing $l"; done
check_eq "README: every link and picture exists ($(wc -w <<<"$links") of them)" "" "$missing"
check "README: docs/flame.png is a PNG" bash -c 'file -b "$0" | grep -q "^PNG image"' "$TOP/docs/flame.png"
for l in man/stackfold-profile.1 man/stackfold.1 man/stackfold-continuous.1 man/stackfold-flame-range.1; do
	grep -q "$l" "$RM" && { [ -f "$TOP/$l" ] || fail "README names $l" "missing"; }
done

# The README's commands: every line of a ```sh block is either run here
# (RUN, some only live) or listed in NOT_RUN with the reason.  A command
# added to the README and to neither list fails, so the README stays true.
declare -A NOT_RUN=(
	["make test"]="it is this suite"
	["sudo scripts/profile --python -- python3 app.py"]="needs a Python program; t48-python-live profiles its own the same way"
	["make test-quick"]="it is this suite without its live and browser files (tests/run QUICK=1, tested above)"
	["go tool pprof -http=127.0.0.1:0 profile.pb.gz"]="starts a web server; the same file is opened with -top here and in speedscope below"
	["sudo scripts/continuous -o /var/lib/stackfold --folded --max-age 7d"]="runs until stopped; t65-continuous-live runs it"
	["scripts/flame-range /var/lib/stackfold --since 15m -o last15.svg"]="needs the service's windows; t65-continuous-windows merges a directory of them, and -o last15.svg's naming is parsed above"
)
mapfile -t cmds < <(awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on && NF' "$RM" | sed 's/[[:space:]]*#.*$//')
# how a README line runs here: in $T, with this tree's files, shorter
# captures, a demo process for pid 1234, no sudo (as root), and the 10 s
# of a bpftrace one-liner counted from when it catches SIGINT (bt_timeout)
rewrite() {
	local c=$1
	c=${c#sudo }
	c=${c//timeout -s INT 10 /$TOP/tests/tools/bt_timeout 10 }
	c=${c//-d 30/-d 2}
	c=${c//bin\/demo 3/$TOP/bin/demo 1}
	c=${c//1234/$DEMO_PID}
	c=${c//scripts\//$TOP/scripts/}
	c=${c//bin\/stackfold/$TOP/bin/stackfold}
	c=${c//bt\//$TOP/bt/}
	case $c in
	*offcpu.bt*) c=${c//$DEMO_PID/$SLEEPER_PID} ;;
	esac
	case $c in
	"make flame") c="make -s --no-print-directory -C $TOP flame SECONDS=2 OUT=$T/readme/flame" ;;
	"$TOP/scripts/profile -p $DEMO_PID") c="$c -d 2" ;;
	esac
	printf '%s' "$c"
}
live=0
[ "$(id -u)" = 0 ] && command -v bpftrace >/dev/null 2>&1 && live=1
unknown=""
mkdir -p "$T/readme"
"$TOP/bin/demo" 45 >/dev/null &
DEMO_PID=$!
sh -c 'while :; do sleep 0.05; done' &	# blocks: off-CPU time for bt/offcpu.bt
SLEEPER_PID=$!
ran=0
for c in "${cmds[@]}"; do
	if [ -n "${NOT_RUN[$c]+x}" ]; then
		pass "README command not run here: '$c' (${NOT_RUN[$c]})"
		continue
	fi
	case $c in
	"make flame" | "sudo "* | "bin/stackfold report profile.raw"* | "bin/stackfold -f svg --diff profile.folded.old"* | "go tool pprof -top profile.pb.gz")
		kind=live ;;	# a capture, or a file a capture made
	*) unknown="$unknown '$c'"; continue ;;
	esac
	if [ "$kind" = live ] && [ "$live" = 0 ]; then
		live_prereq "README: $c" || continue
	fi
	r=$(rewrite "$c")
	# SIGINT at its default, as at a terminal (a test run in the
	# background has it ignored, and so would bpftrace under timeout -s
	# INT); a command that hangs anyway is killed 60 s on, and fails
	if (cd "$T/readme" && timeout -k 5 60 env --default-signal=INT bash -c "$r" >"$T/readme/out" 2>"$T/readme/err"); then
		pass "README runs: $c"
		ran=$((ran + 1))
	else
		fail "README runs: $c" "ran: $r" "$(tail -n 3 "$T/readme/err")"
	fi
done
kill "$DEMO_PID" "$SLEEPER_PID" 2>/dev/null
wait "$DEMO_PID" "$SLEEPER_PID" 2>/dev/null
check_eq "README: every command is run here or listed with a reason" "" "$unknown"
if [ "$ran" -gt 0 ]; then
	check "README commands wrote what it says: flame.svg, profile.svg and .old, system.svg, lines.svg, oneliner.svg, diff.svg, offcpu.svg" \
		bash -c 'cd "$0" && for f in flame.svg flame.pb.gz flame.folded profile.svg profile.svg.old profile.raw system.svg lines.svg oneliner.svg diff.svg offcpu.svg; do test -s "$f" || { echo "missing $f"; exit 1; }; done' "$T/readme"
fi

# --- 6. speedscope opens the folded and pprof outputs ----------------------
# (the browser and the pages read files: the plain run checks them)
if plain_run_only "speedscope"; then
NPM=$TOP/tests/.build/npm
need_browser() {	# a missing tool skips, except in CI
	if [ "${CI:-}" = true ]; then fail "speedscope: $1"; else skip "speedscope" "$1"; fi
}
if ! command -v node >/dev/null; then need_browser "node not installed"
elif [ ! -x /usr/bin/chromium ]; then need_browser "/usr/bin/chromium not installed"
elif [ ! -f "$NPM/node_modules/speedscope/package.json" ]; then need_browser "not installed: run scripts/install-deps --test"
else
	"$STACKFOLD" -q "$TOP/tests/fixtures/bt/ustack-kstack.txt" >"$T/ss.folded" 2>/dev/null
	"$STACKFOLD" -q -f pprof -o "$T/ss.pb.gz" "$T/ss.folded" 2>/dev/null
	# self shares of the three hottest leaves, from the folded text
	# (pprof's names lose the _[k] mark; folded text keeps it)
	want() {	# STRIP: 1 to drop the _[x] marks
		awk -v strip="$1" '{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";"); l = f[n]
			if (strip) sub(/_\[[kijw]\]$/, "", l); c[l] += $NF; t += $NF }
			END { for (k in c) printf "%.4f\t%s\n", 100 * c[k] / t, k }' "$T/ss.folded" |
			sort -rn | head -n 3 | awk -F'\t' 'BEGIN { printf "[" } { printf "%s{\"name\": \"%s\", \"pct\": %s}", (NR > 1 ? ", " : ""), $2, $1 } END { printf "]" }'
	}
	run() {	# FILE STRIP LABEL: one run of the driver's list
		printf '%s{"file": "%s", "label": "%s", "want": %s, "shot": "%s"}' "${sep:-}" "$1" "$3" \
			"$(want "$2")" "$TOP/tests/artifacts/speedscope-${1##*/}.png"
		sep=", "
	}
	# doctored inputs, which the driver must report: a pprof cut short, a
	# folded file with one count changed
	head -c 300 "$T/ss.pb.gz" >"$T/bad.pb.gz"
	awk 'NR == 1 { $NF = $NF * 3 } { print }' "$T/ss.folded" >"$T/bad.folded"
	{
		printf '{"npm": "%s", "runs": [' "$NPM"
		run "$T/ss.folded" 0 "speedscope ss.folded"
		run "$T/ss.pb.gz" 1 "speedscope ss.pb.gz"
		run "$T/bad.pb.gz" 1 "doctored pprof"
		run "$T/bad.folded" 0 "doctored folded"
		printf ']}\n'
	} >"$T/ss.json"
	node "$TOP/tests/browser/speedscope_test.mjs" "$T/ss.json" >"$T/ss.out" 2>&1
	grep -v '^\(PASS\|FAIL\): doctored\|^    ' "$T/ss.out"
	grep -q '^\(PASS\|FAIL\): speedscope' "$T/ss.out" || fail "speedscope driver ran" "$(tail -n 5 "$T/ss.out")"
	check "speedscope check fails on a truncated pprof" grep -q '^FAIL: doctored pprof: speedscope imported it' "$T/ss.out"
	check "speedscope check fails on a folded file with a count changed" grep -q '^FAIL: doctored folded: .*self share' "$T/ss.out"
fi

fi

# --- 7. live: outputs named, .old kept, exit status, raw, no samples -------
if live_prereq "scripts/profile outputs"; then
	cd "$T" || exit 1
	# SIGINT trappable, as at a terminal: started with it ignored (a job of
	# a script run in the background), scripts/profile execs record and
	# names no outputs
	PR=(env --default-signal=INT "$P")
	"${PR[@]}" -d 3 -o run -f svg,pprof,folded --title 'T91 title' "$TOP/bin/demo" 1 >/dev/null 2>"$T/r1.err"
	check_eq "run 1: exit 0 (the command's status)" 0 "$?"
	for f in run.svg run.pb.gz run.folded run.raw; do
		check "run 1: $f written and named on stderr" bash -c 'test -s "$0" && grep -q "^profile: \(wrote\|kept\) $0 " "$1"' "$f" "$T/r1.err"
	done
	check "run 1: the SVG says how to open it" grep -q '^profile: wrote run.svg (flame graph: open it in a browser' "$T/r1.err"
	check "run 1: the pprof says go tool pprof -http" grep -qF 'profile: wrote run.pb.gz (pprof: go tool pprof -http=127.0.0.1:0 run.pb.gz)' "$T/r1.err"
	check "run 1: --title passed to the report" grep -q 'T91 title' run.svg
	cp run.svg run1.svg
	cp run.folded run1.folded
	# the raw capture remakes the report, after the process has exited
	"$STACKFOLD" report run.raw -q -f folded -o again.folded 2>/dev/null
	check_eq "report run.raw: the same samples as run.folded" "$(folded_total run1.folded)" "$(folded_total again.folded)"
	check "report run.raw --lines: file:line frames" bash -c '"$0" report run.raw -q --lines | grep -q "matrix_multiply:.*demo.c:[0-9]"' "$STACKFOLD"
	# run 2: -o run.svg -f svg, a command that exits 7
	"${PR[@]}" -d 3 -o run.svg -f svg -- sh -c '"$0" 1; exit 7' "$TOP/bin/demo" >/dev/null 2>"$T/r2.err"
	check_eq "run 2: exit 7, the command's status" 7 "$?"
	check "run 2: says the command failed" grep -qx "profile: 'sh' exited with status 7" "$T/r2.err"
	check "run 2: -o run.svg -f svg wrote run.svg, not run.svg.svg" bash -c 'test -s run.svg && ! test -e run.svg.svg'
	check "run 2: run 1's SVG kept as run.svg.old" cmp -s run1.svg run.svg.old
	check "run 2: run 1's pprof and folded (not chosen now) moved to .old" \
		bash -c '! test -e run.pb.gz && ! test -e run.folded && test -s run.pb.gz.old && cmp -s run1.folded run.folded.old'
	check "run 2: a new raw capture, run 1's kept as run.raw.old" bash -c 'test -s run.raw && test -s run.raw.old'
	# the checks see a wrong file: run 1's SVG is not run 2's
	check "the .old check fails on the wrong file" bash -c '! cmp -s run1.svg run.svg'
	# a pid that sleeps: nothing sampled, said why and what to try (a
	# stop that bpftrace misses under load is retried once)
	sleep 30 &
	sp=$!
	for _ in 1 2; do
		"${PR[@]}" -d 1 -o sleepy -p "$sp" >/dev/null 2>"$T/r3.err"
		rc=$?
		grep -q 'gave no output in 10 s after its stop' "$T/r3.err" || break
	done
	kill "$sp"
	check_eq "a sleeping pid: exit 252 (no samples)" 252 "$rc"
	check "a sleeping pid: says why and suggests bt/offcpu.bt" \
		bash -c 'grep -q "^profile: no samples of pid .* never ran on a CPU" "$0" && grep -q "offcpu.bt" "$0"' "$T/r3.err"
	cd "$TOP" || exit 1
fi
