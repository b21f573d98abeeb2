package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wayland is a person's Wayland session for the tests: headless weston with its XWayland
// module, in a runtime directory of its own. Oracles: xwininfo on the XWayland display.
type wayland struct {
	t       testing.TB
	runtime string // XDG_RUNTIME_DIR
	socket  string // WAYLAND_DISPLAY
	x       string // the XWayland display, ":N"
}

// westonListening is the line weston logs once XWayland's sockets are open.
var westonListening = regexp.MustCompile(`xserver listening on display (:[0-9]+)`)

// startWayland starts headless weston (1024x768) with XWayland and waits until it names the
// X display it listens on. weston starts the XWayland server itself at the first X client.
func startWayland(t testing.TB) *wayland {
	t.Helper()
	w := &wayland{t: t, runtime: t.TempDir(), socket: "wayland-cua-test"}
	if err := os.Chmod(w.runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(w.runtime, "weston.log")
	cmd := exec.Command("weston", "--backend=headless-backend.so", "--xwayland", "--socket="+w.socket,
		"--width=1024", "--height=768", "--idle-time=0", "--log="+logPath)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+w.runtime)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start weston: %v", err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	var log []byte
	if !waitFor(15*time.Second, func() bool {
		log, _ = os.ReadFile(logPath)
		m := westonListening.FindSubmatch(log)
		if m != nil {
			w.x = string(m[1])
		}
		return m != nil
	}) {
		t.Fatalf("weston named no XWayland display:\n%s", log)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("weston's log:\n%s", b)
		}
	})
	return w
}

// env is the person's session environment: their Wayland and X displays, no cookie (weston
// starts XWayland without access control).
func (w *wayland) env() []string {
	return []string{"XDG_RUNTIME_DIR=" + w.runtime, "WAYLAND_DISPLAY=" + w.socket, "DISPLAY=" + w.x, "XAUTHORITY="}
}

// run runs an X client of the XWayland display (never one that sends XTEST input: see
// TestNestedDisplayOnWayland).
func (w *wayland) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), w.env()...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// tree is xwininfo -root -tree of the XWayland display.
func (w *wayland) tree() string {
	w.t.Helper()
	out, err := w.run("xwininfo", "-root", "-tree")
	if err != nil {
		w.t.Fatalf("xwininfo -root -tree -display %s: %v: %s", w.x, err, out)
	}
	return out
}

