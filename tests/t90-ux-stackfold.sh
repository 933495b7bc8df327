#!/usr/bin/env bash
# t90-ux-stackfold: bin/stackfold as users of perf, FlameGraph and pprof
# expect it: option parsing (table-driven: each row an argument list and
# what it must do), --version, subcommand typos, pprof as input (its own
# and a Go program's), refusal of what is not a profile, flamegraph.pl's
# SVG options with their documented meaning (flamegraph.pl --help and its
# README: it is no Debian or npm package, so it is not run here),
# normalised differential graphs, the top table by process and object,
# the folded file's provenance line, and quiet filters.
# parallel: ok (tests/run)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# protoc_prereq, for the hand-built pprof inputs
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"

SF=$STACKFOLD
cd "$T" || exit 1

# Two processes, as a capture of `--show-pid` writes them.
printf 'app-100;main;work 6\napp-100;main;idle 2\ndb-200;main;query 3\n' >pids.folded
printf '@[\n    foo+1\n    main+2\n]: 5\n' >one.bt

# ---- option parsing: ARGS | exit | what stdout (o:) or stderr (e:) holds ----
# (ERE; n: what stdout must not hold; "-" for nothing asked of it).  Each
# row runs `stackfold ARGS`.
while IFS='|' read -r args want_rc want; do
	[ -z "$args" ] && continue
	# shellcheck disable=SC2086
	eval "set -- $args"
	"$SF" "$@" >out 2>err
	rc=$?
	check_eq "parse [$args]: exit" "$want_rc" "$rc"
	# shellcheck disable=SC2016
	case $want in
	o:*) check "parse [$args]: stdout ~ ${want#o:}" grep -Eq -- "${want#o:}" out ;;
	e:*) check "parse [$args]: stderr ~ ${want#e:}" grep -Eq -- "${want#e:}" err ;;
	n:*) check "parse [$args]: stdout has no ${want#n:}" bash -c '! grep -Eq -- "$1" "$2"' sh "${want#n:}" out ;;
	esac
