package desktop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// RouteXTestPointer is the route of an element action delivered as pointer input at the
// element's centre (the element offered no accessibility route).
const RouteXTestPointer = "xtest_pointer"

// RouteXTestKeyboard is the route of type_text into an element that is not editable
// through AT-SPI: a click at its centre, then XTEST key events.
const RouteXTestKeyboard = "xtest_keyboard"

// elementArgs name an element of a snapshot: element_token, or snapshot_id with
// element_index.
type elementArgs struct {
	ElementToken string `json:"element_token"`
	SnapshotID   string `json:"snapshot_id"`
	ElementIndex *int   `json:"element_index"`
}

func (e elementArgs) present() bool {
	return e.ElementToken != "" || e.SnapshotID != "" || e.ElementIndex != nil
}

// target parses the element reference.
func (e elementArgs) target() (atspi.Target, error) {
	switch {
	case e.ElementToken != "" && (e.SnapshotID != "" || e.ElementIndex != nil):
		return atspi.Target{}, invalid("pass element_token, or snapshot_id with element_index, not both")
	case e.ElementToken != "":
		t, err := atspi.ParseToken(e.ElementToken)
		if err != nil {
			return atspi.Target{}, refusal(err)
		}
		return t, nil
	case e.SnapshotID == "" || e.ElementIndex == nil:
		return atspi.Target{}, invalid("snapshot_id and element_index go together")
	}
	if err := atspi.CheckSnapshotID(e.SnapshotID); err != nil {
		return atspi.Target{}, refusal(err)
	}
	if err := atspi.CheckIndex(*e.ElementIndex); err != nil {
		return atspi.Target{}, refusal(err)
	}
	return atspi.Target{SnapshotID: e.SnapshotID, Index: *e.ElementIndex}, nil
}

// element resolves an element target against the calling session's snapshots and the
// window named by pid and window_id, which must be the window the snapshot was taken of.
// Every failure is a refusal: nothing has happened yet.
func (d *desk) element(ctx context.Context, call *tool.Call, t targetArgs, e elementArgs) (*x11.Window, *atspi.Snapshot, *atspi.Element, error) {
	tgt, err := e.target()
	if err != nil {
		return nil, nil, nil, err
	}
	if t.Scope == "desktop" || t.PID == nil || t.WindowID == nil {
		return nil, nil, nil, invalid("an element target needs the pid and window_id of the window it was read from")
	}
	// Accessibility actions (set_value, a toolkit press, scrolling into view) work on a
	// minimized window; pointer and key input to it are refused in elementPoint.
	win, err := resolveMinimized(ctx, d.b, call.Window, t)
	if err != nil {
		return nil, nil, nil, err
	}
	snap, el, err := d.sessions.of(call.Session).Resolve(tgt)
	if err != nil {
		return nil, nil, nil, refusal(err)
	}
	if snap.Window.ID != win.ID {
		return nil, nil, nil, invalid("element %s belongs to window %d, not window %d", tgt.Token(), snap.Window.ID, win.ID)
	}
	if snap.Window.PID != win.PID {
		return nil, nil, nil, authz.Refuse(authz.CodeStaleElement, "window %d now belongs to pid %d, not %d; call get_window_state again", win.ID, win.PID, snap.Window.PID)
	}
	return win, snap, el, nil
}

// noPoint refuses coordinates next to an element target.
func noPoint(x, y *float64) error {
	if x != nil || y != nil {
		return invalid("pass x/y or an element target, not both")
	}
	return nil
}

// elementPoint returns the root point at the element's centre for pointer input: its
// live extents when it is accessible, else its snapshot frame as long as the window has
// not moved. The point must lie in the element's window and on the screen, else the
// element is not visible (element_not_visible: it has no extents, is scrolled out of its
// window, or lies off the display) and nothing is sent; whether the window is on top
// there is checked by landsOn. A minimized window is refused window_minimized.
func (d *desk) elementPoint(ctx context.Context, win *x11.Window, snap *atspi.Snapshot, el *atspi.Element) (x11.Point, error) {
	if err := notMinimized(win); err != nil {
		return x11.Point{}, err
	}
	var r atspi.Rect
	switch {
	case el.Accessible() && el.HasComponent():
		live, ok, err := d.ax.Extents(ctx, el)
		if err != nil {
			return x11.Point{}, refusal(err)
		}
		if !ok {
			return x11.Point{}, notVisible(el, "it has no extents on screen (zero size, or not showing)")
		}
		r = live
	case el.ScreenFrame != nil:
		f := snap.Window.Frame
		if win.Frame.X != f.X || win.Frame.Y != f.Y || win.Frame.Width != f.Width || win.Frame.Height != f.Height {
			return x11.Point{}, authz.Refuse(authz.CodeStaleElement, "window %d moved or resized since snapshot %s; call get_window_state again", win.ID, snap.ID)
		}
		r = *el.ScreenFrame
	default:
		return x11.Point{}, authz.Refuse(authz.CodeUnsupported, "%s [%d] has no position to point at", el.Role, el.Index)
	}
	cx, cy := r.Center()
	p := x11.Point{X: cx, Y: cy}
	if !win.Frame.Contains(p.X, p.Y) {
		return x11.Point{}, notVisible(el, fmt.Sprintf("its centre (%d,%d) lies outside window %d (%dx%d at %d,%d)", p.X, p.Y, win.ID, win.Frame.Width, win.Frame.Height, win.Frame.X, win.Frame.Y))
	}
	if c := clippedBy(win, snap, el, p); c != nil {
		return x11.Point{}, notVisible(el, fmt.Sprintf("its centre (%d,%d) lies outside the visible part of %s [%d] that holds it (scrolled out of view)", p.X, p.Y, c.Role, c.Index))
	}
	if err := d.b.CheckPoint(p); err != nil {
		if errors.Is(err, x11.ErrOutOfBounds) {
			return x11.Point{}, notVisible(el, fmt.Sprintf("its centre (%d,%d) lies off the display", p.X, p.Y))
		}
		return x11.Point{}, refusal(err)
	}
	return p, nil
}

