#!/usr/bin/env bash
# Lab 18, doctored: half of log_line's samples given to a function the
# program does not have (a made-up answer).
awk '/;log_line \(/ { h = int($NF / 2); x = $0; sub(/;log_line \(/, ";compress (", x); sub(/ [0-9]+$/, " " h, x)
	if (h) print x; $NF -= h } $NF > 0 { print }' after.folded >x && mv x after.folded
