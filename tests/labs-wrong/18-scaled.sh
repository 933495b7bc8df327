#!/usr/bin/env bash
# Lab 18, doctored: after.folded's counts doubled (not the run's samples).
awk '{ $NF *= 2; print }' after.folded >x && mv x after.folded
