package desktop_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/a11yenv"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// sharedSession is a session on a display shared with a person: its input defaults to
// background delivery.
func sharedSession(label string) *tool.Session { return tool.NewSession(label, "standard") }

// coverWith moves a foreign xevlog window over the rectangle r (root coordinates) and
// raises it.
func coverWith(t *testing.T, r *x11.Rect) *harness.Xevlog {
	t.Helper()
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "cover", Width: r.Width + 40, Height: r.Height + 40})
	harness.Command(t, "xdotool", "windowmove", "--sync", fmt.Sprint(xl.Window), fmt.Sprint(r.X-20), fmt.Sprint(r.Y-20))
	harness.Command(t, "xdotool", "windowraise", fmt.Sprint(xl.Window))
	time.Sleep(100 * time.Millisecond)
	return xl
}

// TestBackgroundClickOnCoveredTargetUsesAccessibility: in the background nothing is
// raised, so a click at a point of the target that another window covers goes through the
// toolkit (the accessible at the point, its action): zenity's OK button, covered, is
// pressed and zenity exits; the covering window gets nothing.
func TestBackgroundClickOnCoveredTargetUsesAccessibility(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	zen := a11yenv.Zenity(t, bus, "--entry", "--title", "bg-ax", "--text", "Value:", "--entry-text", "kept")
	sess := sharedSession("bg-ax")
	_, st := windowState(t, reg, sess, map[string]any{"pid": zen.PID, "window_id": zen.Window, "include_screenshot": false})
	ok := elementOf(t, st, "push button", "OK")
	if ok.Screen == nil || ok.Frame == nil {
		t.Fatalf("OK has no frame: %+v", ok)
	}
	cover := coverWith(t, ok.Screen)
	cover.Reset()
	x, y := ok.Frame.X+ok.Frame.Width/2, ok.Frame.Y+ok.Frame.Height/2
	r, err := callAs(t, reg, sess, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "x": x, "y": y})
	if err != nil {
		t.Fatalf("click on the covered OK: %v", err)
	}
	res := details(t, r)
	if res["route"] != "atspi_action" || res["delivery"] != "background" || res["role"] != "push button" {
		t.Fatalf("click = %v", res)
	}
	if ev, _ := res["evidence"].(map[string]any); !strings.Contains(fmt.Sprint(ev["fallback_reason"]), "cover") {
		t.Errorf("the result does not say why accessibility was used: %v", ev)
	}
	if !zen.WaitExit(5 * time.Second) {
		t.Fatal("zenity did not exit after its OK was pressed")
	}
	if got := strings.TrimSpace(zen.Stdout()); got != "kept" {
		t.Errorf("zenity printed %q, want the entry's text", got)
	}
	if evs := harness.Filter(cover.Events(), "button_press", "key_press"); len(evs) != 0 {
		t.Errorf("the covering window got input: %+v", evs)
	}
}

// TestBackgroundUnavailableOnCoveredPlainWindow: a covered window without accessibility
// cannot be reached in the background: background_unavailable naming foreground, nothing
// sent to either window.
func TestBackgroundUnavailableOnCoveredPlainWindow(t *testing.T) {
	reg, b, _ := a11ySetup(t, atspi.Options{})
	target := harness.StartXevlog(t, harness.XevlogOptions{Title: "bg-target", Width: 300, Height: 200})
	w := windowOfTest(t, b, target.Window)
	cover := coverWith(t, &x11.Rect{X: w.Frame.X, Y: w.Frame.Y, Width: 100, Height: 80})
	target.Reset()
	cover.Reset()
	_, err := callAs(t, reg, sharedSession("bg-plain"), "click", map[string]any{"pid": target.PID, "window_id": target.Window, "x": 10, "y": 10})
	if code := refusalCode(err); code != authz.CodeBackgroundUnavailable || !strings.Contains(err.Error(), "foreground") {
		t.Fatalf("click on a covered plain window = %v, want background_unavailable naming foreground", err)
	}
	time.Sleep(100 * time.Millisecond)
	if evs := append(harness.Filter(target.Events(), "button_press"), harness.Filter(cover.Events(), "button_press")...); len(evs) != 0 {
		t.Errorf("a refused click was delivered: %+v", evs)
	}
}

