package worker

import (
	"context"
	"sync"
	"sync/atomic"
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

// quickCtx is the context of a quick call (tool.Tool.Quick), which runs on the session's
// reader. Quick tools answer without waiting, so most never ask for Done; a cancellable
// context and a place in deadlines for each of them would cost more than the call. Here
// the call's cancellation is made only when something needs it: when Done is asked for
// (a handler that waits, or a context derived from this one), or when Err finds the
// deadline passed. It is then a context of the session's with a timeout at the deadline,
// so a handler that blocks is cancelled at its deadline (cause DeadlineExceeded) or when
// the session ends (the session's cause), as any call is. Until then Err answers from
// the session's context and the clock. release stops the timer once the call returned.
type quickCtx struct {
	parent context.Context // the session's
	at     time.Time
	now    func() time.Time

	once  sync.Once
	armed atomic.Pointer[armedCtx]
}

// armedCtx is a quickCtx's cancellation once made.
type armedCtx struct {
	ctx  context.Context
	stop context.CancelFunc
}

func newQuickCtx(parent context.Context, at time.Time, now func() time.Time) *quickCtx {
	return &quickCtx{parent: parent, at: at, now: now}
}

func (c *quickCtx) arm() *armedCtx {
	c.once.Do(func() {
		ctx, stop := context.WithTimeoutCause(c.parent, c.at.Sub(c.now()), context.DeadlineExceeded)
		c.armed.Store(&armedCtx{ctx: ctx, stop: stop})
	})
	return c.armed.Load()
}

func (c *quickCtx) Deadline() (time.Time, bool) { return c.at, true }

func (c *quickCtx) Done() <-chan struct{} { return c.arm().ctx.Done() }

func (c *quickCtx) Err() error {
	if a := c.armed.Load(); a != nil {
		return a.ctx.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.now().Before(c.at) {
		return nil
	}
	// Past the deadline: made now, the cancellation is already done, so Err and
	// context.Cause agree from here on.
	return c.arm().ctx.Err()
}

func (c *quickCtx) Value(key any) any {
	if a := c.armed.Load(); a != nil {
		return a.ctx.Value(key)
	}
	return c.parent.Value(key)
}

// release stops the timer of a cancellation that was made.
func (c *quickCtx) release() {
	if a := c.armed.Load(); a != nil {
		a.stop()
	}
}
