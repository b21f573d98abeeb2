package desktop_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// TestTypeTextIntoGTK4IsReadBack: GTK 4 (up to 4.8) reports "showing" on its windows
// only, so a walk that took elements without it for hidden found nothing below the
// window, and typing into a GTK 4 editor stayed unverifiable. Background type_text into
// gnome-text-editor, the person's focus on another window, now reads the text back from
// the editor's focused text view: effect confirmed. Oracle outside cua-host: the file the
// editor saves on ctrl+s.
func TestTypeTextIntoGTK4IsReadBack(t *testing.T) {
	editor, err := exec.LookPath("gnome-text-editor")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gnome-text-editor is not installed (scripts/setup.sh installs it)")
		}
		t.Skip("gnome-text-editor is not installed")
	}
	reg, b, bus := a11ySetup(t, atspi.Options{})
	person := harness.StartXevlog(t, harness.XevlogOptions{Title: "person", Width: 200, Height: 100})
	home, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(editor, "--standalone", file)
	cmd.Env = append(bus.Env(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var win x11.Window
	for deadline := time.Now().Add(20 * time.Second); win.ID == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("gnome-text-editor showed no window within 20 s")
		}
		ws, err := b.Windows(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.PID == cmd.Process.Pid && strings.Contains(w.Title, "note") && w.Mapped {
				win = w
			}
		}
	}
	time.Sleep(time.Second) // it loads the file and draws
	harness.Command(t, "xdotool", "windowactivate", "--sync", fmt.Sprint(person.Window))

	sess := sharedSession("gtk4-readback")
	target := map[string]any{"pid": win.PID, "window_id": win.ID}
	const text = "Grüße, ✓ ok"
	r, err := callAs(t, reg, sess, "type_text", merge(target, map[string]any{"text": text}))
	if err != nil {
		t.Fatalf("type_text: %v", err)
	}
	if st := structured(t, r); st["effect"] != "confirmed" {
		t.Errorf("type_text's effect is %v, want confirmed; evidence %v", st["effect"], evidenceOf(t, r)["read_back"])
	}
	if _, err := callAs(t, reg, sess, "hotkey", merge(target, map[string]any{"keys": []string{"ctrl", "s"}})); err != nil {
		t.Fatalf("hotkey ctrl+s: %v", err)
	}
	var got string
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if got = string(b); strings.TrimSuffix(got, "\n") == text {
			break
		}
	}
	if strings.TrimSuffix(got, "\n") != text {
		t.Errorf("the saved file holds %q, want %q", got, text)
	}
}

// merge returns a copy of a with b's entries added.
func merge(a, b map[string]any) map[string]any {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}
