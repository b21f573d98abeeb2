package x11

import (
	"context"
	"fmt"
	"sync"

	"github.com/jezek/xgb/xproto"
)

// eventBarrier tells when the event loop has handled every event the server sent before
// some point. It changes a property of a window of the backend's own, never mapped; the
// server answers with a PropertyNotify, which comes after every event it sent earlier.
//
// The notification is recognised by its sequence number, not counted: an event carries the
// number of the last request the server had processed on this connection when it sent the
// event, so one with a number at or past the property change's was sent after that change,
// and the events before it have been handled once the loop sees it. Another client changing
// the same property can only make such an event come sooner in the stream, never earlier in
// the server's order.
type eventBarrier struct {
	win  xproto.Window // 0 when it could not be created: every wait fails
	atom xproto.Atom
	mu   sync.Mutex // guards the fields below
	// seen is the sequence number of the last notification the event loop handled and
	// handled how many it handled; changed is closed and replaced at each one.
	seen    uint16
	handled uint64
	changed chan struct{}
}

// init creates the window. It runs in Open, before the event loop starts.
func (e *eventBarrier) init(b *Backend) {
	e.changed = make(chan struct{})
	e.atom = b.atoms.get("_CUA_HOST_EVENT_BARRIER")
	if e.atom == 0 {
		return
	}
	id, err := newPropertyWindow(b.conn, b.root)
	if err != nil {
		b.log.Debug("x11 event barrier window", "err", err)
		return
	}
	e.win = id
}

// handle notes a notification of the barrier's property; it reports whether e was one. It
// runs on the event loop.
func (e *eventBarrier) handle(ev xproto.PropertyNotifyEvent) bool {
	if e.win == 0 || ev.Window != e.win || ev.Atom != e.atom {
		return false
	}
	e.mu.Lock()
	e.seen = ev.Sequence
	e.handled++
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	return true
}

// barrierMark is a property change in flight: wait for its notification.
type barrierMark struct {
	seq uint16
	// before is how many notifications had been handled when it was sent: only later
	// ones are compared with seq, whose 16 bits wrap.
	before uint64
	ok     bool
}

// send changes the property. Requests sent after it are processed after it.
func (e *eventBarrier) send(b *Backend) barrierMark {
	if e.win == 0 {
		return barrierMark{}
	}
	e.mu.Lock()
	before := e.handled
	e.mu.Unlock()
	c := xproto.ChangeProperty(b.conn, xproto.PropModeReplace, e.win, e.atom, xproto.AtomCardinal, 32, 1, make([]byte, 4))
	return barrierMark{seq: c.Sequence, before: before, ok: true}
}

// wait returns once the event loop has handled the notification of m or a later one, so
// every event sent before m's change has been handled.
func (e *eventBarrier) wait(ctx context.Context, b *Backend, m barrierMark) error {
	if !m.ok {
		return fmt.Errorf("%w: no event barrier window", ErrUnsupported)
	}
	for {
		e.mu.Lock()
		// Sequence numbers are 16 bits and wrap: compare by difference, and only with a
		// notification handled since the change was sent (so it is recent).
		reached := e.handled > m.before && int16(e.seen-m.seq) >= 0
		changed := e.changed
		e.mu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-b.done:
			return ErrClosed
		}
	}
}
