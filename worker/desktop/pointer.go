package desktop

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

func (d *desk) pointerSpecs() []spec {
	clickProps := targetProps(elementProps(map[string]prop{
		"x": xProp, "y": yProp, "button": buttonProp, "count": intProp("Number of clicks (default 1).", 1, 3),
		"modifier": modifierProp,
	}))
	noCount := targetProps(elementProps(map[string]prop{"x": xProp, "y": yProp, "modifier": modifierProp}))
	move := targetProps(map[string]prop{"x": xProp, "y": yProp})
	btn := targetProps(map[string]prop{"x": prop{"type": "number", "description": "X coordinate (optional: current pointer position)."},
		"y": prop{"type": "number", "description": "Y coordinate (optional)."}, "button": buttonProp})
	drag := targetProps(map[string]prop{
		"from_x": numProp("Start x (window-relative with a window, else desktop with scope \"desktop\")."), "from_y": numProp("Start y."),
		"to_x": numProp("End x."), "to_y": numProp("End y."),
		"duration_ms": intProp("Time spread over the moves (default 300).", 0, 10000),
		"steps":       intProp("Number of intermediate moves (default 20).", 1, 200),
		"button":      buttonProp, "modifier": modifierProp,
	})
	scroll := targetProps(elementProps(map[string]prop{
		"x": xProp, "y": yProp,
		"direction": enumProp("Scroll direction; required with x/y. With an element and no direction, the element is scrolled into view through AT-SPI.", "up", "down", "left", "right"),
		"amount":    intProp("Wheel notches (default 3).", 1, 50),
		"by":        enumProp("Unit: line (one notch each) or page (10 notches each).", "line", "page"),
		"modifier":  modifierProp,
	}))
	return append([]spec{
		{name: "click", description: "Click at x,y in a window (pid, window_id: window-relative) or on the desktop (scope \"desktop\"), through the session's own pointer or the core one (delivery_mode). " +
			"Or click an element (element_token from get_window_state, with its pid and window_id): through AT-SPI when it can (no pointer motion, no focus change), else at its centre.",
			schema: schema(nil, clickProps), handler: d.clickTool("left", 0), args: tool.NewArgs[pointArgs], touches: tool.Touches{Pastes: tool.PastesWhen(pointPastes)}},
		{name: "double_click", description: "Double-click at x,y (see click).", schema: schema(nil, noCount), handler: d.clickTool("left", 2), args: tool.NewArgs[pointArgs]},
		{name: "right_click", description: "Right-click at x,y (see click).", schema: schema(nil, noCount), handler: d.clickTool("right", 1), args: tool.NewArgs[pointArgs]},
		{name: "move_cursor", description: "Move the pointer to x,y (see click for coordinates).", schema: schema(nil, move), handler: d.moveCursor, args: tool.NewArgs[pointArgs]},
		{name: "mouse_button_down", description: "Press and hold a mouse button at x,y (default: where the pointer is). Released by mouse_button_up or when the session ends.",
			schema: schema(nil, btn), handler: d.buttonTool(true), args: tool.NewArgs[pointArgs], touches: tool.Touches{Pastes: tool.PastesWhen(pointPastes)}},
		{name: "mouse_button_up", description: "Release a mouse button at x,y (default: where the pointer is).", schema: schema(nil, btn), handler: d.buttonTool(false), args: tool.NewArgs[pointArgs], touches: tool.Touches{Pastes: tool.PastesWhen(pointPastes)}},
		{name: "drag", description: "Press a button at from_x,from_y, move to to_x,to_y in steps over duration_ms, release.",
			schema: schema([]string{"from_x", "from_y", "to_x", "to_y"}, drag), handler: d.drag, args: tool.NewArgs[dragArgs], touches: tool.Touches{Pastes: tool.PastesWhen(dragPastes)}},
		{name: "scroll", description: "Turn the mouse wheel at x,y (buttons 4–7) or over an element; with an element and no direction, scroll the element into view (AT-SPI).", schema: schema(nil, scroll), handler: d.scroll, args: tool.NewArgs[scrollArgs]},
	}, d.dragMoreSpecs()...)
}

type pointArgs struct {
	targetArgs
	elementArgs
	X        *float64 `json:"x"`
	Y        *float64 `json:"y"`
	Button   string   `json:"button"`
	Count    *int     `json:"count"`
	Modifier []string `json:"modifier"`
}

