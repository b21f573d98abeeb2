package authze2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// TestSandboxedAppsRun: the desktop applications the tests' machine has start inside the
// sandbox and show their window, on the session's private display (trusted clients) and on
// a display shared with a person (untrusted ones); a terminal's shell inside it writes a
// file where it is told to. Witnesses: xwininfo on the window launch_app names, xdotool's
// view of the window's pid, and the file the shell wrote.
func TestSandboxedAppsRun(t *testing.T) {
	requireDesktop(t)
	needPrograms(t, "xterm", "xwininfo")
	apps := []struct {
		name string
		argv []string
	}{
		{"xterm", []string{"xterm", "-title", "sandboxed-xterm"}},
		{"zenity", []string{"zenity", "--info", "--text", "sandboxed"}},
		{"gtk3-demo-application", []string{"gtk3-demo-application"}},
	}
	for _, display := range []struct {
		name    string
		private bool
	}{{"private", true}, {"shared", false}} {
		t.Run(display.name, func(t *testing.T) {
			h := startHostOn(t, host.Options{}, display.private)
			s := session(t, h, host.SessionSpec{Label: "apps-" + display.name, Mode: authz.Standard})
			for _, a := range apps {
				path, err := exec.LookPath(a.argv[0])
				if err != nil {
					t.Logf("%s: not installed", a.name)
					continue
				}
				argv := append([]string{path}, a.argv[1:]...)
				// The terminal's shell says when it is ready to read what is typed (a shell
				// reading start-up files drops or delays early keys).
				ready := filepath.Join(t.TempDir(), "ready")
				if a.name == "xterm" {
					argv = append(argv, "-e", "/bin/sh", "-c", "touch "+ready+"; exec /bin/sh")
				}
				res := call(t, s, "launch_app", map[string]any{"name": declareApp(t, display.name+"-"+a.name, argv, ""), "timeout_ms": 15000})
				if !check(t, "launch_app "+a.name, res, "") {
					continue
				}
				l := launchResult(t, res)
				if !l.Sandboxed || len(l.WindowIDs) == 0 {
					t.Errorf("%s: launch_app = %+v, want a sandboxed program with a window", a.name, l)
					continue
				}
				out, err := exec.Command("xwininfo", "-id", fmt.Sprint(l.WindowIDs[0])).Output()
				if err != nil || !strings.Contains(string(out), "IsViewable") {
					t.Errorf("%s: xwininfo of window 0x%x: %v\n%s", a.name, l.WindowIDs[0], err, out)
				}
				t.Cleanup(func() { syscall.Kill(l.PID, syscall.SIGKILL) })
				if a.name != "xterm" {
					continue
				}
				// The terminal's shell runs, inside the sandbox, and writes where told.
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					if _, err := os.Stat(ready); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: the shell never started", a.name)
					}
				}
				file := filepath.Join(t.TempDir(), "from-the-shell")
				check(t, "type into xterm", call(t, s, "type_text", map[string]any{"pid": l.PID, "window_id": l.WindowIDs[0],
					"text": "echo sandboxed-shell > " + file + "\n"}), "")
				deadline := time.Now().Add(10 * time.Second)
				for {
					b, err := os.ReadFile(file)
					if err == nil && strings.TrimSpace(string(b)) == "sandboxed-shell" {
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("%s: the shell wrote %q, %v", a.name, b, err)
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
}

// TestLaunchedProgramsAskForAccessibility: a launched program's environment turns Qt's
// accessibility on (Qt joins the accessibility bus only when told to), so the element
// tools reach its widgets. Witness: the environment the program wrote to a file.
func TestLaunchedProgramsAskForAccessibility(t *testing.T) {
	requireDesktop(t)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "accessible-env", Mode: authz.Standard})
	out := filepath.Join(t.TempDir(), "env")
	id := declareApp(t, "env-writer", []string{"/bin/sh", "-c", "env > " + out}, "")
	if !check(t, "launch_app env-writer", call(t, s, "launch_app", map[string]any{"name": id, "timeout_ms": 0}), "") {
		t.FailNow()
	}
	var env []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(out); err == nil && len(b) > 0 {
			env = b
			break
		}
	}
	for _, want := range []string{"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "QT_ACCESSIBILITY=1"} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("the launched program's environment lacks %s:\n%s", want, env)
		}
	}
}
