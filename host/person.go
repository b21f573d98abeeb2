package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// PersonWatcher says whether the person is using a nested display: their pointer is over
// its window on their own display, or the window has their keyboard focus. The nested
// display of package host/display implements it.
type PersonWatcher interface {
	// WatchPerson calls report with the state at once, then on every change, from one
	// goroutine, until ctx ends (it then returns ctx's error) or it can no longer watch
	// (it returns why).
	WatchPerson(ctx context.Context, report func(active bool)) error
}

// personWatch runs Options.Person for a Host and forwards its reports to the worker as
// PersonActivity frames (docs/protocol.md, "Person activity").
type personWatch struct {
	// cancel and done are set by watchPerson before Start returns and read by stop; nil
	// when there is nothing to watch.
	cancel context.CancelFunc
	done   chan struct{}

	// mu guards the fields below; it also orders the frames sent.
	mu     sync.Mutex
	sent   bool // a state reached the worker
	active bool // the last state sent
}

// watchPerson starts Options.Person and waits until its first report reached the worker,
// so that no session exists before the worker knows whether the person is there. A watch
// that ends on its own later (the person's display went away, the window vanished) leaves
// the person reported active: without the watch nobody can say they are away.
func (h *Host) watchPerson(ctx context.Context) error {
	wctx, cancel := context.WithCancel(context.Background())
	h.person.cancel, h.person.done = cancel, make(chan struct{})
	first := make(chan struct{})
	var firstOnce sync.Once
	ended := make(chan error, 1)
	go func() {
		defer close(h.person.done)
		err := h.opts.Person.WatchPerson(wctx, func(active bool) {
			h.sendPerson(active)
			firstOnce.Do(func() { close(first) })
		})
		if wctx.Err() == nil {
			if err == nil {
				err = errors.New("the watch ended")
			}
			h.log.Warn("cannot watch the person's display any more: the agent's acting calls stay refused person_active", "err", err)
			h.sendPerson(true)
		}
		ended <- err
	}()
	timer := time.NewTimer(h.opts.StartTimeout)
	defer timer.Stop()
	select {
	case <-first:
		return nil
	case err := <-ended:
		select {
		case <-first:
			return nil
		default:
		}
		return fmt.Errorf("watch the person's display: %w", err)
	case <-timer.C:
		return fmt.Errorf("watch the person's display: no first state within %v", h.opts.StartTimeout)
	case <-ctx.Done():
		return fmt.Errorf("watch the person's display: %w", ctx.Err())
	}
}

// sendPerson sends the person's state to the worker unless it is the one last sent.
func (h *Host) sendPerson(active bool) {
	p := &h.person
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent && p.active == active {
		return
	}
	frame := &cuav1.ControlFrame{ProtocolVersion: h.version, Body: &cuav1.ControlFrame_PersonActivity{PersonActivity: &cuav1.PersonActivity{Active: active}}}
	if err := h.ctrl.Send(frame, nil); err != nil {
		h.log.Debug("send PersonActivity", "active", active, "err", err)
		return
	}
	p.sent, p.active = true, active
	h.log.Debug("person activity sent to the worker", "active", active)
	if h.opts.OnPerson != nil {
		h.opts.OnPerson(active)
	}
}

// PersonActive reports the last person activity the worker was told (Options.Person):
// whether the person is using the nested display, and whether any state was sent at all.
func (h *Host) PersonActive() (active, known bool) {
	h.person.mu.Lock()
	defer h.person.mu.Unlock()
	return h.person.active, h.person.sent
}

// stop ends the watch and waits for it; safe to repeat, and a no-op when nothing watches.
func (p *personWatch) stop() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	<-p.done
}
