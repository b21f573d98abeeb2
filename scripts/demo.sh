#!/usr/bin/env bash
# demo.sh is the project's main job: on a private, throwaway X display it starts the host,
# a supervised worker and a session, launches a terminal, types a command into it, checks
# the file the command wrote, saves a screenshot, and revokes the session.
#   scripts/demo.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-$(mktemp -d /tmp/cua-demo-XXXXXX)}"
go run ./examples/embed -out "$out"
echo "output in $out"
