# tests/clickhouse.sh - sourced by the fleet tests and bench/fleet.sh: a
# private ClickHouse server (Debian's clickhouse-server) for one run.
#
#   ch_start DIR    start it with its own config in DIR (created), listening
#                   on 127.0.0.1 only, on free ports; sets CH_HTTP (port),
#                   CH_TCP, CH_URL (clickhouse://127.0.0.1:PORT/stackfold),
#                   CH_PID; returns 1 (with the log's tail on stderr) when it
#                   is not ready in CH_START_TIMEOUT seconds (default 60)
#                   With CH_TLS=1 it also serves HTTPS: a throwaway CA
#                   and a certificate for 127.0.0.1 are made in DIR/tls
#                   (ch_tls_certs), and CH_HTTPS (port), CH_CA (the CA's
#                   PEM file) and CH_URLS (clickhouses://...) are set
#                   With CH_CLUSTER=1 the server is also a cluster "fleet"
#                   of two shards, both itself (127.0.0.1:CH_TCP), with the
#                   default databases shard1 and shard2, and its profile has
#                   the settings docs/fleet.md asks of a cluster
#                   (distributed_product_mode=local, insert_distributed_sync=1)
#                   Queries are logged in system.query_log when the user
#                   asks (log_queries=1), or for every query with
#                   CH_LOG_QUERIES=1
#   ch_tls_ca DIR   a throwaway CA of its own: DIR/ca.pem, DIR/ca.key
#   ch_stop [-KILL] stop it (SIGTERM, then SIGKILL after 10 s; a server
#                   stopped so waits for its keep-alive connections); with
#                   -KILL at once, as a crash; idempotent
#   ch_restart      stop and start again on the same ports and data
#   ch_sql SQL      run SQL through the HTTP interface; the result on stdout
#                   (at most CH_SQL_TIMEOUT seconds, default 60)
#
# The caller installs the trap: `trap 'ch_stop; rm -rf "$T"' EXIT`.
# shellcheck shell=bash

CH_PID="" CH_DIR="" CH_HTTP="" CH_TCP="" CH_HTTPS="" CH_CA=""
export CH_URL="" CH_URLS=""

