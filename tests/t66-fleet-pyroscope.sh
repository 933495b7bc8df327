#!/usr/bin/env bash
# t66-fleet-pyroscope: --push pyroscope://HOST:PORT/APP against a local
# stand-in (tests/tools/pyroscope_receiver.py) that checks the request
# shape Pyroscope's documentation gives for POST /ingest; no Pyroscope
# server was run.  The stand-in fails its first two requests: the windows
# wait and are delivered, each once, with the local files' totals.  The
# same run pushes to ClickHouse too (two --push targets).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"

ch_prereq "fleet pyroscope" || exit 0
cleanup() {
	[ -n "${rpid:-}" ] && kill "$rpid" 2>/dev/null
	[ -n "${cpid:-}" ] && kill -KILL "$cpid" 2>/dev/null
	ch_stop -TERM
	rm -rf "$T"
}
trap cleanup EXIT
python3 "$TOP/tests/tools/pyroscope_receiver.py" "$T/port" "$T/requests" 2 &
rpid=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/port" ] && break; sleep 0.1; done
ch_start "$T/ch" || { fail "fleet pyroscope: clickhouse-server starts"; exit 0; }
ch_fake_bpftrace "$T/fake"
FAKE_WINDOWS=3 "$STACKFOLD" continuous -o "$T/w" --window 1 --host web-1 \
	--label version=1.4-rc2 --label env=prod --push "pyroscope://127.0.0.1:$(cat "$T/port")/myapp.cpu" --push "$CH_URL" \
	-- "$T/fake" 2>"$T/log" &
cpid=$!
for ((i = 0; i < 200; i++)); do
	[ "$(cat "$T"/w/.push-*.sent 2>/dev/null | grep -c .)" -ge 6 ] && break
	sleep 0.1
done
kill -TERM "$cpid"
wait "$cpid"
cpid=""
ok=$(grep -c '"status": 200' "$T/requests")
check_eq "pyroscope: 3 windows accepted, after 2 refused requests" "3 2" "$ok $(grep -c '"status": 503' "$T/requests")"
check_eq "pyroscope: no request of the wrong shape" "" "$(grep '"status": 400' "$T/requests")"
check "pyroscope: the refusal is logged, and the delivery" grep -q "pyroscope.*store back after" "$T/log"
local=$(cat "$T"/w/*.folded | folded_total /dev/stdin)
got=$(python3 -c 'import json, sys; print(sum(json.loads(l)["total"] for l in open(sys.argv[1])))' "$T/requests")
check_eq "pyroscope: the samples sent equal the local files'" "$local" "$got"
check "pyroscope: the name carries the host label" grep -q '"name": "myapp.cpu{host=web-1,kernel=' "$T/requests"
check "pyroscope: and the --label ones, sorted" grep -q '"name": "myapp.cpu{host=web-1,kernel=[^,}]*,env=prod,version=1.4-rc2}"' "$T/requests"
check "pyroscope: sampleRate, spyName and folded format given" grep -q '"sampleRate": "99", "spyName": "stackfold".*"format": "folded"' "$T/requests"
check_eq "second --push: ClickHouse got the same windows" 3 "$(ch_sql "SELECT uniqExact(window_id) FROM stackfold.windows")"

# A server whose answer has no end (2 MiB to a push that wants none): the
# request fails past 1 MiB, said once, and the window waits.
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
rm -f "$T/port"
python3 "$TOP/tests/tools/pyroscope_receiver.py" "$T/port" "$T/requests2" 0 $((2 << 20)) &
rpid=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/port" ] && break; sleep 0.1; done
FAKE_WINDOWS=1 "$STACKFOLD" continuous -o "$T/w2" --window 1 --host web-1 \
	--push "pyroscope://127.0.0.1:$(cat "$T/port")/myapp.cpu" -- "$T/fake" 2>"$T/log2" &
cpid=$!
for ((i = 0; i < 200; i++)); do
	grep -q "answer larger" "$T/log2" 2>/dev/null && break
	sleep 0.1
done
kill -TERM "$cpid"
wait "$cpid"
cpid=""
check "pyroscope: an answer past 1 MiB fails the push, said" \
	grep -q "push pyroscope://127.0.0.1:[0-9]*/myapp.cpu: store unreachable (127.0.0.1:[0-9]*: answer larger than 1024 KiB); 1 window waits" "$T/log2"
check_eq "pyroscope: that window is not counted delivered" "" "$(cat "$T"/w2/.push-*.sent 2>/dev/null)"
