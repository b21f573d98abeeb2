package x11

import (
	"context"
	"fmt"

	"github.com/jezek/xgb/res"
	"github.com/jezek/xgb/xproto"
)

// Guard is a last check before input. The input methods (MoveTo, Click, ButtonDown,
// ButtonUp, Scroll, Drag, TypeText, PressCombo) call their guards in order with the input
// lock held, right before the first event, and when one returns an error they send
// nothing and return that error unchanged. A guard must not send input.
type Guard func(ctx context.Context) error

// runGuards calls gs in order. Preconditions: input lock held, nothing sent yet.
func runGuards(ctx context.Context, gs []Guard) error {
	for _, g := range gs {
		if g == nil {
			continue
		}
		if err := g(ctx); err != nil {
			return err
		}
	}
	return nil
}

// KeyboardGrabbed reports whether another client holds an active grab of the core
// keyboard or has frozen it: key events would then go to that client, not to the window
// with the focus (a password prompt, a screen locker, an open menu, a window manager in
// the middle of a key binding).
//
// X has no request that names a grab's owner, so the server is asked with a grab of our
// own: GrabKeyboard on the root window (owner_events false, pointer and keyboard modes
// asynchronous). AlreadyGrabbed or Frozen means someone else holds it. Success is undone
// at once with UngrabKeyboard, in the same round trip as the next request. The probe is
// visible, and acceptable: for that one round trip the focus window gets FocusOut and the
// root FocusIn, both with mode NotifyGrab, then the reverse with mode NotifyUngrab. The
// focus itself never moves; these modes announce a temporary grab (every hotkey daemon
// causes them), and window managers and toolkits do not treat them as a focus change. A
// key the person presses during that round trip is reported to this connection and lost.
func (d *Devices) KeyboardGrabbed(ctx context.Context) (bool, error) {
	if d.b.closed() {
		return false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	r, err := xproto.GrabKeyboard(d.conn, false, d.b.root, xproto.TimeCurrentTime,
		xproto.GrabModeAsync, xproto.GrabModeAsync).Reply()
	if err != nil {
		return false, xerr("GrabKeyboard", err)
	}
	switch r.Status {
	case xproto.GrabStatusSuccess:
		xproto.UngrabKeyboard(d.conn, xproto.TimeCurrentTime)
		return false, nil
	case xproto.GrabStatusAlreadyGrabbed, xproto.GrabStatusFrozen:
		return true, nil
	}
	// InvalidTime and NotViewable cannot happen for CurrentTime on the root; say busy
	// rather than guess.
	return true, nil
}

// Focus is where the core keyboard's input focus is.
type Focus struct {
	// Window is the focus window GetInputFocus reports: 0 for None, 1 for PointerRoot
	// (keys go to the window under the pointer).
	Window uint32 `json:"focus_window"`
	// TopLevel is the client window that contains Window: the first window with WM_STATE
	// on the way up to the root, else the root's child there; 0 for None and PointerRoot.
	TopLevel uint32 `json:"window_id"`
	// PID is the process of TopLevel's client as X-Resource reports it; 0 when unknown.
	PID int `json:"pid"`
}

// RestoreFocus gives the core keyboard's focus back to f.Window, as InputFocus read it
// earlier, without raising anything: the window manager sees the focus change and follows
// it. It does nothing for None and PointerRoot.
func (b *Backend) RestoreFocus(ctx context.Context, f Focus) error {
	if b.closed() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.Window <= 1 {
		return nil
	}
	err := xproto.SetInputFocusChecked(b.conn, xproto.InputFocusPointerRoot, xproto.Window(f.Window), xproto.TimeCurrentTime).Check()
	return xerr("SetInputFocus", err)
}

// GiveFocusBack puts the person's focus back on f after a window manager moved it: at once
// with SetInputFocus (the keys the person types next go where they went). With activate,
// when a window manager that speaks EWMH still calls another window active, it also asks
// through _NET_ACTIVE_WINDOW, as a pager would, so that the manager's own idea of the focus
// agrees and it does not hand the focus on again at its next decision; the manager raises
// f's window doing so, as it was before the session's input raised another. It does
// nothing for None and PointerRoot.
func (b *Backend) GiveFocusBack(ctx context.Context, f Focus, activate bool) error {
	if err := b.RestoreFocus(ctx, f); err != nil || f.TopLevel == 0 || !activate {
		return err
	}
	if !b.ewmh() {
		return nil
	}
	if active, ok := b.propUint32(b.root, "_NET_ACTIVE_WINDOW"); ok && active != f.TopLevel {
		b.clientMessage(xproto.Window(f.TopLevel), "_NET_ACTIVE_WINDOW", [5]uint32{2, 0, 0, 0, 0}) // source: pager
	}
	return b.sync()
}

// FocusWindow returns the core keyboard's focus window alone (0 None, 1 PointerRoot): one
// round trip, for checks that it did not move.
func (b *Backend) FocusWindow(ctx context.Context) (uint32, error) {
	if b.closed() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r, err := xproto.GetInputFocus(b.conn).Reply()
	if err != nil {
		return 0, xerr("GetInputFocus", err)
	}
	return uint32(r.Focus), nil
}

// InputFocus returns the core keyboard's focus (the person's, on a shared display) and the
// top-level client window it lies in.
func (b *Backend) InputFocus(ctx context.Context) (Focus, error) { return b.core.InputFocus(ctx) }

// InputFocus returns the focus of this set's keyboard and the top-level client window it
// lies in. The questions about the window that had the focus last are sent with the
// question of the focus: when it still has it, one round trip answers both.
func (d *Devices) InputFocus(ctx context.Context) (Focus, error) {
	if d.b.closed() {
		return Focus{}, ErrClosed
	}
	return d.AskInputFocus().Answer(ctx)
}

// AskInputFocus sends InputFocus's questions and returns without waiting for the answers.
// The server answers requests on one connection in order: a reply to any request the
// backend sends on its main connection after this one says the focus was read before that
// request was carried out.
func (b *Backend) AskInputFocus() *FocusQuestion { return b.core.AskInputFocus() }

// AskInputFocus sends InputFocus's questions about this set's keyboard and returns without
// waiting for the answers (see Backend.AskInputFocus).
func (d *Devices) AskInputFocus() *FocusQuestion {
	q := &FocusQuestion{d: d, focus: xproto.GetInputFocus(d.conn)}
	if last := xproto.Window(d.lastFocus.Load()); last > 1 && last != d.b.root {
		q.guess = d.b.askFocusLevel(last)
	}
	return q
}

// FocusQuestion is a read of a keyboard's focus in flight (AskInputFocus). Answer reads
// it once; it is not safe for concurrent use.
type FocusQuestion struct {
	d     *Devices
	focus xproto.GetInputFocusCookie
	guess *focusLevel
}

// Discard drops the answers of a question no longer needed.
func (q *FocusQuestion) Discard() {
	_, _ = q.focus.Reply()
	if q.guess != nil {
		q.guess.discard()
	}
}

// Answer waits for the focus and finds the top-level client window it lies in, asking
// about each window on the way up that was not asked about already.
func (q *FocusQuestion) Answer(ctx context.Context) (Focus, error) {
	d, b, guess := q.d, q.d.b, q.guess
	r, err := q.focus.Reply()
	if err != nil {
		if guess != nil {
			guess.discard()
		}
		return Focus{}, xerr("GetInputFocus", err)
	}
	f := Focus{Window: uint32(r.Focus)}
	if r.Focus <= 1 || r.Focus == b.root {
		if guess != nil {
			guess.discard()
		}
		return f, nil
	}
	d.lastFocus.Store(uint32(r.Focus))
	w := r.Focus
	level := guess
	if level != nil && level.win != w {
		level.discard()
		level = nil
	}
	for range 32 {
		if err := ctx.Err(); err != nil {
			if level != nil {
				level.discard()
			}
			return Focus{}, err
		}
		if level == nil {
			level = b.askFocusLevel(w)
		}
		top, parent, pid, err := level.answer()
		level = nil
		if err != nil {
			return Focus{}, err
		}
		if top {
			f.TopLevel, f.PID = uint32(w), pid
			return f, nil
		}
		w = parent
	}
	return Focus{}, fmt.Errorf("%w: focus window 0x%x is nested too deep", ErrInvalidArgument, r.Focus)
}

// focusLevel is the questions InputFocus asks about one window on the way up from the
// focus: is it a client (WM_STATE), who is its parent, who created it.
type focusLevel struct {
	b     *Backend
	win   xproto.Window
	state xproto.GetPropertyCookie
	tree  xproto.QueryTreeCookie
	pid   res.QueryClientIdsCookie
}

// askFocusLevel sends focusLevel's questions about w.
func (b *Backend) askFocusLevel(w xproto.Window) *focusLevel {
	l := &focusLevel{b: b, win: w,
		state: xproto.GetProperty(b.conn, false, w, b.atoms.get("WM_STATE"), xproto.GetPropertyTypeAny, 0, 0),
		tree:  xproto.QueryTree(b.conn, w)}
	if b.caps.XRes {
		l.pid = res.QueryClientIds(b.conn, 1, []res.ClientIdSpec{{Client: uint32(w), Mask: res.ClientIdMaskLocalClientPID}})
	}
	return l
}

// answer reads the replies: whether the window is the top-level client (it has WM_STATE,
// or its parent is the root), its parent, and its creator's pid (0 when unknown).
func (l *focusLevel) answer() (top bool, parent xproto.Window, pid int, err error) {
	st, stErr := l.state.Reply()
	tree, treeErr := l.tree.Reply()
	if l.b.caps.XRes {
		pid = pidOf(l.pid)
	}
	switch {
	case stErr != nil:
		return false, 0, 0, xerr("GetProperty", stErr)
	case treeErr != nil:
		return false, 0, 0, xerr("QueryTree", treeErr)
	}
	return st.Format != 0 || tree.Parent == l.b.root || tree.Parent == 0, tree.Parent, pid, nil
}

// discard reads and drops the replies of questions no longer needed.
func (l *focusLevel) discard() { _, _, _, _ = l.answer() }
