#!/usr/bin/env bash
# tests/tools/docs-flame-png.sh - remake docs/flame.png, the README's
# picture: a real capture of the bundled demo (make flame, root and
# bpftrace needed) rendered by the browser test's driver
# (tests/browser/svg_test.mjs: Debian's chromium, headless), hovering the
# hottest function as a user would.
set -eu
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stackfold-docpng.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ ! -f "$TOP/tests/browser/node_modules/playwright-core/package.json" ]; then
	(cd "$TOP/tests/browser" && npm install --no-audit --no-fund >&2)
fi
make -C "$TOP" --no-print-directory flame SECONDS=5 OUT="$work/flame" >/dev/null
hot=$(awk '{ n = split($1, f, ";"); s[f[n]] += $NF } END { for (k in s) if (s[k] > m) { m = s[k]; h = k }; print h }' "$work/flame.folded")
cat >"$work/cfg.json" <<JSON
{"svg": "$work/flame.svg", "shot": "$work/flame.png", "width": 1200, "hover": "$hot", "search": []}
JSON
node "$TOP/tests/browser/svg_test.mjs" "$work/cfg.json" >&2
cp "$work/flame.png" "$TOP/docs/flame.png"
echo "docs/flame.png: $(file -b "$TOP/docs/flame.png")" >&2
