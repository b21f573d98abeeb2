package x11_test

import (
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// TestAwaitDrawn: a window that shows only its background is not drawn, and AwaitDrawn
// waits its whole bound for it; once another client draws a rectangle into it, AwaitDrawn
// returns true, not before. xevlog never draws: its window is its background colour. The
// drawing comes from a connection of the test's own, at a time the test knows.
func TestAwaitDrawn(t *testing.T) {
	b := open(t)
	x := harness.StartXevlog(t, harness.XevlogOptions{Title: "blank", Color: "3366aa"})
	windowOf(t, b, x)

	const bound = 300 * time.Millisecond
	drawn, waited, err := b.AwaitDrawn(t.Context(), x.Window, bound)
	if err != nil || drawn || waited < bound-30*time.Millisecond {
		t.Fatalf("AwaitDrawn(a blank window) = %v after %v, %v; want false after about %v", drawn, waited, err, bound)
	}

	c, err := xgb.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gc, err := xproto.NewGcontextId(c)
	if err != nil {
		t.Fatal(err)
	}
	win := xproto.Window(x.Window)
	xproto.CreateGC(c, gc, xproto.Drawable(win), xproto.GcForeground, []uint32{0xffee00})
	const delay = 250 * time.Millisecond
	done := make(chan time.Time, 1)
	go func() {
		time.Sleep(delay)
		done <- time.Now()
		xproto.PolyFillRectangle(c, xproto.Drawable(win), gc, []xproto.Rectangle{{X: 40, Y: 30, Width: 12, Height: 5}})
		xproto.GetInputFocus(c).Reply()
	}()
	start := time.Now()
	drawn, waited, err = b.AwaitDrawn(t.Context(), x.Window, 3*time.Second)
	sentAt := <-done
	if err != nil || !drawn {
		t.Fatalf("AwaitDrawn(a window drawn into after %v) = %v after %v, %v; want true", delay, drawn, waited, err)
	}
	if back := start.Add(waited); back.Before(sentAt) {
		t.Errorf("AwaitDrawn returned %v before the rectangle was drawn", sentAt.Sub(back))
	}
	if waited > delay+time.Second {
		t.Errorf("AwaitDrawn took %v for a window drawn into after %v", waited, delay)
	}

	// A window already drawn costs one look.
	drawn, waited, err = b.AwaitDrawn(t.Context(), x.Window, 3*time.Second)
	if err != nil || !drawn || waited > 200*time.Millisecond {
		t.Errorf("AwaitDrawn(a drawn window) = %v after %v, %v; want true at once", drawn, waited, err)
	}
}

// TestAwaitStill: while another client keeps drawing into a window, AwaitStill does not
// return true; once it stops, AwaitStill returns true after the quiet asked for. The
// drawing comes from a connection of the test's own, on a schedule the test knows.
func TestAwaitStill(t *testing.T) {
	b := open(t)
	x := harness.StartXevlog(t, harness.XevlogOptions{Title: "changing", Color: "336699"})
	windowOf(t, b, x)
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gc, err := xproto.NewGcontextId(c)
	if err != nil {
		t.Fatal(err)
	}
	win := xproto.Drawable(x.Window)
	xproto.CreateGC(c, gc, win, xproto.GcForeground, []uint32{0xffee00})
	// A new bar every 30 ms for drawFor, then none; each call draws its own column (x).
	draw := func(x int16, drawFor time.Duration) <-chan time.Time {
		stopped := make(chan time.Time, 1)
		go func() {
			end := time.Now().Add(drawFor)
			for i := 0; time.Now().Before(end); i++ {
				xproto.PolyFillRectangle(c, win, gc, []xproto.Rectangle{{X: x, Y: int16(10 + 4*(i%70)), Width: 150, Height: 3}})
				xproto.GetInputFocus(c).Reply()
				time.Sleep(30 * time.Millisecond)
			}
			stopped <- time.Now()
		}()
		return stopped
	}

	const quiet = 150 * time.Millisecond
	stopped := draw(10, time.Second)
	still, waited, err := b.AwaitStill(t.Context(), x.Window, quiet, 500*time.Millisecond)
	if err != nil || still {
		t.Errorf("AwaitStill(a window drawn into every 30 ms, bound 500 ms) = %v after %v, %v; want false", still, waited, err)
	}
	<-stopped

	stopped = draw(200, 400*time.Millisecond)
	start := time.Now()
	still, waited, err = b.AwaitStill(t.Context(), x.Window, quiet, 3*time.Second)
	stoppedAt := <-stopped
	if err != nil || !still {
		t.Fatalf("AwaitStill(a window drawn into for 400 ms) = %v after %v, %v; want true", still, waited, err)
	}
	if back := start.Add(waited); back.Before(stoppedAt.Add(quiet - 60*time.Millisecond)) {
		t.Errorf("AwaitStill returned %v after the drawing stopped, want at least about %v", back.Sub(stoppedAt), quiet)
	}
	if waited > 400*time.Millisecond+quiet+time.Second {
		t.Errorf("AwaitStill took %v for a window drawn into for 400 ms", waited)
	}
}
