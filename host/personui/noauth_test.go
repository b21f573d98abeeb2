package personui

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openXvfb starts an Xvfb without -auth — a server without access control, which admits
// every local client with no cookie — and returns its display name and an environment for
// X programs that names no Xauthority file. It is stopped at cleanup.
func openXvfb(t *testing.T) (name string, env []string) {
	t.Helper()
	requireDisplay(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "800x600x24", "-nolisten", "tcp", "-noreset")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("Xvfb exited before it was ready")
		}
		name = ":" + n
	case <-time.After(30 * time.Second):
		t.Fatal("Xvfb not ready within 30 s")
	}
	home := t.TempDir() // no .Xauthority in it
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "XAUTHORITY=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return name, append(env, "DISPLAY="+name, "HOME="+home)
}

// TestNoAccessControl: on an X server started without -auth, Ask and NewIndicator connect
// without a cookie when the Xauthority file is missing or not given, as every Xlib client
// does; xwininfo (another client without a cookie) sees their windows and xdotool answers
// the dialog.
func TestNoAccessControl(t *testing.T) {
	name, env := openXvfb(t)
	xprog := func(prog string, args ...string) string {
		t.Helper()
		cmd := exec.Command(prog, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, tt := range []struct{ name, xauth string }{
		{"missing xauthority", filepath.Join(t.TempDir(), "missing")},
		{"no xauthority", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Display: name, XAuthority: tt.xauth}
			ind, err := NewIndicator(t.Context(), opts, func() {}, func(string) {})
			if err != nil {
				t.Fatalf("NewIndicator: %v", err)
			}
			defer ind.Close()
			ind.Set([]Session{{Label: "no-auth", Mode: "standard"}})

			shown := make(chan Shown, 4)
			opts.OnShown = func(s Shown) { shown <- s }
			res := make(chan askResult, 1)
			go func() {
				a, err := Ask(t.Context(), opts, windowRequest())
				res <- askResult{a, err}
			}()
			sh := waitShown(t, shown)
			if tree := xprog("xwininfo", "-root", "-tree"); !strings.Contains(tree, `"cua-host: agent sessions active: no-auth (standard)"`) ||
				!strings.Contains(tree, fmt.Sprintf("0x%x ", sh.Window)) {
				t.Fatalf("xwininfo does not list the indicator and the dialog 0x%x:\n%s", sh.Window, tree)
			}
			time.Sleep(ArmDelay + 100*time.Millisecond)
			x, y := buttonCenter(t, sh, AllowOnce.String())
			xprog("xdotool", "mousemove", fmt.Sprint(x), fmt.Sprint(y), "click", "1")
			if r := waitResult(t, res); r.answer != AllowOnce || r.err != nil {
				t.Fatalf("Ask = %v, %v, want allow_once, nil", r.answer, r.err)
			}
		})
	}
}

// TestNoCookieRefusedSaysWhy: on a server with access control, a missing Xauthority file
// means no cookie, and the server's refusal says so.
func TestNoCookieRefusedSaysWhy(t *testing.T) {
	requireDisplay(t)
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := Ask(t.Context(), Options{Display: testDisplay.Name(), XAuthority: missing}, windowRequest())
	if !errors.Is(err, ErrDisplay) || !strings.Contains(err.Error(), "refused") ||
		!strings.Contains(err.Error(), "no cookie was sent") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Ask with a missing Xauthority file on a server with access control: %v, want ErrDisplay saying the server refused and no cookie was sent (naming %s)", err, missing)
	}
}
