package desktop_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/xevlog/harness"
)

// wmState returns what xprop says of a window's ICCCM WM_STATE ("Normal", "Iconic").
func wmState(t *testing.T, id uint32) string {
	t.Helper()
	out := harness.Command(t, "xprop", "-id", fmt.Sprint(id), "WM_STATE")
	for _, l := range strings.Split(out, "\n") {
		if _, s, ok := strings.Cut(l, "window state: "); ok {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// waitWMState waits until xprop reports want for the window.
func waitWMState(t *testing.T, id uint32, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := wmState(t, id)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("xprop WM_STATE of 0x%x = %q, want %q", id, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMinimizedWindowRefusesInputAndCapture: a window minimized from outside (xdotool
// windowminimize; xprop shows WM_STATE Iconic) refuses every input and capture aimed at it
// with window_minimized, and xevlog receives nothing; bring_to_front restores it (xprop
// shows Normal again) and input reaches it.
func TestMinimizedWindowRefusesInputAndCapture(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	harness.Command(t, "xdotool", "windowminimize", "--sync", fmt.Sprint(xl.Window))
	waitWMState(t, xl.Window, "Iconic")
	win := map[string]any{"pid": xl.PID, "window_id": xl.Window}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range win {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"click", "click", with("x", 20, "y", 20)},
		{"double_click", "double_click", with("x", 20, "y", 20)},
		{"right_click", "right_click", with("x", 20, "y", 20)},
		{"move_cursor", "move_cursor", with("x", 20, "y", 20)},
		{"mouse_button_down", "mouse_button_down", with("x", 20, "y", 20)},
		{"mouse_button_up", "mouse_button_up", with("x", 20, "y", 20)},
		{"drag", "drag", with("from_x", 10, "from_y", 10, "to_x", 50, "to_y", 50)},
		{"scroll", "scroll", with("x", 20, "y", 20, "direction", "down")},
		{"type_text", "type_text", with("text", "abc")},
		{"press_key", "press_key", with("key", "a")},
		{"hotkey", "hotkey", with("keys", []string{"ctrl", "a"})},
		{"zoom", "zoom", with("x1", 0, "y1", 0, "x2", 50, "y2", 50)},
		{"get_window_state screenshot", "get_window_state", with()},
		{"pid alone", "click", map[string]any{"pid": xl.PID, "x": 20, "y": 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xl.Reset()
			r, err := call(t, reg, tc.tool, tc.args)
			if code := refusalCode(err); code != authz.CodeWindowMinimized {
				t.Fatalf("%s(%v) = %v, %v; want refusal %s", tc.tool, tc.args, r, err, authz.CodeWindowMinimized)
			}
			time.Sleep(30 * time.Millisecond)
			if evs := harness.Filter(xl.Events(), "button_press", "button_release", "key_press", "key_release", "motion"); len(evs) != 0 {
				t.Errorf("refused call reached the window: %+v", evs)
			}
		})
	}
	if got := wmState(t, xl.Window); got != "Iconic" {
		t.Fatalf("after the refusals WM_STATE = %q, want Iconic (a refused call restored the window)", got)
	}

	r, err := call(t, reg, "bring_to_front", win)
	if err != nil {
		t.Fatalf("bring_to_front: %v", err)
	}
	if d := structured(t, r); d["verified"] != true {
		t.Errorf("bring_to_front details = %v, want verified", d)
	}
	waitWMState(t, xl.Window, "Normal")
	xl.Reset()
	if _, err := call(t, reg, "click", with("x", 20, "y", 20)); err != nil {
		t.Fatalf("click after bring_to_front: %v", err)
	}
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) == 1 })
}