// TestBackgroundTypingWithoutDevicesUsesAccessibility: with no session devices, typing
// into a window goes into its focused editable text through the toolkit, at the caret,
// read back; a window without one refuses with background_unavailable.
func TestBackgroundTypingWithoutDevicesUsesAccessibility(t *testing.T) {
	harness.Require(t)
	bus := a11yenv.StartBus(t)
	b, err := x11.Open(t.Context(), x11.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	c := atspi.New(atspi.Options{SessionBusAddress: bus.Addr})
	t.Cleanup(func() { c.Close() })
	reg := tool.NewRegistry()
	desktop.Register(reg, b, desktop.Options{Accessibility: c, NoSessionDevices: true})

	zen := a11yenv.Zenity(t, bus, "--entry", "--title", "bg-type", "--text", "Value:", "--entry-text", "ab")
	sess := sharedSession("bg-type")
	r, err := callAs(t, reg, sess, "type_text", map[string]any{"pid": zen.PID, "window_id": zen.Window, "text": "Grüße ✓"})
	if err != nil {
		t.Fatalf("type_text: %v", err)
	}
	res := details(t, r)
	if res["route"] != "atspi_editable_text" || res["verified"] != true {
		t.Fatalf("type_text = %v", res)
	}
	_, st := windowState(t, reg, sess, map[string]any{"pid": zen.PID, "window_id": zen.Window, "include_screenshot": false})
	if v := elementOf(t, st, "text", "*").Value; v == nil || !strings.Contains(*v, "Grüße ✓") {
		t.Errorf("the entry holds %v", v)
	}

	plain := harness.StartXevlog(t, harness.XevlogOptions{Title: "bg-type-plain"})
	_, err = callAs(t, reg, sess, "type_text", map[string]any{"pid": plain.PID, "window_id": plain.Window, "text": "x"})
	if code := refusalCode(err); code != authz.CodeBackgroundUnavailable {
		t.Fatalf("type_text into a plain window without devices = %v, want background_unavailable", err)
	}
	if evs := harness.Filter(plain.Events(), "key_press"); len(evs) != 0 {
		t.Errorf("keys were sent: %+v", evs)
	}
}

// windowOfTest waits for window id as the backend sees it.
func windowOfTest(t *testing.T, b *x11.Backend, id uint32) x11.Window {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		w, err := b.Window(t.Context(), id)
		if err == nil && w.Mapped {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("window 0x%x: %v", id, err)
		}
	}
}

// TestBackgroundOnOwnDisplay: on a display the session owns, input defaults to the core
// devices, and asking for background still gets the session's own pointer (the display's
// server keeps the pair: the host starts it with -noreset).
func TestBackgroundOnOwnDisplay(t *testing.T) {
	reg, b, _ := a11ySetup(t, atspi.Options{})
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "own-bg", Width: 300, Height: 200})
	windowOfTest(t, b, xl.Window)
	sess := ownSession("own-bg", "unrestricted")
	for _, tc := range []struct{ mode, route, delivery string }{
		{"", "xtest", "foreground"},
		{"background", "xinput2", "background"},
		{"foreground", "xtest", "foreground"},
	} {
		xl.Reset()
		args := map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 20, "y": 30}
		if tc.mode != "" {
			args["delivery_mode"] = tc.mode
		}
		r, err := callAs(t, reg, sess, "click", args)
		if err != nil {
			t.Fatalf("click %q: %v", tc.mode, err)
		}
		if res := details(t, r); res["route"] != tc.route || res["delivery"] != tc.delivery {
			t.Errorf("click with delivery_mode %q = route %v delivery %v, want %s %s", tc.mode, res["route"], res["delivery"], tc.route, tc.delivery)
		}
		evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) > 0 })
		if p := harness.Filter(evs, "button_press"); len(p) != 1 || p[0].X != 20 || p[0].Y != 30 {
			t.Errorf("click with delivery_mode %q: presses %+v, want one at (20,30)", tc.mode, p)
		}
	}
}
