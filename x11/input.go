package x11

import (
	"context"
	"fmt"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// pressedState tracks what this backend holds down, so that nothing stays pressed after an
// error, a cancellation or a revoked session. Guarded by the input semaphore.
type pressedState struct {
	buttons map[Button]bool
	keys    map[xproto.Keycode]bool
	// order lists held keys in press order, released in reverse.
	order []xproto.Keycode
}

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

// fake sends one XTEST event. Preconditions: input semaphore held.
func (b *Backend) fake(typ byte, detail byte, x, y int) {
	xtest.FakeInput(b.conn, typ, detail, 0, b.root, int16(x), int16(y), 0)
}

func (b *Backend) motionLocked(x, y int) {
	b.fake(xproto.MotionNotify, 0, x, y)
}

func (b *Backend) buttonLocked(btn Button, down bool) {
	if down {
		b.fake(xproto.ButtonPress, byte(btn), 0, 0)
		if b.pressed.buttons == nil {
			b.pressed.buttons = map[Button]bool{}
		}
		b.pressed.buttons[btn] = true
		return
	}
	b.fake(xproto.ButtonRelease, byte(btn), 0, 0)
	delete(b.pressed.buttons, btn)
}

func (b *Backend) keyLocked(kc xproto.Keycode, down bool) {
	if down {
		b.fake(xproto.KeyPress, byte(kc), 0, 0)
		if b.pressed.keys == nil {
			b.pressed.keys = map[xproto.Keycode]bool{}
		}
		if !b.pressed.keys[kc] {
			b.pressed.order = append(b.pressed.order, kc)
		}
		b.pressed.keys[kc] = true
		return
	}
	b.fake(xproto.KeyRelease, byte(kc), 0, 0)
	if b.pressed.keys[kc] {
		delete(b.pressed.keys, kc)
		for i, k := range b.pressed.order {
			if k == kc {
				b.pressed.order = append(b.pressed.order[:i], b.pressed.order[i+1:]...)
				break
			}
		}
	}
}

// releaseHeldLocked releases every held key (newest first) and button, restores remapped
// keycodes and syncs. Preconditions: input semaphore held.
func (b *Backend) releaseHeldLocked() {
	for i := len(b.pressed.order) - 1; i >= 0; i-- {
		b.fake(xproto.KeyRelease, byte(b.pressed.order[i]), 0, 0)
	}
	b.pressed.order = b.pressed.order[:0]
	clear(b.pressed.keys)
	for btn := range b.pressed.buttons {
		b.fake(xproto.ButtonRelease, byte(btn), 0, 0)
	}
	clear(b.pressed.buttons)
	b.restoreKeymapLocked()
	_ = b.sync()
}

// ReleaseAll releases every button and key this backend holds and restores any remapped
// keycode. It waits for a running input operation to end (cancel its context first) but
// gives up when ctx ends. It is safe to call at any time, also after Close.
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
	b.releaseHeldLocked()
}

// Held reports the buttons and keycodes currently held by this backend.
func (b *Backend) Held() (buttons []Button, keycodes []uint8) {
	b.input <- struct{}{}
	defer b.unlockInput()
	for btn := range b.pressed.buttons {
		buttons = append(buttons, btn)
	}
	for _, k := range b.pressed.order {
		keycodes = append(keycodes, uint8(k))
	}
	return buttons, keycodes
}
