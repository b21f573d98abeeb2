package x11

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jezek/xgb/xproto"
)

// wmSync asks the window manager a question that it answers in the order it handles its
// events: _NET_REQUEST_FRAME_EXTENTS (EWMH) about a window of the backend's own that is
// never mapped, which the manager answers by setting _NET_FRAME_EXTENTS on it. The answer
// to a request sent after some event (a keyboard mapping change) says the manager has
// handled that event.
type wmSync struct {
	mu sync.Mutex // guards the fields below
	// win is the unmapped window asked about; 0 until the first question.
	win xproto.Window
	// manager is the _NET_SUPPORTING_WM_CHECK window of the manager asked (a new one
	// replacing it is asked about afresh); heard is set once it answered a question.
	manager uint32
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

// handleFrameExtents counts an answer when e is the manager setting _NET_FRAME_EXTENTS on
// the backend's window. It runs on the event loop.
func (b *Backend) handleFrameExtents(e xproto.PropertyNotifyEvent) {
	s := &b.wm
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.win == 0 || e.Window != s.win || e.Atom != b.atoms.get("_NET_FRAME_EXTENTS") || e.State != xproto.PropertyNewValue {
		return
	}
	s.answered++
	s.heard = true
	close(s.changed)
	s.changed = make(chan struct{})
}

// WindowManagerCaughtUp asks the window manager whether it has handled every event the
// server sent it before this call and waits up to limit for the answer. It returns an
// error wrapping ErrUnsupported at once when no manager runs or it could not be asked, and
// once the manager left its first question unanswered for wmSilentAfter; one wrapping
// ErrTimeout when no answer came in time; and ctx's error when ctx ends first.
func (b *Backend) WindowManagerCaughtUp(ctx context.Context, limit time.Duration) error {
	if b.closed() {
		return ErrClosed
	}
	asked := time.Now()
	n, changed, ok := b.askWindowManager()
	if !ok {
		return fmt.Errorf("%w: no window manager to ask (_NET_REQUEST_FRAME_EXTENTS)", ErrUnsupported)
	}
	// A manager that never answers (fluxbox, which lists the request) is found out by
	// the question Open sends: unanswered after wmSilentAfter, it is not waited for.
	b.wm.mu.Lock()
	heard, since := b.wm.heard, time.Since(b.wm.firstAsked)
	b.wm.mu.Unlock()
	if !heard {
		if since >= wmSilentAfter {
			return fmt.Errorf("%w: the window manager did not answer _NET_REQUEST_FRAME_EXTENTS within %v", ErrUnsupported, wmSilentAfter)
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
	check, running := b.propUint32(b.root, "_NET_SUPPORTING_WM_CHECK")
	if !running || check == 0 {
		return 0, nil, false // no manager yet: it may start later
	}
	if check != s.manager {
		// Every manager is asked, whether or not _NET_SUPPORTED lists the request: i3
		// answers it without listing it. One that does not answer is found out by its
		// first question (wmSilentAfter).
		s.manager, s.heard, s.firstAsked = check, false, time.Time{}
	}
	if s.win == 0 {
		id, err := newPropertyWindow(b.conn, b.root)
		if err != nil {
			return 0, nil, false
		}
		s.win = id
		s.changed = make(chan struct{})
	}
	ev := xproto.ClientMessageEvent{
		Format: 32,
		Window: s.win,
		Type:   b.atoms.get("_NET_REQUEST_FRAME_EXTENTS"),
		Data:   xproto.ClientMessageDataUnionData32New(make([]uint32, 5)),
	}
	if err := xproto.SendEventChecked(b.conn, false, b.root, xproto.EventMaskSubstructureRedirect|xproto.EventMaskSubstructureNotify,
		string(ev.Bytes())).Check(); err != nil {
		return 0, nil, false
	}
	if s.firstAsked.IsZero() {
		s.firstAsked = time.Now()
	}
	s.sent++
	return s.sent, s.changed, true
}

// wmSilentAfter is how long the window manager may take to answer the first question
// before it counts as one that does not answer.
const wmSilentAfter = time.Second
