package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

// TestTypeTextReadBack: on a display shared with a person, with an accessibility bus,
// type_text reads back the focused field. Into a GTK entry (a zenity dialog the person
// opened) the text arrives and the result says confirmed; the witness is what zenity
// prints on OK. Into a terminal, which has
// no accessible text, the effect stays unverifiable and the evidence says why; the
// witness is the file its cat writes.
func TestTypeTextReadBack(t *testing.T) {
	needDesktop(t)
	need(t, "zenity", "xdotool")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, SessionBus: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatalf("start display: %v", err)
	}
	defer d.Close()
	env := append(os.Environ(), d.Env()...)
	env = append(env, "NO_AT_BRIDGE=0", "GTK_A11Y=atspi")
	dir := t.TempDir()
	start := func(name string, args ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	xdo := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("xdotool", args...)
		cmd.Env = env
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	window := func(title string) int {
		t.Helper()
		var id string
		if !waitFor(15*time.Second, func() bool { id, _, _ = strings.Cut(xdo("search", "--name", "^"+title+"$"), "\n"); return id != "" }) {
			t.Fatalf("no window %q", title)
		}
		return atoi(id)
	}
	entryOut := filepath.Join(dir, "entry.txt")
	zen := start("sh", "-c", "exec zenity --entry --title readback-entry --text Value > "+entryOut)
	zenWin := window("readback-entry")
	termFile := filepath.Join(dir, "term.txt")
	termPID, termWin := catTerminal(t, env, "readback-term", "60x8+600+400", termFile)
	rp := startRunEnv(t, append(d.Env(), "HOME="+t.TempDir(), "LANG=C.UTF-8"), "--display", d.Name(),
		"--mode", "unrestricted", "--dangerously-bypass-approvals", "--indicator=false")

	// A GTK entry: confirmed from the read-back, and the dialog prints the text.
	want := "Grüße, Wörld ✓ 42"
	var res map[string]any
	if !waitFor(10*time.Second, func() bool {
		// The dialog reports its focused entry once its accessible tree is up.
		_, res = rp.mustCall(t, "type_text", map[string]any{"pid": zen.Process.Pid, "window_id": zenWin, "text": "x"})
		return res["effect"] == "confirmed"
	}) {
		t.Fatalf("type_text into the zenity entry never read back: %v", res)
	}
	rp.mustCall(t, "press_key", map[string]any{"pid": zen.Process.Pid, "window_id": zenWin, "key": "ctrl+a"})
	call, st := rp.mustCall(t, "type_text", map[string]any{"pid": zen.Process.Pid, "window_id": zenWin, "text": want})
	if st["effect"] != "confirmed" {
		t.Errorf("type_text into the entry: effect %v, want confirmed: %v", st["effect"], detailsOf(call))
	}
	rp.mustCall(t, "press_key", map[string]any{"pid": zen.Process.Pid, "window_id": zenWin, "key": "Return"})
	waitContent(t, entryOut, want+"\n")

	// A terminal has no accessible text: unverifiable, and the evidence says why.
	call, st = rp.mustCall(t, "type_text", map[string]any{"pid": termPID, "window_id": atoi(termWin), "text": "plain\n"})
	ev, _ := detailsOf(call)["evidence"].(map[string]any)
	if st["effect"] != "unverifiable" || !strings.HasPrefix(stringOf(ev["read_back"]), "not read: ") {
		t.Errorf("type_text into a terminal: effect %v, read_back %v; want unverifiable with why", st["effect"], ev["read_back"])
	}
	waitContent(t, termFile, "plain\n")
}

// stringOf is v as a string, "" when it is not one.
func stringOf(v any) string { s, _ := v.(string); return s }
