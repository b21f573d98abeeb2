package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

// TestNestedScreenLargerThanThePersons: asked for a 1920×1080 nested screen on a 1024×768
// person's display, `cua-host run --display nested` keeps the screen 1920×1080 and shows
// it scrolled: the window with the window manager's frame lies entirely on the person's
// screen, Xephyr's window inside it is 1920×1080, the nested X server's root and
// get_screen_size / get_desktop_state are 1920×1080, and when the agent's pointer goes to
// a far corner and back the view follows it, so whatever the agent points at is on the
// person's screen. Oracles: xwininfo on the person's display (the window, its frame,
// Xephyr's window and where it sits in the window) and on the nested display (its root),
// Xephyr's command line in /proc, xdotool parking the person's pointer on the title bar.
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
	if frame.w < inside.w || frame.h < inside.h || inside.w < 640 || inside.h < 480 {
		t.Errorf("the nested window is %v in a frame %v, want as large as fits on 1024x768", inside, frame)
	}

	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", xephyrOf(t, rp.cmd.Process.Pid)))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\x00-screen\x001920x1080\x00"; !strings.Contains(string(cmdline), want) {
		t.Errorf("Xephyr's command line %q lacks -screen 1920x1080", cmdline)
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
	if root := parseGeometry(string(out)); root.w != 1920 || root.h != 1080 {
		t.Errorf("the nested server's root is %dx%d, want 1920x1080", root.w, root.h)
	}
	_, size := rp.mustCall(t, "get_screen_size", nil)
	if number(size, "width") != 1920 || number(size, "height") != 1080 {
		t.Errorf("get_screen_size = %v, want 1920x1080", size)
	}
	shot, _ := rp.mustCall(t, "get_desktop_state", map[string]any{"max_dimension": 1920})
	if b := decodePNG(t, shot).Bounds(); b.Dx() != 1920 || b.Dy() != 1080 {
		t.Errorf("get_desktop_state screenshot is %dx%d, want 1920x1080", b.Dx(), b.Dy())
	}
	if want := "its window shows part of it"; !strings.Contains(rp.log(), want) {
		t.Errorf("the run's log does not say the window shows part of the screen (%q):\n%s", want, rp.log())
	}

	// The person's pointer on the title bar, outside the nested window: the agent acts.
	if frame.y < inside.y {
		p.xdo("mousemove", "--sync", strconv.Itoa(inside.x+inside.w/2), strconv.Itoa((frame.y+inside.y)/2))
	} else {
		t.Skipf("the window manager drew no title bar above the nested window (%v in %v): no place for the person's pointer outside it", inside, frame)
	}
	xephyrWin := p.search("^" + regexp.QuoteMeta(nestedTitle+" (Xephyr)") + "$")
	if xephyrWin == "" {
		t.Fatalf("no Xephyr window on the person's display:\n%s", p.tree())
	}
	for _, pt := range [][2]int{{1900, 1060}, {10, 10}, {1500, 200}} {
		rp.mustCall(t, "move_cursor", map[string]any{"x": pt[0], "y": pt[1], "scope": "desktop"})
		var in rect
		if !waitFor(3*time.Second, func() bool {
			in = relativeGeometry(t, p.run, xephyrWin)
			return in.w == 1920 && in.h == 1080 && -in.x <= pt[0] && pt[0] < -in.x+inside.w && -in.y <= pt[1] && pt[1] < -in.y+inside.h
		}) {
			t.Errorf("the agent's pointer at %v: Xephyr's window is at %d,%d (%dx%d) in the %dx%d window, which shows x %d..%d, y %d..%d",
				pt, in.x, in.y, in.w, in.h, inside.w, inside.h, -in.x, -in.x+inside.w, -in.y, -in.y+inside.h)
		}
	}

	// cua-host status names the largest size that fits without scrolling.
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

// relativeGeometry returns the position of window id in its parent and its size (xwininfo).
func relativeGeometry(t testing.TB, run runner, id string) rect {
	t.Helper()
	out, err := run("xwininfo", "-id", id)
	if err != nil {
		t.Fatalf("xwininfo -id %s: %v: %s", id, err, out)
	}
	f := xwininfoFields(out)
	return rect{f["Relative upper-left X"], f["Relative upper-left Y"], f["Width"], f["Height"]}
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
	f := xwininfoFields(out)
	return rect{f["Absolute upper-left X"], f["Absolute upper-left Y"], f["Width"], f["Height"]}
}

// xwininfoFields reads the numeric "Name: value" lines xwininfo prints.
func xwininfoFields(out string) map[string]int {
	f := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			f[k] = n
		}
	}
	return f
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
