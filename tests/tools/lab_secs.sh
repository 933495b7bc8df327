# shellcheck shell=bash
# lab_secs.sh - sourced by tests/t80-labs.sh and tests/labs-loaded: how
# long each lab captures when tested.  lab_secs NN SHORT LONG prints SHORT,
# or LONG for the labs whose doctored answers t80 refuses (they need more
# samples to tell a right answer from a wrong one), 2 x LONG for lab 05.
lab_secs() {
	case $1 in
	03 | 04 | 06 | 07 | 08 | 11 | 12) echo "$3" ;;
	05) echo $((2 * $3)) ;;
	*) echo "$2" ;;
	esac
}
