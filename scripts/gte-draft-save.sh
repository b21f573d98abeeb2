#!/usr/bin/env bash
# gte-draft-save.sh shows why GNOME's text editor (GTK 4) sometimes ignores a ctrl+s whose
# keys arrived (docs/apps.md, "Seen in other runs"): it disables its save action while it
# writes its draft copy, which it does a few seconds after a change. The script makes that
# write last 4 s (strace delays the editor's renames) and presses ctrl+s, through the core
# keyboard with xdotool, once before the draft write and once during it:
#
#   before the draft write: saved "ab"
#   during the draft write: not saved
#
# It runs on a private Xvfb with openbox and needs Xvfb, openbox, gnome-text-editor,
# xdotool, strace and dbus-run-session.
set -euo pipefail
for c in Xvfb openbox gnome-text-editor xdotool strace dbus-run-session; do
	command -v "$c" >/dev/null || { echo "gte-draft-save: $c is missing" >&2; exit 2; }
done
work=$(mktemp -d)
pids=() groups=()
cleanup() {
	cleanup_probe
	rm -rf "$work"
}
trap cleanup EXIT

# probe WAIT: type a, let the first draft be written, type b, wait WAIT seconds, press
# ctrl+s, and print what the file holds 9 s later.
probe() {
	local wait=$1 home display fd
	home=$(mktemp -d "$work/home.XXXX")
	mkfifo "$home/displayfd"
	exec {fd}<>"$home/displayfd"
	Xvfb -displayfd "$fd" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
	pids+=($!)
	read -r -t 10 -u "$fd" display
	exec {fd}>&-
	export DISPLAY=":$display" HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
		XDG_CACHE_HOME="$home/.cache" GDK_BACKEND=x11 GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1
	openbox >/dev/null 2>&1 &
	pids+=($!)
	: >"$home/note.txt"
	# A process group of its own: the session bus and the accessibility bus it starts
	# are stopped with the editor.
	setsid dbus-run-session -- strace -f -o /dev/null -e trace=rename,renameat,renameat2 \
		-e inject=rename,renameat,renameat2:delay_enter=4000000 \
		gnome-text-editor --standalone "$home/note.txt" >/dev/null 2>&1 &
	groups+=($!)
	local w=""
	for _ in $(seq 100); do
		w=$(xdotool search --name note.txt 2>/dev/null | head -1) && [ -n "$w" ] && break
		sleep 0.2
	done
	[ -n "$w" ] || { echo "gte-draft-save: the editor's window did not appear" >&2; exit 1; }
	sleep 2
	xdotool windowactivate --sync "$w"
	sleep 0.5
	xdotool type --delay 20 a
	sleep 5 # the first draft is written (a new file)
	xdotool type --delay 20 b
	sleep "$wait" # the next draft write starts about 3 s after the change
	xdotool key ctrl+s
	sleep 9
	printf '%-44s "%s"\n' "$2" "$(cat "$home/note.txt")"
	cleanup_probe
}

# cleanup_probe stops the processes of one probe.
cleanup_probe() {
	for g in "${groups[@]}"; do
		kill -- "-$g" 2>/dev/null || true
		# strace ends once the rename it delays returns.
		for _ in $(seq 50); do kill -0 -- "-$g" 2>/dev/null || break; sleep 0.2; done
	done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	pids=() groups=()
	sleep 0.5
}

probe 0.3 "ctrl+s 0.3 s after typing b:"
probe 3.6 "ctrl+s 3.6 s after typing b (drafting):"
