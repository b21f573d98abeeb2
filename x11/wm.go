package x11

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jezek/xgb/xproto"
)

// clientMessage sends an EWMH client message about w to the root window.
func (b *Backend) clientMessage(w xproto.Window, typ string, data [5]uint32) {
	ev := xproto.ClientMessageEvent{
		Format: 32,
		Window: w,
		Type:   b.atoms.get(typ),
		Data:   xproto.ClientMessageDataUnionData32New(data[:]),
	}
	xproto.SendEvent(b.conn, false, b.root,
		xproto.EventMaskSubstructureRedirect|xproto.EventMaskSubstructureNotify, string(ev.Bytes()))
}

// Activate raises window id and gives it the input focus: through the window manager
// (_NET_ACTIVE_WINDOW) when one runs, otherwise with ConfigureWindow + SetInputFocus. It
// waits until the focus is on the window (or inside it), up to one second; focused says
// whether that happened. route names the method used.
func (b *Backend) Activate(ctx context.Context, id uint32) (route string, focused bool, err error) {
	w, err := b.Window(ctx, id)
	if err != nil {
		return "", false, err
	}
	win := xproto.Window(id)
	if b.ewmh() {
		route = "ewmh_active_window"
		b.clientMessage(win, "_NET_ACTIVE_WINDOW", [5]uint32{2, 0, 0, 0, 0}) // source: pager
	} else {
		route = "set_input_focus"
		if !w.Mapped {
			xproto.MapWindow(b.conn, win)
		}
		xproto.ConfigureWindow(b.conn, win, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
		xproto.SetInputFocus(b.conn, xproto.InputFocusPointerRoot, win, 0)
	}
	if err := b.sync(); err != nil {
		return route, false, err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for {
		changed := b.notify.wait()
		if b.hasFocus(win) && b.onTop(win) {
			return route, true, nil
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return route, false, ctx.Err()
			}
			if b.hasFocus(win) {
				return route, true, nil // focused, but another window stays above it
			}
			if route == "ewmh_active_window" {
				// The window manager ignored us; fall back to the core requests.
				route = "ewmh_active_window+set_input_focus"
				xproto.ConfigureWindow(b.conn, win, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
				xproto.SetInputFocus(b.conn, xproto.InputFocusPointerRoot, win, 0)
				_ = b.sync()
				return route, b.hasFocus(win), nil
			}
			return route, false, nil
		case <-changed:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// onTop reports whether win is as high in _NET_CLIENT_LIST_STACKING as activation can
// raise it (true without the list): every window above it lies in a higher layer — it is
// kept above (_NET_WM_STATE_ABOVE) while win is not, or it is a dock. Such windows stay
// above whatever the window manager does for win; waiting for them to go is pointless.
func (b *Backend) onTop(win xproto.Window) bool {
	r, err := getProperty(b.conn, b.root, b.atoms.get("_NET_CLIENT_LIST_STACKING"))
	if err != nil || r == nil {
		return true
	}
	v := propUint32s(r)
	pos := -1
	for i, id := range v {
		if xproto.Window(id) == win {
			pos = i
		}
	}
	if pos < 0 {
		return len(v) == 0
	}
	above := v[pos+1:]
	if len(above) == 0 {
		return true
	}
	stateAtom, typeAtom := b.atoms.get("_NET_WM_STATE"), b.atoms.get("_NET_WM_WINDOW_TYPE")
	aboveAtom, dockAtom := uint32(b.atoms.get("_NET_WM_STATE_ABOVE")), uint32(b.atoms.get("_NET_WM_WINDOW_TYPE_DOCK"))
	has := func(c xproto.GetPropertyCookie, atom uint32) bool {
		r, err := c.Reply()
		return err == nil && slices.Contains(propUint32s(r), atom)
	}
	selfC := xproto.GetProperty(b.conn, false, win, stateAtom, xproto.AtomAtom, 0, 64)
	states := make([]xproto.GetPropertyCookie, len(above))
	types := make([]xproto.GetPropertyCookie, len(above))
	for i, id := range above {
		states[i] = xproto.GetProperty(b.conn, false, xproto.Window(id), stateAtom, xproto.AtomAtom, 0, 64)
		types[i] = xproto.GetProperty(b.conn, false, xproto.Window(id), typeAtom, xproto.AtomAtom, 0, 64)
	}
	selfAbove := has(selfC, aboveAtom)
	ok := true
	for i := range above {
		higher := has(states[i], aboveAtom) && !selfAbove
		dock := has(types[i], dockAtom)
		if !higher && !dock {
			ok = false // keep reading the replies
		}
	}
	return ok
}

// hasFocus reports whether the input focus is win or one of its descendants, and (with a
// window manager) _NET_ACTIVE_WINDOW is win.
func (b *Backend) hasFocus(win xproto.Window) bool {
	if b.ewmh() {
		if a, ok := b.propUint32(b.root, "_NET_ACTIVE_WINDOW"); !ok || xproto.Window(a) != win {
			return false
		}
	}
	f, err := xproto.GetInputFocus(b.conn).Reply()
	if err != nil {
		return false
	}
	for w, i := f.Focus, 0; w > 1 && i < 32; i++ {
		if w == win {
			return true
		}
		t, err := xproto.QueryTree(b.conn, w).Reply()
		if err != nil || t.Parent == t.Root || t.Parent == 0 {
			return false
		}
		w = t.Parent
	}
	return false
}

// SetFrame moves and resizes window id so that its client area is r in root coordinates,
// through the window manager (_NET_MOVERESIZE_WINDOW with static gravity) when one runs,
// otherwise with ConfigureWindow. It waits up to one second for the geometry to settle and
// returns the frame the window actually got.
func (b *Backend) SetFrame(ctx context.Context, id uint32, r Rect) (granted Rect, route string, err error) {
	if r.Width < 1 || r.Height < 1 || r.Width > 32767 || r.Height > 32767 {
		return Rect{}, "", fmt.Errorf("%w: size %dx%d", ErrInvalidArgument, r.Width, r.Height)
	}
	if r.X < -32768 || r.Y < -32768 || r.X > 32767 || r.Y > 32767 {
		return Rect{}, "", fmt.Errorf("%w: position (%d,%d)", ErrOutOfBounds, r.X, r.Y)
	}
	before, err := b.Window(ctx, id)
	if err != nil {
		return Rect{}, "", err
	}
	win := xproto.Window(id)
	if b.ewmh() {
		route = "ewmh_moveresize"
		// flags: gravity static (10), x|y|width|height present (bits 8–11), source pager (bit 13).
		flags := uint32(10) | 0xf<<8 | 2<<12
		b.clientMessage(win, "_NET_MOVERESIZE_WINDOW", [5]uint32{flags, uint32(int32(r.X)), uint32(int32(r.Y)), uint32(r.Width), uint32(r.Height)})
	} else {
		route = "configure_window"
		xproto.ConfigureWindow(b.conn, win,
			xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
			[]uint32{uint32(int32(r.X)), uint32(int32(r.Y)), uint32(r.Width), uint32(r.Height)})
	}
	if err := b.sync(); err != nil {
		return Rect{}, route, err
	}
	// Wait for the frame to reach r, or to stop changing.
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	last, stable := before.Frame, 0
	for {
		w, err := b.Window(wctx, id)
		if err != nil {
			return Rect{}, route, err
		}
		if w.Frame == r {
			return w.Frame, route, nil
		}
		if w.Frame == last && w.Frame != before.Frame {
			stable++
		} else {
			stable = 0
		}
		last = w.Frame
		if stable >= 5 {
			return w.Frame, route, nil
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return w.Frame, route, ctx.Err()
			}
			return w.Frame, route, nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}
