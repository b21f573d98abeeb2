package x11

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jezek/xgb/xproto"
)

// wmSync asks the window manager a question that it answers in the order it handles its
// events: a ConfigureWindow of a window of the backend's own that is never mapped. A
// manager redirects the structure of the root's children (SubstructureRedirect), so the
// server hands the request to it as a ConfigureRequest; ICCCM has it honour the request of
// a window it does not manage, which it does by configuring the window as asked, and the
// server then tells the backend (ConfigureNotify). Every manager does so, EWMH or not
// (openbox, xfwm4, metacity, mutter, kwin_x11, i3, fluxbox); with no manager the server
// configures the window at once. The answer to a request sent after some event (a press, a
// keyboard mapping change) says the manager has handled that event.
//
// Each question asks for another width, 1 + its number modulo wmAskWidths, and the width
// in the answer says which question was answered.
type wmSync struct {
	mu sync.Mutex // guards the fields below
	// win is the unmapped window asked about; 0 until the first question.
	win xproto.Window
	// manager tells the manager asked from another: its _NET_SUPPORTING_WM_CHECK window
	// shifted left by one, with the low bit set when a client redirects the root's
	// children. A new one is asked about afresh. heard is set once it answered a question.
	manager uint64
	heard   bool
	// sent counts the questions, answered the answers; the manager answers in order, so
	// question n is answered once answered ≥ n.
	sent, answered uint64
	// changed is closed and replaced at every answer.
	changed chan struct{}
	// firstAsked is when the first question to this manager was sent (Open sends one).
	firstAsked time.Time
	// keymapChanged is when the server last announced a keyboard mapping change
	// (MappingNotify); caughtUp when the manager last answered a question asked after it.
	keymapChanged, caughtUp time.Time
}

// handleMappingNotify records a keyboard mapping change. It runs on the event loop.
func (b *Backend) handleMappingNotify(e xproto.MappingNotifyEvent) {
	if e.Request != xproto.MappingKeyboard && e.Request != xproto.MappingModifier {
		return
	}
	b.wm.mu.Lock()
	b.wm.keymapChanged = time.Now()
	b.wm.mu.Unlock()
}

// WindowManagerCaughtUpWithKeymap returns nil at once unless the keyboard mapping changed
// since the window manager last said it had caught up; then it asks again
// (WindowManagerCaughtUp). A manager grabs its key bindings again after every change,
// and a press it grabs to focus on the click waits until it gets to it: on a loaded
// machine, seconds.
func (b *Backend) WindowManagerCaughtUpWithKeymap(ctx context.Context, limit time.Duration) error {
	b.wm.mu.Lock()
	settled := !b.wm.caughtUp.Before(b.wm.keymapChanged)
	b.wm.mu.Unlock()
	if settled {
		return nil
	}
	return b.WindowManagerCaughtUp(ctx, limit)
}

// wmAskWidths is how many widths the questions cycle through: far more than can be
// outstanding at once.
const wmAskWidths = 1000

// handleWindowManagerAnswer counts the answers up to the question e answers when e is the
// configuration of the backend's window. It runs on the event loop.
func (b *Backend) handleWindowManagerAnswer(e xproto.ConfigureNotifyEvent) {
	s := &b.wm
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.win == 0 || e.Window != s.win || e.Width == 0 {
		return
	}
	// The latest question whose width this is: questions are answered in order.
	back := (s.sent + wmAskWidths - uint64(e.Width-1)%wmAskWidths) % wmAskWidths
	if back > s.sent || s.sent-back <= s.answered {
		return
	}
	s.answered = s.sent - back
	s.heard = true
	close(s.changed)
	s.changed = make(chan struct{})
}

// WindowManagerCaughtUp asks the window manager whether it has handled every event the
// server sent it before this call and waits up to limit for the answer (wmSync). With no
// manager the server answers, at once. It returns an error wrapping ErrUnsupported at once
// when the question could not be asked, and once the manager left its first question
// unanswered for wmSilentAfter; one wrapping ErrTimeout when no answer came in time; and
// ctx's error when ctx ends first.
func (b *Backend) WindowManagerCaughtUp(ctx context.Context, limit time.Duration) error {
	if b.closed() {
		return ErrClosed
	}
	asked := time.Now()
	n, changed, ok := b.askWindowManager()
	if !ok {
		return fmt.Errorf("%w: the window manager could not be asked", ErrUnsupported)
	}
	// A manager that never answers is found out by the question Open sends: unanswered
	// after wmSilentAfter, it is not waited for.
	b.wm.mu.Lock()
	heard, since := b.wm.heard, time.Since(b.wm.firstAsked)
	b.wm.mu.Unlock()
	if !heard {
		if since >= wmSilentAfter {
			return fmt.Errorf("%w: the window manager did not answer a configure request within %v", ErrUnsupported, wmSilentAfter)
		}
		limit = min(limit, wmSilentAfter-since)
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-changed:
		case <-t.C:
			if !heard {
				return fmt.Errorf("%w: the window manager did not answer its first question within %v", ErrUnsupported, wmSilentAfter)
			}
			return fmt.Errorf("%w: the window manager did not answer within %v", ErrTimeout, limit)
		case <-ctx.Done():
			return ctx.Err()
		case <-b.done:
			return ErrClosed
		}
		b.wm.mu.Lock()
		answered := b.wm.answered >= n
		if answered && b.wm.caughtUp.Before(asked) {
			b.wm.caughtUp = asked
		}
		changed = b.wm.changed
		b.wm.mu.Unlock()
		if answered {
			return nil
		}
	}
}

// askWindowManager sends one question and returns its number and the channel closed at
// the next answer; ok is false when it cannot be asked.
func (b *Backend) askWindowManager() (n uint64, changed chan struct{}, ok bool) {
	s := &b.wm
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.win == 0 {
		id, err := newWindow(b.conn, b.root, xproto.EventMaskStructureNotify)
		if err != nil {
			return 0, nil, false
		}
		s.win = id
		s.changed = make(chan struct{})
	}
	// Which manager is asked, read beside the question: its EWMH check window, and
	// whether any client redirects the root's children (a manager without EWMH does).
	check := xproto.GetProperty(b.conn, false, b.root, b.atoms.get("_NET_SUPPORTING_WM_CHECK"), xproto.AtomWindow, 0, 1)
	attrs := xproto.GetWindowAttributes(b.conn, b.root)
	// Sent without a round trip of its own: the request can fail only with the
	// connection, and then no answer comes and nothing else works either.
	xproto.ConfigureWindow(b.conn, s.win, xproto.ConfigWindowWidth, []uint32{uint32(1 + (s.sent+1)%wmAskWidths)})
	s.sent++
	manager := uint64(0)
	if r, err := check.Reply(); err == nil {
		if v := propUint32s(r); len(v) > 0 {
			manager = uint64(v[0]) << 1
		}
	}
	if r, err := attrs.Reply(); err == nil && r.AllEventMasks&xproto.EventMaskSubstructureRedirect != 0 {
		manager |= 1
	}
	if manager != s.manager {
		// A manager that does not answer is found out by its first question
		// (wmSilentAfter); one that replaces it is asked afresh.
		s.manager, s.heard, s.firstAsked = manager, false, time.Time{}
	}
	if s.firstAsked.IsZero() {
		s.firstAsked = time.Now()
	}
	return s.sent, s.changed, true
}

// wmSilentAfter is how long the window manager may take to answer the first question
// before it counts as one that does not answer.
const wmSilentAfter = time.Second
