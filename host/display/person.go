package display

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// watchPoll is how often a nested display looks at the person's display when no event
// woke it: events cover the window's own enter, leave, focus and configure changes, the
// poll what they miss (another window raised over the pointer, the focus moving between
// other windows).
const watchPoll = 100 * time.Millisecond

// maxDepth bounds the walks through the window tree (from the root to the window under the
// pointer, and from the focus up to the root).
const maxDepth = 32

// WatchPerson reports whether the person is using a nested display: their pointer is over
// the visible part of its window on their display, or that window has their keyboard
// focus. It calls report with the state at once and then on every change, and returns when
// ctx ends (ctx's error) or when the display can no longer watch: its window or its
// connection to the person's display went away, or it was closed (an error saying so). It
// implements host.PersonWatcher; the watching itself is done by the display's own
// connection there (the only one besides Xephyr's), so several watchers cost nothing more.
func (d *Display) WatchPerson(ctx context.Context, report func(active bool)) error {
	if d.nested == nil || !d.nested.started {
		return errors.New("display: watch the person: not a nested display")
	}
	f := d.nested.frame
	first, last := true, false
	for {
		active, changed, err := f.state()
		if err != nil {
			return fmt.Errorf("display: watch the person on %s: %w", f.parent, err)
		}
		if first || active != last {
			report(active)
			first, last = false, active
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// personActive reports whether the pointer on x's screen is over the visible part of win
// (the chain of windows under the pointer, from the root down, passes through win) or the
// keyboard focus is win or inside it. An error means win is gone or x broke.
func personActive(x *xgb.Conn, root, win xproto.Window) (bool, error) {
	if _, err := xproto.GetGeometry(x, xproto.Drawable(win)).Reply(); err != nil {
		return false, fmt.Errorf("the window 0x%x is gone: %w", win, err)
	}
	w := root
	for i := 0; i < maxDepth; i++ {
		if w == win {
			return true, nil
		}
		p, err := xproto.QueryPointer(x, w).Reply()
		if err != nil || !p.SameScreen || p.Child == 0 {
			break // a window of the chain went away meanwhile: the next look decides
		}
		w = p.Child
	}
	f, err := xproto.GetInputFocus(x).Reply()
	if err != nil {
		return false, fmt.Errorf("GetInputFocus: %w", err)
	}
	// None (0) and PointerRoot (1) name no window: with PointerRoot the keyboard follows
	// the pointer, which the walk above covered.
	for w, i := f.Focus, 0; w > 1 && w != root && i < maxDepth; i++ {
		if w == win {
			return true, nil
		}
		t, err := xproto.QueryTree(x, w).Reply()
		if err != nil {
			break
		}
		w = t.Parent
	}
	return false, nil
}
