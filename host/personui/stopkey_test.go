package personui

import (
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// waitStops waits until stops reaches want (or 3 s pass) and returns it.
func waitStops(stops *atomic.Int32, want int32) int32 {
	deadline := time.Now().Add(3 * time.Second)
	for stops.Load() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return stops.Load()
}

// TestIndicatorStopKey: on Xvfb (XTEST only) the stop key pressed with xdotool presses Stop,
// once per press, whether the bar is shown or not; pressed on a session's own keyboard it
// does not.
func TestIndicatorStopKey(t *testing.T) {
	r := startIndicatorWith(t, testOptions())
	if k := r.ind.StopKey(); k != StopKey {
		t.Fatalf("StopKey() = %q, want %q", k, StopKey)
	}
	session := newInputPair(t, xinput2.SeatName("agent", os.Getpid()))
	session.stopKey(t)
	time.Sleep(300 * time.Millisecond)
	if n := r.stops.Load(); n != 0 {
		t.Fatalf("onStop called %d times after a session's own keyboard pressed %s", n, StopKey)
	}
	xdotoolOK(t, "key", "ctrl+alt+shift+Escape")
	if n := waitStops(&r.stops, 1); n != 1 {
		t.Fatalf("onStop called %d times after xdotool key ctrl+alt+shift+Escape, want 1", n)
	}
	r.ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
	latestShown(t, r.shown, 200*time.Millisecond)
	xdotoolOK(t, "key", "ctrl+alt+shift+Escape")
	if n := waitStops(&r.stops, 2); n != 2 {
		t.Fatalf("onStop called %d times after a second press, want 2", n)
	}
	// Escape alone, or with fewer modifiers, is not the stop key.
	xdotoolOK(t, "key", "Escape", "ctrl+alt+Escape", "shift+Escape")
	time.Sleep(300 * time.Millisecond)
	if n := r.stops.Load(); n != 2 {
		t.Fatalf("onStop called %d times after other Escape combinations, want 2", n)
	}
}

// TestIndicatorStopKeyPhysicalOnly: with a physical keyboard (the seam), the stop key
// pressed through XTEST (xdotool) does nothing; pressed on the person's keyboard it stops.
func TestIndicatorStopKeyPhysicalOnly(t *testing.T) {
	person := newInputPair(t, personName)
	opts := testOptions()
	opts.physicalForTest = personSeam
	r := startIndicatorWith(t, opts)
	xdotoolOK(t, "key", "ctrl+alt+shift+Escape")
	time.Sleep(300 * time.Millisecond)
	if n := r.stops.Load(); n != 0 {
		t.Fatalf("onStop called %d times after an XTEST press of the stop key", n)
	}
	person.stopKey(t)
	if n := waitStops(&r.stops, 1); n != 1 {
		t.Fatalf("onStop called %d times after the person pressed the stop key, want 1", n)
	}
}

// TestIndicatorStopKeyTaken: when another client holds the combination, the indicator says
// Stop is click-only, logs a warning, and the key goes to the other client.
func TestIndicatorStopKeyTaken(t *testing.T) {
	requireDisplay(t)
	other, err := xgb.NewConnDisplay(testDisplay.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	root := xproto.Setup(other).DefaultScreen(other).Root
	kcs, err := keycodesOf(other, keysymEscape)
	if err != nil || len(kcs) == 0 {
		t.Fatalf("Escape keycode: %v", err)
	}
	if err := xproto.ChangeWindowAttributesChecked(other, root, xproto.CwEventMask, []uint32{xproto.EventMaskKeyPress}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.GrabKeyChecked(other, true, root, stopMods, xproto.Keycode(kcs[0]),
		xproto.GrabModeAsync, xproto.GrabModeAsync).Check(); err != nil {
		t.Fatalf("the other client's GrabKey: %v", err)
	}
	var logs logBuffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	r := startIndicatorWith(t, opts)
	if k := r.ind.StopKey(); k != "" {
		t.Fatalf("StopKey() = %q while another client holds it, want \"\"", k)
	}
	if !strings.Contains(logs.String(), "Stop is click-only") {
		t.Errorf("no warning logged; logs:\n%s", logs.String())
	}
	if h := stopHint(false); !strings.Contains(h, "click only") {
		t.Errorf("stopHint(false) = %q", h)
	}
	got := make(chan struct{}, 1)
	go func() {
		for {
			ev, xerr := other.WaitForEvent()
			if ev == nil && xerr == nil {
				return
			}
			if _, ok := ev.(xproto.KeyPressEvent); ok {
				select {
				case got <- struct{}{}:
				default:
				}
			}
		}
	}()
	xdotoolOK(t, "key", "ctrl+alt+shift+Escape")
	select {
	case <-got:
	case <-time.After(3 * time.Second):
		t.Fatal("the other client did not get the key it grabbed")
	}
	if n := r.stops.Load(); n != 0 {
		t.Fatalf("onStop called %d times for a key another client holds", n)
	}
}

func TestStopModifiers(t *testing.T) {
	mods := stopModifiers()
	if len(mods) != 16 {
		t.Fatalf("%d modifier combinations, want 16", len(mods))
	}
	seen := map[uint32]bool{}
	for _, m := range mods {
		if m&stopMods != stopMods || seen[m] {
			t.Errorf("combination 0x%x: lacks Ctrl+Alt+Shift or repeats", m)
		}
		seen[m] = true
	}
	if h := stopHint(true); !strings.Contains(h, "click or "+StopKey) {
		t.Errorf("stopHint(true) = %q", h)
	}
}
