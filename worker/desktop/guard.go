package desktop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// Input lands only where it was authorized. The authorizer decided for a window; these
// checks make sure the X server will deliver the events there, and refuse before anything
// is sent when it would not. Each runs twice: once before any side effect (so a window
// that activation cannot clear — override-redirect, kept above, a dock — or a foreign
// keyboard grab refuses with nothing raised or focused), and again as an x11.Guard, under
// the input lock right before the first event (activation may legitimately have raised
// the target; it may also have failed to). The first check of where pointer input lands
// decides on what the authorizer read at the same points while deciding the call, when it
// read them: it only refuses early, and the second reads the server.
//
// Pointer grabs are not probed. X does not say which client holds a grab, and the
// session's own application holds one whenever it shows a menu: a probe could not tell a
// foreign grab from the menu the session is about to click in, and would refuse both.

// landsOn returns the check that pointer input at pts (root coordinates) lands on win: the
// window that receives pointer events at every point is win, another window of win's
// process (its menus and dialogs), or a window of a process this session launched. It
// returns nil for desktop-scope input (win nil), which was authorized for the whole
// display.
func (d *desk) landsOn(call *tool.Call, win *x11.Window, pts ...x11.Point) x11.Guard {
	return d.pointerLands(call, win, nil, pts...)
}

// pointerLands is landsOn and, for background input on a shared display (dl), the check
// that no point lies on the desktop background: a press there from a second pointer moves
// the person's keyboard focus to the window manager. The windows at the points are read
// once for both. A point the target does not receive is refused first (target_covered),
// then a point on the background (background_unavailable). Nil when neither applies.
func (d *desk) pointerLands(call *tool.Call, win *x11.Window, dl *delivery, pts ...x11.Point) x11.Guard {
	return d.pointerLandsAt(call, win, dl, false, pts...)
}

// pointerLandsEarly is pointerLands for the check before any side effect, which only
// refuses early: it takes what the authorizer read at the same points while deciding the
// call (tool.Call.AtPoints) instead of asking the server again. The same check runs again
// right before the first event, and reads the server.
func (d *desk) pointerLandsEarly(call *tool.Call, win *x11.Window, dl *delivery, pts ...x11.Point) x11.Guard {
	return d.pointerLandsAt(call, win, dl, true, pts...)
}

// pointerLandsAt is pointerLands, or pointerLandsEarly when early is set.
func (d *desk) pointerLandsAt(call *tool.Call, win *x11.Window, dl *delivery, early bool, pts ...x11.Point) x11.Guard {
	onBackground := dl != nil && dl.background() && dl.shared
	if win == nil && !onBackground {
		return nil
	}
	pts = slices.Clone(pts)
	return func(ctx context.Context) error {
		before := call.AtPoints.For(pts)
		var (
			tops []x11.TopLevel
			err  error
		)
		switch {
		case early && before != nil:
			tops = before
		case before != nil:
			// The authorizer read these points moments ago in this call: asking whether
			// the same windows are still there is enough.
			tops, err = d.b.TopLevelsStillAt(ctx, pts, before)
		default:
			tops, err = d.b.TopLevelsAt(ctx, pts)
		}
		if err != nil {
			return refusal(err)
		}
		if !early && dl != nil && len(tops) == 1 {
			dl.landed = &tops[0] // the read-back of a click compares with it (verifyClick)
		}
		if win != nil {
			for i, t := range tops {
				if d.mayReceive(call, win, t) {
					continue
				}
				return authz.Refuse(authz.CodeTargetCovered,
					"%s is on top of window 0x%x (pid %d) at (%d,%d); nothing was sent. Pointer input goes only to the target, its own process's windows or windows this session launched; "+
						"use an element action, or wait until that window is gone", t, win.ID, win.PID, pts[i].X, pts[i].Y)
			}
		}
		if onBackground {
			for i, t := range tops {
				if t.Window == 0 {
					return authz.Refuse(authz.CodeBackgroundUnavailable,
						"(%d,%d) is on the desktop background: pointer input there from the session's own pointer would move the person's keyboard focus; nothing was sent. "+
							"Use delivery_mode \"foreground\" to click the desktop itself", pts[i].X, pts[i].Y)
				}
			}
		}
		return nil
	}
}

