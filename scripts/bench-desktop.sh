#!/usr/bin/env bash
# bench-desktop.sh compares the x11 backend with xdotool, ImageMagick's import and xwd on a
# private Xvfb + openbox display (started and stopped by the benchmark itself), one run,
# and prints medians and ratios. Needs scripts/setup.sh's programs.
set -euo pipefail
cd "$(dirname "$0")/.."
for p in Xvfb openbox xterm xdotool import xwd; do
  command -v "$p" >/dev/null || { echo "bench-desktop: $p is missing (run scripts/setup.sh)" >&2; exit 1; }
done
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/xevlog" ./test/xevlog
go build -o "$bin/benchdesktop" ./test/benchdesktop
"$bin/benchdesktop" -xevlog "$bin/xevlog" "$@"
echo "goals: background ≤ 2× foreground; background ≥ 10× faster than xdotool (ratio column: xdotool ÷ ours)"
