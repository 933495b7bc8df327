#!/usr/bin/env bash
# t68-fleet-cluster: docs/fleet.md's cluster recipe as written, on a
# cluster "fleet" of two shards on one ClickHouse server (CH_CLUSTER=1:
# both shards 127.0.0.1, databases shard1 and shard2).  The schema and
# the Distributed tables are the SQL blocks of docs/fleet.md; windows of
# four hosts pushed through the Distributed tables land whole, each host
# on one shard, both shards used; `stackfold query` through them equals
# the same rows in one server's plain tables; without the documented
# distributed_product_mode the query is refused (Code 288).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/clickhouse.sh
. "$TOP/tests/clickhouse.sh"

ch_prereq "fleet cluster" || exit 0
ch_cleanup_on_exit
CH_CLUSTER=1 ch_start "$T/ch" || { fail "fleet cluster: clickhouse-server starts"; exit 0; }
ch_fake_bpftrace "$T/fake"
T0=$(( $(date +%s) - 60 ))
DOC=$TOP/docs/fleet.md

# doc_sql HEADING: the statements of the first ```sql block after the
# line "## HEADING" in docs/fleet.md, one a line (comments dropped)
doc_sql() {
	awk -v h="## $1" '$0 == h { on = 1; next }
		on && /^## / { exit }
		on && /^```sql/ { in_sql = 1; next }
		in_sql && /^```/ { exit }
		in_sql { sub(/--.*/, ""); printf "%s ", $0 }' "$DOC" |
		tr ';' '\n' | sed 's/^ *//; s/ *$//' | grep .
}
# run_sql DB: each statement on stdin with DB for "DB"; 1 on an error
run_sql() {
	local st ok=0
	while IFS= read -r st; do
		ch_sql "${st//DB./$1.}" >"$T/sql.out" 2>&1 || { ok=1; cat "$T/sql.out" >&2; }
	done
	return $ok
}
for db in shard1 shard2 single; do
	ch_sql "CREATE DATABASE $db"
	doc_sql Schema | run_sql "$db"
	check "the documented schema runs ($db)" test $? = 0
done
doc_sql "On a cluster: thousands of hosts" >"$T/cluster.sql"
check "the documented cluster recipe has its 4 statements" test "$(grep -c . "$T/cluster.sql")" = 4
run_sql none <"$T/cluster.sql"
check "the documented cluster recipe runs" test $? = 0

# --- windows of four hosts pushed through the Distributed tables ------------
sent() { cat "$1"/.push-*.sent 2>/dev/null | grep -c .; }
cpids=()
for h in h1 h2 h3 h4; do
	FAKE_WINDOWS=3 "$STACKFOLD" continuous -o "$T/$h" --window 1 --host "$h" \
		--label "team=t${h#h}" --push "$CH_URL" -- "$T/fake" 2>>"$T/$h.log" &
	cpids+=($!)
done
for h in h1 h2 h3 h4; do
	for ((i = 0; i < 300 && $(sent "$T/$h") < 3; i++)); do sleep 0.1; done
	check_eq "$h: every window delivered" 3 "$(sent "$T/$h")"
done
for p in "${cpids[@]}"; do kill -TERM "$p"; wait "$p"; done
cpids=()
check "no error in the pushers' logs" sh -c "! grep -i 'error\|fail\|again' '$T'/h?.log"

for h in h1 h2 h3 h4; do
	n=$(ch_sql "SELECT (SELECT count() > 0 FROM shard1.samples WHERE host = '$h') + (SELECT count() > 0 FROM shard2.samples WHERE host = '$h')")
	check_eq "$h: its samples on one shard" 1 "$n"
	n=$(ch_sql "SELECT ((SELECT count() FROM shard1.windows WHERE host = '$h') > 0) = ((SELECT count() FROM shard1.samples WHERE host = '$h') > 0)")
	check_eq "$h: its windows on its samples' shard" 1 "$n"
done
check "both shards hold samples" test "$(ch_sql "SELECT (SELECT count() FROM shard1.samples) > 0 AND (SELECT count() FROM shard2.samples) > 0")" = 1

# --- the same rows on one server ----------------------------------------------
for t in stacks samples windows; do ch_sql "INSERT INTO single.$t SELECT * FROM stackfold.$t"; done
SINGLE=${CH_URL%/stackfold}/single
# q URL OUT [OPTION...]: stackfold query's folded output and --meta
q() {
	local url=$1 out=$2
	shift 2
	"$STACKFOLD" query "$url" --from "$T0" --to $(( $(date +%s) + 60 )) \
		-o "$out.folded" --meta "$out.meta" "$@" 2>"$out.err"
}
all_total=0
for h in h1 h2 h3 h4; do all_total=$(( all_total + $(cat "$T/$h"/*.folded | folded_total /dev/stdin) )); done
n=0
while IFS='|' read -r name opts; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	q "$CH_URL" "$T/c$n" $opts
	check_eq "$name: stackfold query through the Distributed tables succeeds" 0 $?
	# shellcheck disable=SC2086
	q "$SINGLE" "$T/s$n" $opts
	check "$name: the same folded output as one server's" cmp -s "$T/c$n.folded" "$T/s$n.folded"
	check "$name: the same --meta" cmp -s "$T/c$n.meta" "$T/s$n.meta"
	check "$name: no samples lost" test -s "$T/c$n.folded"
done <<'CASES'
all hosts|
all hosts, by pid|--by-pid
one host|--host h3
one label|--label team=t2
CASES
check_eq "all hosts: the local files' samples" "$all_total" "$(folded_total "$T/c1.folded")"

# --- the setting the recipe asks for ---------------------------------------------
curl -sS "http://127.0.0.1:$CH_HTTP/?distributed_product_mode=deny" --data-binary \
	"SELECT count() FROM stackfold.samples WHERE attempt IN (SELECT min(attempt) FROM stackfold.windows GROUP BY window_id)" >"$T/deny.out" 2>&1
check "without distributed_product_mode=local: Code 288" grep -q "Code: 288" "$T/deny.out"
