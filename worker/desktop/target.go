package desktop

import (
	"context"
	"fmt"
	"github.com/cua-host/cua-host/authz"
	"math"

	"github.com/cua-host/cua-host/x11"
)

// targetArgs are the window-target arguments shared by input and capture tools.
type targetArgs struct {
	PID      *int    `json:"pid"`
	WindowID *uint32 `json:"window_id"`
	Scope    string  `json:"scope"`
	Delivery string  `json:"delivery_mode"`
	Session  string  `json:"session"`
	// Target is the reference contract's target object; the authorizer has already
	// written it into PID, WindowID or Scope (authz.NormalizeTarget).
	Target any `json:"target"`
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
		return invalid("scope \"desktop\" takes no pid or window_id")
	}
	if t.WindowID != nil && t.PID == nil {
		return invalid("window_id needs the pid that owns it")
	}
	if t.PID != nil && *t.PID <= 0 {
		return invalid("pid must be positive")
	}
	return nil
}

// resolve returns the targeted window, nil for desktop scope. A pid alone picks that
// process's top-most window. The pid must own the window, else window_target_not_found.
//
// known is the window the authorizer resolved and decided on for this call
// (tool.Call.Window), or nil: when it is the window t names, it is the answer and the
// window is not looked up again. Input still re-checks what is under it right before
// sending (guard.go).
func resolve(ctx context.Context, b *x11.Backend, known *x11.Window, t targetArgs) (*x11.Window, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if t.PID == nil {
		return nil, nil
	}
	pid := *t.PID
	if known != nil && known.PID == pid && known.Mapped && (t.WindowID == nil || *t.WindowID == known.ID) {
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
	for _, w := range wins { // top-most first
		if w.PID == pid && w.Mapped {
			return &w, nil
		}
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
			return x11.Point{}, authz.Refuse(authz.CodeDesktopCoordinateScopeRequired, "x/y without pid and window_id are desktop coordinates; pass scope:\"desktop\" (or target {\"kind\":\"desktop\",\"display_id\":\"primary\"}) to confirm, or target a window")
		}
		if x < 0 || y < 0 || x >= screenW || y >= screenH {
			return x11.Point{}, invalid("(%d,%d) is outside the %dx%d screen", x, y, screenW, screenH)
		}
		return x11.Point{X: x, Y: y}, nil
	}
	if x < 0 || y < 0 || x >= win.Frame.Width || y >= win.Frame.Height {
		return x11.Point{}, invalid("(%d,%d) is outside window 0x%x (%dx%d)", x, y, win.ID, win.Frame.Width, win.Frame.Height)
	}
	p := x11.Point{X: win.Frame.X + x, Y: win.Frame.Y + y}
	if p.X < 0 || p.Y < 0 || p.X >= screenW || p.Y >= screenH {
		return x11.Point{}, invalid("(%d,%d) of window 0x%x is off screen at (%d,%d)", x, y, win.ID, p.X, p.Y)
	}
	return p, nil
}
