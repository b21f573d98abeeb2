package atspi

import (
	"context"
	"errors"
	"time"

	"github.com/godbus/dbus/v5"
)

// defaultWindow is how many calls a pipeline keeps in flight.
const defaultWindow = 64

// pipeline sends many D-Bus calls with a bounded number in flight and hands each reply to
// its callback, in the pipeline's goroutine, so callbacks need no locking and may queue
// more calls. It stops when everything is answered, when the oldest call in flight has
// waited longer than the per-call timeout (stalled), or when ctx ends.
//
// A pipeline is used by one goroutine and run once.
type pipeline struct {
	conn        *dbus.Conn
	callTimeout time.Duration
	window      int
	ch          chan *dbus.Call // capacity window: godbus never blocks delivering a reply

	queue    []*op              // not yet sent, FIFO
	inflight map[*dbus.Call]*op // sent, not answered
	sent     []*op              // sent, in send order (answered ones are skipped lazily)

	// stalled is set when a call went unanswered for callTimeout; staller names it.
	stalled bool
	staller *op
	calls   int // calls sent
}

type op struct {
	r      ref
	method string
	args   []any
	done   func(*dbus.Call)
	at     time.Time
	over   bool
}

func newPipeline(conn *dbus.Conn, callTimeout time.Duration) *pipeline {
	return &pipeline{
		conn: conn, callTimeout: callTimeout, window: defaultWindow,
		ch: make(chan *dbus.Call, defaultWindow), inflight: map[*dbus.Call]*op{},
	}
}

// add queues a call; done receives it answered or failed.
func (p *pipeline) add(r ref, method string, done func(*dbus.Call), args ...any) {
	p.queue = append(p.queue, &op{r: r, method: method, args: args, done: done})
}

// run sends and dispatches until nothing is left, the pipeline stalls, or ctx ends. It
// returns ErrNotResponding (stalled) or ctx's error; calls still in flight then are
// cancelled and waited for, and their callbacks are not run.
func (p *pipeline) run(ctx context.Context) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for len(p.queue) > 0 || len(p.inflight) > 0 {
		for len(p.inflight) < p.window && len(p.queue) > 0 {
			o := p.queue[0]
			p.queue[0] = nil
			p.queue = p.queue[1:]
			o.at = time.Now()
			c := p.conn.Object(o.r.bus, o.r.path).GoWithContext(cctx, o.method, 0, p.ch, o.args...)
			p.calls++
			p.inflight[c] = o
			p.sent = append(p.sent, o)
		}
		for len(p.sent) > 0 && p.sent[0].over {
			p.sent[0] = nil
			p.sent = p.sent[1:]
		}
		timer.Reset(time.Until(p.sent[0].at.Add(p.callTimeout)))
		select {
		case c := <-p.ch:
			o := p.inflight[c]
			delete(p.inflight, c)
			o.over = true
			if c.Err != nil && errors.Is(c.Err, context.Canceled) && ctx.Err() == nil {
				continue // cancelled by us; cannot happen before the drain below
			}
			o.done(c)
		case <-timer.C:
			p.stalled, p.staller = true, p.sent[0]
			p.drain(cancel)
			return ErrNotResponding
		case <-ctx.Done():
			p.drain(cancel)
			return ctx.Err()
		}
	}
	return nil
}

// drain cancels the calls in flight and waits for godbus to hand each one back.
func (p *pipeline) drain(cancel context.CancelFunc) {
	cancel()
	for len(p.inflight) > 0 {
		c := <-p.ch
		delete(p.inflight, c)
	}
	p.queue = nil
}
