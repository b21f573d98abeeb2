package desktop

import (
	"context"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// TestVerifyClickReadBack checks when a click's read-back takes the pointer the wait for the
// click last saw and when it asks the server again. The backend is closed, so every
// question to the server fails and shows up as pointer_error: a case without it asked
// nothing.
func TestVerifyClickReadBack(t *testing.T) {
	harness.Require(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	be, err := x11.Open(ctx, x11.Options{})
	if err != nil {
		t.Fatal(err)
	}
	be.Close()
	d := &desk{b: be, cursors: newCursorStore()}
	want := x11.Point{X: 10, Y: 20}
	win := &x11.Window{ID: 0x111}
	target := &x11.TopLevel{Window: 0x111, Frame: 0x222}
	sibling := &x11.TopLevel{Window: 0x333, Frame: 0x222} // another window of the target's process
	seenAt := func(p x11.Point, child uint32) x11.PointerSeen {
		return x11.PointerSeen{At: p, Child: child, Valid: true}
	}
	cases := []struct {
		name   string
		win    *x11.Window
		landed *x11.TopLevel
		seen   x11.PointerSeen
		ok     bool
		asked  bool   // the server was asked (and, closed, failed)
		at     uint32 // window_at_pointer, when not asked
	}{
		{name: "the frame the guard found", win: win, landed: target, seen: seenAt(want, 0x222), ok: true, at: 0x111},
		{name: "another window of the process", win: win, landed: sibling, seen: seenAt(want, 0x222), at: 0x333},
		{name: "the pointer elsewhere", win: win, landed: target, seen: seenAt(x11.Point{X: 11, Y: 20}, 0x222), at: 0x111},
		{name: "another frame under the pointer", win: win, landed: target, seen: seenAt(want, 0x999), asked: true},
		{name: "nothing seen", win: win, landed: target, asked: true},
		{name: "no guard's answer", win: win, seen: seenAt(want, 0x222), asked: true},
		{name: "desktop scope", seen: seenAt(want, 0x999), ok: true},
	}
	for _, c := range cases {
		ev := map[string]any{}
		dl := &delivery{dev: be.Core(), landed: c.landed}
		ok := d.verifyClick(ctx, dl, want, c.win, ev, c.seen)
		_, asked := ev["pointer_error"]
		if ok != c.ok || asked != c.asked {
			t.Errorf("%s: verified %v, asked the server %v (%v); want %v, %v", c.name, ok, asked, ev, c.ok, c.asked)
		}
		if !c.asked && c.win != nil && ev["window_at_pointer"] != c.at {
			t.Errorf("%s: window_at_pointer = %v, want 0x%x", c.name, ev["window_at_pointer"], c.at)
		}
	}
}
