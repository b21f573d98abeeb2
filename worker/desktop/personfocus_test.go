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

// TestFocusGivenBackLeavesTheSessionsKeyboardFocused: a toolkit that keeps one focus flag
// per window for all keyboards (GTK) sees the person's keyboard leave its window when
// focus a window manager moved there is given back, and takes that for its window losing
// the focus, although the session's keyboard still has it (GTK 4 then marks no element
// focused, and the next type_text cannot be read back). Here, right after keys went to the
// window, its core focus is moved there (as a manager that follows the session keyboard
// does); the focus watch gives it back and tells the client again that the session's
// keyboard has the focus: the last XI2 focus event the window got is a focus-in. Oracle:
// xevlog's log of every keyboard's XI2 focus events, in the order the server delivered
// them; xdotool for the person's focus.
func TestFocusGivenBackLeavesTheSessionsKeyboardFocused(t *testing.T) {
	reg, b, _ := a11ySetup(t, atspi.Options{})
	person := harness.StartXevlog(t, harness.XevlogOptions{Title: "person", Width: 300, Height: 200, Color: "00ff00"})
	harness.Command(t, "xdotool", "windowmove", "--sync", fmt.Sprint(person.Window), "700", "100")
	target := harness.StartXevlog(t, harness.XevlogOptions{Title: "refocus", Width: 300, Height: 200, XI2Focus: true})
	harness.Command(t, "xdotool", "windowmove", "--sync", fmt.Sprint(target.Window), "50", "100")
	harness.Command(t, "xdotool", "windowactivate", "--sync", fmt.Sprint(person.Window))
	w := windowOfTest(t, b, target.Window)
	sess := sharedSession("refocus")
	if _, err := callAs(t, reg, sess, "type_text", map[string]any{"pid": w.PID, "window_id": w.ID, "text": "x"}); err != nil {
		t.Fatalf("type_text: %v", err)
	}
	target.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "key_press")) > 0 })
	target.Reset()
	harness.Command(t, "xdotool", "windowfocus", fmt.Sprint(target.Window))
	focused := func() string { return strings.TrimSpace(harness.Command(t, "xdotool", "getwindowfocus")) }
	for deadline := time.Now().Add(2 * time.Second); focused() != fmt.Sprint(person.Window); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the focus watch did not give the person's focus back within 2 s: it is on %s", focused())
		}
	}
	time.Sleep(300 * time.Millisecond)
	evs := harness.Filter(target.Events(), "xi_focus_in", "xi_focus_out")
	var last *harness.Event
	for i := range evs {
		// Focus events about the pointer's position (NotifyPointer, PointerRoot, None)
		// are not the window's focus.
		if e := &evs[i]; e.Detail < 5 {
			last = e
		}
	}
	if last == nil || last.Type != "xi_focus_in" {
		t.Errorf("the last focus event the window got is %+v, want a focus-in of the session's keyboard; all: %+v", last, evs)
	}
}
