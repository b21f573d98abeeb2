#!/usr/bin/env bash
# setup.sh installs the programs cua-host's tests and demo need on a Debian/Ubuntu
# machine: a virtual X server, a window manager, bubblewrap (the sandbox of launched programs), a D-Bus session bus with AT-SPI, test
# applications and independent X oracles. Idempotent: apt-get runs only when a command is
# missing, and it warms the Go module cache.
set -euo pipefail

cd "$(dirname "$0")/.."

# command -> Debian package that provides it
declare -A want=(
  [Xvfb]=xvfb
  [Xephyr]=xserver-xephyr
  [weston]=weston
  [Xwayland]=xwayland
  [openbox]=openbox
  [dbus-launch]=dbus-x11
  [dbus-daemon]=dbus
  [xterm]=xterm
  [zenity]=zenity
  [gnome-keyring-daemon]=gnome-keyring
  [secret-tool]=libsecret-tools
  [dbus-monitor]=dbus-bin
  [gtk3-demo-application]=gtk-3-examples
  [xdotool]=xdotool
  [xinput]=xinput
  [xwininfo]=x11-utils
  [xprop]=x11-utils
  [xdpyinfo]=x11-utils
  [xclip]=xclip
  [wmctrl]=wmctrl
  [xauth]=xauth
  [bwrap]=bubblewrap
  [xmodmap]=x11-xserver-utils
  [import]=imagemagick
  [xwd]=x11-apps
  [npx]=npm
  [node]=nodejs
  [gtk3-demo-application]=gtk-3-examples
  [chromium-headless-shell]=chromium-headless-shell
  # The agent's own apps on a nested display (test/e2e TestNestedApps): a GTK4 editor and
  # a full browser (large, but the only way to show a web page takes the agent's keys).
  [gnome-text-editor]=gnome-text-editor
  [chromium]=chromium
  # test/e2e TestCompat's default subset: a Qt5 editor and a click-to-focus window manager.
  [featherpad]=featherpad
  [fluxbox]=fluxbox
)
# files (not commands) -> package
declare -A wantfile=(
  [/usr/libexec/at-spi-bus-launcher]=at-spi2-core
  [/usr/libexec/at-spi2-registryd]=at-spi2-core
  [/usr/bin/python3]=python3-minimal
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
  echo "setup: installing ${pkgs[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${pkgs[@]}" libatk-bridge2.0-0 >/dev/null
else
  echo "setup: all system packages present" >&2
fi

if command -v go >/dev/null 2>&1; then
  go mod download
else
  echo "setup: go is not installed (need Go 1.26+)" >&2
  exit 1
fi
