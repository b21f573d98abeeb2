package display

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// personDesktop is a person's display for the tests: Xvfb with a cookie and openbox, a
// focused terminal, the pointer parked in a corner.
type personDesktop struct {
	t     *testing.T
	d     *Display
	term  string // the focused terminal's window id, decimal
	xterm *exec.Cmd
}

func startPerson(t *testing.T) *personDesktop {
	t.Helper()
	d, err := Start(t.Context(), Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatalf("start the person's display: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	p := &personDesktop{t: t, d: d}
	p.xterm = exec.Command("xterm", "-title", "person-terminal", "-geometry", "40x5+900+600")
	p.xterm.Env = p.env()
	if err := p.xterm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.xterm.Process.Kill(); p.xterm.Wait() })
	if !waitUntil(10*time.Second, func() bool {
		out, err := p.tryXdo("search", "--name", "^person-terminal$")
		p.term, _, _ = strings.Cut(out, "\n")
		return err == nil && p.term != ""
	}) {
		t.Fatal("the person's terminal never showed")
	}
	// The window manager may still be taking the new window on: activate it until it has
	// the focus and keeps it.
	if !waitUntil(10*time.Second, func() bool {
		p.tryXdo("windowactivate", "--sync", p.term)
		time.Sleep(100 * time.Millisecond)
		f, err := p.tryXdo("getwindowfocus")
		return err == nil && f == p.term
	}) {
		t.Fatal("the person's terminal never kept the focus")
	}
	p.xdo("mousemove", "--sync", "1270", "790")
	return p
}

func (p *personDesktop) env() []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, p.d.Env()...)
}

func (p *personDesktop) tryXdo(args ...string) (string, error) {
	cmd := exec.Command("xdotool", args...)
	cmd.Env = p.env()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (p *personDesktop) xdo(args ...string) string {
	p.t.Helper()
	out, err := p.tryXdo(args...)
	if err != nil {
		p.t.Fatalf("xdotool %v: %v: %s", args, err, out)
	}
	return out
}

// untouched fails the test unless the person's pointer and focus are where they left them.
func (p *personDesktop) untouched(when string) {
	p.t.Helper()
	if loc := p.xdo("getmouselocation"); !strings.HasPrefix(loc, "x:1270 y:790 ") {
		p.t.Errorf("%s: the person's pointer is at %q, want x:1270 y:790", when, loc)
	}
	if f := p.xdo("getwindowfocus"); f != p.term {
		p.t.Errorf("%s: the person's focus is on %s, want their terminal %s", when, f, p.term)
	}
}

// tree is xwininfo -root -tree of the person's display.
func (p *personDesktop) tree() string {
	p.t.Helper()
	cmd := exec.Command("xwininfo", "-root", "-tree")
	cmd.Env = p.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("xwininfo: %v: %s", err, out)
	}
	return string(out)
}

func waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// screenSize is the nested display's screen as xdpyinfo reports it ("640x480").
func screenSize(t *testing.T, d *Display) string {
	t.Helper()
	cmd := exec.Command("xdpyinfo")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, d.Env()...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xdpyinfo on the nested display: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "dimensions:" {
			return f[1]
		}
	}
	t.Fatalf("xdpyinfo printed no dimensions:\n%s", out)
	return ""
}

