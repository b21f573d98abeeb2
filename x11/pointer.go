package x11

import (
	"context"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"
)

// Button is a pointer button number as X numbers them.
type Button int

// Buttons. The wheel is buttons 4–7.
const (
	ButtonLeft       Button = 1
	ButtonMiddle     Button = 2
	ButtonRight      Button = 3
	ButtonWheelUp    Button = 4
	ButtonWheelDown  Button = 5
	ButtonWheelLeft  Button = 6
	ButtonWheelRight Button = 7
)

// String returns the button's name.
func (b Button) String() string {
	switch b {
	case ButtonLeft:
		return "left"
	case ButtonMiddle:
		return "middle"
	case ButtonRight:
		return "right"
	case ButtonWheelUp:
		return "wheel_up"
	case ButtonWheelDown:
		return "wheel_down"
	case ButtonWheelLeft:
		return "wheel_left"
	case ButtonWheelRight:
		return "wheel_right"
	}
	return fmt.Sprintf("button%d", int(b))
}

// ParseButton maps "left", "right" and "middle" ("" is left) to a Button.
func ParseButton(s string) (Button, error) {
	switch s {
	case "", "left":
		return ButtonLeft, nil
	case "right":
		return ButtonRight, nil
	case "middle":
		return ButtonMiddle, nil
	}
	return 0, fmt.Errorf("%w: button %q (want left, right or middle)", ErrInvalidArgument, s)
}

// Point is a position in root coordinates.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// CheckPoint returns ErrOutOfBounds unless p lies on the screen.
func (b *Backend) CheckPoint(p Point) error {
	w, h := b.ScreenSize()
	if p.X < 0 || p.Y < 0 || p.X >= w || p.Y >= h {
		return fmt.Errorf("%w: (%d,%d) is outside the %dx%d screen", ErrOutOfBounds, p.X, p.Y, w, h)
	}
	return nil
}

// Pointer returns the core pointer's position in root coordinates (the person's, on a
// shared display).
func (b *Backend) Pointer(ctx context.Context) (Point, error) { return b.core.Pointer(ctx) }

// Pointer returns the position of this set's pointer in root coordinates.
func (d *Devices) Pointer(ctx context.Context) (Point, error) {
	if d.b.closed() {
		return Point{}, ErrClosed
	}
	r, err := xproto.QueryPointer(d.conn, d.b.root).Reply()
	if err != nil {
		return Point{}, xerr("QueryPointer", err)
	}
	return Point{X: int(r.RootX), Y: int(r.RootY)}, nil
}

// PointerAndTopLevel reads the pointer of d and the top-level window at it, as Pointer and
// TopLevelAt would, guessing that the pointer is at guess: the pointer's query goes out
// before the window's at guess is read, so when the guess is right both answers take the
// round trips of the window's alone. When the pointer is elsewhere the window is read
// again there. err is the pointer's; topErr the window's, when only that failed.
func (d *Devices) PointerAndTopLevel(ctx context.Context, guess Point) (p Point, top TopLevel, topErr, err error) {
	if d.b.closed() {
		return Point{}, TopLevel{}, nil, ErrClosed
	}
	ptr := xproto.QueryPointer(d.conn, d.b.root)
	top, topErr = d.b.TopLevelAt(ctx, guess)
	r, err := ptr.Reply()
	if err != nil {
		return Point{}, TopLevel{}, nil, xerr("QueryPointer", err)
	}
	p = Point{X: int(r.RootX), Y: int(r.RootY)}
	if p != guess {
		top, topErr = d.b.TopLevelAt(ctx, p)
	}
	return p, top, topErr, nil
}

// MoveTo moves the pointer to p. Guards run right before the motion (see Guard).
func (d *Devices) MoveTo(ctx context.Context, p Point, guards ...Guard) error {
	if err := d.b.CheckPoint(p); err != nil {
		return err
	}
	if err := d.lock(ctx); err != nil {
		return err
	}
	defer d.b.unlockInput()
	if err := runGuards(ctx, guards); err != nil {
		return err
	}
	d.motionLocked(p.X, p.Y)
	return d.sync()
}

// Click moves to p and clicks button count times (1–3) with the modifier keys mods held.
// Guards run right before the first event (see Guard).
func (d *Devices) Click(ctx context.Context, p Point, btn Button, count int, mods []string, guards ...Guard) error {
	if err := d.ClickUnsynced(ctx, p, btn, count, mods, guards...); err != nil {
		return err
	}
	return d.sync()
}

// ClickUnsynced is Click without its last round trip: it returns once the events are
// written, not once the server has processed them. The caller's next request on this
// set's connection waits for that: WaitPointerReplayed, which a click through a session's
// pointer is followed by, begins with a query of the pointer. The input lock is released
// before the server has processed the click; further input is queued behind it.
func (d *Devices) ClickUnsynced(ctx context.Context, p Point, btn Button, count int, mods []string, guards ...Guard) error {
	if count < 1 || count > 3 {
		return fmt.Errorf("%w: click count %d (want 1–3)", ErrInvalidArgument, count)
	}
	return d.pointerOp(ctx, p, mods, guards, false, func() error {
		for i := range count {
			if i > 0 {
				// A window manager that focuses on a click grabs the press and replays it;
				// the next press waits until it has let go, or it may be taken by that grab
				// instead of reaching the window (well within a double-click's interval).
				_ = d.sync()
				_ = d.WaitPointerFree(ctx, multiClickSettle)
			}
			d.buttonLocked(btn, true)
			d.buttonLocked(btn, false)
		}
		return nil
	})
}

