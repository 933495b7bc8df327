#!/usr/bin/env bash
# t30-pprof-live: real captures to pprof.  (1) 2 s of plain bpftrace kstack
# text through `stackfold -f pprof`; (2) 2 s of `stackfold record` with
# bt/profile.bt while a shell loop burns CPU: a profile with real mappings,
# build-ids, labels, a capture time and one location per address (user
# frames with their address inside their mapping, go tool pprof -top
# -addresses).  Both must pass the strict validator, go tool pprof and
# protoc, and conserve samples.  Needs root and bpftrace (lib.sh: skipped
# outside CI, failed in CI).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/tools/pprof_build.sh
. "$TOP/tests/tools/pprof_build.sh"

live_prereq "pprof live capture" || exit 0
pprof_tools_build || exit 0

# --- (1) plain bpftrace text ------------------------------------------------
if ! timeout 30 bpftrace -e 'profile:hz:99 { @[kstack] = count(); } interval:s:2 { exit(); }' \
	>"$T/k.txt" 2>"$T/k.err"; then
	fail "live kstack: bpftrace ran" "$(tail -5 "$T/k.err")"
else
	want=$(awk '/\]: [0-9]+$/ { s += $NF } END { print s + 0 }' "$T/k.txt")
	if [ "$want" -gt 0 ]; then pass "live kstack: captured $want samples"; else fail "live kstack: captured samples"; fi
	if "$STACKFOLD" -q -f folded,pprof -o "$T/k" "$T/k.txt" 2>"$T/err"; then
		res=$("$PPROF_CHECK" --no-time "$T/k.pb.gz")
		case $res in *" total=$want") pass "live kstack: valid, pprof total == bpftrace total" ;;
		*) fail "live kstack: valid, pprof total == bpftrace total ($want)" "$res" ;; esac
		check_eq "live kstack: folded total" "$want" "$(folded_total "$T/k.folded")"
		if gopprof -raw -symbolize=none "$T/k.pb.gz" >"$T/k.raw" 2>"$T/goerr"; then
			check_eq "live kstack: go pprof -raw total" "$want" "$(raw_total "$T/k.raw")"
		else
			fail "live kstack: go pprof -raw" "$(tail -5 "$T/goerr")"
		fi
		check "live kstack: go pprof -top" gopprof -top "$T/k.pb.gz"
		protoc_prereq "live kstack: protoc --decode" && check "live kstack: protoc --decode" pb_decode "$T/k.pb.gz"
	else
		fail "live kstack: stackfold -f folded,pprof" "$(tail -5 "$T/err")"
	fi
fi

# --- (2) stackfold record ---------------------------------------------------
timeout 15 bash -c 'while :; do :; done' &
burner=$!
# and one in the kernel (read(2) of /dev/zero), so kernel frames are
# sampled whatever else the machine does
timeout 15 dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null &
kburner=$!
export BPFTRACE_NO_USER_SYMBOLS=1	# 0.17: raw user addresses, like scripts/profile
if "$STACKFOLD" record -q -F 99 -D 2 -f folded,pprof -o "$T/rec" \
	--save-raw "$T/rec.capture" -- bpftrace "$TOP/bt/profile.bt" 99 0 2 2>"$T/rec.err"; then
	kill "$burner" "$kburner" 2>/dev/null
	want=$(folded_total "$T/rec.folded")
	res=$("$PPROF_CHECK" "$T/rec.pb.gz")
	case $res in "ok samples="*" total=$want") pass "record: valid with time_nanos, pprof total == folded total ($want)" ;;
	*) fail "record: valid with time_nanos, pprof total == folded total ($want)" "$res" ;; esac
	if gopprof -raw -symbolize=none "$T/rec.pb.gz" >"$T/rec.raw" 2>"$T/goerr"; then
		check_eq "record: go pprof -raw total" "$want" "$(raw_total "$T/rec.raw")"
		check "record: mappings with build-ids in -raw" \
			grep -qE '^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ /[^ ]+ [0-9a-f]{16,}' "$T/rec.raw"
		check "record: [kernel.kallsyms] mapping" grep -qE '^[0-9]+: .* \[kernel\.kallsyms\]' "$T/rec.raw"
		check "record: pid/tid/comm labels" grep -qE 'comm:\[bash\]' "$T/rec.raw"
		check "record: capture time" grep -q '^Time: ' "$T/rec.raw"
		check "record: counters comment matches the folded total" grep -q "^Comment: samples=$want " "$T/rec.raw"
		# run by hand (no STACKFOLD_BPFTRACE_VERSION from scripts/profile):
		# record asks bpftrace its version itself
		check "record: the bpftrace version in the metadata comment" \
			grep -qE "^Comment: bpftrace=bpftrace v?$(bpftrace --version | sed -n 's/^bpftrace v\{0,1\}\([0-9.]*\).*/\1/p') kernel=$(uname -r) " "$T/rec.raw"
		# The issue's rule: one location per address, with its mapping.
		read -r n user outside < <(raw_addr_check "$T/rec.raw")
		if [ "${user:-0}" -gt 0 ] && [ "$outside" = 0 ]; then
			pass "record: user frames have addresses, each in its mapping's range ($user of $n)"
		else
			fail "record: user frames have addresses, each in its mapping's range" "raw_addr_check: $n $user $outside"
		fi
		check "record: no symbolized location without its address" \
			bash -c "! grep -qE '^ +[0-9]+: 0x0 M=' '$T/rec.raw'"
	else
		fail "record: go pprof -raw" "$(tail -5 "$T/goerr")"
	fi
	res=$("$PPROF_CHECK" --addresses "$T/rec.pb.gz" | sed -n '/^addresses/p')
	case $res in "addresses user=0 "*|"") fail "record: validator sees user addresses" "$res" ;;
	*" zero_on_mapping=0 "*) pass "record: validator: $res" ;;
	*) fail "record: no location on a mapping without its address" "$res" ;; esac
	if gopprof -top -addresses -symbolize=none "$T/rec.pb.gz" >"$T/rec.addrtop" 2>"$T/goerr"; then
		check "record: go pprof -top -addresses lists addresses" \
			grep -qE '^ +[0-9.]+[a-z]*s? +[0-9.]+% .* [0-9a-f]{16} ' "$T/rec.addrtop"
	else
		fail "record: go pprof -top -addresses" "$(tail -5 "$T/goerr")"
	fi
	protoc_prereq "record: protoc --decode" && check "record: protoc --decode" pb_decode "$T/rec.pb.gz"
	# Re-reading the saved raw capture gives the same profile bytes.
	"$STACKFOLD" -q -f pprof -o "$T/rec2.pb.gz" "$T/rec.capture" 2>/dev/null
	check "record: raw capture re-read gives a valid profile" "$PPROF_CHECK" "$T/rec2.pb.gz"
	check_eq "record: re-read total" "$want" "$("$PPROF_CHECK" --sum "$T/rec2.pb.gz")"
	res=$("$PPROF_CHECK" --addresses "$T/rec2.pb.gz" | sed -n '/^addresses/p')
	case $res in "addresses user=0 "*|"") fail "record: re-read raw capture keeps user addresses" "$res" ;;
	*" zero_on_mapping=0 "*) pass "record: re-read raw capture keeps user addresses ($res)" ;;
	*) fail "record: re-read raw capture keeps user addresses" "$res" ;; esac
