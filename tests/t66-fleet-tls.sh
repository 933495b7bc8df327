#!/usr/bin/env bash
# t66-fleet-tls: pushes and queries over HTTPS (clickhouses://) to a real
# ClickHouse whose certificate a private CA signed (a throwaway CA made
# with openssl; the server's HTTPS port, the store's TLS), fed by the fake
# bpftrace.  Checks: with another CA and with none (the system's) the
# store is refused, libcurl's certificate reason logged, nothing reaches
# the server and every window stays queued; restarted with
# --push-cacert CA every window arrives once with the local files' totals;
# stackfold query --cacert and scripts/flame --from with
# STACKFOLD_PUSH_CACERT give the local merge's bytes, and refuse without
# the CA or under another name than the certificate's; --push-cacert or
# --cacert naming a FIFO, a non-PEM file, or with no HTTPS store is a
# usage error at once.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"

ch_prereq "fleet tls" openssl timeout || exit 0
ch_cleanup_on_exit
CH_TLS=1 ch_start "$T/ch" || { fail "fleet tls: clickhouse-server starts with HTTPS"; exit 0; }
ch_tls_ca "$T/other" || { fail "fleet tls: openssl makes a second CA"; exit 0; }
ch_fake_bpftrace "$T/fake"
T0=$(( $(date +%s) - 60 ))
CA=$CH_CA