// mayReceive reports whether pointer input meant for win may land on t. A pid counts only
// when the X server observed it (t.PID comes from X-Resource) and, for a launched process,
// while the backend still holds it unreaped (so the pid cannot have been reused).
func (d *desk) mayReceive(call *tool.Call, win *x11.Window, t x11.TopLevel) bool {
	switch {
	case t.Window != 0 && t.Window == win.ID:
		return true
	case t.PID <= 0:
		return false
	case t.PID == win.PID && win.PIDSource == x11.PIDFromXRes:
		return true
	}
	return d.launchedBy(call, t.PID)
}

// keyboardFree returns the check that no other client holds a grab of the keyboard the
// keys go through (input_busy): keys would go to it (a password prompt, a screen locker,
// an open menu), not to the focus.
func (d *desk) keyboardFree(dl *delivery) x11.Guard {
	return func(ctx context.Context) error {
		grabbed, err := dl.dev.KeyboardGrabbed(ctx)
		if err != nil {
			return refusal(err)
		}
		if grabbed {
			return authz.Refuse(authz.CodeInputBusy,
				"another client holds the keyboard grab (a password prompt, a screen locker or an open menu — also one of this session's own applications); no key was sent. "+
					"Use click or an element action to close or choose from a menu, or try again once the grab is released")
		}
		return nil
	}
}

// wmSettledWait bounds the wait, before pointer input, for the window manager to handle a
// keyboard mapping change (windowManagerSettled). Typing into a Qt 5 program remaps up to
// twice as many keycodes, each scattered one a MappingNotify of its own, and openbox grabs
// its bindings again for every one: on a loaded two-core machine that took more than 3 s.
// A call's deadline (120 s by default) is far longer; a click that waits is more useful to
// an agent than one refused.
const wmSettledWait = 10 * time.Second

// windowManagerSettled returns the check that the window manager has handled the last
// keyboard mapping change (input_busy after wmSettledWait). A manager grabs its key
// bindings again after every change (typing remaps keycodes, and puts them back a moment
// later), and a press it grabs to focus on a click waits until it gets to it: on a loaded
// machine, openbox held the press for more than 3 s, and the click could only say that
// its effect was unknown. A manager that cannot be asked (kwin_x11, i3, fluxbox) is not
// waited for.
func (d *desk) windowManagerSettled() x11.Guard {
	return func(ctx context.Context) error {
		err := d.b.WindowManagerCaughtUpWithKeymap(ctx, wmSettledWait)
		switch {
		case err == nil, errors.Is(err, x11.ErrUnsupported):
			return nil
		case errors.Is(err, x11.ErrTimeout):
			return authz.Refuse(authz.CodeInputBusy,
				"the window manager has not handled a keyboard mapping change within %v and would hold a press; nothing was sent. Try again in a moment", wmSettledWait)
		}
		return refusal(err)
	}
}

// focusOn returns the check that the focus of the keyboard the keys go through lies in
// win (nil: no check).
func (d *desk) focusOn(dl *delivery, win *x11.Window) x11.Guard {
	if win == nil {
		return nil
	}
	return func(ctx context.Context) error {
		f, err := dl.dev.InputFocus(ctx)
		if err != nil {
			return refusal(err)
		}
		if f.TopLevel == win.ID {
			return nil
		}
		where := fmt.Sprintf("window 0x%x (pid %d)", f.TopLevel, f.PID)
		switch f.Window {
		case 0:
			where = "no window"
		case 1:
			where = "the window under the pointer (PointerRoot)"
		}
		return authz.Refuse(authz.CodeActivationFailed,
			"the keyboard focus is on %s, not on window 0x%x (pid %d); no key was sent", where, win.ID, win.PID)
	}
}

// keyGuards are the checks right before keys are sent: no foreign grab, the focus on win.
func (d *desk) keyGuards(dl *delivery, win *x11.Window) []x11.Guard {
	return []x11.Guard{d.keyboardFree(dl), d.focusOn(dl, win)}
}

// precheck runs guards before any side effect.
func precheck(ctx context.Context, guards ...x11.Guard) error {
	for _, g := range guards {
		if g == nil {
			continue
		}
		if err := g(ctx); err != nil {
			return err
		}
	}
	return nil
}

// afterEffect turns a refusal met after some input was already sent into a plain error:
// the call did start, so its outcome must not say otherwise.
func afterEffect(err error, what string) error {
	var r *authz.Refusal
	if errors.As(err, &r) {
		return fmt.Errorf("%s, then stopped: %s: %s", what, r.Code, r.Message)
	}
	return err
}
