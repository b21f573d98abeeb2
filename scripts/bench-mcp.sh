#!/usr/bin/env bash
# bench-mcp.sh measures cua-host's MCP surface end to end: tools/call round trips through
# the whole stack (go-sdk client → stdio → `cua-host run`'s MCP proxy → session channel →
# worker → X server → back) for get_cursor_position and click, p50 and p99, and the
# payload of a 1920×1080 screenshot capped at 1280 pixels, on a private Xvfb display.
#
#   scripts/bench-mcp.sh             2000 calls per round-trip figure
#   N=10000 scripts/bench-mcp.sh     more calls
#
# Goal: get_cursor_position p50 ≤ 1 ms.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-2000}"
SHOTS="${SHOTS:-50}"
for cmd in Xvfb openbox dbus-daemon xterm; do
  command -v "$cmd" >/dev/null || { echo "bench-mcp: $cmd is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
go test ./test/e2e -run '^$' -count 1 -timeout 10m -benchtime "${N}x" \
  -bench 'BenchmarkMCP/(get_cursor_position|click)$'
go test ./test/e2e -run '^$' -count 1 -timeout 10m -benchtime "${SHOTS}x" \
  -bench 'BenchmarkMCP/get_desktop_state'
