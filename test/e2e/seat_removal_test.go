package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPersonsAppsOutliveTheSessionsDevices: every `cua-host call` gives its session input
// devices of its own and removes them when the call ends. A GTK program that saw those
// devices asks the server about them while it handles their last events (GTK 3 queries a
// motion hint's pointer, GTK 4 sets a cursor per device), and GTK exits on the BadDevice
// error a removed device brings. The person's editors get background keys, clicks and
// scrolls from one call after another; witnesses: the editor's process is alive and
// xdotool still finds its window after every call.
func TestPersonsAppsOutliveTheSessionsDevices(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool")
	apps := []struct {
		name string
		argv func(file string) []string
	}{
		{"gnome-text-editor", func(f string) []string { return []string{"gnome-text-editor", "--standalone", f} }},
		{"mousepad", func(f string) []string { return []string{"mousepad", f} }},
	}
	ran := 0
	for _, app := range apps {
		if _, err := exec.LookPath(app.name); err != nil {
			t.Logf("%s is not installed: not tried", app.name)
			continue
		}
		ran++
		t.Run(app.name, func(t *testing.T) {
			desk := startCompatDesk(t, compatWMs()[0])
			file := filepath.Join(desk.home, "outlive-note.txt")
			lines := make([]string, 30)
			for i := range lines {
				lines[i] = fmt.Sprintf("line %02d", i+1)
			}
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			appLog := filepath.Join(desk.home, app.name+".log")
			cmd := desk.spawn(appLog, app.argv(file)...)
			var win string
			if !waitFor(20*time.Second, func() bool { win = desk.search("outlive-note"); return win != "" }) {
				b, _ := os.ReadFile(appLog)
				t.Fatalf("%s never showed its window:\n%s", app.name, truncateBytes(b, 2000))
			}
			pidText, err := desk.run("xdotool", "getwindowpid", win)
			if err != nil {
				t.Fatalf("xdotool getwindowpid %s: %v %s", win, err, pidText)
			}
			desk.restore()
			var pid int
			fmt.Sscan(pidText, &pid)
			alive := func(after string) {
				t.Helper()
				_, werr := desk.run("xdotool", "getwindowname", win)
				if syscall.Kill(pid, 0) != nil || werr != nil || cmd.ProcessState != nil {
					b, _ := os.ReadFile(appLog)
					t.Fatalf("%s (pid %d) is gone after %s; its output:\n%s", app.name, pid, after, truncateBytes(b, 2000))
				}
			}
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"type_text", map[string]any{"text": "typed\n"}},
				{"click", map[string]any{"x": 200, "y": 150}},
				{"scroll", map[string]any{"x": 200, "y": 200, "direction": "down", "amount": 2}},
				{"click", map[string]any{"x": 120, "y": 220}},
				{"type_text", map[string]any{"text": "more\n"}},
				{"scroll", map[string]any{"x": 250, "y": 180, "direction": "up", "amount": 1}},
			}
			for i, c := range calls {
				c.args["pid"] = pid
				c.args["window_id"] = json.Number(win)
				args, _ := json.Marshal(c.args)
				call := exec.Command(cuaHost, "call", "--display", desk.d.Name(), "--mode", "unrestricted",
					"--dangerously-bypass-approvals", c.tool, string(args))
				call.Env = desk.env()
				out, err := call.CombinedOutput()
				if err != nil {
					t.Fatalf("cua-host call %s: %v\n%s", c.tool, err, out)
				}
				// The devices are removed as the call ends; a GTK program that fails on
				// them does so within a few hundred milliseconds.
				time.Sleep(300 * time.Millisecond)
				alive(fmt.Sprintf("call %d (%s)", i+1, c.tool))
			}
			time.Sleep(time.Second)
			alive("the last call")
		})
	}
	if ran == 0 {
		t.Skip("neither gnome-text-editor nor mousepad is installed")
	}
}
