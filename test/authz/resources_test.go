package authze2e

import (
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

func zombie(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", fmt.Sprint(pid)).Output()
	return err != nil || len(out) == 0 || out[0] == 'Z'
}

func hasImage(res host.Result) bool {
	for _, c := range res.Content {
		if c.Type == "image" {
			return true
		}
	}
	return false
}

// TestResources covers the other resources per mode: whole-display and window observation,
// keyboard input, process termination, the clipboard, and the protected-UI invariant for
// desktop coordinates and the focused window.
func TestResources(t *testing.T) {
	requireDesktop(t)
	protected := startApp(t, appB, "protected-r")
	place(t, protected, 0, 0)
	foreign := startApp(t, appB, "foreign-r")
	place(t, foreign, 330, 0)
	userA := startApp(t, appA, "user-a") // the user's own copy of the app bounded sessions may launch
	place(t, userA, 660, 0)
	g := &grantByLabel{}
	h := startSharedHost(t, host.Options{Consent: g.decide, ProtectedPIDs: []int{protected.PID}})
	man := boundedManifest(appA, []string{"launch_app", "get_desktop_state", "zoom", "type_text", "kill_app", "clipboard_read", "clipboard_write"}, nil)
	type sess struct {
		label string
		mode  authz.Mode
		man   []byte
	}
	all := []sess{{"grant-standard", authz.Standard, nil}, {"decline-standard", authz.Standard, nil}, {"bounded", authz.Bounded, man}, {"unrestricted", authz.Unrestricted, nil}}
	ss := map[string]*host.Session{}
	for _, s := range all {
		ss[s.label] = session(t, h, host.SessionSpec{Label: s.label, Mode: s.mode, Manifest: s.man})
	}
	// code per session: grant-standard, decline-standard, bounded, unrestricted.
	type row struct {
		name string
		tool string
		args map[string]any
		want [4]authz.Code
	}
	dec, out := authz.CodeAuthorizationDeclined, authz.CodeOutsideManifest
	rows := []row{
		{"display observation", "get_desktop_state", map[string]any{"max_dimension": 320}, [4]authz.Code{"", dec, out, ""}},
		{"foreign window observation", "zoom", map[string]any{"pid": foreign.PID, "window_id": foreign.Window, "x1": 0, "y1": 0, "x2": 20, "y2": 20}, [4]authz.Code{"", dec, out, ""}},
		{"listed app's foreign window observation", "zoom", map[string]any{"pid": userA.PID, "window_id": userA.Window, "x1": 0, "y1": 0, "x2": 20, "y2": 20}, [4]authz.Code{"", dec, "", ""}},
		{"clipboard read", "clipboard_read", nil, [4]authz.Code{"", dec, out, ""}},
		{"clipboard write without the grant in bounded", "clipboard_write", map[string]any{"text": "hello"}, [4]authz.Code{"", "", out, ""}},
	}
	for _, r := range rows {
		for i, s := range all {
			name := r.name + "/" + s.label
			t.Run(name, func(t *testing.T) {
				res := call(t, ss[s.label], r.tool, r.args)
				check(t, name, res, r.want[i])
				if r.want[i] != "" && (hasImage(res) || len(res.Structured) != 0) {
					t.Errorf("a refused observation returned data: %s", res.Structured)
				}
			})
		}
	}

	t.Run("keyboard input to a foreign window", func(t *testing.T) {
		for i, s := range all {
			want := [4]authz.Code{"", dec, out, ""}[i]
			before := foreign.count(t, "key_press")
			res := call(t, ss[s.label], "type_text", map[string]any{"pid": foreign.PID, "window_id": foreign.Window, "text": "ab"})
			check(t, "type_text/"+s.label, res, want)
			if want == "" {
				foreign.waitCount(t, "key_press", before+2)
				continue
			}
			userClick(t, foreign) // barrier: input sent before it has been delivered by now
			foreign.waitCount(t, "button_press", 1)
			time.Sleep(20 * time.Millisecond)
			if n := foreign.count(t, "key_press"); n != before {
				t.Errorf("%s: %d key presses after a refused type_text", s.label, n-before)
			}
		}
	})

	t.Run("protected UI under desktop coordinates", func(t *testing.T) {
		before := protected.count(t, "button_press")
		for _, s := range all {
			// The centre of the protected window, and its title bar just above it.
			for _, y := range []int{100, -10} {
				res := call(t, ss[s.label], "click", map[string]any{"scope": "desktop", "x": 150, "y": max(y, 0) + protectedTop(t, protected)})
				check(t, "desktop click on the protected window/"+s.label, res, authz.CodeProtectedUIDenied)
			}
		}
		userClick(t, protected)
		protected.waitCount(t, "button_press", before+1)
		if n := protected.count(t, "button_press"); n != before+1 {
			t.Errorf("the protected window saw %d presses, want only the user's", n-before)
		}
	})

	t.Run("keyboard input while a protected window has the focus", func(t *testing.T) {
		xdoMu.Lock()
		out, err := exec.Command("xdotool", "windowactivate", "--sync", fmt.Sprint(protected.Window)).CombinedOutput()
		xdoMu.Unlock()
		if err != nil {
			t.Fatalf("windowactivate: %v %s", err, out)
		}
		before := protected.count(t, "key_press")
		check(t, "type_text into the focus", call(t, ss["unrestricted"], "type_text", map[string]any{"text": "zz"}), authz.CodeProtectedUIDenied)
		check(t, "press_key into the focus", call(t, ss["unrestricted"], "press_key", map[string]any{"key": "Return"}), authz.CodeProtectedUIDenied)
		userClick(t, protected)
		time.Sleep(50 * time.Millisecond)
		if n := protected.count(t, "key_press"); n != before {
			t.Errorf("the protected window saw %d key presses", n-before)
		}
	})

	t.Run("termination", func(t *testing.T) {
		// Standard: the session's own process needs no consent; another needs a grant.
		own := launchApp(t, ss["decline-standard"], appA, "own-kill")
		place(t, own, 0, 460)
		check(t, "kill own", call(t, ss["decline-standard"], "kill_app", map[string]any{"pid": own.PID, "grace_ms": 200}), "")
		victim := startApp(t, appB, "victim-1")
		check(t, "kill foreign, declined", call(t, ss["decline-standard"], "kill_app", map[string]any{"pid": victim.PID}), dec)
		if !processAlive(victim.PID) {
			t.Fatal("a declined kill_app killed its target")
		}
		check(t, "kill foreign, granted", call(t, ss["grant-standard"], "kill_app", map[string]any{"pid": victim.PID, "grace_ms": 200}), "")
		// Bounded: terminate driver_launched refuses the user's copy of the listed app…
		check(t, "bounded kill of a foreign listed app", call(t, ss["bounded"], "kill_app", map[string]any{"pid": userA.PID}), authz.CodeForeignProcessTermination)
		if !processAlive(userA.PID) {
			t.Fatal("a refused kill_app killed its target")
		}
		// … and an unlisted app entirely; its own launch is fine.
		check(t, "bounded kill of an unlisted app", call(t, ss["bounded"], "kill_app", map[string]any{"pid": foreign.PID}), out)
		mine := launchApp(t, ss["bounded"], appA, "bounded-own")
		place(t, mine, 330, 460)
		check(t, "bounded kill own", call(t, ss["bounded"], "kill_app", map[string]any{"pid": mine.PID, "grace_ms": 200}), "")
		// Never the host, the worker or the display server, in any mode.
		for _, pid := range []int{syscall.Getpid(), h.PID(), disp.ServerPID()} {
			check(t, fmt.Sprintf("kill protected %d", pid), call(t, ss["unrestricted"], "kill_app", map[string]any{"pid": pid}), authz.CodeSelfTargetDenied)
		}
		if !processAlive(h.PID()) || !processAlive(disp.ServerPID()) {
			t.Fatal("a protected process died")
		}
	})
}

// protectedTop returns the root y of the protected window's client area.
func protectedTop(t testing.TB, a *app) int {
	t.Helper()
	xdoMu.Lock()
	defer xdoMu.Unlock()
	out, err := exec.Command("xdotool", "getwindowgeometry", "--shell", fmt.Sprint(a.Window)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var x, y int
	for _, l := range splitLines(string(out)) {
		fmt.Sscanf(l, "X=%d", &x)
		fmt.Sscanf(l, "Y=%d", &y)
	}
	return y
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
