#!/usr/bin/env bash
# compat.sh measures cua-host's background input into real applications under real window
# managers on a display shared with a person (test/e2e TestCompat with CUA_COMPAT=full) and
# writes the matrix to docs/apps.md. Idempotent: apt-get runs only when a command is
# missing. It takes 15 to 20 minutes on a two-core machine.
set -euo pipefail

cd "$(dirname "$0")/.."

# command -> Debian package that provides it
declare -A want=(
  [Xvfb]=xvfb
  [dbus-daemon]=dbus
  [xdotool]=xdotool
  [xprop]=x11-utils
  [xclip]=xclip
  [unzip]=unzip
  [openbox]=openbox
  [fluxbox]=fluxbox
  [xfwm4]=xfwm4
  [metacity]=metacity
  [mutter]=mutter
  [kwin_x11]=kwin-x11
  [i3]=i3-wm
  [xterm]=xterm
  [mousepad]=mousepad
  [gnome-text-editor]=gnome-text-editor
  [kwrite]=kwrite
  [featherpad]=featherpad
  [soffice]=libreoffice-writer
  [chromium]=chromium
  [firefox-esr]=firefox-esr
)
# files (not commands) -> package
declare -A wantfile=(
  [/usr/lib/libreoffice/program/scalc]=libreoffice-calc
)

missing=()
for cmd in "${!want[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${want[$cmd]}")
done
for f in "${!wantfile[@]}"; do
  [ -e "$f" ] || missing+=("${wantfile[$f]}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "compat: installing ${pkgs[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi

# The report and the test's log are kept (in CUA_COMPAT_OUT's directory) for a look at
# what arrived beyond the page's truncation.
report="${CUA_COMPAT_OUT:-$(mktemp -d)/compat.json}"
log="$(dirname "$report")/test.log"
# The test builds cua-host from the working tree as it is now.
commit="\`$(git rev-parse --short HEAD)\`"
if [ -n "$(git status --porcelain --untracked-files=no -- cmd host worker x11 internal mcpproxy policy authz client)" ]; then
  commit="$commit plus uncommitted changes"
fi
# The matrix records failures of cua-host as cells: a failing test still renders the page.
status=0
CUA_COMPAT=full CUA_COMPAT_OUT="$report" \
  go test -count=1 -timeout 90m -run 'TestCompat$' -v ./test/e2e >"$log" 2>&1 || status=$?
if [ ! -s "$report" ]; then
  tail -50 "$log" >&2
  echo "compat: the test wrote no report (go test exit $status)" >&2
  exit 1
fi
grep -E '^\s*(--- |compat_test.go:[0-9]+: [^ ]+ / )' "$log" >&2 || true
go run ./scripts/compatdoc -in "$report" -out docs/apps.md -commit "$commit"
echo "compat: wrote docs/apps.md from $report (go test exit $status)" >&2
