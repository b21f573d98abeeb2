package x11_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// foreignConn opens a second client connection, closed at cleanup: a client other than the
// backend, as far as the server can tell.
func foreignConn(t *testing.T) *xgb.Conn {
	t.Helper()
	xgb.Logger = log.New(io.Discard, "", 0)
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// overrideRedirect maps an override-redirect window at r on c and waits until it is viewable.
func overrideRedirect(t *testing.T, c *xgb.Conn, r x11.Rect) xproto.Window {
	t.Helper()
	scr := xproto.Setup(c).DefaultScreen(c)
	wid, err := xproto.NewWindowId(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := xproto.CreateWindowChecked(c, scr.RootDepth, wid, scr.Root, int16(r.X), int16(r.Y), uint16(r.Width), uint16(r.Height), 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0x00ff00, 1}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(c, wid).Check(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xproto.DestroyWindow(c, wid) })
	return wid
}

// moveTo places xevlog's window (client area) at x,y through the window manager.
func moveTo(t *testing.T, b *x11.Backend, xl *harness.Xevlog, x, y int) x11.Window {
	t.Helper()
	w := windowOf(t, b, xl)
	if _, _, err := b.SetFrame(t.Context(), w.ID, x11.Rect{X: x, Y: y, Width: w.Frame.Width, Height: w.Frame.Height}); err != nil {
		t.Fatal(err)
	}
	return windowOf(t, b, xl)
}

func TestTopLevelsAtFollowsTheServer(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	w := moveTo(t, b, xl, 100, 100)
	activate(t, b, w.ID)
	inside := x11.Point{X: w.Frame.X + 10, Y: w.Frame.Y + 10}

	top, err := b.TopLevelAt(t.Context(), inside)
	if err != nil {
		t.Fatal(err)
	}
	if top.Window != w.ID || top.PID != xl.PID || top.OverrideRedirect || top.Frame == 0 {
		t.Errorf("TopLevelAt(inside) = %+v, want window 0x%x pid %d, managed", top, w.ID, xl.PID)
	}

	t.Run("override-redirect", func(t *testing.T) {
		c := foreignConn(t)
		or := overrideRedirect(t, c, x11.Rect{X: w.Frame.X + 150, Y: w.Frame.Y + 50, Width: 100, Height: 100})
		covered := x11.Point{X: w.Frame.X + 200, Y: w.Frame.Y + 100}
		tops, err := b.TopLevelsAt(t.Context(), []x11.Point{inside, covered, inside})
		if err != nil {
			t.Fatal(err)
		}
		if tops[0].Window != w.ID || tops[2] != tops[0] {
			t.Errorf("uncovered points = %+v, %+v, want window 0x%x", tops[0], tops[2], w.ID)
		}
		if got := tops[1]; got.Window != uint32(or) || got.Frame != uint32(or) || !got.OverrideRedirect || got.PID != os.Getpid() {
			t.Errorf("covered point = %+v, want override-redirect 0x%x of pid %d", got, or, os.Getpid())
		}
		if at, err := b.WindowAt(t.Context(), covered); err != nil || at != uint32(or) {
			t.Errorf("WindowAt(covered) = 0x%x, %v, want 0x%x", at, err, or)
		}
	})

	t.Run("kept above", func(t *testing.T) {
		above := harness.StartXevlog(t, harness.XevlogOptions{Width: 120, Height: 120, Title: "above"})
		aw := moveTo(t, b, above, w.Frame.X+200, w.Frame.Y+100)
		harness.Command(t, "wmctrl", "-i", "-r", fmt.Sprint(aw.ID), "-b", "add,above")
		activate(t, b, w.ID) // raises w to the top of its layer only
		covered := x11.Point{X: aw.Frame.X + 20, Y: aw.Frame.Y + 20}
		deadline := time.Now().Add(5 * time.Second)
		for {
			top, err := b.TopLevelAt(t.Context(), covered)
			if err != nil {
				t.Fatal(err)
			}
			if top.Window == aw.ID && top.PID == above.PID && !top.OverrideRedirect {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("TopLevelAt(covered) = %+v, want 0x%x of pid %d", top, aw.ID, above.PID)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if top, _ := b.TopLevelAt(t.Context(), inside); top.Window != w.ID {
			t.Errorf("TopLevelAt(inside) = %+v, want 0x%x", top, w.ID)
		}
	})

	// The walk asks first about the frame and client it found last; what the server says
	// at the point decides, whatever was found there before.
	t.Run("what the last walk found is asked, not assumed", func(t *testing.T) {
		if top, err := b.TopLevelAt(t.Context(), inside); err != nil || top.Window != w.ID {
			t.Fatalf("TopLevelAt(inside) = %+v, %v, want 0x%x", top, err, w.ID)
		}
		c := foreignConn(t)
		or := overrideRedirect(t, c, x11.Rect{X: inside.X - 5, Y: inside.Y - 5, Width: 20, Height: 20})
		// The window manager may still be busy with the subtests before (raising w, or
		// placing the window of theirs whose id the server has just handed to the cover):
		// put the cover in place and on top until the server itself, asked on the other
		// connection, has it at the point.
		scr := xproto.Setup(c).DefaultScreen(c)
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			xproto.ConfigureWindow(c, or, xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowWidth|xproto.ConfigWindowHeight|xproto.ConfigWindowStackMode,
				[]uint32{uint32(inside.X - 5), uint32(inside.Y - 5), 20, 20, xproto.StackModeAbove})
			r, err := xproto.TranslateCoordinates(c, scr.Root, scr.Root, int16(inside.X), int16(inside.Y)).Reply()
			if err == nil && r.Child == or {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cover never came on top at %v (%v, %v)", inside, r, err)
			}
		}
		if top, err := b.TopLevelAt(t.Context(), inside); err != nil || top.Window != uint32(or) || !top.OverrideRedirect {
			t.Errorf("TopLevelAt(inside) under a new override-redirect window = %+v, %v, want 0x%x", top, err, or)
		}
		if tops, err := b.TopLevelsAt(t.Context(), []x11.Point{{X: inside.X + 30, Y: inside.Y + 30}, inside}); err != nil || tops[0].Window != w.ID || tops[1].Window != uint32(or) {
			t.Errorf("TopLevelsAt(beside, inside) = %+v, %v, want 0x%x then 0x%x", tops, err, w.ID, or)
		}
		xproto.DestroyWindow(c, or)
		xproto.GetInputFocus(c).Reply() // the destroy is processed
		if top, err := b.TopLevelAt(t.Context(), inside); err != nil || top.Window != w.ID {
			t.Errorf("TopLevelAt(inside) after the cover went = %+v, %v, want 0x%x", top, err, w.ID)
		}
		if top, err := b.TopLevelAt(t.Context(), x11.Point{X: 1279, Y: 799}); err != nil || top.Window != 0 {
			t.Errorf("TopLevelAt(an empty corner) = %+v, %v, want the root", top, err)
		}
	})

	// A question sent ahead and answered after another round trip says what TopLevelsAt
	// says, also when what the last walk found is no longer there: it then walks.
	t.Run("asked ahead", func(t *testing.T) {
		if f, ok := b.KnownFrame(w.ID); !ok || f != w.Frame {
			t.Errorf("KnownFrame(0x%x) = %+v, %v, want %+v", w.ID, f, ok, w.Frame)
		}
		if _, ok := b.KnownFrame(1); ok {
			t.Errorf("KnownFrame of a window never listed reports a frame")
		}
		corner := x11.Point{X: 1279, Y: 799}
		for _, pts := range [][]x11.Point{{inside}, {inside, corner}, {corner}, {inside}} {
			q := b.AskTopLevelsAt(pts)
			if _, err := b.Windows(t.Context()); err != nil {
				t.Fatal(err)
			}
			got, err := q.Answer(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want, err := b.TopLevelsAt(t.Context(), pts)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("asked ahead at %v: %+v, TopLevelsAt: %+v", pts, got, want)
			}
		}
		q := b.AskTopLevelsAt([]x11.Point{inside})
		q.Discard()
		q.Discard() // twice: nothing left to read
		if top, err := b.TopLevelAt(t.Context(), inside); err != nil || top.Window != w.ID {
			t.Errorf("TopLevelAt(inside) after a discarded question = %+v, %v, want 0x%x", top, err, w.ID)
		}
	})

	// A check moments after a read asks only whether the same windows lie at the points;
	// anything else there, or an earlier answer the last walk did not find, reads again.
	t.Run("still there", func(t *testing.T) {
		before, err := b.TopLevelsAt(t.Context(), []x11.Point{inside, inside})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := b.TopLevelsStillAt(t.Context(), []x11.Point{inside, inside}, before); err != nil || fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("TopLevelsStillAt, nothing changed = %+v, %v, want %+v", got, err, before)
		}
		forged := []x11.TopLevel{{Window: 0x1234, Frame: 0x5678, PID: 1}}
		if got, err := b.TopLevelsStillAt(t.Context(), []x11.Point{inside}, forged); err != nil || got[0] != before[0] {
			t.Errorf("TopLevelsStillAt with an answer no walk found = %+v, %v, want %+v", got, err, before[0])
		}
		c := foreignConn(t)
		or := overrideRedirect(t, c, x11.Rect{X: inside.X - 5, Y: inside.Y - 5, Width: 20, Height: 20})
		xproto.ConfigureWindow(c, or, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
		xproto.GetInputFocus(c).Reply() // processed
		got, err := b.TopLevelsStillAt(t.Context(), []x11.Point{inside}, before[:1])
		if err != nil || got[0].Window != uint32(or) || !got[0].OverrideRedirect {
			t.Errorf("TopLevelsStillAt under a new override-redirect window = %+v, %v, want 0x%x", got, err, or)
		}
		xproto.DestroyWindow(c, or)
		xproto.GetInputFocus(c).Reply()
	})

	t.Run("a drag path's many points", func(t *testing.T) {
		path := x11.DragPath(inside, x11.Point{X: w.Frame.X + 290, Y: w.Frame.Y + 190}, 200)
		tops, err := b.TopLevelsAt(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range path {
			one, err := b.TopLevelAt(t.Context(), p)
			if err != nil || one != tops[i] {
				t.Fatalf("point %v: batch %+v, alone %+v, %v", p, tops[i], one, err)
			}
		}
	})
}

func TestDragPathEndsAtBothEnds(t *testing.T) {
	from, to := x11.Point{X: 10, Y: 20}, x11.Point{X: 110, Y: 70}
	for _, steps := range []int{1, 3, 20} {
		path := x11.DragPath(from, to, steps)
		if len(path) != steps+1 || path[0] != from || path[steps] != to {
			t.Errorf("DragPath(%v, %v, %d) = %v, want %d points from start to end", from, to, steps, path, steps+1)
		}
	}
}

func TestKeyboardGrabbed(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	if got, err := b.Core().KeyboardGrabbed(t.Context()); err != nil || got {
		t.Fatalf("KeyboardGrabbed() without a grab = %v, %v, want false", got, err)
	}
	c := foreignConn(t)
	root := xproto.Setup(c).DefaultScreen(c).Root
	// The probe leaves no grab behind: another client can grab at once.
	r, err := xproto.GrabKeyboard(c, false, root, xproto.TimeCurrentTime, xproto.GrabModeAsync, xproto.GrabModeAsync).Reply()
	if err != nil || r.Status != xproto.GrabStatusSuccess {
		t.Fatalf("GrabKeyboard after the probe = %+v, %v", r, err)
	}
	if got, err := b.Core().KeyboardGrabbed(t.Context()); err != nil || !got {
		t.Errorf("KeyboardGrabbed() under a foreign grab = %v, %v, want true", got, err)
	}
	if err := xproto.UngrabKeyboardChecked(c, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Core().KeyboardGrabbed(t.Context()); err != nil || got {
		t.Errorf("KeyboardGrabbed() after the grab ended = %v, %v, want false", got, err)
	}
	// The focus stayed where it was.
	if f, err := b.InputFocus(t.Context()); err != nil || f.TopLevel != w.ID {
		t.Errorf("InputFocus() after the probes = %+v, %v, want window 0x%x", f, err, w.ID)
	}
}

func TestInputFocusNamesTheTopLevel(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	f, err := b.InputFocus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if f.TopLevel != w.ID || f.PID != xl.PID || f.Window <= 1 {
		t.Errorf("InputFocus() = %+v, want window 0x%x of pid %d", f, w.ID, xl.PID)
	}

	// Each call asks first about the window that had the focus last; the server's answer
	// about the focus decides. Another window, then a child window inside w (not a
	// client itself: the walk goes up from it), then w again, each read twice.
	other := harness.StartXevlog(t, harness.XevlogOptions{Title: "other"})
	ow := windowOf(t, b, other)
	c := foreignConn(t)
	child, err := xproto.NewWindowId(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := xproto.CreateWindowChecked(c, 0, child, xproto.Window(w.ID), 5, 5, 20, 20, 0, xproto.WindowClassInputOutput, 0, 0, nil).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(c, child).Check(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name   string
		focus  func()
		window uint32
		top    uint32
		pid    int
	}{
		{"another window", func() { activate(t, b, ow.ID) }, ow.ID, ow.ID, other.PID},
		{"a child of w", func() {
			// w is made the active window first: with another one active, openbox
			// sometimes gave that one the focus back once the child had taken it.
			activate(t, b, w.ID)
			if err := xproto.SetInputFocusChecked(c, xproto.InputFocusParent, child, xproto.TimeCurrentTime).Check(); err != nil {
				t.Fatal(err)
			}
		}, uint32(child), w.ID, xl.PID},
		{"w", func() { activate(t, b, w.ID) }, w.ID, w.ID, xl.PID},
	} {
		step.focus()
		right := func(f x11.Focus, err error) bool {
			return err == nil && f.Window == step.window && f.TopLevel == step.top && f.PID == step.pid
		}
		// The window manager moves the focus when it gets to it: wait for the first
		// right answer; the next read, asked with the guess, must be right at once.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			f, err := b.InputFocus(t.Context())
			if right(f, err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: InputFocus() = %+v, %v; want window 0x%x in top-level 0x%x of pid %d", step.name, f, err, step.window, step.top, step.pid)
			}
		}
		if f, err := b.InputFocus(t.Context()); !right(f, err) {
			t.Errorf("%s, read again: InputFocus() = %+v, %v; want window 0x%x in top-level 0x%x of pid %d", step.name, f, err, step.window, step.top, step.pid)
		}
	}
}

func TestGuardStopsInputBeforeTheFirstEvent(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	errNo := errors.New("no")
	refuse := func(context.Context) error { return errNo }
	p := x11.Point{X: w.Frame.X + 20, Y: w.Frame.Y + 20}
	xl.Reset()
	ops := map[string]func() error{
		"Click":      func() error { return b.Core().Click(t.Context(), p, x11.ButtonLeft, 1, []string{"shift"}, refuse) },
		"ButtonDown": func() error { return b.Core().ButtonDown(t.Context(), p, x11.ButtonLeft, refuse) },
		"Scroll":     func() error { return b.Core().Scroll(t.Context(), p, "down", 3, nil, refuse) },
		"Drag": func() error {
			return b.Core().Drag(t.Context(), p, x11.Point{X: p.X + 50, Y: p.Y + 50}, x11.ButtonLeft, 5, 0, nil, refuse)
		},
		"MoveTo":   func() error { return b.Core().MoveTo(t.Context(), x11.Point{X: p.X + 5, Y: p.Y + 5}, refuse) },
		"TypeText": func() error { _, err := b.Core().TypeText(t.Context(), "a→", refuse); return err },
		"PressCombo": func() error {
			kc, err := x11.ParseKeyCombo("ctrl+a")
			if err != nil {
				return err
			}
			return b.Core().PressCombo(t.Context(), kc, refuse)
		},
	}
	for name, op := range ops {
		if err := op(); !errors.Is(err, errNo) {
			t.Errorf("%s with a refusing guard = %v, want the guard's error", name, err)
		}
	}
	// The oracle's barrier: a click that passes its guard. Nothing before it was delivered.
	pass := func(context.Context) error { return nil }
	if err := b.Core().Click(t.Context(), p, x11.ButtonRight, 1, nil, pass); err != nil {
		t.Fatal(err)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "button_release")) > 0
	})
	for _, e := range harness.Filter(evs, "button_press", "button_release", "key_press", "key_release", "mapping_notify") {
		if e.Button != int(x11.ButtonRight) {
			t.Errorf("guarded operations delivered %+v", e)
		}
	}
	if buttons, keys := b.Core().Held(); len(buttons)+len(keys) != 0 {
		t.Errorf("Held() = %v, %v after refused operations", buttons, keys)
	}
}

// BenchmarkInputChecks measures the checks input now makes before it is sent: the window
// at one point (a click), at the 21 points of a default drag, the keyboard grab probe and
// the focus read.
func BenchmarkInputChecks(b *testing.B) {
	harness.Require(b)
	be, err := x11.Open(b.Context(), x11.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	xl := harness.StartXevlog(b, harness.XevlogOptions{Width: 300, Height: 200})
	var w x11.Window
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if w, err = be.Window(b.Context(), xl.Window); (err == nil && w.Mapped) || time.Now().After(deadline) {
			break
		}
	}
	if _, ok, err := be.Activate(b.Context(), w.ID); err != nil || !ok {
		b.Fatalf("Activate = %v, %v", ok, err)
	}
	p := x11.Point{X: w.Frame.X + 50, Y: w.Frame.Y + 50}
	path := x11.DragPath(p, x11.Point{X: w.Frame.X + 250, Y: w.Frame.Y + 150}, 20)
	for _, bc := range []struct {
		name string
		f    func() error
	}{
		{"TopLevelAt", func() error { _, err := be.TopLevelAt(b.Context(), p); return err }},
		{"TopLevelsAt/drag-21-points", func() error { _, err := be.TopLevelsAt(b.Context(), path); return err }},
		{"KeyboardGrabbed", func() error { _, err := be.Core().KeyboardGrabbed(b.Context()); return err }},
		{"InputFocus", func() error { _, err := be.InputFocus(b.Context()); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) { latencies(b, bc.f) })
	}
}

// BenchmarkWindowList measures describing the desktop's windows, as every call that
// targets a window does: the whole list (Windows) and one window by id (Window), with four
// client windows mapped.
func BenchmarkWindowList(b *testing.B) {
	harness.Require(b)
	be, err := x11.Open(b.Context(), x11.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	var last uint32
	for range 4 {
		xl := harness.StartXevlog(b, harness.XevlogOptions{Width: 200, Height: 100})
		last = xl.Window
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if w, err := be.Window(b.Context(), last); (err == nil && w.Mapped) || time.Now().After(deadline) {
			break
		}
	}
	for _, bc := range []struct {
		name string
		f    func() error
	}{
		{"Windows", func() error { _, err := be.Windows(b.Context()); return err }},
		{"Window", func() error { _, err := be.Window(b.Context(), last); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) { latencies(b, bc.f) })
	}
}

// latencies runs f once per benchmark iteration and reports the median latency.
func latencies(b *testing.B, f func() error) {
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
}

// TestPointerAndTopLevel: the pointer and the window under it read together. With a right
// guess and a wrong one (the pointer elsewhere: the window is read again there), the
// pointer is where xdotool says and the window is the one TopLevelAt finds at it; the
// root's background is window 0.
func TestPointerAndTopLevel(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	w := moveTo(t, b, xl, 100, 100)
	inside := x11.Point{X: w.Frame.X + 20, Y: w.Frame.Y + 30}
	inside2 := x11.Point{X: w.Frame.X + 40, Y: w.Frame.Y + 50}
	outside := x11.Point{X: w.Frame.X + w.Frame.Width + 200, Y: w.Frame.Y + w.Frame.Height + 200}
	// Each case moves the pointer somewhere new: xdotool's --sync waits for a motion.
	for _, c := range []struct {
		name       string
		at, guess  x11.Point
		wantWindow uint32
	}{
		{"right guess", inside, inside, w.ID},
		{"wrong guess", inside2, outside, w.ID},
		{"background, wrong guess", outside, inside, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			harness.Command(t, "xdotool", "mousemove", "--sync", fmt.Sprint(c.at.X), fmt.Sprint(c.at.Y))
			p, top, topErr, err := b.Core().PointerAndTopLevel(t.Context(), c.guess)
			if err != nil || topErr != nil {
				t.Fatalf("PointerAndTopLevel = %v, %v", err, topErr)
			}
			want := fmt.Sprintf("x:%d y:%d ", c.at.X, c.at.Y)
			if loc := harness.Command(t, "xdotool", "getmouselocation"); !strings.HasPrefix(loc, want) || p != c.at {
				t.Errorf("pointer = %v; xdotool getmouselocation: %q", p, loc)
			}
			if top.Window != c.wantWindow {
				t.Errorf("window at the pointer = 0x%x, want 0x%x", top.Window, c.wantWindow)
			}
		})
	}
}
