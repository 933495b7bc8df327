# shellcheck shell=bash
# shellcheck disable=SC2034 # OPTS_* are read by the scripts that source this
# opts.sh - sourced by scripts/profile, scripts/continuous and
# scripts/flame-range: command-line options parsed as getopt_long does,
# from one table per script, so every script takes bundled short options
# (-ad5, -p1234), long ones with or without '=' (--pid 1 / --pid=1) and a
# bad option gets one line.  getopt(1) would fork and cannot stop at a
# command's first word; this is bash only.
#
# OPTS_SPEC: one entry a line, "SHORT LONG KIND VAR [CONST]" ('-' for no
# short or no long form).  KIND is
#   flag     VAR=1                     value    VAR=ARG
#   const    VAR=CONST                 list     VAR appended with ','
#   count    VAR+=1                    noop     accepted, ignored
#   pass     OPTS_PASS+=(--LONG)       passval  OPTS_PASS+=(--LONG ARG)
#   refuse   an option of a tool this stands in for (perf) that is not
#            supported: "NAME: -X CONST" (the rest of the line: why), 1
# VAR is checked against OPTS_SPEC_OPT (which option set it, for
# messages): OPTS_SET[VAR] holds the option as the user wrote it.
#
# opts_parse NAME MODE ARGS...: parse ARGS against OPTS_SPEC.  MODE is
#   stop     the first operand ends the options: it and every word after
#            it are OPTS_REST (a command and its own arguments, as in
#            perf record ./bench -x)
#   permute  operands anywhere (OPTS_REST), options keep being parsed
# '--' always ends the options.  Returns 1 after one line on stderr,
# "NAME: unknown option '--x' (see --help)", for a bad option.

declare -gA OPTS_SET=()
OPTS_REST=()
OPTS_PASS=()

# opts_find KEY FORM: the entry whose SHORT (FORM s) or LONG (FORM l) is
# KEY, in OPTS_E_* (kind, var, const, long); 1 when there is none.
opts_find() {
	local s l k v c
	[ "$1" != - ] || return 1
	while read -r s l k v c; do
		[ -n "$s" ] || continue
		if { [ "$2" = s ] && [ "$s" = "$1" ]; } || { [ "$2" = l ] && [ "$l" = "$1" ]; }; then
			OPTS_E_KIND=$k OPTS_E_VAR=$v OPTS_E_CONST=$c OPTS_E_LONG=$l
			return 0
		fi
	done <<<"${OPTS_SPEC:-}"
	return 1
}

# opts_takes: does the entry found last take an argument?
opts_takes() { case $OPTS_E_KIND in value | list | passval) return 0 ;; esac; return 1; }

# opts_apply NAME SHOWN [ARG]: do what the entry found last says
opts_apply() {
	local cur
	OPTS_SET[$OPTS_E_VAR]=$2
	case $OPTS_E_KIND in
	flag) printf -v "$OPTS_E_VAR" 1 ;;
	const)
		cur=${!OPTS_E_VAR}
		if [ -n "$cur" ] && [ "$cur" != "$OPTS_E_CONST" ]; then
			echo "$1: $cur and $2 exclude each other (see --help)" >&2
			return 1
		fi
		printf -v "$OPTS_E_VAR" '%s' "$OPTS_E_CONST" ;;
	count) cur=${!OPTS_E_VAR:-0}; printf -v "$OPTS_E_VAR" '%d' $((cur + 1)) ;;
	value) printf -v "$OPTS_E_VAR" '%s' "$3" ;;
	list) cur=${!OPTS_E_VAR}; printf -v "$OPTS_E_VAR" '%s' "${cur:+$cur,}$3" ;;
	pass) OPTS_PASS+=("--$OPTS_E_LONG") ;;
	passval) OPTS_PASS+=("--$OPTS_E_LONG" "$3") ;;
	noop) ;;
	refuse) echo "$1: $2 $OPTS_E_CONST" >&2; return 1 ;;
	*) echo "$1: bad option table entry for '$2'" >&2; return 1 ;;
	esac
}

opts_parse() {
	local name=$1 mode=$2 a key val i ch rest
	shift 2
	OPTS_REST=() OPTS_PASS=()
	while [ $# -gt 0 ]; do
		a=$1
		shift
		case $a in
		--)
			OPTS_REST+=("$@")
			return 0 ;;
		--?*)
			key=${a#--} val=""
			[[ $key == *=* ]] && { val=${key#*=}; key=${key%%=*}; }
			if ! opts_find "$key" l || [ "$OPTS_E_LONG" = - ]; then
				echo "$name: unknown option '--$key' (see --help)" >&2
				return 1
			fi
			[ "$OPTS_E_KIND" != refuse ] || { opts_apply "$name" "--$key"; return 1; }
			if opts_takes; then
				if [[ $a != *=* ]]; then
					[ $# -gt 0 ] || { echo "$name: option '--$key' needs a value (see --help)" >&2; return 1; }
					val=$1
					shift
				fi
				opts_apply "$name" "--$key" "$val" || return 1
			else
				[[ $a != *=* ]] || { echo "$name: option '--$key' takes no value (see --help)" >&2; return 1; }
				opts_apply "$name" "--$key" || return 1
			fi ;;
		-?*)
			for ((i = 1; i < ${#a}; i++)); do
				ch=${a:i:1}
				if ! opts_find "$ch" s; then
					if [ "$i" = 1 ] && [ ${#a} -gt 2 ]; then
						echo "$name: unknown option '$a' (long options take two dashes: '-$a'; see --help)" >&2
					else
						echo "$name: unknown option '-$ch' (see --help)" >&2
					fi
					return 1
				fi
				if opts_takes; then
					rest=${a:i+1}
					if [ -z "$rest" ]; then
						[ $# -gt 0 ] || { echo "$name: option '-$ch' needs a value (see --help)" >&2; return 1; }
						rest=$1
						shift
					fi
					opts_apply "$name" "-$ch" "$rest" || return 1
					break
				fi
				opts_apply "$name" "-$ch" || return 1
			done ;;
		*)
			if [ "$mode" = stop ]; then
				OPTS_REST+=("$a" "$@")
				return 0
			fi
			OPTS_REST+=("$a") ;;
		esac
	done
	return 0
}

# opts_version NAME TOP: "NAME VERSION" from TOP/VERSION, and the bpftrace
# a capture would run (or that none is found)
opts_version() {
	local v="unknown" bt
	read -r v 2>/dev/null <"$2/VERSION"
	echo "$1 ${v:-unknown} (stackfold)"
	if bt=$(command -v bpftrace 2>/dev/null); then
		echo "bpftrace: $bt, $("$bt" --version 2>/dev/null | head -n 1)"
	else
		echo "bpftrace: not found in PATH (sudo apt-get install bpftrace)"
	fi
}

# opts_name DEFAULT sets OPTS_NAME, the name of a script for its usage
# line and hints: stackfold-NAME (NAME: DEFAULT's last part) when run
# through an installed link (a former name's too), else DEFAULT
# (scripts/NAME in the source tree)
opts_name() {
	case ${0##*/} in
	stackfold-*) OPTS_NAME=stackfold-${1##*/} ;;
	*) OPTS_NAME=$1 ;;
	esac
}

# opts_quote WORDS...: the words quoted for a shell, space separated
# (nothing for none), for --dry-run's settings
opts_quote() {
	local w sep=""
	for w in "$@"; do printf '%s%q' "$sep" "$w"; sep=" "; done
}