// prepare resolves the target and point, checks the button and modifiers: everything that
// can refuse, before anything happens.
func (d *desk) prepare(ctx context.Context, known *x11.Window, t targetArgs, x, y *float64, button string, mods []string) (*x11.Window, x11.Point, x11.Button, error) {
	if err := t.check(); err != nil {
		return nil, x11.Point{}, 0, err
	}
	btn, err := x11.ParseButton(button)
	if err != nil {
		return nil, x11.Point{}, 0, refusal(err)
	}
	if _, err := x11.ParseModifiers(mods); err != nil {
		return nil, x11.Point{}, 0, refusal(err)
	}
	win, err := resolve(ctx, d.b, known, t)
	if err != nil {
		return nil, x11.Point{}, 0, err
	}
	sw, sh := d.b.ScreenSize()
	p, err := toRoot(win, t.Scope, sw, sh, x, y)
	if err != nil {
		return nil, x11.Point{}, 0, err
	}
	return win, p, btn, nil
}

// front brings win to the front before pointer or keyboard input (foreground delivery).
// Nothing has been sent yet, so a failed activation is a refusal: an error, or, for
// keyboard input (needFocus), a window that did not get the focus. Pointer input does not
// need the focus; the guards check where its events land.
func (d *desk) front(ctx context.Context, win *x11.Window, evidence map[string]any, needFocus bool) error {
	if win == nil {
		return nil
	}
	route, focused, err := d.b.Activate(ctx, win.ID)
	evidence["activation"] = route
	evidence["focused"] = focused
	switch {
	case err != nil && ctx.Err() != nil:
		return err
	case err != nil:
		return refusal(err)
	case needFocus && !focused:
		return authz.Refuse(authz.CodeActivationFailed,
			"window 0x%x (pid %d) did not get the keyboard focus (activation through %s); no key was sent", win.ID, win.PID, route)
	}
	return nil
}

// verifyPointer reads the pointer the input went through back, and the window under it.
func (d *desk) verifyPointer(ctx context.Context, dl *delivery, want x11.Point, win *x11.Window, evidence map[string]any) bool {
	var (
		p     x11.Point
		at    x11.TopLevel
		atErr error
		err   error
	)
	if win != nil {
		p, at, atErr, err = dl.dev.PointerAndTopLevel(ctx, want)
	} else {
		p, err = dl.dev.Pointer(ctx)
	}
	if err != nil {
		evidence["pointer_error"] = err.Error()
		return false
	}
	evidence["pointer"] = p
	d.followCursor(ctx, dl, p)
	ok := p == want
	evidence["pointer_landed"] = ok // where the input was sent, whatever is under it now
	if win != nil && atErr == nil {
		evidence["window_at_pointer"] = at.Window
		ok = ok && at.Window == win.ID
	}
	return ok
}

// verifyClick reads back the pointer a click went through and the window under it, as
// verifyPointer does. Through the session's own pointer the wait for the click to be
// processed read the pointer last (seen): when the child of the root under it is still
// the frame the guard found at the point right before the press, the window under it is
// the one the guard found there, and the server is not asked again.
func (d *desk) verifyClick(ctx context.Context, dl *delivery, want x11.Point, win *x11.Window, ev map[string]any, seen x11.PointerSeen) bool {
	if !seen.Valid || win != nil && (dl.landed == nil || dl.landed.Frame == 0 || seen.Child != dl.landed.Frame) {
		return d.verifyPointer(ctx, dl, want, win, ev)
	}
	ev["pointer"] = seen.At
	d.followCursor(ctx, dl, seen.At)
	ok := seen.At == want
	ev["pointer_landed"] = ok
	if win != nil {
		ev["window_at_pointer"] = dl.landed.Window
		ok = ok && dl.landed.Window == win.ID
	}
	return ok
}

func (d *desk) clickTool(defaultButton string, fixedCount int) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
		a, err := tool.ArgsOf[pointArgs](call)
		if err != nil {
			return nil, err
		}
		if a.Button == "" {
			a.Button = defaultButton
		}
		count := 1
		if fixedCount > 0 {
			count = fixedCount
		} else if a.Count != nil {
			count = *a.Count
		}
		if count < 1 || count > 3 {
			return nil, invalid("count %d: want 1–3", count)
		}
		if a.elementArgs.present() {
			btn, err := x11.ParseButton(a.Button)
			if err != nil {
				return nil, refusal(err)
			}
			if _, err := x11.ParseModifiers(a.Modifier); err != nil {
				return nil, refusal(err)
			}
			return d.clickElement(ctx, call, *a, btn, count)
		}
		win, p, btn, err := d.prepare(ctx, call.Window, a.targetArgs, a.X, a.Y, a.Button, a.Modifier)
		if err != nil {
			return nil, err
		}
		ev := map[string]any{}
		dl, guards, err := d.pointerReady(ctx, call, a.Delivery, win, ev, false, nil, p)
		if err != nil {
			if !backgroundFallback(dl, err) {
				return nil, err
			}
			if res, ok, aerr := d.axClickAt(ctx, call, win, p, btn, count, a.Modifier, err); ok {
				return res, aerr
			}
			return nil, noBackgroundRoute(err)
		}
		if err := dl.click(ctx, p, btn, count, a.Modifier, guards...); err != nil {
			return nil, err
		}
		seen, err := settleClick(ctx, dl, p)
		if err != nil {
			dl.finish(ctx, ev)
			return nil, err
		}
		ok := d.verifyClick(ctx, dl, p, win, ev, seen)
		dl.finish(ctx, ev)
		return deviceResult(dl, fmt.Sprintf("clicked %s ×%d at (%d,%d)", btn, count, p.X, p.Y), inputEffect, count, ok, ev,
			map[string]any{"x": p.X, "y": p.Y, "button": btn.String(), "count": count}), nil
	}
}

