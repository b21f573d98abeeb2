package display

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With LateWindowManager, Start returns before openbox manages the screen (Start's own
// context may end at once), and WindowManagerReady returns once it does: xprop, outside
// this package, then reads the window manager's check window on the root.
func TestLateWindowManager(t *testing.T) {
	requirePrograms(t, "Xvfb", "openbox", "dbus-daemon", "touch", "xprop")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	d, err := Start(ctx, Options{WindowManager: true, LateWindowManager: true, SessionBus: true, Width: 800, Height: 600})
	cancel() // the wait for openbox does not depend on Start's context
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer d.Close()
	if n := len(d.PIDs()); n != 3 {
		t.Errorf("PIDs() = %v: openbox is started before Start returns", d.PIDs())
	}
	wctx, wcancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer wcancel()
	if err := d.WindowManagerReady(wctx); err != nil {
		t.Fatalf("WindowManagerReady: %v", err)
	}
	cmd := exec.Command("xprop", "-root", "_NET_SUPPORTING_WM_CHECK")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, d.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "window id #") {
		t.Errorf("xprop -root _NET_SUPPORTING_WM_CHECK after WindowManagerReady: %v: %s", err, out)
	}
	if err := d.WindowManagerReady(wctx); err != nil {
		t.Errorf("second WindowManagerReady: %v", err)
	}
}

// A window manager that exits while starting is reported by WindowManagerReady with its
// own words, and Close still stops the rest. Without LateWindowManager the same failure
// is Start's.
func TestLateWindowManagerFails(t *testing.T) {
	requirePrograms(t, "Xvfb", "dbus-daemon", "touch")
	bin := t.TempDir()
	for _, name := range []string{"Xvfb", "dbus-daemon", "touch"} {
		p, _ := exec.LookPath(name)
		if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "openbox"), []byte("#!/bin/sh\necho 'no screen for me' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := bin + ":/usr/bin:/bin"
	d, err := Start(t.Context(), Options{WindowManager: true, LateWindowManager: true, SessionBus: true, Path: path})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pids := d.PIDs()
	err = d.WindowManagerReady(t.Context())
	if err == nil || !strings.Contains(err.Error(), "openbox exited") || !strings.Contains(err.Error(), "no screen for me") {
		t.Errorf("WindowManagerReady = %v, want openbox's exit with its stderr", err)
	}
	d.Close()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("pid %d still exists after Close (kill 0: %v)", pid, err)
		}
	}
	if _, err := Start(t.Context(), Options{WindowManager: true, SessionBus: true, Path: path}); err == nil || !strings.Contains(err.Error(), "openbox exited") {
		t.Errorf("Start without LateWindowManager = %v, want openbox's exit", err)
	}
}

// Closing a display whose window manager is still starting ends the wait and every process.
func TestLateWindowManagerClosedEarly(t *testing.T) {
	requirePrograms(t, "Xvfb", "openbox", "dbus-daemon", "touch")
	d, err := Start(t.Context(), Options{WindowManager: true, LateWindowManager: true, SessionBus: true})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pids := d.PIDs()
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := d.WindowManagerReady(t.Context()); err == nil {
		t.Log("openbox was ready before Close") // a fast machine; the wait still ended
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("pid %d still exists after Close (kill 0: %v)", pid, err)
		}
	}
}