// TestNestedDisplayOnWayland: in a person's Wayland session (headless weston, XWayland),
// `cua-host run --display nested` shows its nested display as a window on the XWayland
// display; the agent launches a terminal there and types a command that writes a file; that
// shell lacks the person's WAYLAND_DISPLAY, and where it can reach their XWayland display
// (weston admits the user without a cookie) the run warned of it; and the window goes when
// the agent does. Oracles: xwininfo on the XWayland display, the
// files the shell writes.
func TestNestedDisplayOnWayland(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "weston", "Xwayland", "xwininfo", "xdpyinfo")
	w := startWayland(t)
	env := append(w.env(), "HOME="+t.TempDir(), "LANG=C.UTF-8")
	// Headless weston has no pointer: XWayland keeps its pointer at the centre of its
	// screen (512,384) for good, and the host counts a pointer over the nested window as
	// the person's (person_active). weston's window manager puts the window at the top-left
	// corner, so a 400x300 screen leaves the centre free. (Moving that pointer with XTEST,
	// as xdotool does, crashes XWayland 22.1 here.)
	rp := startRunEnv(t, env, "--display", "nested", "--screen", "400x300", "--mode", "unrestricted", "--dangerously-bypass-approvals")

	if tree := w.tree(); !strings.Contains(tree, `"`+nestedTitle+`"`) {
		t.Fatalf("no window %q on the XWayland display %s:\n%s", nestedTitle, w.x, tree)
	}
	_, health := rp.mustCall(t, "health_report", nil)
	nested, _ := health["display"].(string)
	if nested == "" || nested == w.x || health["private_display"] != true {
		t.Fatalf("health_report: display %q private %v, want the nested display, private", nested, health["private_display"])
	}

	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "nested-terminal", "-e", "bash", "--norc", "--noprofile"}})
	pid := number(launched, "pid")
	ids, _ := launched["window_ids"].([]any)
	if pid <= 0 || len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	target := func(kv ...any) map[string]any {
		m := map[string]any{"pid": pid, "window_id": int(ids[0].(float64))}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	// The shell writes a file, and says whether it sees the person's Wayland socket name or
	// can open the person's X display (XWayland, which admits any local client).
	dir := t.TempDir()
	cmd := fmt.Sprintf("echo \"w=$WAYLAND_DISPLAY\" > %s/wayland; xdpyinfo -display %s >/dev/null 2>&1; echo $? > %s/xdpyinfo; echo typed-on-wayland > %s/out",
		dir, w.x, dir, dir)
	rp.mustCall(t, "click", target("x", 100, "y", 60))
	rp.mustCall(t, "type_text", target("text", cmd))
	rp.mustCall(t, "press_key", target("key", "Return"))
	var got []byte
	if !waitFor(15*time.Second, func() bool {
		got, _ = os.ReadFile(filepath.Join(dir, "out"))
		return string(got) == "typed-on-wayland\n"
	}) {
		t.Fatalf("the nested terminal did not run the command: out = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "wayland")); string(b) != "w=\n" {
		t.Errorf("a program of the nested display sees WAYLAND_DISPLAY: %q", b)
	}
	// weston starts XWayland without -auth and admits the user (si:localuser): the
	// person's cookie hidden, a launched program still reaches XWayland through its abstract
	// socket. cua-host run must say so before the session starts (docs/security.md,
	// "Displays that need no cookie").
	b, _ := os.ReadFile(filepath.Join(dir, "xdpyinfo"))
	t.Logf("xdpyinfo -display %s inside the session exited %q", w.x, strings.TrimSpace(string(b)))
	if strings.TrimSpace(string(b)) == "0" && !strings.Contains(rp.log(), "the display admits this user without a cookie") {
		t.Errorf("a program of the nested display reached the person's XWayland display and cua-host run did not warn that it admits the user without a cookie")
	}

	if err := rp.close(); err != nil {
		t.Errorf("cua-host run exit: %v", err)
	}
	if tree := w.tree(); strings.Contains(tree, `"`+nestedTitle+`"`) {
		t.Errorf("the nested window stays on the XWayland display after the agent left:\n%s", tree)
	}
}

// TestNestedScreenLargerThanXWayland: weston's window manager does not tell the frame it
// will draw (no _NET_REQUEST_FRAME_EXTENTS, no _NET_WORKAREA), so the nested window, asked
// 1280x800 (the default) on a 1024x768 XWayland screen, is first made 1024x768 and then,
// once weston has framed it, shrunk by the frame's size: the frame lies on the XWayland
// screen, and the window shows part of the 1280x800 screen, which keeps its size —
// Xephyr's window inside it and get_screen_size (an observing call: XWayland's idle
// pointer over the window does not matter) are 1280x800. Oracles: xwininfo on the
// XWayland display.
func TestNestedScreenLargerThanXWayland(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "weston", "Xwayland", "xwininfo")
	w := startWayland(t)
	env := append(w.env(), "HOME="+t.TempDir(), "LANG=C.UTF-8")
	rp := startRunEnv(t, env, "--display", "nested", "--indicator=false")

	var id string
	if !waitFor(10*time.Second, func() bool {
		out, _ := w.run("xwininfo", "-name", nestedTitle)
		id = parseWindowID(out)
		return id != ""
	}) {
		t.Fatalf("no window %q on the XWayland display:\n%s", nestedTitle, w.tree())
	}
	var inside, frame, xephyr rect
	var size map[string]any
	if !waitFor(10*time.Second, func() bool {
		inside = windowGeometry(t, w.run, id)
		frame = windowGeometry(t, w.run, topLevel(t, w.run, id))
		out, _ := w.run("xwininfo", "-name", nestedTitle+" (Xephyr)")
		xephyr = parseGeometry(out)
		_, size = rp.mustCall(t, "get_screen_size", nil)
		return frame.x >= 0 && frame.y >= 0 && frame.x+frame.w <= 1024 && frame.y+frame.h <= 768 &&
			xephyr.w == 1280 && xephyr.h == 800 && number(size, "width") == 1280 && number(size, "height") == 800
	}) {
		t.Fatalf("nested window %v in the frame %v, Xephyr's window %v, get_screen_size %v: want the frame on the 1024x768 screen showing part of a 1280x800 screen\n%s",
			inside, frame, xephyr, size, w.tree())
	}
	t.Logf("nested window %v, weston's frame %v", inside, frame)
	if frame.w <= inside.w || frame.h <= inside.h {
		t.Errorf("weston drew no frame around the window (%v in %v): the test shows nothing", inside, frame)
	}
	if inside.w >= 1024 || inside.h >= 768 {
		t.Errorf("the nested window %v did not shrink inside weston's frame %v", inside, frame)
	}
	if !strings.Contains(rp.log(), "screen=1280x800") || !strings.Contains(rp.log(), "its window shows part of it") {
		t.Errorf("the run's log does not say the window shows part of the 1280x800 screen")
	}
}

// parseWindowID reads the id xwininfo prints ("Window id: 0x… "), "" when there is none.
func parseWindowID(out string) string {
	_, rest, ok := strings.Cut(out, "Window id: ")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, " ")
	return id
}
