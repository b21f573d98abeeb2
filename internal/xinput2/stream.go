package xinput2

import (
	"errors"
	"net"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// maxGenericEvent bounds one generic event EventConn keeps; a longer one (no XI2 event
// comes close) is dropped whole.
const maxGenericEvent = 64 << 10

// firstExtensionError is the lowest error code an extension can be given.
const firstExtensionError = 128

// GenericEvent is one whole generic event (XGE, code 35) taken out of an X connection's
// byte stream.
type GenericEvent struct {
	// Extension is the major opcode of the extension that sent it; Type its evtype.
	Extension byte
	Type      uint16
	// Data is the whole event, its 32-byte header included.
	Data []byte
}

// EventConn sits between an X server's socket and an xgb connection and takes the generic
// events out of the stream xgb reads. xgb reads every event as 32 bytes, so a longer generic
// event (every XI2 event is one) would put it out of step with the server. EventConn frames
// what the server sends — the setup reply, then replies, errors and events — hands xgb every
// reply, error and core event unchanged, and replaces each generic event by its first 32
// bytes with the length zeroed, which xgb reports as an xproto.GeGenericEvent; the whole
// event waits in a queue, in order, for Next. The reader of the xgb connection calls Next
// each time it gets a GeGenericEvent and so sees every event in the order the server sent
// it.
//
// Events the server marks as sent by a client (SendEvent: the top bit of the code) are
// dropped unless Keep allows their code; the GeGenericEvent placeholders of generic events
// are never sent events (SendEvent cannot send generic events).
//
// Errors of extensions (codes from 128 on: XInput's BadDevice …) reach xgb as
// BadImplementation, their own code in the otherwise unused byte 11: xgb drops an error it
// has no decoder for, and the request that caused it would then wait for its answer until
// the connection closes.
//
// Read is called by xgb's reader only; Next may be called from any goroutine. Writes,
// deadlines and Close go to the socket. EventConn takes ownership of the socket.
type EventConn struct {
	net.Conn
	keep func(code byte) bool

	// The reader's state: in holds bytes read and not yet framed, out framed bytes not yet
	// read by xgb (from outOff on), pass the bytes of a reply still to copy through
	// unframed, skip the bytes of an oversized generic event still to drop. setupDone: the
	// setup reply went through.
	in, out   []byte
	outOff    int
	pass      int
	skip      int
	setupDone bool
	rbuf      []byte

	// mu guards the fields below.
	mu      sync.Mutex
	queue   []GenericEvent
	dropped int
}

// NewEventConn wraps the socket nc (taking ownership). keep says which sent events (by code,
// the top bit cleared) still go to xgb; nil drops them all.
func NewEventConn(nc net.Conn, keep func(code byte) bool) *EventConn {
	if keep == nil {
		keep = func(byte) bool { return false }
	}
	return &EventConn{Conn: nc, keep: keep, rbuf: make([]byte, 16<<10)}
}

// Next returns the oldest generic event not yet returned. It reports false when there is
// none, which cannot happen right after the xgb connection reported a GeGenericEvent.
func (c *EventConn) Next() (GenericEvent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return GenericEvent{}, false
	}
	ev := c.queue[0]
	c.queue[0] = GenericEvent{}
	c.queue = c.queue[1:]
	return ev, true
}

// Dropped returns how many events EventConn dropped: sent events not kept, and oversized
// generic events.
func (c *EventConn) Dropped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// errBadSetup reports a setup reply that cannot be one.
var errBadSetup = errors.New("xinput2: malformed connection setup reply")

// Read hands xgb the framed stream.
func (c *EventConn) Read(p []byte) (int, error) {
	for c.outOff == len(c.out) {
		c.out, c.outOff = c.out[:0], 0
		n, err := c.Conn.Read(c.rbuf)
		if n > 0 {
			c.in = append(c.in, c.rbuf[:n]...)
			if ferr := c.frame(); ferr != nil {
				return 0, ferr
			}
		}
		if len(c.out) > 0 {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, c.out[c.outOff:])
	c.outOff += n
	return n, nil
}

// frame moves every complete unit of c.in to c.out (or the queue, or nowhere) and keeps
// the incomplete rest at the start of c.in.
func (c *EventConn) frame() error {
	b := c.in
	defer func() { c.in = c.in[:copy(c.in, b)] }()
	for len(b) > 0 {
		switch {
		case c.pass > 0:
			n := min(c.pass, len(b))
			c.out = append(c.out, b[:n]...)
			b, c.pass = b[n:], c.pass-n
		case c.skip > 0:
			n := min(c.skip, len(b))
			b, c.skip = b[n:], c.skip-n
		case !c.setupDone:
			// Setup reply: status, …, additional data length (4-byte units) at bytes 6–7.
			if len(b) < 8 {
				return nil
			}
			if b[0] > 2 {
				return errBadSetup
			}
			c.setupDone = true
			c.pass = 8 + 4*int(xgb.Get16(b[6:]))
		case len(b) < 32:
			return nil
		default:
			code := b[0]
			switch {
			case code == 0: // an error
				e := append([]byte(nil), b[:32]...)
				if e[1] >= firstExtensionError {
					e[11], e[1] = e[1], xproto.BadImplementation
				}
				c.out = append(c.out, e...)
				b = b[32:]
			case code == 1: // a reply: its header now, the rest as it comes
				c.out = append(c.out, b[:32]...)
				c.pass = 4 * int(xgb.Get32(b[4:]))
				b = b[32:]
			case code&0x7f == xproto.GeGeneric:
				total := 32 + 4*int(xgb.Get32(b[4:]))
				if total > maxGenericEvent {
					c.count()
					c.skip = total
					continue
				}
				if len(b) < total {
					return nil
				}
				ev := GenericEvent{Extension: b[1], Type: xgb.Get16(b[8:]), Data: append([]byte(nil), b[:total]...)}
				c.mu.Lock()
				c.queue = append(c.queue, ev)
				c.mu.Unlock()
				head := append([]byte(nil), b[:32]...)
				head[0] = xproto.GeGeneric
				xgb.Put32(head[4:], 0)
				c.out = append(c.out, head...)
				b = b[total:]
			case code&0x80 != 0 && !c.keep(code&0x7f):
				c.count()
				b = b[32:]
			default:
				c.out = append(c.out, b[:32]...)
				b = b[32:]
			}
		}
	}
	return nil
}

func (c *EventConn) count() {
	c.mu.Lock()
	c.dropped++
	c.mu.Unlock()
}
