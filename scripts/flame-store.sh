# scripts/flame-store.sh - sourced by scripts/flame for --from STORE
# (clickhouse://HOST:PORT/DATABASE): the same outputs as from a directory
# of windows, but ClickHouse sums the counts (`stackfold query`), so only
# one row per (stack, comm, pid) comes back however many windows the
# range holds.  Reads flame's variables (from, since, to, host, labels,
# comm, pids, keep_pid, formats, prefix, diff); exits.
# shellcheck shell=bash disable=SC2154

store=$from
[ -z "$dir" ] || die 1 "give a DIR or --from STORE, not both"
secs_of() {	# 90, 90s, 5m, 2h, 1d -> seconds
	local n=${1%[smhd]}
	case "$n" in '' | *[!0-9]*) return 1 ;; esac
	n=$(( 10#$n ))
	case "$1" in
	*m) echo $(( n * 60 )) ;;
	*h) echo $(( n * 3600 )) ;;
	*d) echo $(( n * 86400 )) ;;
	*) echo "$n" ;;
	esac
}
epoch_of() { date -u -d "$1" +%s 2>/dev/null || die 1 "cannot read '$1' as a time"; }
secs=$(secs_of "${since:-5m}") || die 1 "--since wants 90s, 5m, 2h or 1d, not '$since'"
if [ -n "$to" ]; then t1=$(epoch_of "$to"); else t1=$(( $(date -u +%s) + 1 )); fi
t0=$(( t1 - secs ))
if [ -n "$pids" ]; then
	case "$pids" in *[!0-9,]* | ,* | *, | *,,*) die 1 "--pid wants PID[,PID...], not '$pids'" ;; esac
fi
for f in ${formats//,/ }; do
	case "$f" in folded | top | svg | pprof) ;; *) die 1 "unknown output '$f' in -f" ;; esac
done
nformats=$(tr ',' '\n' <<<"$formats" | grep -c .)
[ "$prefix" = - ] && [ "$nformats" -gt 1 ] && die 1 "-o - takes one format only"
[ -x "$STACKFOLD" ] || die 1 "$STACKFOLD is not built (run: make)"
work=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-flame.XXXXXX") || die 4 "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT

# query OUT FROM TO HOST: the folded stacks (comm first; comm-PID with
# --keep-pid) and the windows' line (OUT.meta)
query() {
	local st=0 bypid="" l lab=()
	[ "$keep_pid" = 1 ] && bypid=--by-pid
	for l in ${labels//,/ }; do lab+=(--label "$l"); done
	"$STACKFOLD" query "$store" --from "$2" --to "$3" ${4:+--host "$4"} \
		${comm:+--comm "$comm"} ${pids:+--pid "$pids"} $bypid "${lab[@]}" \
		${STACKFOLD_PUSH_AUTH:+--push-auth "$STACKFOLD_PUSH_AUTH"} \
		${STACKFOLD_PUSH_CACERT:+--cacert "$STACKFOLD_PUSH_CACERT"} \
		--meta "$1.meta" -o "$1" || st=$?
	[ "$st" = 0 ] || exit "$st"
}
# the nonzero loss counters of a .meta line
losses_of() { tr ' ' '\n' <"$1" | grep -v '^windows=\|^samples=\|=0$' | paste -sd ' ' -; }

query "$work/after.folded" "$t0" "$t1" "$host"
n=$(sed -n 's/^windows=\([0-9]*\).*/\1/p' "$work/after.folded.meta")
# shellcheck disable=SC2034 # read by say_losses (scripts/flame-range)
losses=$(losses_of "$work/after.folded.meta")
what="${host:-all hosts}${labels:+ ($labels)}"
args=(-f "$formats" -q)
inputs=("$work/after.folded")
case "$diff" in
'') ;;
host:*)
	query "$work/before.folded" "$t0" "$t1" "${diff#host:}"
	what="${diff#host:} -> $what"
	inputs=(--diff "$work/before.folded" "$work/after.folded") ;;
*..*)
	b0=$(epoch_of "${diff%%..*}") b1=$(epoch_of "${diff#*..}")
	[ "$b0" -lt "$b1" ] || die 1 "--diff: the range is empty"
	query "$work/before.folded" "$b0" "$b1" "$host"
	what="$what, $(date -u -d "@$b0" +%FT%TZ) .. $(date -u -d "@$b1" +%FT%TZ) -> now"
	inputs=(--diff "$work/before.folded" "$work/after.folded") ;;
*) die 1 "--diff wants host:NAME or FROM..TO, not '$diff'" ;;
esac
args+=(--title "CPU, $what, $(date -u -d "@$t0" +%FT%TZ) .. $(date -u -d "@$t1" +%FT%TZ), $n windows")
say_losses flame "the store's windows table"	# (scripts/flame-range)
if [ "$prefix" = - ]; then
	args+=(-o -)
elif [ "$nformats" -gt 1 ]; then
	args+=(-o "$prefix")
else
	case "$formats" in
	folded) args+=(-o "$prefix.folded") ;;
	top) args+=(-o "$prefix.top") ;;
	svg) args+=(-o "$prefix.svg") ;;
	pprof) args+=(-o "$prefix.pb.gz") ;;
	esac
fi
"$STACKFOLD" "${args[@]}" "${inputs[@]}" || exit $?
[ "$prefix" = - ] || echo "flame: $n window(s) from $store, $(awk '{ s += $NF } END { print s + 0 }' "$work/after.folded") samples -> $prefix ($formats)" >&2
exit 0