// multiClickSettle bounds the wait between the clicks of a double or triple click.
const multiClickSettle = 50 * time.Millisecond

// ButtonDown moves to p and presses btn, leaving it held until ButtonUp or ReleaseAll.
// Guards run right before the first event (see Guard).
func (d *Devices) ButtonDown(ctx context.Context, p Point, btn Button, guards ...Guard) error {
	return d.pointerOp(ctx, p, nil, guards, true, func() error {
		d.buttonLocked(btn, true)
		return nil
	})
}

// ButtonUp moves to p and releases btn. Guards run right before the first event (see Guard).
func (d *Devices) ButtonUp(ctx context.Context, p Point, btn Button, guards ...Guard) error {
	return d.pointerOp(ctx, p, nil, guards, true, func() error {
		d.buttonLocked(btn, false)
		return nil
	})
}

// Scroll moves to p and turns the wheel amount notches (1–50) in direction dir
// ("up", "down", "left", "right"). Guards run right before the first event (see Guard).
func (d *Devices) Scroll(ctx context.Context, p Point, dir string, amount int, mods []string, guards ...Guard) error {
	var btn Button
	switch dir {
	case "up":
		btn = ButtonWheelUp
	case "down":
		btn = ButtonWheelDown
	case "left":
		btn = ButtonWheelLeft
	case "right":
		btn = ButtonWheelRight
	default:
		return fmt.Errorf("%w: scroll direction %q (want up, down, left or right)", ErrInvalidArgument, dir)
	}
	if amount < 1 || amount > 50 {
		return fmt.Errorf("%w: scroll amount %d (want 1–50)", ErrInvalidArgument, amount)
	}
	return d.pointerOp(ctx, p, mods, guards, true, func() error {
		for range amount {
			d.buttonLocked(btn, true)
			d.buttonLocked(btn, false)
		}
		return nil
	})
}

// Drag presses btn at from, moves to to in steps (1–200) spread over duration, and
// releases it there: the pointer visits DragPath(from, to, steps). On cancellation the
// button is released where the pointer is. Guards run right before the first event (see
// Guard).
func (d *Devices) Drag(ctx context.Context, from, to Point, btn Button, steps int, duration time.Duration, mods []string, guards ...Guard) error {
	if steps < 1 || steps > 200 {
		return fmt.Errorf("%w: drag steps %d (want 1–200)", ErrInvalidArgument, steps)
	}
	if duration < 0 || duration > 10*time.Second {
		return fmt.Errorf("%w: drag duration %v (want 0–10s)", ErrInvalidArgument, duration)
	}
	if err := d.b.CheckPoint(to); err != nil {
		return err
	}
	path := DragPath(from, to, steps)
	return d.pointerOp(ctx, from, mods, guards, true, func() error {
		d.buttonLocked(btn, true)
		if err := d.sync(); err != nil {
			return err
		}
		pause := duration / time.Duration(steps)
		for _, p := range path[1:] {
			if pause > 0 {
				if err := sleepCtx(ctx, pause); err != nil {
					return err
				}
			} else if err := ctx.Err(); err != nil {
				return err
			}
			d.motionLocked(p.X, p.Y)
		}
		d.buttonLocked(btn, false)
		return nil
	})
}

// DragPath returns the points a drag from from to to in steps visits: from, then each
// step's point, the last of which is to.
func DragPath(from, to Point, steps int) []Point {
	steps = max(steps, 1)
	out := make([]Point, 0, steps+1)
	out = append(out, from)
	for i := 1; i <= steps; i++ {
		out = append(out, Point{X: from.X + (to.X-from.X)*i/steps, Y: from.Y + (to.Y-from.Y)*i/steps})
	}
	return out
}

// pointerOp runs guards, then f at p with mods held, under the input semaphore, and, when
// synced, waits until the server has processed the events. Whatever f leaves pressed on an
// error stays tracked and is released; modifiers are always released.
func (d *Devices) pointerOp(ctx context.Context, p Point, mods []string, guards []Guard, synced bool, f func() error) (err error) {
	if err := d.b.CheckPoint(p); err != nil {
		return err
	}
	modSyms, err := ParseModifiers(mods)
	if err != nil {
		return err
	}
	if err := d.lock(ctx); err != nil {
		return err
	}
	defer d.b.unlockInput()
	var km *keymap
	if len(modSyms) > 0 {
		if km, err = d.b.loadKeymapLocked(); err != nil {
			return err
		}
	}
	if err := runGuards(ctx, guards); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			d.releaseHeldLocked()
		}
	}()
	var held []xproto.Keycode
	for _, s := range modSyms {
		kc, _, ok := km.lookup(s)
		if !ok {
			return fmt.Errorf("%w: modifier %s has no keycode", ErrUnknownKey, KeysymName(s))
		}
		d.keyLocked(kc, true)
		held = append(held, kc)
	}
	d.motionLocked(p.X, p.Y)
	if err := f(); err != nil {
		return err
	}
	for i := len(held) - 1; i >= 0; i-- {
		d.keyLocked(held[i], false)
	}
	if !synced {
		return nil
	}
	return d.sync()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
