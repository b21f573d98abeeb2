#!/usr/bin/env bash
# compat-fields.sh prints the field-by-field comparison of the reference contract's schemas
# with cua-host's tools/list (test/conformance/compat-fields.mjs), as Markdown: the starting
# point of docs/compatibility.md's tables. Needs Go, node/npm and the display programs of
# scripts/setup.sh.
#
#   scripts/compat-fields.sh > /tmp/fields.md
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/cua-host" ./cmd/cua-host
cp test/conformance/package.json test/conformance/package-lock.json test/conformance/compat-fields.mjs "$work/"
mkdir -p "$work/testdata" && cp -r test/conformance/testdata/cua-driver-contract "$work/testdata/"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/cua-host/npm"
(cd "$work" && npm ci --prefer-offline --no-audit --no-fund --ignore-scripts --cache "$cache" >/dev/null)
(cd "$work" && node compat-fields.mjs --bin "$work/cua-host")
