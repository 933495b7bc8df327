#!/usr/bin/env bash
# t66-fleet-spool: the --push journal (DIR/.push-HASH.sent) in a directory
# other users can create names in: root neither writes through a link
# planted at the journal's temporary name nor blocks on a FIFO planted at
# the journal's name.  No store runs: the push target is a closed port,
# the journal is read and rewritten at start-up.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"

cpid=""
cleanup() {
	[ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ch_fake_bpftrace "$T/fake"
mkdir -m 1777 "$T/w"
URL=pyroscope://127.0.0.1:1/app

# run_once: start continuous on $T/w, stop it once it ran 1 s (or after
# 15 s when it hangs); its exit status, 124 when it had to be killed
run_once() {
	FAKE_WINDOWS=1 "$STACKFOLD" continuous -o "$T/w" --window 1 --push "$URL" \
		-- "$T/fake" 2>>"$T/log" &
	cpid=$!
	sleep 1
	kill -TERM "$cpid" 2>/dev/null
	local i rc=124
	for ((i = 0; i < 150; i++)); do
		kill -0 "$cpid" 2>/dev/null || { wait "$cpid"; rc=$?; break; }
		sleep 0.1
	done
	[ "$rc" = 124 ] && { kill -KILL "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null; }
	cpid=""
	return "$rc"
}

run_once
js=("$T"/w/.push-*.sent)
J=${js[0]}
check "the journal is made at start" test -f "$J"

# another user's link at the temporary name: not written through
echo precious >"$T/victim"
ln -s "$T/victim" "$J.tmp"
chown -h 65534 "$J.tmp"
run_once
check_eq "a link at the journal's temporary: its target untouched" precious "$(cat "$T/victim")"
check "a link at the journal's temporary: the journal rewritten, ours" \
	bash -c "[ -f '$J' ] && [ ! -L '$J' ] && [ \$(stat -c %u '$J') = \$(id -u) ] && [ ! -e '$J.tmp' ]"

# another user's FIFO at the journal's name: not waited on
rm -f "$J" "$J.tmp"
mkfifo "$J"
chown 65534 "$J"
run_once
check_eq "a FIFO at the journal's name: no hang, exit 0 at SIGTERM" 0 "$?"

# another user's window files in DIR: not pushed as this host's windows
# (the stand-in receiver logs every request's total)
rm -f "$J"
python3 "$TOP/tests/tools/pyroscope_receiver.py" "$T/port" "$T/requests" 0 &
rpid=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/port" ] && break; sleep 0.1; done
w1=("$T"/w/2*.folded)
cp "${w1[0]%.folded}.pb.gz" "$T/w/20200101T000000Z.pb.gz"
printf 'evil-1;planted 99999\n' >"$T/w/20200101T000000Z.folded"
chown 65534 "$T"/w/20200101T000000Z.*
URL=pyroscope://127.0.0.1:$(cat "$T/port")/app
run_once
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
check "own windows pushed" grep -q '"status": 200' "$T/requests"
check "another user's window not pushed" bash -c "! grep -q '\"total\": 99999' '$T/requests'"
check "another user's window said, not sent" grep -q "window 20200101T000000Z not sent" "$T/log"

# libcurl is loaded only by the runs that push or query: linked, it and
# its thirty-odd libraries cost every stackfold run some 7 ms and 6 MiB.
check "bin/stackfold does not link libcurl (dlopen when a store is used)" \
	bash -c "! ldd '$STACKFOLD' | grep -q libcurl"