// TestNestedDisplay: a nested display appears as a window on the person's display without
// taking their focus or pointer, runs its own server (its own cookie, screen, window
// manager and bus), follows the window's size, reports the person's pointer and focus in
// the window, and leaves nothing behind — the window included — when closed.
func TestNestedDisplay(t *testing.T) {
	requirePrograms(t, "Xvfb", "Xephyr", "openbox", "dbus-daemon", "touch", "xterm", "xdotool", "xwininfo", "xdpyinfo")
	p := startPerson(t)
	p.untouched("before the nested display")
	start := time.Now()
	d, err := Start(t.Context(), Options{WindowManager: true, SessionBus: true, Width: 640, Height: 480,
		Nested: &NestedOptions{Parent: p.d.Name(), ParentXAuthority: p.d.XAuthority(), Title: "cua-host: nested test"}})
	if err != nil {
		t.Fatalf("Start nested: %v", err)
	}
	defer d.Close()
	t.Logf("nested display %s ready in %v", d.Name(), time.Since(start).Round(time.Millisecond))
	if !d.Nested() || d.Parent() != p.d.Name() || d.Window() == 0 {
		t.Fatalf("Nested() = %v, Parent() = %q, Window() = %d", d.Nested(), d.Parent(), d.Window())
	}
	win := strconv.FormatUint(uint64(d.Window()), 10)
	hex := fmt.Sprintf("0x%x", d.Window())
	if tree := p.tree(); !strings.Contains(tree, hex+` "cua-host: nested test"`) {
		t.Errorf("the window %s is not on the person's display:\n%s", hex, tree)
	}
	p.untouched("after the nested display appeared")
	if got := screenSize(t, d); got != "640x480" {
		t.Errorf("nested screen = %s, want 640x480", got)
	}
	if _, err := dialX(t.Context(), d.Number(), nil); !errors.Is(err, ErrAuthRefused) {
		t.Errorf("connection to the nested display without a cookie: %v, want ErrAuthRefused", err)
	}
	if !strings.Contains(strings.Join(d.Env(), " "), "DBUS_SESSION_BUS_ADDRESS=") || d.ServerPID() == 0 {
		t.Errorf("Env() = %q, ServerPID() = %d: want a bus and Xephyr's pid", d.Env(), d.ServerPID())
	}

	states := make(chan bool, 16)
	ctx, cancel := context.WithCancel(t.Context())
	watchDone := make(chan error, 1)
	go func() { watchDone <- d.WatchPerson(ctx, func(a bool) { states <- a }) }()
	expectState := func(what string, want bool) {
		t.Helper()
		deadline := time.After(3 * time.Second)
		for {
			select {
			case a := <-states:
				if a == want {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no report %v", what, want)
			}
		}
	}
	expectState("at first", false)
	geo := p.xdo("getwindowgeometry", "--shell", win)
	var x, y int
	for _, l := range strings.Split(geo, "\n") {
		if v, ok := strings.CutPrefix(l, "X="); ok {
			x, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "Y="); ok {
			y, _ = strconv.Atoi(v)
		}
	}
	p.xdo("mousemove", "--sync", strconv.Itoa(x+100), strconv.Itoa(y+100))
	expectState("pointer in the window", true)
	p.xdo("mousemove", "--sync", "1270", "790")
	expectState("pointer out of the window", false)
	p.xdo("windowactivate", "--sync", win)
	expectState("focus in the window", true)
	p.xdo("windowactivate", "--sync", p.term)
	expectState("focus back in the terminal", false)

	p.xdo("windowsize", "--sync", win, "800", "500")
	if !waitUntil(3*time.Second, func() bool { return screenSize(t, d) == "800x500" }) {
		t.Errorf("nested screen after resizing the window = %s, want 800x500", screenSize(t, d))
	}

	pids, dir, num := d.PIDs(), d.dir, d.Number()
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-watchDone:
		if err == nil || errors.Is(err, context.Canceled) {
			t.Errorf("WatchPerson after Close = %v, want an error saying the display is gone", err)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("WatchPerson still runs after Close")
	}
	cancel()
	if tree := p.tree(); strings.Contains(tree, hex) || strings.Contains(tree, "cua-host: nested test") {
		t.Errorf("the window is still on the person's display after Close:\n%s", tree)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists after Close (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("private dir %s still exists: %v", dir, err)
	}
	checkSocketGone(t, num, pids[0])
	p.untouched("after Close")
}

// TestNestedWithoutXephyr: where Xephyr is missing, Start says how to install it and
// leaves nothing behind.
func TestNestedWithoutXephyr(t *testing.T) {
	_, err := Start(t.Context(), Options{Path: t.TempDir(), Nested: &NestedOptions{Parent: ":0"}})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "apt install xserver-xephyr") {
		t.Fatalf("Start nested with an empty PATH: %v, want ErrNotFound naming xserver-xephyr", err)
	}
}
