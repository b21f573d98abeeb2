package x11

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jezek/xgb/xproto"
)

// Asking a client whether it has read its events. EWMH's _NET_WM_PING: a client that lists
// it in WM_PROTOCOLS answers a ping sent to its window by sending it back to the root
// window, and it does so only when it gets to it — after every event the server queued
// for it before, keys included. An answer therefore says the client has handled the keys
// typed before the ping, with the keyboard mapping of that moment. The backend selects
// SubstructureNotify on the root, so the answer (sent with that mask) reaches it too.

// pings routes ping answers to their waits, by the token sent as the ping's timestamp.
type pings struct {
	mu    sync.Mutex
	next  uint32
	waits map[uint32]chan struct{}
}

// add registers a wait and returns its token.
func (p *pings) add() (uint32, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waits == nil {
		p.waits = map[uint32]chan struct{}{}
	}
	p.next++
	if p.next == 0 { // 0 is CurrentTime to some clients
		p.next++
	}
	ch := make(chan struct{})
	p.waits[p.next] = ch
	return p.next, ch
}

func (p *pings) remove(token uint32) {
	p.mu.Lock()
	delete(p.waits, token)
	p.mu.Unlock()
}

// answer wakes the wait of token, if any.
func (p *pings) answer(token uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.waits[token]; ok {
		close(ch)
		delete(p.waits, token)
	}
}

// handlePing takes a ClientMessage seen on the root window: a ping answer wakes its wait.
func (b *Backend) handlePing(ev xproto.ClientMessageEvent) {
	if ev.Format != 32 || ev.Type != b.atoms.get("WM_PROTOCOLS") {
		return
	}
	d := ev.Data.Data32
	if len(d) >= 2 && xproto.Atom(d[0]) == b.atoms.get("_NET_WM_PING") {
		b.pings.answer(d[1])
	}
}

// pingClient pings the client of top-level window win and waits up to limit for its
// answer. It reports false at once when win does not take part in the protocol, and when
// no answer came in time.
func (b *Backend) pingClient(ctx context.Context, win xproto.Window, limit time.Duration) bool {
	if !b.takesPing(b.askProtocols(win)) {
		return false
	}
	return b.ping(ctx, win, limit)
}

// askProtocols sends the question of win's WM_PROTOCOLS; takesPing reads its answer.
func (b *Backend) askProtocols(win xproto.Window) xproto.GetPropertyCookie {
	return xproto.GetProperty(b.conn, false, win, b.atoms.get("WM_PROTOCOLS"), xproto.GetPropertyTypeAny, 0, 1<<16)
}

// takesPing reports whether the WM_PROTOCOLS asked for list _NET_WM_PING.
func (b *Backend) takesPing(c xproto.GetPropertyCookie) bool {
	r, err := c.Reply()
	if err != nil || r.Format == 0 {
		return false
	}
	return slices.Contains(propUint32s(r), uint32(b.atoms.get("_NET_WM_PING")))
}

// FocusWhenCaughtUp returns the window with the core keyboard's focus once the client of
// top-level window win has handled the events queued for it so far: it pings a client
// that takes part in the protocol (Window.Pings) and waits up to limit for its answer.
func (b *Backend) FocusWhenCaughtUp(ctx context.Context, win Window, limit time.Duration) (uint32, error) {
	if b.closed() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if win.ID != 0 && win.Pings {
		b.ping(ctx, xproto.Window(win.ID), limit)
	}
	return b.FocusWindow(ctx)
}

// ping sends a ping to win's client and waits up to limit for its answer.
func (b *Backend) ping(ctx context.Context, win xproto.Window, limit time.Duration) bool {
	token, answered := b.pings.add()
	defer b.pings.remove(token)
	ev := xproto.ClientMessageEvent{
		Format: 32,
		Window: win,
		Type:   b.atoms.get("WM_PROTOCOLS"),
		Data:   xproto.ClientMessageDataUnionData32New([]uint32{uint32(b.atoms.get("_NET_WM_PING")), token, uint32(win), 0, 0}),
	}
	xproto.SendEvent(b.conn, false, win, xproto.EventMaskNoEvent, string(ev.Bytes()))
	if b.sync() != nil {
		return false
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-answered:
		return true
	case <-t.C:
	case <-ctx.Done():
	case <-b.done:
	}
	return false
}

// CaughtUp asks the client of top-level window win whether it has handled every event
// queued for it so far (_NET_WM_PING) and waits up to limit for the answer. It reports
// false at once when the client does not take part in the protocol, and when no answer
// came in time. Whatever the client did in response to those events (a window manager's
// WM_TAKE_FOCUS, which a client answers by moving the keyboard focus itself) the server
// has processed by the time the answer arrives.
func (b *Backend) CaughtUp(ctx context.Context, win uint32, limit time.Duration) bool {
	if b.closed() || win == 0 {
		return false
	}
	return b.pingClient(ctx, xproto.Window(win), limit)
}
