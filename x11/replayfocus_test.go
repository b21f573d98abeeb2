package x11_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// TestReplayWaitReadsThePersonsFocus: the wait after input through a session's own
// pointer reads the core keyboard's focus (the person's) with its last question, not the
// focus of the session's keyboard, although it asks on the session's connection, whose
// core requests use the session's devices. The oracle is xdotool, a client of its own.
// The pointer only moves: a press anywhere would make the window manager move the focus
// in its own time (openbox does on the root), which the click's callers watch for.
func TestReplayWaitReadsThePersonsFocus(t *testing.T) {
	b := open(t)
	_, term := startCat(t, b)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 200, Height: 150})
	person := windowOf(t, b, xl)
	seat, err := b.OpenSeat(t.Context(), "replay-focus-test")
	if err != nil {
		t.Fatalf("OpenSeat: %v", err)
	}
	defer seat.Close(context.Background())
	dev := seat.Devices()
	w, h := b.ScreenSize()
	empty := x11.Point{X: w - 2, Y: h - 2}
	for _, c := range []struct{ core, sessionKbd uint32 }{{person.ID, term}, {term, person.ID}} {
		harness.Command(t, "xdotool", "windowfocus", "--sync", fmt.Sprint(c.core))
		if err := seat.Focus(t.Context(), c.sessionKbd); err != nil {
			t.Fatalf("Focus the session's keyboard on 0x%x: %v", c.sessionKbd, err)
		}
		oracle := strings.TrimSpace(harness.Command(t, "xdotool", "getwindowfocus", "-f"))
		if err := dev.MoveTo(t.Context(), empty); err != nil {
			t.Fatalf("MoveTo: %v", err)
		}
		seen, err := dev.WaitPointerReplayed(t.Context(), 200*time.Millisecond, 3*time.Second)
		if err != nil {
			t.Fatalf("WaitPointerReplayed: %v", err)
		}
		if oracle != fmt.Sprint(c.core) {
			t.Fatalf("xdotool reads the core focus on %s, want 0x%x", oracle, c.core)
		}
		if !seen.FocusRead || seen.Focus != c.core {
			t.Errorf("core focus on 0x%x, the session's keyboard's on 0x%x: the wait read %+v", c.core, c.sessionKbd, seen)
		}
		if !seen.Valid || seen.At != empty {
			t.Errorf("the wait saw the pointer %+v, want it at %v", seen, empty)
		}
	}
	// The core devices have no session connection to ask on: nothing is read.
	if err := b.Core().MoveTo(t.Context(), empty); err != nil {
		t.Fatal(err)
	}
	seen, err := b.Core().WaitPointerReplayed(t.Context(), 200*time.Millisecond, 3*time.Second)
	if err != nil || seen.FocusRead {
		t.Errorf("the core devices' wait = %+v, %v; want no focus read", seen, err)
	}
}

// TestWindowSaysWhetherItTakesPings: Window.Pings follows the client's WM_PROTOCOLS as
// xprop changes and reads it, through the description the backend keeps from events.
func TestWindowSaysWhetherItTakesPings(t *testing.T) {
	b := open(t)
	_, term := startCat(t, b)
	id := fmt.Sprint(term)
	for _, protos := range []string{"WM_DELETE_WINDOW", "_NET_WM_PING", "WM_DELETE_WINDOW"} {
		harness.Command(t, "xprop", "-id", id, "-f", "WM_PROTOCOLS", "32a", "-set", "WM_PROTOCOLS", protos)
		oracle := harness.Command(t, "xprop", "-id", id, "WM_PROTOCOLS")
		want := protos == "_NET_WM_PING"
		if !strings.HasSuffix(strings.TrimSpace(oracle), " "+protos) {
			t.Fatalf("xprop set %q but reads %q", protos, oracle)
		}
		w, err := b.Window(t.Context(), term)
		if err != nil {
			t.Fatalf("Window: %v", err)
		}
		if w.Pings != want {
			t.Errorf("WM_PROTOCOLS %q (xprop: %q): Pings = %v", protos, strings.TrimSpace(oracle), w.Pings)
		}
	}
}
