package x11

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// Devices is one set of input devices that input is sent through: the core pointer and
// keyboard (Backend.Core: on a display shared with a person, theirs) or a session's own
// master pair (Seat.Devices), which moves no pointer and focuses nothing of the person's.
// Events go out as core XTEST input on a connection whose client pointer is the set's
// master pointer, so the server routes them to that master's XTEST slaves; core requests
// on that connection (QueryPointer, GrabKeyboard) likewise act on the set's own devices.
//
// All sets share the backend's input semaphore: one input operation at a time per
// display, since the keyboard mapping that typing may remap is the display's.
type Devices struct {
	b    *Backend
	conn *xgb.Conn
	// pressed is what this set holds down, guarded by the input semaphore.
	pressed *pressedState
	// seat is the session's pair, or nil for the core devices.
	seat *Seat
	// lastFocus is the window InputFocus last found with this set's keyboard focus, which
	// the next call asks about with the focus itself.
	lastFocus atomic.Uint32
}

// pressedState tracks what a device set holds down, so that nothing stays pressed after an
// error, a cancellation or a revoked session. Guarded by the input semaphore.
type pressedState struct {
	buttons map[Button]bool
	keys    map[xproto.Keycode]bool
	// order lists held keys in press order, released in reverse.
	order []xproto.Keycode
	// lastUp is the keycode released last, and upAt when (keyLocked).
	lastUp xproto.Keycode
	upAt   time.Time
}

// Core returns the core devices: foreground input, the pointer and focus a person sees.
func (b *Backend) Core() *Devices { return &b.core }

// Seat returns the session pair these devices belong to, or nil for the core devices.
func (d *Devices) Seat() *Seat { return d.seat }

// lockInput takes the input semaphore, or fails when ctx ends first.
func (b *Backend) lockInput(ctx context.Context) error {
	if b.closed() {
		return ErrClosed
	}
	if !b.caps.XTest {
		return fmt.Errorf("%w: the X server has no XTEST extension", ErrUnsupported)
	}
	select {
	case b.input <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *Backend) unlockInput() { <-b.input }

// lock takes the input semaphore for input through d: it fails once d's seat is closing.
func (d *Devices) lock(ctx context.Context) error {
	if err := d.b.lockInput(ctx); err != nil {
		return err
	}
	if d.seat != nil && d.seat.gone {
		d.b.unlockInput()
		return fmt.Errorf("%w: the session's input devices were removed", ErrClosed)
	}
	return nil
}

// fake sends one XTEST event. Preconditions: input semaphore held.
func (d *Devices) fake(typ byte, detail byte, x, y int) {
	xtest.FakeInput(d.conn, typ, detail, 0, d.b.root, int16(x), int16(y), 0)
}

func (d *Devices) motionLocked(x, y int) {
	d.fake(xproto.MotionNotify, 0, x, y)
}

func (d *Devices) buttonLocked(btn Button, down bool) {
	if down {
		d.fake(xproto.ButtonPress, byte(btn), 0, 0)
		if d.pressed.buttons == nil {
			d.pressed.buttons = map[Button]bool{}
		}
		d.pressed.buttons[btn] = true
		return
	}
	d.fake(xproto.ButtonRelease, byte(btn), 0, 0)
	delete(d.pressed.buttons, btn)
}

// repeatGap is the least time between the release of a key and its next press. Events
// the server processes in the same millisecond share a timestamp, and a release and press
// of one key with the same timestamp is how X reports autorepeat: LibreOffice took "a11"
// typed in one burst for "a1" and a repeat, and dropped the second 1. XTEST delays the
// press (and every request after it) until the server's clock has moved on.
const repeatGap = time.Millisecond

// repeatWindow is how long after a key's release its next press is still delayed by
// repeatGap. The time between the two sends says little: a loaded server may read both
// requests in one go and give them one timestamp although they left a few milliseconds
// apart. Beyond this, it would have to have stalled for as long.
const repeatWindow = 50 * time.Millisecond

func (d *Devices) keyLocked(kc xproto.Keycode, down bool) {
	now := time.Now()
	d.b.remap.lastKey = now
	if down {
		if kc == d.pressed.lastUp && now.Sub(d.pressed.upAt) < repeatWindow {
			xtest.FakeInput(d.conn, xproto.KeyPress, byte(kc), uint32(repeatGap/time.Millisecond), d.b.root, 0, 0, 0)
		} else {
			d.fake(xproto.KeyPress, byte(kc), 0, 0)
		}
		if d.pressed.keys == nil {
			d.pressed.keys = map[xproto.Keycode]bool{}
		}
		if !d.pressed.keys[kc] {
			d.pressed.order = append(d.pressed.order, kc)
		}
		d.pressed.keys[kc] = true
		return
	}
	d.fake(xproto.KeyRelease, byte(kc), 0, 0)
	d.pressed.lastUp, d.pressed.upAt = kc, now
	if d.pressed.keys[kc] {
		delete(d.pressed.keys, kc)
		for i, k := range d.pressed.order {
			if k == kc {
				d.pressed.order = append(d.pressed.order[:i], d.pressed.order[i+1:]...)
				break
			}
		}
	}
}

// releaseHeldLocked releases every held key (newest first) and button, syncs, and has
// remapped keycodes restored once clients had the time to read the keys typed with them
// (restoreWhenDueLocked). Preconditions: input semaphore held.
func (d *Devices) releaseHeldLocked() {
	for i := len(d.pressed.order) - 1; i >= 0; i-- {
		d.fake(xproto.KeyRelease, byte(d.pressed.order[i]), 0, 0)
	}
	d.pressed.order = d.pressed.order[:0]
	clear(d.pressed.keys)
	for btn := range d.pressed.buttons {
		d.fake(xproto.ButtonRelease, byte(btn), 0, 0)
	}
	clear(d.pressed.buttons)
	_ = d.sync() // the releases before the mapping they were typed with goes
	d.b.restoreWhenDueLocked()
}

// sync makes a round trip on the set's connection, so every event sent before it has been
// processed.
func (d *Devices) sync() error { return syncConn(d.conn) }

// ReleaseAll releases every button and key the backend's device sets hold (the core ones
// and every open seat's) and restores any remapped keycode. It waits for a running input
// operation to end (cancel its context first) but gives up when ctx ends. It is safe to
// call at any time, also after Close.
func (b *Backend) ReleaseAll(ctx context.Context) {
	select {
	case b.input <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer b.unlockInput()
	if !b.caps.XTest || b.closed() {
		return
	}
	b.core.releaseHeldLocked()
	b.seatsMu.Lock()
	defer b.seatsMu.Unlock()
	for s := range b.seats {
		s.dev.releaseHeldLocked()
	}
}

// ReleaseAll releases every button and key this set holds and restores any remapped
// keycode, like Backend.ReleaseAll for one set.
func (d *Devices) ReleaseAll(ctx context.Context) {
	b := d.b
	select {
	case b.input <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer b.unlockInput()
	if !b.caps.XTest || b.closed() {
		return
	}
	d.releaseHeldLocked()
}

// Held reports the buttons and keycodes currently held by this set.
func (d *Devices) Held() (buttons []Button, keycodes []uint8) {
	d.b.input <- struct{}{}
	defer d.b.unlockInput()
	for btn := range d.pressed.buttons {
		buttons = append(buttons, btn)
	}
	for _, k := range d.pressed.order {
		keycodes = append(keycodes, uint8(k))
	}
	return buttons, keycodes
}
