#!/usr/bin/env bash
# demo.sh is the project's main job: the whole stack on a private, throwaway X display. An
# MCP client (examples/agent-demo, written with the go-sdk) starts `cua-host run --display
# private` — host, supervised worker, MCP proxy — lists the tools, launches xterm, types a
# command into it, presses Return, checks the file the command wrote, saves a screenshot of
# the display and ends the session; `cua-host run` then tears down the worker, the display
# and the terminal.
#   scripts/demo.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-$(mktemp -d /tmp/cua-demo-XXXXXX)}"
go run ./examples/agent-demo -out "$out"