// clipping are the roles of containers that show only part of their content: an element
// whose centre lies outside such an ancestor is scrolled out of view, though its extents
// may still lie inside the window (over the dialog's buttons, say).
var clipping = map[string]bool{"scroll pane": true, "viewport": true, "table": true, "tree table": true, "tree": true, "list": true, "list box": true}

// clippedBy returns the clipping ancestor of el (in its snapshot) whose frame does not
// contain p, or nil. The ancestors' frames are the snapshot's, moved with the window.
func clippedBy(win *x11.Window, snap *atspi.Snapshot, el *atspi.Element, p x11.Point) *atspi.Element {
	dx, dy := win.Frame.X-snap.Window.Frame.X, win.Frame.Y-snap.Window.Frame.Y
	for i, n := el.Parent, 0; i != nil && *i >= 0 && *i < len(snap.Elements) && n < len(snap.Elements); n++ {
		a := &snap.Elements[*i]
		if f := a.ScreenFrame; f != nil && clipping[a.Role] && !f.Contains(p.X-dx, p.Y-dy) {
			return a
		}
		i = a.Parent
	}
	return nil
}

// notVisible refuses pointer input at an element that is not on screen.
func notVisible(el *atspi.Element, why string) error {
	return authz.Refuse(authz.CodeElementNotVisible,
		"%s [%d] is not visible: %s; nothing was sent. Scroll it into view (scroll with its element_token and no direction), or act on it with set_value or an accessibility action, then call get_window_state again", el.Role, el.Index, why)
}

// pointerResult reports input delivered at an element through devices (kind "pointer" or
// "keyboard": the details' route is the delivery's route with it, "xtest_pointer").
// verified is whether the pointer was read back where the input had to land (always false
// for keyboard input, which nothing reads back).
func pointerResult(dl *delivery, text string, verified bool, delivered int, ev map[string]any, snap *atspi.Snapshot, el *atspi.Element, p x11.Point, kind string) *tool.Result {
	extra := map[string]any{
		"element_token": el.Token, "element_index": el.Index, "snapshot_id": snap.ID, "role": el.Role,
		"window_id": snap.Window.ID, "pid": snap.Window.PID, "x": p.X, "y": p.Y,
	}
	if el.Name != "" {
		extra["name"] = el.Name
	}
	var res *tool.Result
	if kind == "keyboard" {
		res = keyResult(dl, text, delivered, ev, extra)
	} else {
		res = deviceResult(dl, text, inputEffect, delivered, verified, ev, extra)
	}
	res.Details.(map[string]any)["route"] = dl.route + "_" + kind
	return res
}

// press maps a click to an accessibility press, or 0 when only pointer input can do it.
func press(btn x11.Button, count int, mods []string) atspi.Press {
	switch {
	case len(mods) > 0:
		return 0
	case btn == x11.ButtonLeft && count == 1:
		return atspi.PressClick
	case btn == x11.ButtonLeft && count == 2:
		return atspi.PressActivate
	case btn == x11.ButtonRight && count == 1:
		return atspi.PressMenu
	}
	return 0
}

