package personui

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// indicatorRun is an Indicator with what it reported: each Shown, the Stop presses and the
// covers.
type indicatorRun struct {
	ind    *Indicator
	shown  chan Shown
	stops  atomic.Int32
	covers chan string
}

// startIndicatorWith starts an Indicator with opts (OnShown is the run's), closed at cleanup.
func startIndicatorWith(t *testing.T, opts Options) *indicatorRun {
	t.Helper()
	requireDisplay(t)
	r := &indicatorRun{shown: make(chan Shown, 64), covers: make(chan string, 16)}
	opts.OnShown = func(s Shown) { r.shown <- s }
	ind, err := NewIndicator(t.Context(), opts, func() { r.stops.Add(1) }, func(why string) { r.covers <- why })
	if err != nil {
		t.Fatalf("NewIndicator: %v", err)
	}
	r.ind = ind
	t.Cleanup(func() { ind.Close() })
	return r
}

// startIndicator starts an Indicator whose Shown reports and Stop presses the test reads.
func startIndicator(t *testing.T) (*Indicator, <-chan Shown, *atomic.Int32) {
	t.Helper()
	r := startIndicatorWith(t, testOptions())
	return r.ind, r.shown, &r.stops
}

// latestShown waits for a Shown and then drains any that follow within settle.
func latestShown(t *testing.T, ch <-chan Shown, settle time.Duration) Shown {
	t.Helper()
	sh := waitShown(t, ch)
	for {
		select {
		case sh = <-ch:
		case <-time.After(settle):
			return sh
		}
	}
}

// viewable reports whether xwininfo says window id is viewable.
func viewable(t *testing.T, id uint32) bool {
	t.Helper()
	out := xrun(t, "xwininfo", "-id", hexID(id))
	return strings.Contains(out, "Map State: IsViewable")
}

func TestIndicatorShowUpdateHide(t *testing.T) {
	ind, shown, _ := startIndicator(t)
	ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	sh := latestShown(t, shown, 300*time.Millisecond)
	if !viewable(t, sh.Window) {
		t.Fatalf("indicator 0x%x not viewable after Set", sh.Window)
	}
	if sh.Bounds.Y != 0 || sh.Bounds.Width >= 1280 {
		t.Errorf("indicator bounds %+v, want a bar at the top narrower than the screen", sh.Bounds)
	}
	if c := sh.Bounds.X + sh.Bounds.Width/2; c < 630 || c > 650 {
		t.Errorf("indicator centre x = %d, want about 640", c)
	}
	ind.Set([]Session{{Label: "build-bot", Mode: "standard"}, {Label: "a-much-longer-session-label", Mode: "bounded"}})
	sh2 := latestShown(t, shown, 300*time.Millisecond)
	if sh2.Bounds.Width <= sh.Bounds.Width {
		t.Errorf("indicator width %d after a longer list, want more than %d", sh2.Bounds.Width, sh.Bounds.Width)
	}
	ind.Set(nil)
	deadline := time.Now().Add(5 * time.Second)
	for viewable(t, sh.Window) {
		if time.Now().After(deadline) {
			t.Fatal("indicator still viewable 5 s after Set(nil)")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestIndicatorStop(t *testing.T) {
	ind, shown, stops := startIndicator(t)
	ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	sh := latestShown(t, shown, 200*time.Millisecond)
	time.Sleep(ArmDelay + 100*time.Millisecond)
	clickButton(t, sh, "stop")
	clickButton(t, sh, "stop")
	deadline := time.Now().Add(5 * time.Second)
	for stops.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := stops.Load(); n != 2 {
		t.Fatalf("onStop called %d times after two clicks, want 2", n)
	}
}

func TestIndicatorWindowProperties(t *testing.T) {
	ind, shown, _ := startIndicator(t)
	ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	sh := latestShown(t, shown, 200*time.Millisecond)
	out := xrun(t, "xprop", "-id", hexID(sh.Window))
	for _, want := range []string{
		`WM_NAME(STRING) = "cua-host: agent sessions active: build-bot (standard)"`,
		`WM_CLASS(STRING) = "cua-host", "cua-host"`,
		fmt.Sprintf("_NET_WM_PID(CARDINAL) = %d", os.Getpid()),
		"_NET_WM_WINDOW_TYPE_DOCK",
		"_NET_WM_STATE_ABOVE",
		"Client accepts input or input focus: False",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("xprop -id %s lacks %q:\n%s", hexID(sh.Window), want, out)
		}
	}
	if sh.Bounds.Height > 60 || sh.Bounds.Width > 1280*3/4 {
		t.Errorf("indicator bounds %+v: too large for a bar", sh.Bounds)
	}
	if f := strings.TrimSpace(xrun(t, "xdotool", "getwindowfocus")); f == fmt.Sprint(sh.Window) {
		t.Errorf("indicator has the keyboard focus")
	}
}

func TestIndicatorEarlyClickIgnored(t *testing.T) {
	ind, shown, stops := startIndicator(t)
	ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	sh := waitShown(t, shown)
	at := time.Now()
	clickButton(t, sh, "stop")
	if d := time.Since(at); d > ArmDelay-150*time.Millisecond {
		t.Skipf("xdotool took %v to click; the click was not early", d)
	}
	time.Sleep(ArmDelay)
	if n := stops.Load(); n != 0 {
		t.Fatalf("onStop called %d times for a click within %v of showing", n, ArmDelay)
	}
	// A resize moves the button: it needs a fresh ArmDelay too.
	ind.Set([]Session{{Label: "build-bot", Mode: "standard"}, {Label: "second", Mode: "bounded"}})
	sh = latestShown(t, shown, 100*time.Millisecond)
	at = time.Now()
	clickButton(t, sh, "stop")
	if d := time.Since(at); d > ArmDelay-250*time.Millisecond {
		t.Skipf("xdotool took %v to click; the click was not early", d)
	}
	time.Sleep(200 * time.Millisecond)
	if n := stops.Load(); n != 0 {
		t.Fatalf("onStop called %d times for a click right after the bar moved", n)
	}
}

func TestIndicatorClose(t *testing.T) {
	ind, shown, _ := startIndicator(t)
	ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	sh := waitShown(t, shown)
	if err := ind.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if windowListed(t, sh.Window) {
		t.Errorf("indicator 0x%x still listed after Close", sh.Window)
	}
	ind.Set([]Session{{Label: "late", Mode: "standard"}}) // a no-op
	if err := ind.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