done <<'TABLE'
-p 100 pids.folded|0|o:^app-100;main;work 6$
-p 100 pids.folded|0|n:^db-200
-p100 pids.folded|0|o:^app-100;main;idle 2$
-p100 pids.folded|0|n:^db-200
--pid=200 pids.folded|0|n:^app-100
--pid=200 pids.folded|0|o:^db-200;main;query 3$
--pid 100,200 -f top pids.folded|0|o:^11 samples$
-p 100 -f top pids.folded|0|o:^8 samples$
-p 999 pids.folded|2|e:no samples of --pid 999 \(11 samples of other processes\)
-p abc pids.folded|1|e:bad --pid \(PID\[,PID...\]\) 'abc'
-p 100, pids.folded|1|e:bad --pid
-p|1|e:-p: needs an argument
-d one.bt|1|e:^stackfold: -d: unknown option; the '-' frame between user and kernel frames is --delimit$
--delimit one.bt|0|o:^main;foo 5$
--show-pid one.bt|0|o:^main;foo 5$
-V|0|o:^stackfold [0-9.]+ \((bpftrace v[0-9.]+|bpftrace not found)\)$
--version|0|o:^stackfold [0-9.]+ \(
report --version|0|o:^stackfold [0-9.]+ \(
record -V|0|o:^stackfold [0-9.]+ \(
continuous --version|0|o:^stackfold [0-9.]+ \(
symbolize --version|0|o:^stackfold [0-9.]+ \(
comments -V|0|o:^stackfold [0-9.]+ \(
help|1|e:^stackfold: 'help' is not a subcommand nor a file; did you mean 'stackfold --help'\?$
recrod|1|e:did you mean 'stackfold record'\?$
contnuous|1|e:did you mean 'stackfold continuous'\?$
frobnicate|1|e:^stackfold: 'frobnicate' is not a subcommand \(report, record, continuous, symbolize, comments, query\) nor a file
--sort comm,dso,sym -f top pids.folded|0|o:COMM +DSO +FUNCTION
--sort comm,bogus -f top pids.folded|1|e:bad --sort
--minwidth 1x pids.folded|1|e:bad --minwidth
--height 0 -f svg -o x.svg pids.folded|1|e:bad --height
--bgcolors pink -f svg -o x.svg pids.folded|1|e:bad --bgcolors
--colors java -f svg -o x.svg pids.folded|0|-
--colors nope -f svg -o x.svg pids.folded|1|e:unknown --colors
--fontsize 0 -f svg -o x.svg pids.folded|1|e:bad --fontsize
record --sort sym -f top -- true|1|e:record takes no --sort
TABLE
# a lone word that IS a file is read, not taken for a typo
cp pids.folded help
check_eq "a file named like a word is read" "11" "$(cd "$T" && "$SF" help | awk '{ s += $NF } END { print s }')"

# ---- quiet on success; -v says what was read; losses always said ----
"$SF" pids.folded >/dev/null 2>q.err
check_eq "quiet on success: nothing on stderr" "" "$(cat q.err)"
"$SF" -v pids.folded >/dev/null 2>v.err
check "-v: the read: summary" grep -q '^stackfold: read: 11 samples, 3 unique stacks$' v.err
"$SF" -v -q pids.folded >/dev/null 2>vq.err
check_eq "-q wins over -v" "" "$(cat vq.err)"
printf '# stackfold-capture 1\n#meta hz 99\n#meta lost 3\n@[\n    foo+1\n]: 5\n' >lossy.txt
"$SF" lossy.txt >/dev/null 2>l.err
# (a raw capture: said when it was recorded, again with -v; its SVG
# subtitle and pprof comment carry it)
check_eq "a raw capture's loss: not said again without -v" "" "$(cat l.err)"
"$SF" -v lossy.txt >/dev/null 2>lv.err
check "... said with -v" grep -q 'bpftrace lost 3 events' lv.err
check "... with what it means and what to do, in words" \
	grep -q 'some frames of short-lived processes show as \[unknown\]; more perf-buffer pages' lv.err
# the side band's lost records (stackfold record's "#meta sideband_lost"):
# a counter of the summary, the advice and pprof's comment
printf '# stackfold-capture 1\n#meta hz 99\n#meta sideband_lost 4\n@[\n    foo+1\n]: 5\n' >sidelost.txt
"$SF" -v -f pprof -o sidelost.pb.gz sidelost.txt 2>sv.err
check "side-band records lost: said with -v" \
	grep -q '; 4 side-band records lost (the kernel.s ring was full' sv.err
check "... with the advice: a larger ring" \
	grep -q "the kernel's side-band ring overflowed: .*STACKFOLD_SIDEBAND_PAGES=" sv.err
"$SF" -v -f folded -o /dev/null sidelost.pb.gz 2>svp.err
check "... in pprof's comment (read back from it)" \
	grep -q '; 4 side-band records lost (' svp.err

# ---- not a profile: one line, the accepted forms, exit 2 ----
"$SF" /bin/ls >/dev/null 2>ls.err
check_eq "/bin/ls: exit 2" 2 $?
check_eq "/bin/ls: one line naming the accepted forms" \
	"stackfold: /bin/ls: not a profile: expected bpftrace output, a stackfold raw capture, folded stacks ('a;b;c COUNT' lines) or pprof (.pb.gz, .pb)" \
	"$(cat ls.err)"
# 4 KiB of fixed pseudo-random bytes: fresh ones from /dev/urandom were
# taken, about 1 time in 30, for text lines or a protobuf start, each said
# in its own words (exit 2 still); the fuzzers cover random input
python3 -c 'import random, sys; r = random.Random(1); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(4096)))' >random.bin
"$SF" random.bin >/dev/null 2>rnd.err
check_eq "random bytes: exit 2" 2 $?
check "random bytes: not a profile" grep -q '^stackfold: random.bin: not a profile' rnd.err
printf 'a;b\000c 5\n' >nul.folded
check_eq "a NUL in a name is still folded text" "a;b?c 5" "$("$SF" nul.folded 2>&1)"
printf '\n\n@[\n    foo+1\n]: 3\n' >nl.bt
check_eq "text starting with blank lines is not taken for protobuf" "foo 3" "$("$SF" nl.bt 2>&1)"

# ---- pprof or SVG to a terminal: refused as gzip does; -o - and pipes work ----
if command -v script >/dev/null; then
	script -qec "'$SF' -f pprof pids.folded; echo rc=\$?" /dev/null >tty.out 2>&1
	check "pprof to a terminal: refused, exit 1" grep -q 'not writing pprof to a terminal.*rc=1' <(tr -d '\r' <tty.out | paste -sd ' ')
	script -qec "'$SF' -f svg pids.folded; echo rc=\$?" /dev/null >tty2.out 2>&1
	check "svg to a terminal: refused" grep -q 'not writing svg to a terminal' tty2.out
	script -qec "'$SF' -f pprof -o - pids.folded | wc -c" /dev/null >tty3.out 2>&1
	check "pprof to a terminal with -o -: written" test "$(tr -dc '0-9' <tty3.out)" -gt 100
else
	fail "terminal refusal: script(1) missing"
fi
check "pprof to a pipe: written" test "$("$SF" -f pprof pids.folded | wc -c)" -gt 100

# ---- pprof as input: stackfold's own, every output, --diff ----
for fx in kstack ustack-kstack keyed-maps; do
	"$SF" -q "$TOP/tests/fixtures/bt/$fx.txt" >"$fx.direct" 2>/dev/null
	"$SF" -q -f pprof -o "$fx.pb.gz" "$TOP/tests/fixtures/bt/$fx.txt" 2>/dev/null
	check_diff "pprof input ($fx): the folded output of its own .pb.gz is the input's" "$fx.direct" <("$SF" -q "$fx.pb.gz")
done
"$SF" -q -f pprof --no-gzip -o kstack.pb "$TOP/tests/fixtures/bt/kstack.txt"
check_diff "pprof input: not gzipped too" kstack.direct <("$SF" -q kstack.pb)
check_diff "pprof input: from stdin" kstack.direct <("$SF" -q - <kstack.pb.gz)
check "pprof input: -f svg cpu.pb.gz" bash -c "'$SF' -f svg kstack.pb.gz | grep -q '<title>read_zero (17 samples'"
check "pprof input: -f top" bash -c "'$SF' -f top kstack.pb.gz | grep -q '^ *[0-9.]*% *17 .*read_zero_\[k\]'"
"$SF" -q --show-pid -f pprof -o pids.pb.gz "$TOP/tests/fixtures/bt/keyed-maps.txt" 2>/dev/null
check "pprof input: the pid label filters (-p)" bash -c "'$SF' -q -p 17511 --show-pid pids.pb.gz | grep -q '^demo-17511;entry'"
printf 'a;b 10\na;c 10\n' >db.folded
printf 'a;b 5\na;c 15\n' >da.folded
"$SF" -q -f pprof -o db.pb.gz db.folded
check_diff "pprof input: --diff takes pprof and folded alike" \
	<("$SF" -f folded --diff db.folded da.folded) <("$SF" -f folded --diff db.pb.gz da.folded)
# the capture's rate, duration and losses come back from the pprof's comments
printf '# stackfold-capture 1\n#meta hz 99\n#meta duration_ns 2000000000\n#meta cmdline prog -x 5\n#meta lost 7\n@[\n    leaf+1\n    main+3\n]: 3\n' >cap.txt
"$SF" -q -f pprof -o cap.pb.gz cap.txt 2>/dev/null
check "pprof input: the subtitle keeps the capture's rate, time and losses" \
	bash -c "'$SF' -q -f svg cap.pb.gz | grep -q '<text id=\"subtitle\"[^>]*>prog -x 5, 2.0 s at 99 Hz, 3 samples; lost: 7 events</text>'"
printf 'garbage' | gzip >bad.pb.gz
"$SF" bad.pb.gz >/dev/null 2>bad.err
check_eq "corrupt pprof: exit 2" 2 $?
check "corrupt pprof: one line naming it" grep -q "^stackfold: bad.pb.gz: not a pprof profile" bad.err
# a profile cut short (a window copied while written): said, not read as
# what was left of it (`stackfold comments` read it as the comments it had)
head -c 40 cap.pb.gz >cut.pb.gz
"$SF" comments cut.pb.gz >/dev/null 2>cut.err
check_eq "stackfold comments, a pprof cut short: exit 2, one line naming it" \
	"2|stackfold: comments: cannot read 'cut.pb.gz': corrupt or truncated gzip" "$?|$(cat cut.err)"

# Hand-built pprof (protoc --encode): nothing in it is dropped silently.
# A negative value (pprof -diff_base writes them) or a sample without the
# counted value refuses the input; a location's every inline line is a frame.
pb_encode() {	# text-format Profile on stdin -> binary $1
	"$PROTOC" -I"$TOP/collapse/model" --encode=perftools.profiles.Profile \
		"$TOP/collapse/model/profile.proto" >"$1"
}
pb_two() {	# two samples of "up" and "down", values $1 and $2
	printf 'sample_type { type: 1 unit: 2 }
sample { location_id: 1 %s } sample { location_id: 2 %s }
location { id: 1 line { function_id: 1 } } location { id: 2 line { function_id: 2 } }
function { id: 1 name: 3 } function { id: 2 name: 4 }
string_table: "" string_table: "samples" string_table: "count" string_table: "up" string_table: "down"\n' "$1" "$2"
}
if protoc_prereq "pprof input built by protoc --encode"; then
	pb_two 'value: 5' 'value: -3' | pb_encode neg.pb
	"$SF" neg.pb >/dev/null 2>neg.err
	check_eq "pprof input with a negative value (-diff_base): exit 2" 2 $?
	check "pprof input with a negative value: one line saying so" \
		grep -qx "stackfold: neg.pb: sample 2 has a negative value (-3): a difference of profiles (pprof -diff_base) is not read; give both to --diff" neg.err
	pb_two 'value: 5' '' | pb_encode noval.pb
	"$SF" noval.pb >/dev/null 2>noval.err
	check_eq "pprof input, a sample without its value: exit 2" 2 $?
	check "pprof input, a sample without its value: one line saying so" \
		grep -qx "stackfold: noval.pb: sample 2 has 0 values, not one per sample type (1): malformed pprof" noval.err
	pb_two 'value: 5' 'value: 0' | pb_encode zero.pb
	check_eq "pprof input: a value of 0 is 0 samples, the rest kept" "up 5" "$("$SF" -q zero.pb)"
	{
		printf 'sample_type { type: 1 unit: 2 } sample { location_id: 1 value: 4 }\nlocation { id: 1'
		for i in $(seq 1 100); do printf ' line { function_id: %d }' "$i"; done
		printf ' }\n'
		for i in $(seq 1 100); do printf 'function { id: %d name: %d }\n' "$i" $((i + 2)); done
		printf 'string_table: "" string_table: "samples" string_table: "count"\n'
		for i in $(seq 1 100); do printf 'string_table: "f%d"\n' "$i"; done
	} | pb_encode deep.pb
	check_eq "pprof input: a location with 100 inline lines gives 100 frames" "100 4" \
		"$("$SF" -q deep.pb | awk '{ print split($1, f, ";"), $2 }')"
fi

# A Go program's CPU profile (runtime/pprof): its functions by name.
if command -v go >/dev/null; then
	mkdir -p gop && cat >gop/main.go <<'GO'
package main

import (
	"os"
	"runtime/pprof"
	"time"
)

//go:noinline
func spinHot(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	end := time.Now().Add(700 * time.Millisecond)
	s := 0
	for time.Now().Before(end) {
		s += spinHot(1 << 16)
	}
	pprof.StopCPUProfile()
	f.Close()
	if s == 42 {
		println(s)
	}
}
GO
	if (cd gop && GOFLAGS=-mod=mod GOCACHE=$T/gocache go mod init gop >/dev/null 2>&1 &&
		GOCACHE=$T/gocache go build -o gop . >build.log 2>&1) && gop/gop go.pb.gz; then
		check "Go pprof: read, folded" bash -c "'$SF' go.pb.gz >go.folded && test -s go.folded"
		check "Go pprof: main.spinHot under main.main" grep -q 'main\.main;main\.spinHot' go.folded
		# the samples go's own reader counts (-raw: "COUNT NANOS: LOCATIONS")
		want=$(go tool pprof -raw go.pb.gz 2>/dev/null | awk '/^Samples:/ { on = 1; next }
			on && /^ *[0-9]+ +[0-9]+: / { s += $1 } /^Locations/ { on = 0 } END { print s + 0 }')
		check "Go pprof: some samples taken" test "$want" -gt 0
		check_eq "Go pprof: every sample read (go tool pprof's count)" "$want" "$(folded_total go.folded)"
		check "Go pprof: -f svg" bash -c "'$SF' -f svg go.pb.gz | grep -q 'main.spinHot'"
		check "Go pprof: the rate from its period (100 Hz)" bash -c "'$SF' -f svg go.pb.gz | grep -q 'at 100 Hz'"
	else
		fail "Go pprof: build or run failed" "$(tail -3 gop/build.log 2>/dev/null)"
	fi
else
	fail "Go pprof: go not installed (golang-go)"
fi

# ---- flamegraph.pl's options, with its documented meaning ----
printf 'main;java/lang/Thread.run 5\nmain;foo_[k] 4\nmain;std::vector::push 3\nmain;plain 2\nmain;x_[j] 2\nmain;y_[i] 1\n' >pal.folded
fills() {	# SVG NAME: fill of the frame NAME
	grep -o "<title>$2 ([^<]*</title><rect [^>]*fill=\"#[0-9a-f]*\"" "$1" | sed 's/.*fill="#//; s/"$//'
}
rgb_in() {	# HEX: "R G B" decimal
	printf '%d %d %d' "0x${1:0:2}" "0x${1:2:2}" "0x${1:4:2}"
}
# flamegraph.pl's palettes: red r 200-255 g=b 50-130; green r=b 50-110 g 200-255;
# yellow r=g 175-230 b 50-70; orange r 190-255 g 90-155 b 0; aqua r 50-110 g=b 165-220;
# blue r=g 80-140 b 190-255
is() {	# KIND HEX
	local r g b
	read -r r g b <<<"$(rgb_in "$2")"
	case $1 in
	red) [ "$r" -ge 200 ] && [ "$g" -ge 50 ] && [ "$g" -le 130 ] && [ "$g" = "$b" ] ;;
	green) [ "$g" -ge 200 ] && [ "$r" -ge 50 ] && [ "$r" -le 110 ] && [ "$r" = "$b" ] ;;
	yellow) [ "$r" = "$g" ] && [ "$r" -ge 175 ] && [ "$r" -le 230 ] && [ "$b" -ge 50 ] && [ "$b" -le 70 ] ;;
	orange) [ "$r" -ge 190 ] && [ "$g" -ge 90 ] && [ "$g" -le 155 ] && [ "$b" = 0 ] ;;
	aqua) [ "$r" -ge 50 ] && [ "$r" -le 110 ] && [ "$g" = "$b" ] && [ "$g" -ge 165 ] ;;
	blue) [ "$r" = "$g" ] && [ "$r" -ge 80 ] && [ "$r" -le 140 ] && [ "$b" -ge 190 ] ;;
	esac
}
"$SF" -f svg --colors java -o java.svg pal.folded
for row in "java/lang/Thread.run green" "foo orange" "std::vector::push yellow" "plain red" "x green" "y aqua"; do
	# shellcheck disable=SC2086
	set -- $row
	check "--colors java: $1 is $2 (flamegraph.pl's rule)" is "$2" "$(fills java.svg "$1")"
done
printf 'main;Perl_pp_entersub 3\nmain;Foo::bar 2\nmain;read_[k] 2\nmain;libc 1\n' >perl.folded
"$SF" -f svg --colors perl -o perl.svg perl.folded
for row in "Perl_pp_entersub green" "Foo::bar yellow" "read orange" "libc red"; do
	# shellcheck disable=SC2086
	set -- $row
	check "--colors perl: $1 is $2" is "$2" "$(fills perl.svg "$1")"
done
printf 'main;/app/x.js:run_[j] 3\nmain;Builtin:Call_[j] 2\nmain;node::Start 2\nmain;/app/y.js:f 2\nmain;v8:gc 1\nmain;sys 1\n' >js.folded
"$SF" -f svg --colors js -o js.svg js.folded
for row in "/app/x.js:run green" "Builtin:Call aqua" "node::Start yellow" "/app/y.js:f green" "v8:gc aqua" "sys red"; do
	# shellcheck disable=SC2086
	set -- $row
	check "--colors js: $1 is $2" is "$2" "$(fills js.svg "$1")"
done
printf 'a;w1_[w] 3\na;sleep 2\n' >chain.folded
"$SF" -f svg --colors chain -o chain.svg chain.folded
check "--colors chain: a waker (_[w]) is aqua" is aqua "$(fills chain.svg w1)"
check "--colors chain: off-CPU frames are blue" is blue "$(fills chain.svg sleep)"
check "--colors chain: grey background" grep -q 'stop-color="#f8f8f8" offset="5%"/><stop stop-color="#e8e8e8"' chain.svg
"$SF" -f svg --colors wakeup -o wake.svg chain.folded
check "--colors wakeup: aqua" is aqua "$(fills wake.svg sleep)"
"$SF" -f svg --colors mem -o mem.svg chain.folded
check "--colors mem: green background (flamegraph.pl's default for mem)" grep -q 'stop-color="#eef2ee" offset="5%"/><stop stop-color="#e0ffe0"' mem.svg
for row in "yellow eeeeee eeeeb0" "blue eeeeee e0e0ff" "green eef2ee e0ffe0" "grey f8f8f8 e8e8e8" "#123456 123456 123456"; do
	# shellcheck disable=SC2086
	set -- $row
	"$SF" -f svg --bgcolors "$1" -o bg.svg chain.folded
	check "--bgcolors $1: gradient #$2 to #$3" grep -q "stop-color=\"#$2\" offset=\"5%\"/><stop stop-color=\"#$3\"" bg.svg
done
# --minwidth: pixels, as in flamegraph.pl; N% the share of samples
{ echo "big 10000"; for i in 1 2 3 4 5; do echo "big;t$i $((i * 2))"; done; } >mw.folded
# 1180 px for 10000 samples: 0.118 px a sample; t1 (2) is 0.24 px, t5 (10) 1.18 px
"$SF" -f svg --minwidth 1 -o mw1.svg mw.folded
check_eq "--minwidth 1: frames of at least 1 px (t5 alone)" "t5" "$(grep -o '<title>t[0-9]' mw1.svg | sed 's/<title>//' | paste -sd ' ')"
"$SF" -f svg --minwidth 1px -o mw1px.svg mw.folded
check "--minwidth 1px: the same" cmp -s mw1.svg mw1px.svg
"$SF" -f svg --minwidth 0.05% -o mwp.svg mw.folded
check_eq "--minwidth 0.05%: frames of at least 5 samples" "t3 t4 t5" "$(grep -o '<title>t[0-9]' mwp.svg | sed 's/<title>//' | sort | paste -sd ' ')"
"$SF" -f svg --minwidth 0 -o mw0.svg mw.folded
check_eq "--minwidth 0: every frame" 5 "$(grep -c '<title>t[0-9]' mw0.svg)"
# --height: each frame's pitch; the rect one less tall
"$SF" -f svg --height 24 -o h.svg pids.folded
check "--height 24: rects 23 tall" grep -q '<rect x="10.0" y="[0-9]*" width="[0-9.]*" height="23"' h.svg
check_eq "--height 24: rows 24 px apart" 24 "$(grep -o '<title>main ([^<]*</title><rect [^>]*y="[0-9]*"' h.svg | sed 's/.*y="//; s/"//' | sort -n | head -1 |
	awk -v y2="$(grep -o '<title>work ([^<]*</title><rect [^>]*y="[0-9]*"' h.svg | sed 's/.*y="//; s/"//')" '{ print $1 - y2 }')"
"$SF" -f svg --fontsize 15 --fonttype 'Courier New' -o font.svg pids.folded
check "--fontsize 15 --fonttype: the text's font" grep -q 'text { font-family: Courier New, sans-serif; font-size: 15px; }' font.svg
check "--fontsize 15: the title 5 px larger, as flamegraph.pl's" grep -q '#title { font-size: 20px; }' font.svg
"$SF" -f svg --nametype 'Frame:' --countname bytes --title 'T1' --subtitle 'S1' --notes 'made by t90 -- ok' --width 800 -o misc.svg pids.folded
check "--nametype: the hover line's label" grep -q 'nt: "Frame:"' misc.svg
check "--countname: the titles' unit" grep -q '<title>app-100 (8 bytes, 72.73%)</title>' misc.svg
check "--title, --subtitle" bash -c "grep -q '>T1</text>' misc.svg && grep -q '>S1</text>' misc.svg"
check "--notes: a comment in the SVG (its -- made safe for XML)" grep -q '<!-- made by t90 - - ok -->' misc.svg
check "--notes: still well-formed XML" xmllint --noout misc.svg
check "--width 800" grep -q '<svg [^>]*width="800"' misc.svg
"$SF" -f svg --reverse -o rev.svg pids.folded
yof() { grep -o "<title>$2 ([^<]*</title><rect [^>]*y=\"[0-9]*\"" "$1" | sed 's/.*y="//; s/"//'; }
check_eq "--reverse: stacks reversed (the leaf work right above the root)" \
	"$(($(yof rev.svg all) - 16)) $(($(yof rev.svg all) - 48))" "$(yof rev.svg work) $(yof rev.svg app-100 | head -1)"
"$SF" -f svg --inverted -o inv.svg pids.folded
check "--inverted: an icicle graph" grep -q '>Icicle Graph</text>' inv.svg
"$SF" -f svg --flamechart -o fc.svg pids.folded
check "--flamechart: a flame chart" grep -q '>Flame Chart</text>' fc.svg
"$SF" -f svg --hash -o hash1.svg pids.folded
"$SF" -f svg -o hash0.svg pids.folded
check "--hash: colours by name, as the default" cmp -s hash1.svg hash0.svg
"$SF" -f svg --random -o rnd.svg pids.folded
check "--random: colours not keyed by the name" bash -c "! cmp -s rnd.svg hash0.svg"
rm -f palette.map
"$SF" -f svg --cp -o cp1.svg pids.folded
check "--cp: palette.map written, one line a name" grep -q '^work->rgb([0-9]*,[0-9]*,[0-9]*)$' palette.map
sed -i 's/^work->.*/work->rgb(1,2,3)/' palette.map
"$SF" -f svg --cp -o cp2.svg pids.folded
check "--cp: a name in palette.map keeps its colour" grep -q '<title>work ([^<]*</title><rect [^>]*fill="#010203"' cp2.svg
# --colors lang has a legend
"$SF" -f svg --colors lang -o lang.svg pal.folded
check "--colors lang: a legend" bash -c "grep -q '<g id=\"legend\">' lang.svg && grep -q '>kernel</text>' lang.svg && grep -q '>inlined</text>' lang.svg"
"$SF" -f svg -o nolang.svg pal.folded
check "no legend for the other palettes" bash -c "! grep -q 'id=\"legend\"' nolang.svg"

# ---- differential: shares compared (difffolded.pl -n), --negate ----
# before: a 70.5% of 1000; after: a 68.5% of 2000 (twice as long)
printf 'm;a 705\nm;b 295\n' >nb.folded
printf 'm;a 1370\nm;b 630\n' >na.folded
"$SF" -f svg --diff nb.folded na.folded >n.svg
check "--diff: a's change is its share's, -2.00%" grep -q '<title>a (1,370 samples, 68.50%; -2.00%)</title>' n.svg
a_fill=$(fills n.svg a)
check "--diff: 70.5% -> 68.5% is pale blue, not deep blue (#$a_fill)" \
	bash -c "r=\$((0x${a_fill:0:2})); b=\$((0x${a_fill:4:2})); [ \$r -ge 150 ] && [ \$b = 255 ]"
check "--diff: b's share grew: red" bash -c "f=$(fills n.svg b); [ \"\${f:0:2}\" = ff ] && [ \"\${f:2:2}\" != ff ]"
"$SF" -f svg --no-normalize --diff nb.folded na.folded >nn.svg
check "--no-normalize: counts compared (a +665 of 2000, +33.25%)" grep -q '<title>a (1,370 samples, 68.50%; +33.25%)</title>' nn.svg
"$SF" -f svg --negate --diff nb.folded na.folded >neg.svg
neg=$(fills neg.svg a)
check "--negate: a shrank, now red" test "${neg:0:2}" = ff
check "--negate: the subtitle says the hues" grep -q 'blue grew, red shrank' neg.svg
check_eq "--diff -f folded: difffolded.pl -n columns (before scaled to after's total)" \
	"m;a 1410 1370|m;b 590 630" "$("$SF" -f folded --diff nb.folded na.folded | paste -sd '|')"

# ---- top table by process and object (perf report --sort comm,dso,sym) ----
printf 'bash;main;read 5\npython;main;read 3\nbash;main;other 1\n' >top.folded
"$SF" -f top --sort comm,sym top.folded >top.out
check "--sort comm,sym: read of bash and read of python are two rows" \
	bash -c "grep -Eq '^ *55\.6% +5 .* bash +read$' top.out && grep -Eq '^ *33\.3% +3 .* python +read$' top.out"
"$SF" -f top top.folded >top0.out
check "default: one row for read (8 samples)" grep -Eq '^ *88\.9% +8 .* read$' top0.out
printf '# stackfold-capture 1\n#meta hz 99\n#maps 300\n555555554000-555555556000 r-xp 00000000 00:00 0 /usr/bin/fakeprog\n#endmaps\n#pid 300 fake\n@stackfold[300, 300, fake, \n        0x555555554100\n, ]: 4\n@stackfold_total: 4\n' >dso.txt
"$SF" -f top --sort comm,dso,sym dso.txt >dso.out 2>/dev/null
check "--sort dso: the mapping's file" grep -Eq '^ *100\.0% +4 .* fake +fakeprog +' dso.out

# ---- the folded file's provenance line ----
"$SF" --provenance cap.txt >prov.folded 2>/dev/null
check_eq "--provenance: a first line FlameGraph's parsers skip (no ' DIGITS' end)" \
	"# stackfold: hz=99 duration_ns=2000000000 lost_events=7 cmdline=prog%20-x%205" "$(head -1 prov.folded)"
check "the line does not match flamegraph.pl's '^(.*)\\s+(\\d+(?:\\.\\d*)?)\$'" \
	bash -c "! head -1 prov.folded | grep -Pq '^(.*)\\s+(\\d+(?:\\.\\d*)?)\$'"
check "re-rendering keeps the subtitle" \
	bash -c "'$SF' -f svg prov.folded 2>/dev/null | grep -q '>prog -x 5, 2.0 s at 99 Hz, 3 samples; lost: 7 events</text>'"
check "... from a pipe too" \
	bash -c "cat prov.folded | '$SF' -f svg 2>/dev/null | grep -q '>prog -x 5, 2.0 s at 99 Hz'"
check_eq "the samples are the same" "main;leaf 3" "$("$SF" prov.folded 2>/dev/null)"
check_eq "no line without --provenance" "main;leaf 3" "$("$SF" cap.txt 2>/dev/null)"

# ---- record once, report many: the raw capture reports again ----
printf '# stackfold-capture 1\n#meta hz 99\n#meta duration_ns 1000000000\n@[\n    leaf+1\n    main+3\n]: 3\n' >PREFIX.raw
check "report PREFIX.raw -f svg --tid --lines --title" \
	bash -c "'$SF' report PREFIX.raw -f svg --tid --lines --title 'Again' 2>/dev/null | grep -q '>Again</text>'"
