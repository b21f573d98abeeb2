package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

// TestNestedScreenLargerThanThePersons: asked for a 1920×1080 nested screen on a 1024×768
// person's display, `cua-host run --display nested` makes the screen as large as fits in
// a window on the person's screen, says so in its log, and reports that size: the window
// with the window manager's frame lies entirely on the person's screen, the nested X
// server's root is exactly the window's inside (and Xephyr started at that size), and
// get_screen_size and get_desktop_state report that size, so no pixel the agent is told of
// is cut off. Oracles: xwininfo on the person's display (the window and its frame) and on
// the nested display (its root), Xephyr's command line in /proc.
func TestNestedScreenLargerThanThePersons(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1024, Height: 768})
	if err != nil {
		t.Fatalf("start the person's display: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	p := &person{t: t, d: d}

	rp := startNested(t, p, "--screen", "1920x1080", "--indicator=false")
	win, _, _ := p.nestedWindow()
	id, _ := strconv.Atoi(win)
	inside := windowGeometry(t, p.run, fmt.Sprintf("0x%x", id))
	frame := windowGeometry(t, p.run, topLevel(t, p.run, fmt.Sprintf("0x%x", id)))
	t.Logf("nested window %v, its frame %v on the 1024x768 person's display", inside, frame)
	for _, r := range []rect{inside, frame} {
		if r.x < 0 || r.y < 0 || r.x+r.w > 1024 || r.y+r.h > 768 {
			t.Errorf("%v is not entirely on the person's 1024x768 screen", r)
		}
	}
	if frame.w < inside.w || frame.h < inside.h {
		t.Errorf("the frame %v is smaller than the window %v", frame, inside)
	}
	if inside.w >= 1920 || inside.h >= 1080 || inside.w < 640 || inside.h < 480 {
		t.Errorf("the nested window is %dx%d, want as large as fits on 1024x768", inside.w, inside.h)
	}

	// The screen was that size from the start: a window manager that shrinks a window too
	// large for the screen would otherwise resize it only after programs saw 1920x1080.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", xephyrOf(t, rp.cmd.Process.Pid)))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("\x00-screen\x00%dx%d\x00", inside.w, inside.h); !strings.Contains(string(cmdline), want) {
		t.Errorf("Xephyr's command line %q lacks -screen %dx%d", cmdline, inside.w, inside.h)
	}

	_, health := rp.mustCall(t, "health_report", nil)
	nested, _ := health["display"].(string)
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", number(health, "pid")))
	if err != nil {
		t.Fatal(err)
	}
	xa := grep(strings.Split(string(environ), "\x00"), "XAUTHORITY=")
	if nested == "" || len(xa) != 1 {
		t.Fatalf("health_report display %q, worker XAUTHORITY %q", nested, xa)
	}
	cmd := exec.Command("xwininfo", "-root", "-display", nested)
	cmd.Env = append(os.Environ(), xa[0])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("xwininfo -root -display %s: %v: %s", nested, err, out)
	}
	if root := parseGeometry(string(out)); root.w != inside.w || root.h != inside.h {
		t.Errorf("the nested server's root is %dx%d, want the window's inside %dx%d", root.w, root.h, inside.w, inside.h)
	}

	_, size := rp.mustCall(t, "get_screen_size", nil)
	if number(size, "width") != inside.w || number(size, "height") != inside.h {
		t.Errorf("get_screen_size = %v, want the window's %dx%d", size, inside.w, inside.h)
	}
	shot, _ := rp.mustCall(t, "get_desktop_state", map[string]any{})
	if b := decodePNG(t, shot).Bounds(); b.Dx() != inside.w || b.Dy() != inside.h {
		t.Errorf("get_desktop_state screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), inside.w, inside.h)
	}
	if want := fmt.Sprintf("asked=1920x1080 screen=%dx%d", inside.w, inside.h); !strings.Contains(rp.log(), want) {
		t.Errorf("the run's log does not say the screen is smaller than asked (%q):\n%s", want, rp.log())
	}

	// cua-host status names the same largest size before anything starts.
	st := exec.Command(cuaHost, "status", "--json")
	st.Env = append(os.Environ(), append(d.Env(), "HOME="+t.TempDir())...)
	js, _ := st.Output() // exit 1 is a startup problem the status reports, not ours
	var rep struct {
		Nested struct {
			LargestScreen string `json:"largest_screen"`
		} `json:"nested_display"`
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatalf("cua-host status --json: %v: %s", err, js)
	}
	if want := fmt.Sprintf("%dx%d", inside.w, inside.h); rep.Nested.LargestScreen != want {
		t.Errorf("cua-host status: nested_display.largest_screen = %q, want %q", rep.Nested.LargestScreen, want)
	}
}

// rect is a window's root position and size.
type rect struct{ x, y, w, h int }

// runner runs a program against a display and returns its output.
type runner func(name string, args ...string) (string, error)

// windowGeometry returns the root position and size of window id (xwininfo).
func windowGeometry(t testing.TB, run runner, id string) rect {
	t.Helper()
	out, err := run("xwininfo", "-id", id)
	if err != nil {
		t.Fatalf("xwininfo -id %s: %v: %s", id, err, out)
	}
	return parseGeometry(out)
}

// parseGeometry reads the absolute position and size xwininfo prints.
func parseGeometry(out string) rect {
	var r rect
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		switch k {
		case "Absolute upper-left X":
			r.x = n
		case "Absolute upper-left Y":
			r.y = n
		case "Width":
			r.w = n
		case "Height":
			r.h = n
		}
	}
	return r
}

// topLevel returns the child of the root that holds window id: the window manager's frame
// around it (or id itself when it has none).
func topLevel(t testing.TB, run runner, id string) string {
	t.Helper()
	for range 16 {
		out, err := run("xwininfo", "-children", "-id", id)
		if err != nil {
			t.Fatalf("xwininfo -children -id %s: %v: %s", id, err, out)
		}
		var root, parent string
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			if v, ok := strings.CutPrefix(l, "Root window id: "); ok {
				root, _, _ = strings.Cut(v, " ")
			}
			if v, ok := strings.CutPrefix(l, "Parent window id: "); ok {
				parent, _, _ = strings.Cut(v, " ")
			}
		}
		if parent == "" || parent == root {
			return id
		}
		id = parent
	}
	t.Fatalf("no top-level window above %s", id)
	return ""
}
