package worker

import (
	"context"
	"sync"
	"time"
)

// deadlines cancels in-flight calls whose deadline has passed, with one timer for the whole
// worker. A timer per call would, on every call, wake a thread parked in the network poller
// (adding a timer earlier than the poller's wake-up time does), which on a two-core machine
// costs more than the call itself. Here the timer is re-armed only when a call brings a
// deadline earlier than the one armed, or when it fires.
type deadlines struct {
	now func() time.Time

	// mu guards the fields below.
	mu    sync.Mutex
	calls map[*inflightCall]time.Time
	timer *time.Timer
	armed time.Time // zero when the timer is not armed
}

func newDeadlines(now func() time.Time) *deadlines {
	d := &deadlines{now: now, calls: map[*inflightCall]time.Time{}}
	d.timer = time.AfterFunc(time.Hour, d.fire)
	d.timer.Stop()
	return d
}

// add watches c until remove; c's context is cancelled with context.DeadlineExceeded as
// its cause once at passes.
func (d *deadlines) add(c *inflightCall, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[c] = at
	if d.armed.IsZero() || at.Before(d.armed) {
		d.armLocked(at)
	}
}

// remove stops watching c. The armed timer is left alone: when it fires with nothing due
// it re-arms for the earliest remaining deadline.
func (d *deadlines) remove(c *inflightCall) {
	d.mu.Lock()
	delete(d.calls, c)
	d.mu.Unlock()
}

func (d *deadlines) armLocked(at time.Time) {
	d.armed = at
	d.timer.Reset(max(at.Sub(d.now()), 0))
}

func (d *deadlines) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	d.armed = time.Time{}
	var next time.Time
	for c, at := range d.calls {
		if !now.Before(at) {
			c.cancel(context.DeadlineExceeded)
			delete(d.calls, c)
			continue
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if !next.IsZero() {
		d.armLocked(next)
	}
}

// stop disarms the timer for good.
func (d *deadlines) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timer.Stop()
	d.calls = map[*inflightCall]time.Time{}
}

// deadlineCtx reports the call's deadline to handlers that ask (ctx.Deadline); the
// cancellation itself comes from deadlines.
type deadlineCtx struct {
	context.Context
	at time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }
