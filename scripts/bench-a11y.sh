#!/usr/bin/env bash
# bench-a11y.sh measures get_window_state on real GTK windows (a zenity entry dialog and a
# zenity list) on a private Xvfb + openbox display with its own session and accessibility
# buses, started and stopped by the benchmark itself. It prints median walk and call
# times and what an agent receives (bytes and token estimates, with and without the
# screenshot). Flags go to the program: -n calls per measurement, -rows list rows.
set -euo pipefail
cd "$(dirname "$0")/.."
for p in Xvfb openbox dbus-daemon zenity; do
  command -v "$p" >/dev/null || { echo "bench-a11y: $p is missing (run scripts/setup.sh)" >&2; exit 1; }
done
[ -e /usr/libexec/at-spi-bus-launcher ] || { echo "bench-a11y: at-spi2-core is missing (run scripts/setup.sh)" >&2; exit 1; }
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/benchatspi" ./test/benchatspi
"$bin/benchatspi" "$@"
