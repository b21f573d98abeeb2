package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

// mixedText returns n characters of ASCII punctuation, letters and digits mixed with
// Latin-1, Greek, Cyrillic and symbols the keymap lacks (typed through remapped keycodes).
func mixedText(n int) string {
	const pool = "aZ9 ,.;'[]=-/`~!@#$%^&*()_+{}|:\"<>?éüßñçøåΩπλжЯ€→✓"
	rs := []rune(pool)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[(i*7)%len(rs)]
	}
	return string(out)
}

// TestBackgroundDeliverySharesTheDesktop: on a display shared with a person — their
// terminal focused, their pointer parked — an agent in the default mode launches its own
// terminal and a zenity entry, clicks them, types 200 mixed characters and presses 100
// keys through `cua-host run`, while the person types into their own terminal between the
// agent's actions. Oracles: the files the terminals and zenity write, xdotool for the core
// pointer and the core keyboard focus, which never move, and `xinput test-xi2` for the
// device every key and click came from.
func TestBackgroundDeliverySharesTheDesktop(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool", "zenity", "xinput")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatalf("start display: %v", err)
	}
	defer d.Close()
	home := t.TempDir()
	dir := t.TempDir()
	xenv := append(os.Environ(), d.Env()...)
	xdo := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("xdotool", args...)
		cmd.Env = xenv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("xdotool %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	// The person's terminal, focused, and their pointer parked in a corner of it.
	personFile := filepath.Join(dir, "person.txt")
	_, personWin := catTerminal(t, xenv, "person-terminal", "60x10+700+450", personFile)
	xdo("windowactivate", "--sync", personWin)
	xdo("mousemove", "--sync", "1270", "790")
	wantLoc, wantFocus := "x:1270 y:790", personWin
	personTyped := ""
	personTypes := func(s string) {
		t.Helper()
		xdo("type", "--delay", "0", s)
		personTyped += s
	}
	untouched := func(when string) {
		t.Helper()
		if loc := xdo("getmouselocation"); !strings.HasPrefix(loc, wantLoc+" ") {
			t.Fatalf("%s: the person's pointer is at %q, want %s", when, loc, wantLoc)
		}
		if f := xdo("getwindowfocus"); f != wantFocus {
			t.Fatalf("%s: the person's keyboard focus is on %s, want their terminal %s", when, f, wantFocus)
		}
	}
	untouched("before the agent starts")

	// The server's own account of who typed and clicked: xinput logs the raw events of every
	// device on the root window, with the device that sent them.
	rawLog := filepath.Join(dir, "xi2.log")
	raw := exec.Command("stdbuf", "-oL", "xinput", "test-xi2", "--root")
	raw.Env = xenv
	rawOut, err := os.Create(rawLog)
	if err != nil {
		t.Fatal(err)
	}
	defer rawOut.Close()
	raw.Stdout = rawOut
	if err := raw.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { raw.Process.Kill(); raw.Wait() }()
	time.Sleep(200 * time.Millisecond) // it has selected the events

	// The agent: `cua-host run` on the person's display, default mode, default delivery.
	// zenity is a desktop application the person's system declares.
	entryFile := filepath.Join(dir, "entry.txt")
	apps := filepath.Join(home, ".local", "share", "applications")
	if err := os.MkdirAll(apps, 0o755); err != nil {
		t.Fatal(err)
	}
	termFile := filepath.Join(dir, "agent.txt")
	declare := func(id, exec string) {
		t.Helper()
		entry := "[Desktop Entry]\nType=Application\nName=" + id + "\nExec=" + exec + "\n"
		if err := os.WriteFile(filepath.Join(apps, id+".desktop"), []byte(entry), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	declare("cua-agent-terminal", "xterm -u8 -title agent-terminal -geometry 80x20+20+20 -e sh -c \"stty -echo; exec cat > "+termFile+"\"")
	declare("cua-agent-entry", "sh -c \"exec zenity --entry --title agent-entry --text Value > "+entryFile+"\"")
	rp := startRunEnv(t, append(d.Env(), "HOME="+home, "LANG=C.UTF-8"), "--display", d.Name(), "--consent", "deny", "--indicator=false")
	untouched("after the agent started")

	_, term := rp.mustCall(t, "launch_app", map[string]any{"name": "cua-agent-terminal"})
	termPID, termWin := number(term, "pid"), firstWindow(t, term)
	_, zen := rp.mustCall(t, "launch_app", map[string]any{"name": "cua-agent-entry"})
	zenPID, zenWin := number(zen, "pid"), firstWindow(t, zen)
	time.Sleep(500 * time.Millisecond) // the terminal's shell starts cat, zenity draws
	untouched("after the agent launched its applications")
	personTypes("p1")

	target := func(pid int, win uint32, extra map[string]any) map[string]any {
		out := map[string]any{"pid": pid, "window_id": win}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	background := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, contract := rp.mustCall(t, name, args)
		st := detailsOf(res)
		if st["delivery"] != "background" || st["route"] != "xinput2" {
			t.Fatalf("%s delivered %v through %v, want background through xinput2: %v", name, st["delivery"], st["route"], st)
		}
		if dl, _ := contract["delivery"].(map[string]any); dl["mode"] != "background" || contract["route"] != "global_input" {
			t.Fatalf("%s: structuredContent %v, want delivery mode background, route global_input", name, contract)
		}
		return st
	}

	// Click into the agent's terminal and type 200 mixed characters, then Return.
	background("click", target(termPID, termWin, map[string]any{"x": 100, "y": 60}))
	untouched("after a click in the agent's terminal")
	personTypes("p2")
	text := mixedText(200)
	st := background("type_text", target(termPID, termWin, map[string]any{"text": text}))
	untouched("after typing 200 characters")
	if ev, _ := st["evidence"].(map[string]any); ev == nil || ev["devices"] == nil {
		t.Errorf("type_text evidence does not name the session's devices: %v", st)
	}
	personTypes("p3")

	// Click into zenity's entry (its text field lies below the label) and type into it;
	// press 100 keys in the terminal, the person typing between runs of 25. (A GTK entry
	// under heavy load has been seen to move its caret between single key presses; the
	// terminal, whose tty keeps order, is the exact oracle for the 100 presses.)
	background("click", target(zenPID, zenWin, map[string]any{"x": 60, "y": 60}))
	zenText := "entry ✓ Ωmega"
	background("type_text", target(zenPID, zenWin, map[string]any{"text": zenText}))
	untouched("after typing into the entry")
	var termKeys strings.Builder
	for i := range 100 {
		k := string(rune('a' + i%26))
		background("press_key", target(termPID, termWin, map[string]any{"key": k}))
		termKeys.WriteString(k)
		if i%25 == 24 {
			untouched(fmt.Sprintf("after %d keys", i+1))
			personTypes(fmt.Sprintf("q%d", i))
		}
	}
	background("press_key", target(termPID, termWin, map[string]any{"key": "Return"}))
	untouched("after the last key into the terminal")
	personTypes("\n")
	background("press_key", target(zenPID, zenWin, map[string]any{"key": "Return"}))

	waitContent(t, termFile, text+termKeys.String()+"\n")
	waitContent(t, entryFile, zenText+"\n")
	waitContent(t, personFile, personTyped)
	// zenity has closed: the window manager may move the focus when it does, and the
	// worker gives it back (within three seconds of the session's last keys into it).
	if !waitFor(3*time.Second, func() bool { return xdo("getwindowfocus") == wantFocus }) {
		untouched("after zenity closed")
	}
	untouched("at the end")

	// The session's devices exist while it runs and are gone once it ended.
	if list := xinputList(t, xenv); !strings.Contains(list, "cua-host mcp (pid ") {
		t.Errorf("no input devices of the session are listed while it runs:\n%s", list)
	}
	// Every agent key and click came from the session's devices; the person's keys from the
	// core keyboard, and no click from the core pointer.
	seatPtr, seatKbd := seatIDs(t, xenv)
	time.Sleep(200 * time.Millisecond)
	counts := rawCounts(t, rawLog)
	agentKeys := len([]rune(text)) + len([]rune(zenText)) + 100 + 2
	if n := counts[[2]string{"RawKeyPress", seatKbd}]; n < agentKeys {
		t.Errorf("the session's keyboard (%s) sent %d raw key presses, want at least %d (%v)", seatKbd, n, agentKeys, counts)
	}
	if n := counts[[2]string{"RawButtonPress", seatPtr}]; n != 2 {
		t.Errorf("the session's pointer (%s) sent %d raw button presses, want the 2 clicks (%v)", seatPtr, n, counts)
	}
	if n := counts[[2]string{"RawButtonPress", "2"}]; n != 0 {
		t.Errorf("the core pointer sent %d raw button presses, want none (%v)", n, counts)
	}
	if n, want := counts[[2]string{"RawKeyPress", "3"}], len(personTyped); n != want {
		t.Errorf("the core keyboard sent %d raw key presses, want the person's %d (%v)", n, want, counts)
	}
	rp.mustCall(t, "end_session", nil)
	if !waitFor(5*time.Second, func() bool { return !strings.Contains(xinputList(t, xenv), "cua-host ") }) {
		t.Errorf("input devices of the ended session are still listed:\n%s", xinputList(t, xenv))
	}
}

// firstWindow reads launch_app's first window id.
func firstWindow(t testing.TB, st map[string]any) uint32 {
	t.Helper()
	ids, _ := st["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app reported no window: %v", st)
	}
	f, _ := ids[0].(float64)
	return uint32(f)
}

// waitContent waits until file holds want.
func waitContent(t testing.TB, file, want string) {
	t.Helper()
	var got []byte
	if !waitFor(10*time.Second, func() bool {
		got, _ = os.ReadFile(file)
		return string(got) == want
	}) {
		t.Errorf("%s holds %q, want %q", filepath.Base(file), got, want)
	}
}

// xinputList is the server's list of input devices (xinput list --name-only).
func xinputList(t testing.TB, env []string) string {
	t.Helper()
	cmd := exec.Command("xinput", "list", "--name-only")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("xinput list: %v: %s", err, out)
	}
	return string(out)
}

