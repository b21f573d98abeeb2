package desktop_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11/atspi"
)

// TestClickKeepsThePersonsFocusFromALateClient: openbox focuses a window on a click into
// it by asking its client (WM_TAKE_FOCUS), and a toolkit that moves the focus itself does
// so when it gets to that message, after the click is through. A background click into
// such a client (xevlog -take-focus, which sets the focus 250 ms after the message) comes
// back with the person's focus on their own window, and the client does not take it after
// the call returned. Oracles: xevlog's log of the target's focus events, in the order the
// server delivered them, with a marker property the test changes once the call returned;
// xdotool for the focus after.
func TestClickKeepsThePersonsFocusFromALateClient(t *testing.T) {
	reg, b, _ := a11ySetup(t, atspi.Options{})
	person := harness.StartXevlog(t, harness.XevlogOptions{Title: "person", Width: 300, Height: 200, Color: "00ff00"})
	harness.Command(t, "xdotool", "windowmove", "--sync", fmt.Sprint(person.Window), "700", "100")
	target := harness.StartXevlog(t, harness.XevlogOptions{Title: "late-focus", Width: 300, Height: 200, TakeFocus: 250 * time.Millisecond})
	harness.Command(t, "xdotool", "windowmove", "--sync", fmt.Sprint(target.Window), "50", "100")
	harness.Command(t, "xdotool", "windowactivate", "--sync", fmt.Sprint(person.Window))
	w := windowOfTest(t, b, target.Window)
	focused := func() uint32 {
		id, err := strconv.ParseUint(strings.TrimSpace(harness.Command(t, "xdotool", "getwindowfocus")), 10, 32)
		if err != nil {
			t.Fatalf("xdotool getwindowfocus: %v", err)
		}
		return uint32(id)
	}
	if f := focused(); f != person.Window {
		t.Fatalf("the person's window 0x%x does not have the focus before the click (0x%x has)", person.Window, f)
	}
	target.Reset()

	sess := sharedSession("late-focus")
	r, err := callAs(t, reg, sess, "click", map[string]any{"pid": w.PID, "window_id": w.ID, "x": 100, "y": 100})
	if err != nil {
		t.Fatalf("click: %v", err)
	}
	after := focused()
	harness.Command(t, "xprop", "-id", fmt.Sprint(target.Window), "-f", "_XEVLOG_STILL", "32c", "-set", "_XEVLOG_STILL", "1")
	target.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "still")) > 0 })
	time.Sleep(600 * time.Millisecond) // longer than the client's delay
	evs := harness.Filter(target.Events(), "take_focus", "focus_in", "still", "button_press")
	if len(harness.Filter(evs, "take_focus")) == 0 {
		t.Fatalf("openbox did not ask the client to take the focus on the click, so this test shows nothing: %+v", evs)
	}
	if len(harness.Filter(evs, "button_press")) == 0 {
		t.Errorf("the press did not reach the window: %+v", evs)
	}
	marker := false
	for _, e := range evs {
		switch {
		case e.Type == "still":
			marker = true
		case e.Type == "focus_in" && marker:
			t.Errorf("the client took the focus after the click had returned: %+v", evs)
		}
	}
	if after != person.Window {
		t.Errorf("after the click the focus is on 0x%x, not on the person's window 0x%x (evidence %v)", after, person.Window, evidenceOf(t, r))
	}
	if f := focused(); f != person.Window {
		t.Errorf("%v after the click the focus is on 0x%x, not on the person's window 0x%x", 600*time.Millisecond, f, person.Window)
	}
}