func (d *desk) moveCursor(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[pointArgs](call)
	if err != nil {
		return nil, err
	}
	win, p, _, err := d.prepare(ctx, call.Window, a.targetArgs, a.X, a.Y, "", nil)
	if err != nil {
		return nil, err
	}
	dl, err := d.deliveryFor(ctx, call, a.Delivery)
	if err != nil {
		return nil, err
	}
	ev := map[string]any{"delivery": dl.mode}
	if err := dl.dev.MoveTo(ctx, p, d.landsOn(call, win, p)); err != nil {
		return nil, err
	}
	ok := d.verifyPointer(ctx, dl, p, win, ev)
	effect := tool.EffectConfirmed // the pointer position is the effect, and it was read back
	if !ok {
		effect = tool.EffectSuspectedNoop
	}
	return deviceResult(dl, fmt.Sprintf("moved pointer to (%d,%d)", p.X, p.Y), effect, 1, ok, ev, map[string]any{"x": p.X, "y": p.Y}), nil
}

func (d *desk) buttonTool(down bool) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
		a, err := tool.ArgsOf[pointArgs](call)
		if err != nil {
			return nil, err
		}
		if a.Count != nil || a.Modifier != nil {
			return nil, invalid("count and modifier are not arguments of this tool")
		}
		dl, err := d.deliveryFor(ctx, call, a.Delivery)
		if err != nil {
			return nil, err
		}
		x, y := a.X, a.Y
		if x == nil && y == nil && down && dl.background() {
			// The authorizer decided on the core pointer's position; the session's own
			// pointer may be elsewhere.
			return nil, invalid("x and y are required to press a button with the session's own pointer (background delivery)")
		}
		if x == nil && y == nil {
			cur, err := dl.dev.Pointer(ctx)
			if err != nil {
				return nil, refusal(err)
			}
			fx, fy := float64(cur.X), float64(cur.Y)
			x, y = &fx, &fy
			if a.PID != nil {
				return nil, invalid("x and y are required with a window target")
			}
			a.Scope = "desktop"
		}
		win, p, btn, err := d.prepare(ctx, call.Window, a.targetArgs, x, y, a.Button, nil)
		if err != nil {
			return nil, err
		}
		ev := map[string]any{}
		if down {
			var guards []x11.Guard
			if dl, guards, err = d.pointerReady(ctx, call, a.Delivery, win, ev, false, nil, p); err != nil {
				return nil, err
			}
			err = dl.dev.ButtonDown(ctx, p, btn, guards...)
		} else {
			// While this backend holds the button, the X server's implicit grab sends the
			// motion and the release to the window that got the press, which was checked
			// then: a window mapped over the point since does not receive them, and refusing
			// here would leave the button stuck.
			var guards []x11.Guard
			if held, _ := dl.dev.Held(); !slices.Contains(held, btn) {
				guards = []x11.Guard{d.pointerLands(call, win, dl, p)}
			}
			ev["delivery"] = dl.mode
			err = dl.dev.ButtonUp(ctx, p, btn, guards...)
		}
		if err != nil {
			return nil, err
		}
		d.holds.note(call.Session, dl.dev, btn, down)
		ok := d.verifyPointer(ctx, dl, p, win, ev)
		effect := "pressed"
		if !down {
			effect = "released"
		}
		return deviceResult(dl, fmt.Sprintf("%s %s at (%d,%d)", effect, btn, p.X, p.Y), inputEffect, 1, ok, ev,
			map[string]any{"x": p.X, "y": p.Y, "button": btn.String()}), nil
	}
}

// dragArgs are drag's arguments.
type dragArgs struct {
	targetArgs
	FromX      *float64 `json:"from_x"`
	FromY      *float64 `json:"from_y"`
	ToX        *float64 `json:"to_x"`
	ToY        *float64 `json:"to_y"`
	DurationMS *int     `json:"duration_ms"`
	Steps      *int     `json:"steps"`
	Button     string   `json:"button"`
	Modifier   []string `json:"modifier"`
}

