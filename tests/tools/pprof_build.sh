# tests/tools/pprof_build.sh - sourced by tests/t30-pprof*.sh after lib.sh.
# Builds the pprof test tools into $T against the current build (.output,
# or .output-san with SANITIZE=1), and sets up go tool pprof offline:
#   $PPROF_CHECK  validator (tests/tools/pprof_check.c)
#   $PPROF_GEN    profile generator (tests/tools/pprof_gen.c)
#   $WINDOW_DUMP  a window as a store reads it (tests/tools/window_dump.c)
#   gopprof ARGS  go tool pprof with HOME/GOCACHE/GOPATH in $T
#   pb_decode F   gunzip F and print protoc --decode's text form
#   protoc_prereq NAME  0 when protoc is here, else SKIP NAME (FAIL in CI) and 1
# PPROF_LIB overrides the library linked into pprof_gen.
# pprof_tools_build returns 1 (after a FAIL line) when something is missing.
# shellcheck shell=bash

PPROF_CHECK=$T/pprof_check
PPROF_GEN=$T/pprof_gen
WINDOW_DUMP=$T/window_dump
PPROF_LDLIBS="${SF_LDLIBS:-$(make -s -C "$(dirname "${BASH_SOURCE[0]}")/../.." print-ldlibs)}"

pprof_tools_build() {
	local b=.output san="" gen out
	if [ "${SANITIZE:-}" = 1 ]; then
		b=.output-san
		san="-fsanitize=address,undefined -fno-sanitize-recover=all"
	fi
	gen=$TOP/$b/gen
	if [ ! -f "$gen/model/profile.pb-c.c" ]; then
		gen=$T/gen
		mkdir -p "$gen"
		protoc-c --proto_path="$TOP/collapse" --c_out="$gen" \
			"$TOP/collapse/model/profile.proto" || { fail "pprof tools: protoc-c"; return 1; }
	fi
	# shellcheck disable=SC2086
	if ! out=$(cc -std=gnu11 -O1 -g $san -Wall -Wextra -Werror -I"$gen" \
		-o "$PPROF_CHECK" "$TOP/tests/tools/pprof_check.c" \
		"$gen/model/profile.pb-c.c" -lprotobuf-c -lz 2>&1); then
		fail "pprof tools: build pprof_check" "$out"
		return 1
	fi
	local lib=${PPROF_LIB:-$TOP/$b/libstackfold.a}
	if [ ! -f "$lib" ]; then
		fail "pprof tools: $lib missing (run make first)"
		return 1
	fi
	# shellcheck disable=SC2086
	if ! out=$(cc -std=gnu11 -O1 -g $san -Wall -Wextra -Werror \
		-Wno-unused-parameter -D_GNU_SOURCE -I"$TOP" -I"$TOP/collapse" \
		-I"$TOP/symbolizer" -I"$gen" -o "$PPROF_GEN" \
		"$TOP/tests/tools/pprof_gen.c" "$lib" \
		$PPROF_LDLIBS 2>&1); then
		fail "pprof tools: build pprof_gen" "$out"
		return 1
	fi
	# shellcheck disable=SC2086
	if ! out=$(cc -std=gnu11 -O1 -g $san -Wall -Wextra -Werror \
		-D_GNU_SOURCE -I"$TOP" -I"$TOP/collapse" -I"$TOP/symbolizer" -o "$WINDOW_DUMP" \
		"$TOP/tests/tools/window_dump.c" "$lib" $PPROF_LDLIBS 2>&1); then
		fail "pprof tools: build window_dump" "$out"
		return 1
	fi
	mkdir -p "$T/home" "$T/gocache" "$T/gopath"
	return 0
}

gopprof() {
	HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS=-mod=mod \
		PPROF_BINARY_PATH=$T/nobinaries go tool pprof "$@"
}

# protoc is a test dependency (Debian protobuf-compiler, which
# `scripts/install-deps --test` installs): without it the checks that decode
# with it are skipped, saying why, not failed; in CI, which must run them,
# they fail.  $PROTOC names another protoc (a test of this skip points it
# at nothing).
PROTOC=${PROTOC:-protoc}
protoc_prereq() {
	command -v "$PROTOC" >/dev/null 2>&1 && return 0
	local why="protoc not installed: Debian protobuf-compiler, scripts/install-deps --test"
	if [ "${CI:-}" = true ]; then fail "$1" "$why"; else skip "$1" "$why"; fi
	return 1
}

pb_decode() {
	gzip -dc "$1" | "$PROTOC" --decode perftools.profiles.Profile \
		--proto_path="$TOP/collapse" "$TOP/collapse/model/profile.proto"
}

# Sum of value[0] over the Samples section of `go tool pprof -raw`.
raw_total() {
	awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	     s && /^ *[0-9]+ +[0-9]+:/ { t += $1 } END { printf "%.0f\n", t }' "$1"
}

# Locations of `go tool pprof -raw` output with a mapping and an address:
# prints "N USER OUTSIDE": N such locations, USER of them below
# 0x800000000000 (user space), OUTSIDE of them not in their mapping's
# [memory_start, memory_limit).  Hex compared as 16-digit strings (awk
# numbers are doubles).
raw_addr_check() {
	awk 'function pad(h) { h = substr(h, 3); while (length(h) < 16) h = "0" h; return h }
	     /^Locations/ { s = "l"; next } /^Mappings/ { s = "m"; next }
	     s == "l" && $1 ~ /^[0-9]+:$/ && $2 ~ /^0x/ && $3 ~ /^M=/ && $2 != "0x0" {
		n++; a[n] = pad($2); m[n] = substr($3, 3); if (a[n] < "0000800000000000") u++ }
	     s == "m" && $1 ~ /^[0-9]+:$/ { split($2, r, "/"); k = $1; sub(/:/, "", k)
		lo[k] = pad(r[1]); hi[k] = pad(r[2]) }
	     END { for (i = 1; i <= n; i++)
			if (!(a[i] >= lo[m[i]] && (hi[m[i]] == pad("0x0") || a[i] < hi[m[i]]))) bad++
		   printf "%d %d %d\n", n, u, bad }' "$1"
}