// seatIDs returns the XInput ids of the session's master pointer and keyboard, from
// `xinput list`.
func seatIDs(t testing.TB, env []string) (pointer, keyboard string) {
	t.Helper()
	for _, line := range strings.Split(xinputListFull(t, env), "\n") {
		name, rest, ok := strings.Cut(strings.TrimLeft(line, "⎡⎜⎣↳ \t"), "\tid=")
		if !ok || !strings.HasPrefix(name, "cua-host mcp (pid ") {
			continue
		}
		id, _, _ := strings.Cut(rest, "\t")
		switch {
		case strings.HasSuffix(strings.TrimSpace(name), ") pointer"):
			pointer = id
		case strings.HasSuffix(strings.TrimSpace(name), ") keyboard"):
			keyboard = id
		}
	}
	if pointer == "" || keyboard == "" {
		t.Fatalf("the session's devices are not in xinput list:\n%s", xinputListFull(t, env))
	}
	return pointer, keyboard
}

func xinputListFull(t testing.TB, env []string) string {
	t.Helper()
	cmd := exec.Command("xinput", "list", "--short")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("xinput list: %v: %s", err, out)
	}
	return string(out)
}

// rawCounts counts `xinput test-xi2` events by type name and master device id.
func rawCounts(t testing.TB, path string) map[[2]string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[[2]string]int{}
	typ := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "EVENT type "); ok {
			if i, j := strings.Index(rest, "("), strings.Index(rest, ")"); i >= 0 && j > i {
				typ = rest[i+1 : j]
			}
			continue
		}
		if rest, ok := strings.CutPrefix(line, "device: "); ok && typ != "" {
			dev, _, _ := strings.Cut(rest, " ")
			counts[[2]string{typ, dev}]++
			typ = ""
		}
	}
	return counts
}

// catTerminal starts an xterm titled title at geometry (COLSxROWS+X+Y) on the display of
// env whose shell runs `cat > file` without echo, waits for its window and for cat to
// start, and returns its pid and window id (decimal, as xdotool writes it). It is stopped
// when the test ends.
func catTerminal(t testing.TB, env []string, title, geometry, file string) (pid int, win string) {
	t.Helper()
	term := exec.Command("xterm", "-title", title, "-geometry", geometry,
		"-e", "sh", "-c", "stty -echo; exec cat > "+file)
	term.Env = env
	if err := term.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Process.Kill(); term.Wait() })
	if !waitFor(10*time.Second, func() bool {
		cmd := exec.Command("xdotool", "search", "--name", "^"+title+"$")
		cmd.Env = env
		out, err := cmd.Output()
		win, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
		return err == nil && win != ""
	}) {
		t.Fatalf("the terminal %q never showed", title)
	}
	time.Sleep(300 * time.Millisecond) // its shell starts cat
	return term.Process.Pid, win
}
