package desktop

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// targetArgs are the window-target arguments shared by input and capture tools.
type targetArgs struct {
	PID      *int    `json:"pid"`
	WindowID *uint32 `json:"window_id"`
	Scope    string  `json:"scope"`
	Delivery string  `json:"delivery_mode"`
	Session  string  `json:"session"`
	// TargetObject is the reference contract's target object; the authorizer has already
	// written it into PID, WindowID or Scope (authz.NormalizeTarget).
	TargetObject any `json:"target"`
}

// check validates the combination without touching the display.
func (t targetArgs) check() error {
	switch t.Scope {
	case "", "window", "desktop":
	default:
		return invalid("scope %q: want \"window\" or \"desktop\"", t.Scope)
	}
	switch t.Delivery {
	case "", "background", "foreground":
	default:
		return invalid("delivery_mode %q: want \"background\" or \"foreground\"", t.Delivery)
	}
	if t.Scope == "desktop" && (t.PID != nil || t.WindowID != nil) {
		return authz.DesktopScopeWithWindow()
	}
	if t.WindowID != nil && t.PID == nil {
		return authz.WindowWithoutPID()
	}
	// The pid's range is the worker's to check, once, before the call is decoded.
	return nil
}

// resolve returns the targeted window, nil for desktop scope. A pid alone picks that
// process's top-most window. The pid must own the window, else window_target_not_found.
// A minimized window is refused window_minimized: this is the one check for every tool
// that sends input to a window or captures it (pointer and keyboard input, zoom, a
// window's screenshot), made before anything is sent. Tools that work on a minimized
// window (bring_to_front restores it, the accessibility tree is there while it is
// iconic) call resolveMinimized instead.
//
// known is the window the authorizer resolved and decided on for this call
// (tool.Call.Window), or nil: when it is the window t names, it is the answer and the
// window is not looked up again. Input still re-checks what is under it right before
// sending (guard.go).
func resolve(ctx context.Context, b *x11.Backend, known *x11.Window, t targetArgs) (*x11.Window, error) {
	w, err := resolveMinimized(ctx, b, known, t)
	if err != nil {
		return nil, err
	}
	if err := notMinimized(w); err != nil {
		return nil, err
	}
	return w, nil
}

// notMinimized refuses window_minimized when win is minimized (iconic).
func notMinimized(win *x11.Window) error {
	if win == nil || !win.Minimized {
		return nil
	}
	return authz.Refuse(authz.CodeWindowMinimized,
		"window %d (pid %d) is minimized: input would reach nothing visible and a capture would show nothing; nothing was sent. bring_to_front restores it", win.ID, win.PID)
}

// restoreSettle bounds how long restored waits for a restored window to stop moving.
const restoreSettle = time.Second

// restored waits until window id, just restored from minimized, is mapped and in place:
// a window manager may animate the restore (openbox slides the window up from where its
// icon would be), and input computed from a frame read meanwhile would miss. It returns
// the last description read.
func restored(ctx context.Context, b *x11.Backend, id uint32) x11.Window {
	ctx, cancel := context.WithTimeout(ctx, restoreSettle)
	defer cancel()
	prev, _ := b.Window(ctx, id)
	for {
		select {
		case <-ctx.Done():
			return prev
		case <-time.After(30 * time.Millisecond):
		}
		w, err := b.Window(ctx, id)
		if err != nil {
			return prev
		}
		if w.Mapped && !w.Minimized && w.Frame == prev.Frame {
			return w
		}
		prev = w
	}
}

// resolveMinimized is resolve without the minimized check: a minimized window is returned
// with Minimized set. A pid alone picks the top-most mapped window of the process, or,
// when it has none, its top-most minimized one.
func resolveMinimized(ctx context.Context, b *x11.Backend, known *x11.Window, t targetArgs) (*x11.Window, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if t.PID == nil {
		return nil, nil
	}
	pid := *t.PID
	if known != nil && known.PID == pid && known.Mapped && !known.Minimized && (t.WindowID == nil || *t.WindowID == known.ID) {
		w := *known
		return &w, nil
	}
	if !x11.ProcessAlive(pid) {
		return nil, refusal(fmt.Errorf("%w: process %d is not running", x11.ErrWindowNotFound, pid))
	}
	if t.WindowID != nil {
		w, err := b.OwnedWindow(ctx, pid, *t.WindowID)
		if err != nil {
			return nil, refusal(err)
		}
		return &w, nil
	}
	wins, err := b.Windows(ctx)
	if err != nil {
		return nil, refusal(err)
	}
	var iconic *x11.Window
	for _, w := range wins { // top-most first
		switch {
		case w.PID != pid:
		case w.Mapped && !w.Minimized:
			return &w, nil
		case w.Minimized && iconic == nil:
			iconic = &w
		}
	}
	if iconic != nil {
		return iconic, nil
	}
	return nil, refusal(fmt.Errorf("%w: process %d has no mapped window", x11.ErrWindowNotFound, pid))
}

// coord converts a JSON number to a pixel, refusing NaN, infinities and absurd values.
func coord(name string, v float64) (int, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < -1e6 || v > 1e6 {
		return 0, invalid("%s = %v is not a usable coordinate", name, v)
	}
	return int(math.Round(v)), nil
}

// toRoot converts (x, y) to root coordinates. With a window they are window-relative and
// must lie inside it; without one, scope must be "desktop" and the point on the screen.
func toRoot(win *x11.Window, scope string, screenW, screenH int, xv, yv *float64) (x11.Point, error) {
	if xv == nil || yv == nil {
		return x11.Point{}, invalid("x and y are required")
	}
	x, err := coord("x", *xv)
	if err != nil {
		return x11.Point{}, err
	}
	y, err := coord("y", *yv)
	if err != nil {
		return x11.Point{}, err
	}
	if win == nil {
		if scope != "desktop" {
			return x11.Point{}, authz.DesktopScopeRequired()
		}
		if x < 0 || y < 0 || x >= screenW || y >= screenH {
			return x11.Point{}, invalid("(%d,%d) is outside the %dx%d screen", x, y, screenW, screenH)
		}
		return x11.Point{X: x, Y: y}, nil
	}
	if x < 0 || y < 0 || x >= win.Frame.Width || y >= win.Frame.Height {
		return x11.Point{}, invalid("(%d,%d) is outside window 0x%x (%dx%d)", x, y, win.ID, win.Frame.Width, win.Frame.Height)
	}
	p := tool.WindowToRoot(win.Frame, x11.Point{X: x, Y: y})
	if p.X < 0 || p.Y < 0 || p.X >= screenW || p.Y >= screenH {
		return x11.Point{}, invalid("(%d,%d) of window 0x%x is off screen at (%d,%d)", x, y, win.ID, p.X, p.Y)
	}
	return p, nil
}
