package authze2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// overlayOf finds the agent cursor overlay of session label in the server's window tree
// (xwininfo) and reports whether it is viewable and where.
func overlayOf(t *testing.T, label string) (id uint32, viewable bool, x, y int) {
	t.Helper()
	out, err := exec.Command("xwininfo", "-root", "-tree").CombinedOutput()
	if err != nil {
		t.Fatalf("xwininfo -root -tree: %v: %s", err, out)
	}
	re := regexp.MustCompile(`(0x[0-9a-f]+) "cua-host agent cursor ` + regexp.QuoteMeta(label) + `"`)
	m := re.FindStringSubmatch(string(out))
	if m == nil {
		return 0, false, 0, 0
	}
	v, _ := strconv.ParseUint(m[1], 0, 32)
	info, err := exec.Command("xwininfo", "-id", m[1]).CombinedOutput()
	if err != nil {
		t.Fatalf("xwininfo -id %s: %v: %s", m[1], err, info)
	}
	s := string(info)
	field := func(name string) int {
		fm := regexp.MustCompile(name + `:\s*(-?\d+)`).FindStringSubmatch(s)
		if fm == nil {
			t.Fatalf("xwininfo lacks %s:\n%s", name, s)
		}
		n, _ := strconv.Atoi(fm[1])
		return n
	}
	return uint32(v), strings.Contains(s, "IsViewable"), field("Absolute upper-left X"), field("Absolute upper-left Y")
}

// TestAgentCursorOverlayIsProtected: through the whole authorization path, the agent
// cursor's overlay (a window of the worker's own process) follows the session's click, is
// not listed, cannot be targeted, lets the session's next click at
// that point through to the window below, is painted grey in captures, and is gone when
// the session ends.
func TestAgentCursorOverlayIsProtected(t *testing.T) {
	h := startHost(t, host.Options{})
	const label = "cursor-e2e"
	s := session(t, h, host.SessionSpec{Label: label, Mode: authz.Unrestricted})
	user := userDesk(t)
	below := startApp(t, appA, "cursor-below")
	frame := frameAt(t, user, below.Window, 400, 300)

	type masked struct {
		Masked struct {
			Windows int `json:"windows"`
		} `json:"masked"`
	}
	capture := func(tool string, args map[string]any) int {
		t.Helper()
		r := call(t, s, tool, args)
		check(t, tool, r, "")
		var m masked
		if err := json.Unmarshal(r.Structured, &m); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return m.Masked.Windows
	}
	zoomArgs := map[string]any{"pid": below.PID, "window_id": below.Window, "x1": 40, "y1": 30, "x2": 120, "y2": 110}
	desktopArgs := map[string]any{"include_windows": false}
	zoomBefore, desktopBefore := capture("zoom", zoomArgs), capture("get_desktop_state", desktopArgs)

	check(t, "set_agent_cursor_motion", call(t, s, "set_agent_cursor_motion", map[string]any{"session": label, "glide_duration_ms": 0}), "")
	check(t, "set_agent_cursor_enabled", call(t, s, "set_agent_cursor_enabled", map[string]any{"session": label, "enabled": true}), "")
	check(t, "click", call(t, s, "click", map[string]any{"pid": below.PID, "window_id": below.Window, "x": 50, "y": 40}), "")
	below.waitCount(t, "button_press", 1)
	id, viewable, x, y := overlayOf(t, label)
	if id == 0 || !viewable || x != frame.X+50 || y != frame.Y+40 {
		t.Fatalf("overlay 0x%x viewable %v at (%d,%d), want viewable at the click (%d,%d)", id, viewable, x, y, frame.X+50, frame.Y+40)
	}

	// It is no client window (no window manager manages it), and its process is the worker.
	check(t, "click on the overlay window", call(t, s, "click", map[string]any{"pid": h.PID(), "window_id": id, "x": 2, "y": 2}), authz.CodeWindowNotFound)
	check(t, "click on the worker's windows", call(t, s, "click", map[string]any{"pid": h.PID(), "x": 2, "y": 2}), authz.CodeSelfTargetDenied)
	list := call(t, s, "list_windows", map[string]any{})
	check(t, "list_windows", list, "")
	if strings.Contains(string(list.Structured), fmt.Sprintf(`"window_id":%d,`, id)) {
		t.Errorf("list_windows lists the overlay 0x%x", id)
	}

	// (55,50) lies inside the arrow drawn from (50,40): the click goes to the window below.
	check(t, "click under the overlay", call(t, s, "click", map[string]any{"pid": below.PID, "window_id": below.Window, "x": 55, "y": 50}), "")
	below.waitCount(t, "button_press", 2)

	if n := capture("zoom", zoomArgs); n != zoomBefore+1 {
		t.Errorf("zoom under the overlay masked %d windows, want %d (the overlay more than before)", n, zoomBefore+1)
	}
	if n := capture("get_desktop_state", desktopArgs); n != desktopBefore+1 {
		t.Errorf("get_desktop_state masked %d windows, want %d (the overlay more than before)", n, desktopBefore+1)
	}

	check(t, "end_session", call(t, s, "end_session", map[string]any{}), "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if id, _, _, _ := overlayOf(t, label); id == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the overlay outlived its session")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
