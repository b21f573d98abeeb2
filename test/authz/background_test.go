package authze2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// xdo runs xdotool under the oracle's lock and returns its trimmed output.
func xdo(t testing.TB, args ...string) string {
	t.Helper()
	xdoMu.Lock()
	defer xdoMu.Unlock()
	out, err := exec.Command("xdotool", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("xdotool %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// devices is the server's list of input devices (xinput list --name-only).
func devices(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("xinput", "list", "--name-only").CombinedOutput()
	if err != nil {
		t.Fatalf("xinput list: %v: %s", err, out)
	}
	return string(out)
}

// personAt focuses the person's window and parks their pointer, and returns the check that
// both are still so.
func personAt(t *testing.T, person *app, x, y int) func(string) {
	t.Helper()
	xdo(t, "windowactivate", "--sync", fmt.Sprint(person.Window))
	xdo(t, "mousemove", "--sync", fmt.Sprint(x), fmt.Sprint(y))
	wantLoc, wantFocus := fmt.Sprintf("x:%d y:%d ", x, y), fmt.Sprint(person.Window)
	return func(when string) {
		t.Helper()
		if loc := xdo(t, "getmouselocation"); !strings.HasPrefix(loc, wantLoc) {
			t.Errorf("%s: the person's pointer is at %q, want %s", when, loc, wantLoc)
		}
		if f := xdo(t, "getwindowfocus"); f != wantFocus {
			t.Errorf("%s: the person's focus is on %s, want their window %s", when, f, wantFocus)
		}
	}
}

// waitGone waits until no listed input device contains name.
func waitGone(t *testing.T, what, name string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Contains(devices(t), name) {
		if time.Now().After(deadline) {
			t.Errorf("%s: devices %q are still listed:\n%s", what, name, devices(t))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBackgroundDelivery: on a display shared with a person, default input goes through the
// session's own devices — the agent's window gets the click, the person's pointer and
// focus stay — and input that no background route can deliver is refused with nothing
// sent; foreground delivery is refused with foreground_required until a background attempt
// on the window failed, and then puts the person's window and pointer back.
func TestBackgroundDelivery(t *testing.T) {
	requireDesktop(t)
	user := userDesk(t)
	person := startApp(t, appA, "bg-person")
	frameAt(t, user, person.Window, 700, 420)
	h := startSharedHost(t, host.Options{Consent: func(context.Context, host.ConsentRequest) host.ConsentDecision {
		return host.ConsentDecision{Granted: true}
	}})
	s := session(t, h, host.SessionSpec{Label: "bg"})
	own := launchApp(t, s, appA, "bg-own")
	frameAt(t, user, own.Window, 60, 80)
	untouched := personAt(t, person, 1270, 790)

	res := call(t, s, "click", map[string]any{"pid": own.PID, "window_id": own.Window, "x": 30, "y": 40})
	check(t, "background click", res, "")
	if st := detailsOf(t, res); st["delivery"] != "background" || st["route"] != "xinput2" {
		t.Errorf("click delivered %v via %v, want background via xinput2", st["delivery"], st["route"])
	}
	own.waitCount(t, "button_release", 1)
	if e := own.events(t); !hasPress(e, 30, 40) {
		t.Errorf("the agent's window did not log a press at (30,40): %+v", e)
	}
	untouched("after a background click")
	if !strings.Contains(devices(t), "cua-host bg (pid ") {
		t.Errorf("the session's devices are not listed:\n%s", devices(t))
	}

	t.Run("desktop background", func(t *testing.T) {
		// The top-right corner of the screen: no window is there.
		ownBefore, personBefore := own.count(t, "button_press"), person.count(t, "button_press")
		res := call(t, s, "click", map[string]any{"scope": "desktop", "x": 1275, "y": 3})
		refused(t, "click on the desktop background", res, authz.CodeBackgroundUnavailable, "foreground")
		time.Sleep(100 * time.Millisecond)
		if own.count(t, "button_press") != ownBefore || person.count(t, "button_press") != personBefore {
			t.Errorf("a refused click reached a window")
		}
		untouched("after the refused click")
	})

	t.Run("foreground", func(t *testing.T) {
		before := own.count(t, "button_press")
		fg := map[string]any{"pid": own.PID, "window_id": own.Window, "x": 50, "y": 20, "delivery_mode": "foreground"}
		// Asked for first, foreground delivery would take the person's pointer and focus
		// for input the session's own devices can deliver: refused, nothing sent.
		refused(t, "a first foreground click", call(t, s, "click", fg), authz.CodeForegroundRequired, "retry")
		time.Sleep(100 * time.Millisecond)
		if own.count(t, "button_press") != before {
			t.Errorf("a refused foreground click reached the window")
		}
		untouched("after the refused foreground click")
		// The person's window covers the agent's: background delivery cannot reach it
		// (the test client has no accessibility route), so a foreground retry is allowed.
		frameAt(t, user, person.Window, 60, 80)
		xdo(t, "windowraise", fmt.Sprint(person.Window))
		xdo(t, "sleep", "0.2")
		refused(t, "a background click on the covered window", call(t, s, "click", map[string]any{"pid": own.PID, "window_id": own.Window, "x": 50, "y": 20}), authz.CodeBackgroundUnavailable, "foreground")
		// The person moves their window away again; the retry is in the foreground.
		frameAt(t, user, person.Window, 700, 420)
		res := call(t, s, "click", fg)
		check(t, "foreground click", res, "")
		if st := detailsOf(t, res); st["delivery"] != "foreground" || st["route"] != "xtest" {
			t.Errorf("click delivered %v via %v, want foreground via xtest", st["delivery"], st["route"])
		}
		own.waitCount(t, "button_press", before+1)
		untouched("after a foreground click (put back)")
	})
}

// detailsOf returns what a result reports beyond its contract shape.
func detailsOf(t testing.TB, res host.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.Details, &m); err != nil {
		t.Fatalf("details %s: %v", res.Details, err)
	}
	return m
}

func hasPress(evs []event, x, y int) bool {
	for _, e := range evs {
		if e.Type == "button_press" && e.X == x && e.Y == y {
			return true
		}
	}
	return false
}

// TestSessionDevicesRemoved: a session's input devices go when it ends, when the host
// revokes it, and when its worker is killed (the host removes them then), and a button
// they held is released when the session ends. Oracles: xinput, and the window that got
// the press.
func TestSessionDevicesRemoved(t *testing.T) {
	requireDesktop(t)
	user := userDesk(t)
	h := startSharedHost(t, host.Options{})
	n := 0
	use := func(label string) (*host.Session, *app) {
		t.Helper()
		s := session(t, h, host.SessionSpec{Label: label})
		a := launchApp(t, s, appA, label+"-win")
		frameAt(t, user, a.Window, 60+n*350, 80) // apart: an ended session's windows stay
		n++
		check(t, label+" click", call(t, s, "click", map[string]any{"pid": a.PID, "window_id": a.Window, "x": 5, "y": 5}), "")
		if !strings.Contains(devices(t), "cua-host "+label+" (pid ") {
			t.Fatalf("%s: the session's devices are not listed:\n%s", label, devices(t))
		}
		// A button left held: ending the session must release it.
		check(t, label+" mouse_button_down", call(t, s, "mouse_button_down", map[string]any{"pid": a.PID, "window_id": a.Window, "x": 9, "y": 9}), "")
		a.waitCount(t, "button_press", 2)
		return s, a
	}
	s, a := use("dev-end")
	check(t, "end_session", call(t, s, "end_session", nil), "")
	waitGone(t, "after end_session", "cua-host dev-end ")
	a.waitCount(t, "button_release", 2)

	s, a = use("dev-revoke")
	if err := s.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "after revocation", "cua-host dev-revoke ")
	a.waitCount(t, "button_release", 2)

	use("dev-kill")
	pid := h.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the killed worker was not reaped")
	}
	waitGone(t, "after SIGKILL of the worker", fmt.Sprintf("(pid %d)", pid))
}