# wait_for N PATTERN FILE: until FILE has N lines matching (20 s at most)
wait_for() {
	local i n
	for ((i = 0; i < 200; i++)); do
		n=$(grep -c -- "$2" "$3" 2>/dev/null)
		[ "${n:-0}" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# start DIR [OPTION...]: stackfold continuous over the fake, pushing to
# the HTTPS port; its pid in $cpid, its log appended to DIR.log
start() {
	local dir=$1
	shift
	"$STACKFOLD" continuous -o "$dir" --window 1 --host hT \
		--push "$CH_URLS" "$@" -- "$T/fake" 2>>"$dir.log" &
	cpid=$!
	cpids+=("$cpid")
}
stops=""	# the exit statuses of the runs stopped
stop() {
	local st=0
	kill -TERM "$cpid"
	wait "$cpid" || st=$?
	stops="$stops $st"
}
sent() { cat "$1"/.push-*.sent 2>/dev/null | grep -c .; }
nfolded() { find "$1" -maxdepth 1 -name '*.folded' | grep -c .; }
# the certificate refusals logged in FILE
refusals() { grep -c "store unreachable (127\.0\.0\.1:$CH_HTTPS: SSL certificate problem" "$1"; }
query() {	# OPTION...: stackfold query of the HTTPS store, comm-PID frames
	"$STACKFOLD" query "$CH_URLS" --from "$T0" --to $(( $(date +%s) + 60 )) --by-pid "$@"
}

# --- refused: another CA, then the system's -----------------------------------
FAKE_WINDOWS=3 start "$T/a" --push-cacert "$T/other/ca.pem"
wait_for 3 " samples, " "$T/a.log" && wait_for 1 "store unreachable" "$T/a.log"
stop
check_eq "another CA: refused, libcurl's certificate reason logged" 1 "$(refusals "$T/a.log")"
FAKE_WINDOWS=1 start "$T/a"
wait_for 4 " samples, " "$T/a.log" && wait_for 2 "store unreachable" "$T/a.log"
stop
check_eq "no CA (the system's): refused, the certificate reason logged" 2 "$(refusals "$T/a.log")"
check_eq "refused: no window marked sent" 0 "$(sent "$T/a")"
check_eq "refused: the 4 window files kept (they are the queue)" 4 "$(nfolded "$T/a")"
check "refused: the log says they wait for the next start" grep -q "4 windows not delivered yet: sent at the next start" "$T/a.log"
check_eq "refused: nothing reached the server (no schema made)" 0 \
	"$(ch_sql "SELECT count() FROM system.databases WHERE name = 'stackfold'")"

# --- the right CA: the queue delivered ------------------------------------------
FAKE_WINDOWS=1 start "$T/a" --push-cacert "$CA"
wait_for 5 " samples, " "$T/a.log"
for ((i = 0; i < 200; i++)); do [ "$(sent "$T/a")" -ge 5 ] && break; sleep 0.1; done
stop
check "--push-cacert CA: the 4 queued windows are said at the start" grep -q "4 windows from earlier runs wait" "$T/a.log"
check_eq "--push-cacert CA: every window marked sent" 5 "$(sent "$T/a")"
check_eq "--push-cacert CA: 5 windows in the store, each once (an attempt each)" "5 5" \
	"$(ch_sql "SELECT (SELECT uniqExact(window_id) FROM stackfold.windows), (SELECT uniqExact(attempt) FROM stackfold.samples)" | tr '\t' ' ')"
cat "$T"/a/*.folded | "$STACKFOLD" -q -f folded -o "$T/dir.folded" /dev/stdin
query --cacert "$CA" -o "$T/store.folded" 2>"$T/q.err"
check_eq "query --cacert: the store's samples equal the local files'" \
	"$(folded_total "$T/dir.folded")" "$(folded_total "$T/store.folded" 2>/dev/null)"
check_diff "query --cacert: the local merge's bytes" "$T/dir.folded" "$T/store.folded"

check_eq "the 3 runs exited 0 at SIGTERM (refused or not)" " 0 0 0" "$stops"

# --- query refusals ---------------------------------------------------------------
st=0; query -o "$T/no.folded" 2>"$T/no.err" || st=$?
check_eq "query without --cacert: the store failed (exit 4)" 4 "$st"
check "query without --cacert: libcurl's certificate reason" grep -q "SSL certificate problem" "$T/no.err"
st=0; query --cacert "$T/other/ca.pem" -o "$T/no.folded" 2>"$T/no.err" || st=$?
check_eq "query --cacert another CA: refused (exit 4)" 4 "$st"
st=0
"$STACKFOLD" query "clickhouses://localhost:$CH_HTTPS/stackfold" --from "$T0" \
	--to $(( $(date +%s) + 60 )) --cacert "$CA" -o "$T/no.folded" 2>"$T/no.err" || st=$?
check_eq "query by a name the certificate lacks (localhost): refused (exit 4)" 4 "$st"
check "query by another name: libcurl says the name does not match" grep -q "subject name" "$T/no.err"
check "refused queries wrote no output" test ! -e "$T/no.folded"

# --- scripts/flame --from clickhouses:// -------------------------------------------
"$TOP/scripts/flame" "$T/a" --since 1h -f folded -o "$T/fl-dir" 2>/dev/null
STACKFOLD_PUSH_CACERT=$CA "$TOP/scripts/flame" --from "$CH_URLS" --since 1h \
	-f folded -o "$T/fl-store" 2>"$T/fl.err"
check_diff "scripts/flame --from with STACKFOLD_PUSH_CACERT: the local merge's bytes" \
	"$T/fl-dir.folded" "$T/fl-store.folded"
st=0; STACKFOLD_PUSH_CACERT="" "$TOP/scripts/flame" --from "$CH_URLS" --since 1h \
	-f folded -o "$T/fl-none" 2>"$T/fl-none.err" || st=$?
check_eq "scripts/flame --from without the CA: refused (exit 4)" "4 no output" \
	"$st $([ -e "$T/fl-none.folded" ] && echo output || echo no output)"

# --- usage errors ------------------------------------------------------------------
mkfifo "$T/fifo"
# at_once CMD...: "EXIT: the error line" (timeout 15: a hang is exit 124)
at_once() {
	local st=0 err
	err=$(timeout -k 2 15 "$@" 2>&1 >/dev/null) || st=$?
	echo "$st: $(head -n 1 <<<"$err")"
}
out=$(at_once "$STACKFOLD" continuous -o "$T/f" --push "$CH_URLS" --push-cacert "$T/fifo" -- "$T/fake")
check_eq "--push-cacert FIFO: a usage error at once" \
	"1: stackfold: continuous: --push-cacert: '$T/fifo' is a FIFO, not a regular file" "$out"
check "--push-cacert FIFO: nothing started, nothing written" test ! -e "$T/f"
out=$(at_once "$STACKFOLD" query "$CH_URLS" --from 1 --to 2 --cacert "$T/fifo")
check_eq "query --cacert FIFO: a usage error at once" \
	"1: stackfold: query: --cacert: '$T/fifo' is a FIFO, not a regular file" "$out"
out=$(at_once "$STACKFOLD" continuous -o "$T/f" --push "$CH_URLS" --push-cacert "$CH_DIR/tls/server.key" --check -- true)
check_eq "--push-cacert a key, not a certificate: usage error" \
	"1: stackfold: continuous: --push-cacert: '$CH_DIR/tls/server.key' holds no PEM certificate (\"-----BEGIN CERTIFICATE-----\" line)" "$out"
out=$(at_once "$STACKFOLD" continuous -o "$T/f" --push "$CH_URL" --push-cacert "$CA" --check -- true)
check_eq "--push-cacert with only a plain-HTTP store: usage error" \
	"1: stackfold: continuous: --push-cacert needs an HTTPS --push (clickhouses://, pyroscopes:// or https://)" "$out"
out=$(at_once "$STACKFOLD" query "$CH_URL" --from 1 --to 2 --cacert "$CA")
check_eq "query --cacert with clickhouse:// (plain): usage error" \
	"1: stackfold: query: --cacert needs a clickhouses:// store, not $CH_URL" "$out"
check "scripts/continuous passes --push-cacert to stackfold" bash -c \
	"'$TOP/scripts/continuous' -o '$T/f' --push '$CH_URLS' --push-cacert '$CA' --dry-run | grep -qx -- 'extra=--push $CH_URLS --push-cacert $CA'"
