package desktop

import (
	"context"
	"errors"
	"slices"
	"sort"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// The accessibility route of coordinate input, for background delivery when the session's
// own devices cannot deliver: the target is covered at the point (nothing is raised in the
// background), or the server cannot create the devices. The toolkit acts on its own
// element, so nothing lands on the covering window and nothing of the person's moves.

// backgroundFallback reports whether err, met while preparing background input, leaves the
// accessibility route worth trying: a covered target or no session devices.
func backgroundFallback(dl *delivery, err error) bool {
	var r *authz.Refusal
	if !errors.As(err, &r) {
		return false
	}
	switch r.Code {
	case authz.CodeTargetCovered:
		return dl != nil && dl.background()
	case authz.CodeBackgroundUnavailable:
		return true
	}
	return false
}

// axClickAt clicks the element of win at p through accessibility: of the elements whose
// on-screen frame contains p, the innermost that accepts the press. It returns handled
// false when the click has no accessibility equivalent (another button, modifiers), win
// has no accessible tree, or no element there accepts it; the caller then refuses with
// why, which says what stopped the devices.
func (d *desk) axClickAt(ctx context.Context, call *tool.Call, win *x11.Window, p x11.Point, btn x11.Button, count int, mods []string, why error) (res *tool.Result, handled bool, err error) {
	kind := press(btn, count, mods)
	if win == nil || kind == 0 || d.ax == nil {
		return nil, false, nil
	}
	snap, err := d.ax.Snapshot(ctx, atspiWindow(win), walkBudget(ctx, atspi.WalkOptions{MaxElements: atspi.MaxElements}))
	if err != nil || snap.Degraded {
		return nil, false, nil
	}
	var under []*atspi.Element
	for i := range snap.Elements {
		el := &snap.Elements[i]
		if el.Accessible() && el.ScreenFrame != nil && el.ScreenFrame.Contains(p.X, p.Y) && len(el.Actions) > 0 {
			under = append(under, el)
		}
	}
	// Innermost first: the deepest, then the smallest.
	sort.SliceStable(under, func(i, j int) bool {
		if under[i].Depth != under[j].Depth {
			return under[i].Depth > under[j].Depth
		}
		return area(under[i].ScreenFrame) < area(under[j].ScreenFrame)
	})
	for _, el := range under {
		if err := d.checkPasteElement(ctx, call, el); err != nil {
			return nil, true, err
		}
		out, err := d.ax.Press(ctx, el, kind)
		if errors.Is(err, atspi.ErrUnsupported) {
			continue
		}
		if err != nil {
			return nil, true, refusal(err)
		}
		d.sessions.of(call.Session).Add(snap)
		out.Evidence["fallback_reason"] = why.Error()
		return outcomeResult(out, snap, el, map[string]any{"x": p.X, "y": p.Y, "button": btn.String(), "count": count}), true, nil
	}
	return nil, false, nil
}

// axTypeInto types text into win's focused editable element through accessibility, at its
// caret, and reads it back. handled is false when win has no focused editable element.
func (d *desk) axTypeInto(ctx context.Context, call *tool.Call, win *x11.Window, text string, why error) (res *tool.Result, handled bool, err error) {
	if win == nil || d.ax == nil {
		return nil, false, nil
	}
	snap, err := d.ax.Snapshot(ctx, atspiWindow(win), walkBudget(ctx, atspi.WalkOptions{MaxElements: atspi.MaxElements}))
	if err != nil || snap.Degraded {
		return nil, false, nil
	}
	for i := range snap.Elements {
		el := &snap.Elements[i]
		if !el.Accessible() || !el.Editable || !slices.Contains(el.States, "focused") {
			continue
		}
		out, err := d.ax.TypeAtCaret(ctx, el, text)
		if errors.Is(err, atspi.ErrUnsupported) {
			return nil, false, nil
		}
		if err != nil {
			return nil, true, refusal(err)
		}
		d.sessions.of(call.Session).Add(snap)
		out.Evidence["fallback_reason"] = why.Error()
		return outcomeResult(out, snap, el, nil), true, nil
	}
	return nil, false, nil
}

func area(r *atspi.Rect) int { return r.Width * r.Height }

// noBackgroundRoute is the refusal when neither the session's devices nor accessibility
// can deliver: it keeps why's code when that says more (a covered target), and names what
// would work.
func noBackgroundRoute(why error) error {
	var r *authz.Refusal
	if errors.As(why, &r) && r.Code == authz.CodeTargetCovered {
		return authz.Refuse(authz.CodeBackgroundUnavailable,
			"%s. No element of the target's accessible tree at that point takes the action either. "+
				"Use delivery_mode \"foreground\" (raises the target, then puts the person's window and pointer back) or wait until the window on top is gone", r.Message)
	}
	return why
}
