#!/usr/bin/env bash
# Lab 18, doctored: the --python capture given as the native one.
cp after.folded before.folded
cp after.raw before.raw