// motionTiming returns a pointer motion's duration in milliseconds (defaultMS when not
// given, at most 10 s) and its number of steps (20 when not given, 1–200), or an
// invalid_arguments refusal.
func motionTiming(durationMS, steps *int, defaultMS int) (int, int, error) {
	dur, n := defaultMS, 20
	if durationMS != nil {
		dur = *durationMS
	}
	if steps != nil {
		n = *steps
	}
	if dur < 0 || dur > 10000 || n < 1 || n > 200 {
		return 0, 0, invalid("duration_ms %d (0–10000) or steps %d (1–200) out of range", dur, n)
	}
	return dur, n, nil
}

func (d *desk) drag(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[dragArgs](call)
	if err != nil {
		return nil, err
	}
	dur, steps, err := motionTiming(a.DurationMS, a.Steps, 300)
	if err != nil {
		return nil, err
	}
	win, from, btn, err := d.prepare(ctx, call.Window, a.targetArgs, a.FromX, a.FromY, a.Button, a.Modifier)
	if err != nil {
		return nil, err
	}
	sw, sh := d.b.ScreenSize()
	to, err := toRoot(win, a.Scope, sw, sh, a.ToX, a.ToY)
	if err != nil {
		return nil, err
	}
	// Every point of the path: while the button is held the events go to the window that
	// got the press, but a drag-and-drop source sends the drop to the window under the
	// pointer, wherever that is.
	ev := map[string]any{}
	dl, guards, err := d.pointerReady(ctx, call, a.Delivery, win, ev, false, nil, x11.DragPath(from, to, steps)...)
	if err != nil {
		return nil, err
	}
	if err := dl.dev.Drag(ctx, from, to, btn, steps, time.Duration(dur)*time.Millisecond, a.Modifier, guards...); err != nil {
		return nil, err
	}
	ok := d.verifyPointer(ctx, dl, to, win, ev)
	dl.finish(ctx, ev)
	return deviceResult(dl, fmt.Sprintf("dragged %s from (%d,%d) to (%d,%d)", btn, from.X, from.Y, to.X, to.Y), inputEffect, 1, ok, ev,
		map[string]any{"from": from, "to": to, "steps": steps, "duration_ms": dur}), nil
}

// scrollArgs are scroll's arguments.
type scrollArgs struct {
	targetArgs
	elementArgs
	X         *float64 `json:"x"`
	Y         *float64 `json:"y"`
	Direction string   `json:"direction"`
	Amount    *int     `json:"amount"`
	By        string   `json:"by"`
	Modifier  []string `json:"modifier"`
}

func (d *desk) scroll(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[scrollArgs](call)
	if err != nil {
		return nil, err
	}
	amount := 3
	if a.Amount != nil {
		amount = *a.Amount
	}
	if amount < 1 || amount > 50 {
		return nil, invalid("amount %d: want 1–50", amount)
	}
	notches := amount
	switch a.By {
	case "", "line":
	case "page":
		notches = amount * 10
	default:
		return nil, invalid("by %q: want line or page", a.By)
	}
	switch a.Direction {
	case "up", "down", "left", "right":
	case "":
		if !a.elementArgs.present() {
			return nil, invalid("direction is required (up, down, left or right)")
		}
	default:
		return nil, invalid("direction %q: want up, down, left or right", a.Direction)
	}
	if a.elementArgs.present() {
		if _, err := x11.ParseModifiers(a.Modifier); err != nil {
			return nil, refusal(err)
		}
		return d.scrollElement(ctx, call, a.targetArgs, a.elementArgs, a.X, a.Y, a.Direction, notches, a.Modifier)
	}
	win, p, _, err := d.prepare(ctx, call.Window, a.targetArgs, a.X, a.Y, "", a.Modifier)
	if err != nil {
		return nil, err
	}
	ev := map[string]any{}
	dl, guards, err := d.pointerReady(ctx, call, a.Delivery, win, ev, false, nil, p)
	if err != nil {
		return nil, err
	}
	if err := d.scrollNotches(ctx, dl, p, a.Direction, notches, a.Modifier, guards); err != nil {
		return nil, err
	}
	ok := d.verifyPointer(ctx, dl, p, win, ev)
	dl.finish(ctx, ev)
	return deviceResult(dl, fmt.Sprintf("scrolled %s %d notches at (%d,%d)", a.Direction, notches, p.X, p.Y), inputEffect, notches, ok, ev,
		map[string]any{"x": p.X, "y": p.Y, "direction": a.Direction, "notches": notches}), nil
}

// scrollNotches turns the wheel in runs of at most 50 notches. The guard runs before the
// first run only: once a run was sent, stopping would not make the call not started.
func (d *desk) scrollNotches(ctx context.Context, dl *delivery, p x11.Point, dir string, notches int, mods []string, guards []x11.Guard) error {
	for done := 0; done < notches; done += 50 {
		if err := dl.dev.Scroll(ctx, p, dir, min(50, notches-done), mods, guards...); err != nil {
			return err
		}
		guards = nil
	}
	return nil
}