# A port nothing listens on now (the kernel's pick of an ephemeral one).
ch_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ch_tls_ca DIR: a CA (P-256 key: made in milliseconds, where an RSA key
# or DH parameters would take seconds), valid two days.
ch_tls_ca() {
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-days 2 -subj "/CN=stackfold test CA $RANDOM" -keyout "$1/ca.key" \
		-out "$1/ca.pem" 2>/dev/null
}

# ch_tls_certs DIR: ch_tls_ca, and DIR/server.crt (with DIR/server.key)
# that it signed for the name 127.0.0.1 (subjectAltName: libcurl checks
# the address against it, not against the CN).
ch_tls_certs() {
	local d=$1
	ch_tls_ca "$d" &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-subj /CN=127.0.0.1 -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null &&
	printf 'subjectAltName=IP:127.0.0.1\n' >"$d/server.ext" &&
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-CAcreateserial -days 2 -extfile "$d/server.ext" \
		-out "$d/server.crt" 2>/dev/null
}

# The HTTPS part of the config, when CH_HTTPS is set.  No dhParamsFile:
# Poco then uses its built-in 2048-bit group (ECDHE is what clients
# negotiate anyway); verificationMode none: no client certificate asked.
ch_tls_config() {
	[ -n "$CH_HTTPS" ] || return 0
	cat <<XML
    <https_port>$CH_HTTPS</https_port>
    <openSSL><server>
        <certificateFile>$1/tls/server.crt</certificateFile>
        <privateKeyFile>$1/tls/server.key</privateKeyFile>
        <verificationMode>none</verificationMode>
        <loadDefaultCAFile>false</loadDefaultCAFile>
        <disableProtocols>sslv2,sslv3,tlsv1,tlsv1_1</disableProtocols>
    </server></openSSL>
XML
}

# The cluster part of the config, when CH_CLUSTER=1: one server, two
# shards told apart by their databases (a Distributed table over
# database '' uses each shard's default_database).
ch_cluster_config() {
	[ "${CH_CLUSTER:-}" = 1 ] || return 0
	local i
	echo "    <remote_servers><fleet>"
	for i in 1 2; do
		echo "        <shard><replica><host>127.0.0.1</host><port>$CH_TCP</port><default_database>shard$i</default_database></replica></shard>"
	done
	echo "    </fleet></remote_servers>"
}

ch_write_config() {
	local d=$1
	mkdir -p "$d/data/" "$d/tmp/" "$d/user_files/" "$d/log"
	cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger><level>warning</level><log>$d/log/server.log</log>
        <errorlog>$d/log/error.log</errorlog><size>10M</size><count>1</count></logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$CH_HTTP</http_port>
    <tcp_port>$CH_TCP</tcp_port>
$(ch_tls_config "$d")
$(ch_cluster_config)
    <query_log><database>system</database><table>query_log</table>
        <flush_interval_milliseconds>1000</flush_interval_milliseconds></query_log>
    <max_connections>64</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>16</max_concurrent_queries>
    <uncompressed_cache_size>8388608</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>$d/data/</path>
    <tmp_path>$d/tmp/</tmp_path>
    <user_files_path>$d/user_files/</user_files_path>
    <users_config>$d/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>0</builtin_dictionaries_reload_interval>
    <max_table_size_to_drop>0</max_table_size_to_drop>
</yandex>
XML
	cat >"$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <profiles><default>
        <max_memory_usage>1000000000</max_memory_usage>
        <max_threads>2</max_threads>
        <log_queries>${CH_LOG_QUERIES:-0}</log_queries>
$([ "${CH_CLUSTER:-}" = 1 ] && printf '        <distributed_product_mode>local</distributed_product_mode>\n        <insert_distributed_sync>1</insert_distributed_sync>\n')
    </default></profiles>
    <users><default>
        <password></password>
        <networks><ip>127.0.0.1</ip></networks>
        <profile>default</profile><quota>default</quota>
    </default>
    <fleet>
        <password>s3cret pass</password>
        <networks><ip>127.0.0.1</ip></networks>
        <profile>default</profile><quota>default</quota>
    </fleet></users>
    <quotas><default><interval><duration>3600</duration>
        <queries>0</queries><errors>0</errors><result_rows>0</result_rows>
        <read_rows>0</read_rows><execution_time>0</execution_time>
    </interval></default></quotas>
</yandex>
XML
}

ch_sql() {
	curl -sS --fail-with-body --max-time "${CH_SQL_TIMEOUT:-60}" "http://127.0.0.1:$CH_HTTP/" --data-binary "$1"
}

ch_launch() {
	# not our child (a subshell's): its death by SIGKILL is no job message
	CH_PID=$(clickhouse-server --config-file="$CH_DIR/config.xml" \
		>"$CH_DIR/log/stdout" 2>&1 </dev/null & echo $!)
	local i
	for ((i = 0; i < ${CH_START_TIMEOUT:-60} * 10; i++)); do
		if curl -s --max-time 1 "http://127.0.0.1:$CH_HTTP/ping" 2>/dev/null | grep -q Ok &&
			{ [ -z "$CH_HTTPS" ] || curl -s --max-time 1 --cacert "$CH_CA" \
				"https://127.0.0.1:$CH_HTTPS/ping" 2>/dev/null | grep -q Ok; }; then
			return 0
		fi
		kill -0 "$CH_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "clickhouse-server did not start:" >&2
	tail -n 20 "$CH_DIR/log/error.log" "$CH_DIR/log/stdout" >&2 2>/dev/null
	ch_stop -TERM
	return 1
}

ch_start() {
	CH_DIR=$1
	CH_HTTP=$(ch_free_port) && CH_TCP=$(ch_free_port) || return 1
	CH_URL="clickhouse://127.0.0.1:$CH_HTTP/stackfold"
	CH_HTTPS="" CH_CA="" CH_URLS=""
	if [ "${CH_TLS:-}" = 1 ]; then
		CH_HTTPS=$(ch_free_port) || return 1
		CH_CA=$CH_DIR/tls/ca.pem
		CH_URLS="clickhouses://127.0.0.1:$CH_HTTPS/stackfold"
		ch_tls_certs "$CH_DIR/tls" || { echo "openssl could not make the test certificates" >&2; return 1; }
	fi
	ch_write_config "$CH_DIR"
	ch_launch
}

ch_stop() {
	[ -n "$CH_PID" ] || return 0
	kill "${1:--TERM}" "$CH_PID" 2>/dev/null
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$CH_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$CH_PID" 2>/dev/null
	while kill -0 "$CH_PID" 2>/dev/null; do sleep 0.05; done
	CH_PID=""
}

# ch_cleanup_on_exit: at exit, SIGKILL the pids the test put in cpids[],
# stop the server, copy $T to $KEEP when set, remove $T
ch_cleanup_on_exit() {
	cpids=()
	trap ch_cleanup EXIT
}
ch_cleanup() {
	local p
	for p in "${cpids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	ch_stop -TERM
	[ -n "${KEEP:-}" ] && cp -r "$T" "$KEEP"; rm -rf "$T"
}

ch_restart() {
	ch_stop -TERM
	ch_launch
}

# ch_prereq NAME [COMMAND...]: clickhouse-server, curl, python3 and the
# COMMANDs are here (else SKIP, or FAIL in CI, as live_prereq).
ch_prereq() {
	local why="" c name=$1
	shift
	for c in clickhouse-server curl python3 "$@"; do
		command -v "$c" >/dev/null 2>&1 || why="$c not installed (scripts/install-deps --test)"
	done
	if [ -n "$why" ]; then
		if [ "${CI:-}" = true ]; then fail "$name" "cannot run in CI: $why"; else skip "$name" "$why"; fi
		return 1
	fi
	return 0
}

# A fake bpftrace for `stackfold continuous`: prints FAKE_WINDOWS windows
# (default 3), FAKE_GAP seconds apart (default 0.3), window i holding
# stack work 7+i and idle 3 of process 4242 "fake", then waits for
# SIGINT as bpftrace does.  Written to $1.
ch_fake_bpftrace() {
	# shellcheck disable=SC2016 # the stand-in's code, not this shell's
	fake_bpftrace "$1" 'printf "\n@stackfold_total: 0\n"' 'echo "Attaching 4 probes..."
echo "#attached Tracing stacks"
for ((i = 0; i < ${FAKE_WINDOWS:-3}; i++)); do
	printf '"'"'#pid 4242 fake\n@stackfold[4242, 4242, fake, \n        work+12\n        main+30\n, ]: %d\n'"'"' $((7 + i))
	printf '"'"'@stackfold[4242, 4243, fake, \n        idle+5\n        main+30\n, ]: 3\n\n@stackfold_total: %d\n'"'"' $((10 + i))
	sleep "${FAKE_GAP:-0.3}"
done'
}