// clickElement clicks an element: through the toolkit when it offers a route (no pointer
// motion, no focus change), else with the pointer at its centre.
func (d *desk) clickElement(ctx context.Context, call *tool.Call, a pointArgs, btn x11.Button, count int) (*tool.Result, error) {
	if err := noPoint(a.X, a.Y); err != nil {
		return nil, err
	}
	win, snap, el, err := d.element(ctx, call, a.targetArgs, a.elementArgs)
	if err != nil {
		return nil, err
	}
	if err := d.checkPasteElement(ctx, call, el); err != nil {
		return nil, err
	}
	fallback := ""
	if kind := press(btn, count, a.Modifier); kind != 0 && el.Accessible() {
		out, err := d.ax.Press(ctx, el, kind)
		switch {
		case err == nil:
			return outcomeResult(out, snap, el, map[string]any{"button": btn.String(), "count": count}), nil
		case !errors.Is(err, atspi.ErrUnsupported):
			return nil, refusal(err)
		}
		fallback = strings.TrimPrefix(err.Error(), "atspi: unsupported: ")
	} else if !el.Accessible() {
		fallback = "the window has no accessible tree"
	} else {
		fallback = fmt.Sprintf("%s ×%d with modifiers %v has no accessibility equivalent", btn, count, a.Modifier)
	}
	p, err := d.elementPoint(ctx, win, snap, el)
	if err != nil {
		return nil, err
	}
	ev := map[string]any{"fallback_reason": fallback}
	dl, guards, err := d.pointerReady(ctx, call, a.Delivery, win, ev, false, nil, p)
	if err != nil {
		return nil, err
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
	return pointerResult(dl, fmt.Sprintf("clicked %s ×%d at the centre (%d,%d) of %s [%d]", btn, count, p.X, p.Y, el.Role, el.Index), ok, count, ev, snap, el, p, "pointer"), nil
}

// typeElement types into an element: appended through EditableText when it is editable
// (and the text has no line breaks or tabs, which an entry would not take as text),
// else a click at its centre and XTEST key events.
//
// delay (type_text's delay_ms) paces the key route; AT-SPI takes the text at once.
func (d *desk) typeElement(ctx context.Context, call *tool.Call, t targetArgs, e elementArgs, text string, delay time.Duration) (*tool.Result, error) {
	win, snap, el, err := d.element(ctx, call, t, e)
	if err != nil {
		return nil, err
	}
	fallback := "the element is not editable through AT-SPI"
	if el.Editable && !strings.ContainsAny(text, "\n\t\r") {
		out, err := d.ax.InsertText(ctx, el, text)
		switch {
		case err == nil:
			return outcomeResult(out, snap, el, nil), nil
		case !errors.Is(err, atspi.ErrUnsupported):
			return nil, refusal(err)
		}
		fallback = err.Error()
	} else if el.Editable {
		fallback = "the text has line breaks or tabs, which are keys, not text"
	}
	p, err := d.elementPoint(ctx, win, snap, el)
	if err != nil {
		return nil, err
	}
	// The keys follow the click: both must be able to land before either is sent.
	ev := map[string]any{"fallback_reason": fallback}
	dl, guards, err := d.pointerReady(ctx, call, t.Delivery, win, ev, true, d.keyboardFree, p)
	if err != nil {
		return nil, err
	}
	if err := dl.click(ctx, p, x11.ButtonLeft, 1, nil, append(guards, d.keyGuards(dl, win)...)...); err != nil {
		return nil, err
	}
	if _, err := settleClick(ctx, dl, p); err != nil {
		dl.finish(ctx, ev)
		return nil, fmt.Errorf("clicked the element, then stopped before typing: %w", err)
	}
	got, err := d.typePaced(ctx, dl, win, text, delay)
	if err != nil {
		if got.offset == 0 {
			return nil, afterEffect(err, "clicked the element")
		}
		dl.finish(ctx, ev)
		return typeIncomplete(dl, text, got, err, map[string]any{"evidence": ev, "element_token": el.Token}), nil
	}
	st := got.stats
	ev["stats"] = st
	dl.finish(ctx, ev)
	return pointerResult(dl, fmt.Sprintf("clicked %s [%d] and typed %d characters", el.Role, el.Index, st.Runes), false, st.Runes, ev, snap, el, p, "keyboard"), nil
}

// scrollElement scrolls an element into view through the toolkit when no direction is
// given, else turns the wheel over its centre.
func (d *desk) scrollElement(ctx context.Context, call *tool.Call, t targetArgs, e elementArgs, x, y *float64, dir string, notches int, mods []string) (*tool.Result, error) {
	if err := noPoint(x, y); err != nil {
		return nil, err
	}
	win, snap, el, err := d.element(ctx, call, t, e)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		if len(mods) > 0 {
			return nil, invalid("modifier needs a direction")
		}
		out, err := d.ax.ScrollTo(ctx, el)
		if errors.Is(err, atspi.ErrUnsupported) {
			return nil, authz.Refuse(authz.CodeUnsupported, "%v; turn the wheel over its container instead (scroll with the container's element_token and a direction)", err)
		}
		if err != nil {
			return nil, refusal(err)
		}
		return outcomeResult(out, snap, el, nil), nil
	}
	p, err := d.elementPoint(ctx, win, snap, el)
	if err != nil {
		return nil, err
	}
	ev := map[string]any{}
	dl, guards, err := d.pointerReady(ctx, call, t.Delivery, win, ev, false, nil, p)
	if err != nil {
		return nil, err
	}
	if err := d.scrollNotches(ctx, dl, p, dir, notches, mods, guards); err != nil {
		return nil, err
	}
	ok := d.verifyPointer(ctx, dl, p, win, ev)
	dl.finish(ctx, ev)
	return pointerResult(dl, fmt.Sprintf("scrolled %s %d notches over %s [%d]", dir, notches, el.Role, el.Index), ok, notches, ev, snap, el, p, "pointer"), nil
}
