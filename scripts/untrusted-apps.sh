#!/usr/bin/env bash
# untrusted-apps.sh measures which common X programs work as untrusted X clients — the way
# cua-host launches programs on a display shared with a person — and prints a Markdown
# table (docs/security.md carries its output). It starts its own Xvfb (with an
# authorization cookie) and openbox, makes an untrusted authorization with `xauth generate
# … untrusted` (the SECURITY extension, independent of cua-host's code), and runs each
# program once trusted and once untrusted. A program that is not installed is reported as
# such. Every check is observed, never assumed:
#   window   — a visible top-level window of the program's class appears within 8 s
#   typing   — after `xdotool type` by a trusted client, the program still runs
#   exit     — the program's exit status (0 = it did its job)
#   scripts/untrusted-apps.sh
set -uo pipefail
for p in Xvfb openbox xauth xdotool mcookie; do
	command -v "$p" >/dev/null || { echo "untrusted-apps.sh: $p is not installed (run scripts/setup.sh)" >&2; exit 2; }
done
work=$(mktemp -d /tmp/cua-untrusted-XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
export XAUTHORITY="$work/trusted.xauth"
touch "$XAUTHORITY"
n=70
while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
export DISPLAY=":$n"
xauth -q add "$DISPLAY" . "$(mcookie)"
Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp -auth "$XAUTHORITY" -noreset >"$work/xvfb.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.05; done
openbox >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q window && break; sleep 0.05; done
untrusted="$work/untrusted.xauth"
touch "$untrusted"
xauth -q -f "$untrusted" generate "$DISPLAY" . untrusted timeout 600 || { echo "untrusted-apps.sh: xauth generate failed (no SECURITY extension?)" >&2; exit 1; }
# A trusted window to aim at.
xterm -title trusted-target -e sleep 600 >/dev/null 2>&1 &
pids+=($!)
target=""
for _ in $(seq 100); do target=$(xdotool search --name '^trusted-target$' 2>/dev/null | head -1); [ -n "$target" ] && break; sleep 0.1; done
[ -n "$target" ] || { echo "untrusted-apps.sh: the trusted xterm never showed its window" >&2; exit 1; }

# gui NAME CLASS CMD...: does the program show a window (of WM_CLASS CLASS, or of title
# NAME when CLASS is "-"), and survive being typed into?
gui() {
	local name=$1 class=$2; shift 2
	local search=(--class "$class")
	[ "$class" = - ] && search=(--name "^$name\$")
	command -v "$1" >/dev/null || { printf '| %s | not installed | | |\n' "$name"; return; }
	local res=()
	for auth in "$XAUTHORITY" "$untrusted"; do
		XAUTHORITY="$auth" "$@" >"$work/$name.out" 2>&1 &
		local pid=$!
		local w
		w=""
		for _ in $(seq 80); do w=$(xdotool search --onlyvisible "${search[@]}" 2>/dev/null | head -1); [ -n "$w" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if [ -z "$w" ]; then
			if kill -0 "$pid" 2>/dev/null; then res+=("no window"); else wait "$pid"; res+=("exits $? without a window: $(grep -m1 -o 'X Error[^(]*\|[A-Za-z]*Error[^:]*\|cannot[^.]*' "$work/$name.out" | head -1)"); fi
		else
			xdotool windowactivate --sync "$w" >/dev/null 2>&1
			xdotool type --delay 5 "abc" >/dev/null 2>&1
			sleep 0.5
			if kill -0 "$pid" 2>/dev/null; then res+=("works"); else res+=("dies on input: $(grep -m1 -o 'X Error[^(]*\|BadAccess\|BadWindow' "$work/$name.out" | head -1)"); fi
		fi
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		for _ in $(seq 50); do xdotool search --onlyvisible "${search[@]}" >/dev/null 2>&1 || break; sleep 0.1; done
	done
	printf '| `%s` | %s | %s |\n' "$*" "${res[0]}" "${res[1]}"
}

# cli NAME CMD...: the exit status of a command-line client, trusted and untrusted.
cli() {
	local what=$1; shift
	command -v "$1" >/dev/null || { printf '| %s | not installed | |\n' "$*"; return; }
	local res=()
	for auth in "$XAUTHORITY" "$untrusted"; do
		XAUTHORITY="$auth" timeout 10 "$@" >"$work/cli.out" 2>&1 </dev/null
		local rc=$?
		if [ "$rc" = 0 ]; then res+=("works (exit 0)"); else res+=("fails (exit $rc$(grep -m1 -o 'BadAccess\|XTEST extension unavailable\|Segmentation\|unable to open display\|X Error' "$work/cli.out" | head -1 | sed 's/^/: /'))"); fi
	done
	local cmd="$*"
	printf '| %s: `%s` | %s | %s |\n' "$what" "${cmd//|/\\|}" "${res[0]}" "${res[1]}"
}

# xterm_select: xterm shows a line; a trusted client selects it (a triple-click), then asks
# for PRIMARY. Does xterm survive each? (xterm ends at its first X error.)
xterm_select() {
	command -v xterm >/dev/null || { printf '| select a line in `xterm` | not installed | |\n'; return; }
	local res=()
	for auth in "$XAUTHORITY" "$untrusted"; do
		XAUTHORITY="$auth" xterm -class CuaSelect -e sh -c 'echo a-line; exec sleep 600' >"$work/select.out" 2>&1 &
		local pid=$! w="" r="works"
		for _ in $(seq 80); do w=$(xdotool search --onlyvisible --class CuaSelect 2>/dev/null | head -1); [ -n "$w" ] && break; sleep 0.1; done
		sleep 0.3
		xdotool mousemove --window "$w" 30 8 click --repeat 3 --delay 80 1 >/dev/null 2>&1
		sleep 0.5
		if ! kill -0 "$pid" 2>/dev/null; then
			r="dies on the selection: $(grep -m1 -o 'BadAccess\|X_[A-Za-z]*' "$work/select.out" | head -1) $(grep -m1 -o 'X_[A-Za-z]*' "$work/select.out" | head -1)"
		else
			timeout 2 xclip -o -selection primary >/dev/null 2>&1
			sleep 0.5
			kill -0 "$pid" 2>/dev/null || r="dies when PRIMARY is asked for: $(grep -m1 -o 'BadAccess' "$work/select.out") $(grep -m1 -o 'X_[A-Za-z]*' "$work/select.out" | head -1)"
		fi
		res+=("$r")
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	done
	printf '| select a line in `xterm` (a triple-click), then a trusted client reads PRIMARY | %s | %s |\n' "${res[0]}" "${res[1]}"
}

echo "Measured $(date -u +%Y-%m-%d) on Xvfb $(dpkg-query -W -f '${Version}' xvfb 2>/dev/null || echo '(version unknown)'), openbox; untrusted = \`xauth generate … untrusted\`."
echo
echo "| program | trusted | untrusted |"
echo "|---|---|---|"
gui xterm CuaProbe xterm -class CuaProbe
gui zenity Zenity zenity --info --text untrusted-test
gui "Event Tester" - xev
gui xeyes XEyes xeyes
gui xclock XClock xclock
gui xmessage Xmessage xmessage untrusted-test
xterm_select
cli "list extensions" sh -c 'xdpyinfo -queryExtensions | grep -q XTEST'
cli "XTEST input" xdotool type hello
cli "image of a trusted window" xwd -silent -id "$target" -out /dev/null
cli "image of the root window" xwd -silent -root -out /dev/null
cli "properties of a trusted window" xprop -id "$target" WM_NAME
cli "change a trusted window's property" xprop -id "$target" -f WM_NAME 8s -set WM_NAME pwned
echo secret-from-trusted | xclip -selection clipboard -i
cli "read a trusted client's clipboard" sh -c 'xclip -selection clipboard -o | grep -q secret-from-trusted'
cli "own the clipboard (xclip -i), read back by a trusted client" sh -c 'echo from-untrusted | xclip -selection clipboard -i -loops 1 & sleep 0.5; XAUTHORITY=$0 timeout 2 xclip -selection clipboard -o | grep -q from-untrusted; r=$?; kill %1 2>/dev/null; exit $r' "$XAUTHORITY"