else
	kill "$burner" "$kburner" 2>/dev/null
	fail "record: stackfold record -f folded,pprof" "$(tail -5 "$T/rec.err")"
fi
wait 2>/dev/null

# --- (3) the comm label is the process's name, thread_name the thread's:
# a worker thread that renamed itself is sliced under its process.
if cc -O0 -pthread -o "$T/namedthread" "$TOP/tests/fixtures/live/namedthread.c" 2>"$T/nt.err"; then
	"$T/namedthread" &
	ntpid=$!
	sleep 0.3
	"$STACKFOLD" record -q -F 99 -D 2 -f folded,pprof -o "$T/nt" -- \
		env BPFTRACE_NO_USER_SYMBOLS=1 bpftrace "$TOP/bt/profile.bt" 99 "$ntpid" 10 2>"$T/nt.err"
	kill "$ntpid" 2>/dev/null
	gopprof -raw -symbolize=none "$T/nt.pb.gz" >"$T/nt.raw" 2>"$T/goerr" ||
		fail "names: go pprof -raw" "$(tail -5 "$T/goerr")"
	check_eq "names: labels (comm, thread_name) of both threads" \
		"comm:[namedthread] thread_name:[namedthread]|comm:[namedthread] thread_name:[workerthr]" \
		"$(grep -oE 'comm:\[[^]]*\] thread_name:\[[^]]*\]' "$T/nt.raw" | sort -u | paste -sd'|')"
	check "names: the folded root stays the thread's comm (as perf and bcc)" grep -q '^workerthr;' "$T/nt.folded"
	# a process name holding a newline and a backslash: the comm label
	# (from /proc/PID/status, which escapes them) has the bytes, as
	# thread_name (from bpftrace) has; in a replay of the raw capture too
	# (not the escapes, a backslash and an n)
	"$T/namedthread" "$(printf 'm\nx\\y')" &
	ntpid=$!
	sleep 0.3
	"$STACKFOLD" record -q -F 99 -D 2 -f pprof -o "$T/nt2" --save-raw "$T/nt2.raw" -- \
		env BPFTRACE_NO_USER_SYMBOLS=1 bpftrace "$TOP/bt/profile.bt" 99 "$ntpid" 10 2>"$T/nt2.err"
	kill "$ntpid" 2>/dev/null
	"$STACKFOLD" -q -f pprof -o "$T/nt2-replay.pb.gz" "$T/nt2.raw" 2>/dev/null
	for f in nt2 nt2-replay; do
		check "names ($f): a comm with a newline and a backslash is those bytes, not /proc's escapes" \
			python3 -c 'import gzip, sys; d = gzip.open(sys.argv[1]).read(); sys.exit(0 if b"m\nx\\y" in d and b"m\\nx" not in d else 1)' "$T/$f.pb.gz"
	done
else
	fail "names: build namedthread.c" "$(tail -5 "$T/nt.err")"
fi
wait 2>/dev/null
