package personui

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/test/testkit"
)

// topLevelOf returns the root's child that holds window id (its frame, or itself), as
// xwininfo reports the tree.
func topLevelOf(t *testing.T, id uint32) string {
	t.Helper()
	w := hexID(id)
	for range 8 {
		out := xrun(t, "xwininfo", "-id", w, "-tree")
		_, parent, _ := strings.Cut(out, "Parent window id: ")
		parent, _, _ = strings.Cut(parent, " ")
		if strings.Contains(out, "Parent window id: "+parent+" (the root window)") {
			return w
		}
		w = parent
	}
	t.Fatalf("no top-level window above 0x%x", id)
	return ""
}

// stackedAbove reports whether xwininfo -root -children, which lists the root's children
// top-most first, lists window a before window b.
func stackedAbove(t *testing.T, a, b string) bool {
	t.Helper()
	out := xrun(t, "xwininfo", "-root", "-children")
	ia, ib := strings.Index(out, "\n     "+a+" "), strings.Index(out, "\n     "+b+" ")
	if ia < 0 || ib < 0 {
		t.Fatalf("xwininfo -root -children lists %s at %d and %s at %d:\n%s", a, ia, b, ib, out)
	}
	return ia < ib
}

// rootChildren returns the ids xwininfo -root -children lists.
func rootChildren(t *testing.T) []string {
	t.Helper()
	var ids []string
	for _, l := range strings.Split(xrun(t, "xwininfo", "-root", "-children"), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "0x") {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// overrideXterm starts `xterm -xrm 'XTerm*overrideRedirect: true'` with geometry geo and
// returns its window once it is mapped: the new viewable override-redirect child of the
// root (such an xterm sets no name to search for). It is stopped at cleanup.
func overrideXterm(t *testing.T, geo string) string {
	t.Helper()
	before := map[string]bool{}
	for _, id := range rootChildren(t) {
		before[id] = true
	}
	cmd := exec.Command("xterm", "-xrm", "XTerm*overrideRedirect: true", "-geometry", geo, "-e", "sleep", "60")
	cmd.Env = testEnv
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, id := range rootChildren(t) {
			if before[id] {
				continue
			}
			c := exec.Command("xwininfo", "-id", id)
			c.Env = testEnv
			out, err := c.Output()
			if err == nil && strings.Contains(string(out), "Override Redirect State: yes") &&
				strings.Contains(string(out), "Map State: IsViewable") {
				return id
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the override-redirect xterm never showed")
	return ""
}

// raiser maps an override-redirect window over r from a client of the test's own and
// raises it again each time another top-level window is stacked, and every 5 ms, the way a
// program that wants to hide the indicator would. It is destroyed at cleanup.
func raiser(t *testing.T, r Rect) string {
	t.Helper()
	x, err := xgb.NewConnDisplay(testDisplay.Name())
	if err != nil {
		t.Fatal(err)
	}
	scr := xproto.Setup(x).DefaultScreen(x)
	w, _ := xproto.NewWindowId(x)
	if err := xproto.CreateWindowChecked(x, scr.RootDepth, w, scr.Root, int16(r.X), int16(r.Y),
		uint16(r.Width), uint16(r.Height), 0, xproto.WindowClassInputOutput, scr.RootVisual,
		xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0x00ff00, 1}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.ChangeWindowAttributesChecked(x, scr.Root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify}).Check(); err != nil {
		t.Fatal(err)
	}
	done, tick := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(tick)
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				xproto.ConfigureWindow(x, w, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
			}
		}
	}()
	go func() {
		defer close(done)
		for {
			ev, xerr := x.WaitForEvent()
			if ev == nil && xerr == nil {
				return
			}
			var other bool
			switch e := ev.(type) {
			case xproto.ConfigureNotifyEvent:
				other = e.Window != w
			case xproto.MapNotifyEvent:
				other = e.Window != w
			case xproto.CirculateNotifyEvent:
				other = e.Window != w
			}
			if other {
				xproto.ConfigureWindow(x, w, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
			}
		}
	}()
	t.Cleanup(func() { x.Close(); <-done; <-tick })
	if err := xproto.MapWindowChecked(x, w).Check(); err != nil {
		t.Fatal(err)
	}
	return hexID(uint32(w))
}

// TestIndicatorAboveOverrideRedirect: an override-redirect xterm mapped over the bar (as
// any program can) ends up under it — xwininfo lists the bar's top-level window above the
// xterm — and the person's click on Stop lands on Stop; nothing is reported as a cover.
func TestIndicatorAboveOverrideRedirect(t *testing.T) {
	opts := testOptions()
	opts.Logger = testkit.DebugLogger(t)
	r := startIndicatorWith(t, opts)
	r.ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	sh := latestShown(t, r.shown, 300*time.Millisecond)
	top := topLevelOf(t, sh.Window)
	xt := overrideXterm(t, "200x5+0+0")
	deadline := time.Now().Add(2 * time.Second)
	for !stackedAbove(t, top, xt) {
		if time.Now().After(deadline) {
			t.Fatalf("the bar (%s) is still under the override-redirect xterm %s", top, xt)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(ArmDelay + 200*time.Millisecond)
	clickButton(t, sh, "stop")
	if n := waitStops(&r.stops, 1); n != 1 {
		t.Fatalf("onStop called %d times after a click on Stop with the xterm mapped, want 1", n)
	}
	select {
	case why := <-r.covers:
		t.Fatalf("cover reported: %s", why)
	default:
	}
}

// TestAskAboveOverrideRedirect: the dialog too puts itself above an override-redirect
// window mapped over it, and the person's click answers.
func TestAskAboveOverrideRedirect(t *testing.T) {
	shown, res := startAsk(t, t.Context(), windowRequest())
	sh := waitShown(t, shown)
	top := topLevelOf(t, sh.Window)
	b := sh.Bounds
	xt := overrideXterm(t, fmt.Sprintf("60x10+%d+%d", b.X+10, b.Y+b.Height/2))
	deadline := time.Now().Add(2 * time.Second)
	for !stackedAbove(t, top, xt) {
		if time.Now().After(deadline) {
			t.Fatalf("the dialog (%s) is still under the override-redirect xterm %s", top, xt)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(ArmDelay + 200*time.Millisecond)
	clickButton(t, sh, AllowOnce.String())
	if r := waitResult(t, res); r.answer != AllowOnce || r.err != nil {
		t.Fatalf("Ask = %v, %v, want allow_once, nil", r.answer, r.err)
	}
}

// TestIndicatorCoveredReports: a window that raises itself over the bar each time the bar
// restacks keeps it covered: onCovered is called with the window.
func TestIndicatorCoveredReports(t *testing.T) {
	r := startIndicatorWith(t, testOptions())
	r.ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	sh := latestShown(t, r.shown, 300*time.Millisecond)
	w := raiser(t, Rect{X: sh.Bounds.X, Y: 0, Width: sh.Bounds.Width, Height: sh.Bounds.Height + 10})
	select {
	case why := <-r.covers:
		if !strings.Contains(why, w) {
			t.Errorf("onCovered(%q) does not name the covering window %s", why, w)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("onCovered not called within 3 s of a window raising itself over the bar")
	}
	// Once the bar is hidden (what the host does) the fight ends.
	r.ind.Set(nil)
}

// TestAskCoveredDenies: a dialog that a window keeps covering answers Deny with ErrCovered.
func TestAskCoveredDenies(t *testing.T) {
	shown, res := startAsk(t, t.Context(), windowRequest())
	sh := waitShown(t, shown)
	start := time.Now()
	w := raiser(t, Rect{X: sh.Bounds.X + 20, Y: sh.Bounds.Y + 20, Width: 100, Height: 40})
	r := waitResult(t, res)
	if r.answer != Deny || !errors.Is(r.err, ErrCovered) {
		t.Fatalf("Ask = %v, %v under a window that keeps raising itself, want deny, ErrCovered", r.answer, r.err)
	}
	if !strings.Contains(r.err.Error(), w) {
		t.Errorf("the error %q does not name the covering window %s", r.err, w)
	}
	t.Logf("denied %v after the cover appeared: %v", time.Since(start), r.err)
}
