package x11

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jezek/xgb/xproto"
)

// ErrNothingHeld means a glide was asked of devices that hold no button.
var ErrNothingHeld = errors.New("x11: no pointer button is held")

// Glide moves the pointer through path (root coordinates), one motion event per point,
// spread over duration, with the buttons these devices hold still held: the motion of a
// drag whose press came earlier (ButtonDown) and whose release comes later (ButtonUp). It
// fails with ErrNothingHeld, sending nothing, when no button is held. Nothing is released
// on an error or a cancellation: the held buttons stay tracked and are released by
// ButtonUp, ReleaseAll or the seat's Close. Guards run right before the first event.
func (d *Devices) Glide(ctx context.Context, path []Point, duration time.Duration, guards ...Guard) error {
	if len(path) == 0 || len(path) > 400 {
		return fmt.Errorf("%w: glide of %d points (want 1–400)", ErrInvalidArgument, len(path))
	}
	if duration < 0 || duration > 10*time.Second {
		return fmt.Errorf("%w: glide duration %v (want 0–10s)", ErrInvalidArgument, duration)
	}
	for _, p := range path {
		if err := d.b.CheckPoint(p); err != nil {
			return err
		}
	}
	if err := d.lock(ctx); err != nil {
		return err
	}
	defer d.b.unlockInput()
	if len(d.pressed.buttons) == 0 {
		return ErrNothingHeld
	}
	if err := runGuards(ctx, guards); err != nil {
		return err
	}
	start := time.Now()
	for i, p := range path {
		if err := sleepUntil(ctx, start.Add(duration*time.Duration(i+1)/time.Duration(len(path)))); err != nil {
			_ = d.sync()
			return err
		}
		d.motionLocked(p.X, p.Y)
	}
	return d.sync()
}

// ParallelDrag is one drag of Backend.ParallelDrag.
type ParallelDrag struct {
	// Seat is the drag's own master pair, open for this drag alone (OpenSeat); it must
	// not be shared with another drag of the same call.
	Seat *Seat
	// Button is pressed at Path[0] and released at the last point.
	Button Button
	// Path are the points the pointer visits (root coordinates, at least 2): the press at
	// the first, one motion event at each of the others, the release at the last.
	Path []Point
	// Duration spreads the motions of Path[1:] evenly from the press on (0–10 s).
	Duration time.Duration
}

// ParallelDrag runs drags at the same time inside one input operation, each on its own
// master pointer: each drag's pointer moves to its first point and presses its button
// (one drag after the other: a window manager that grabs a press to focus on it freezes
// that pointer until it replays the press, and the next press waits until it has), then
// every drag glides through its path on a goroutine of its own and releases its button at
// its last point. The person's core pointer does not move. It returns the number of
// motion events sent. On an error or a cancellation whatever is still pressed is released
// where its pointer is. Guards run right before the first event; the drags' seats must
// stay open until it returns.
func (b *Backend) ParallelDrag(ctx context.Context, drags []ParallelDrag, guards ...Guard) (motions int, err error) {
	if len(drags) == 0 {
		return 0, fmt.Errorf("%w: no drag", ErrInvalidArgument)
	}
	seen := map[*Seat]bool{}
	for i, dr := range drags {
		switch {
		case dr.Seat == nil || seen[dr.Seat]:
			return 0, fmt.Errorf("%w: drag %d has no seat of its own", ErrInvalidArgument, i)
		case len(dr.Path) < 2:
			return 0, fmt.Errorf("%w: drag %d has %d points (want at least 2)", ErrInvalidArgument, i, len(dr.Path))
		case dr.Duration < 0 || dr.Duration > 10*time.Second:
			return 0, fmt.Errorf("%w: drag %d duration %v (want 0–10s)", ErrInvalidArgument, i, dr.Duration)
		}
		seen[dr.Seat] = true
		for _, p := range dr.Path {
			if err := b.CheckPoint(p); err != nil {
				return 0, err
			}
		}
	}
	if err := b.lockInput(ctx); err != nil {
		return 0, err
	}
	defer b.unlockInput()
	for _, dr := range drags {
		if dr.Seat.gone {
			return 0, fmt.Errorf("%w: the drag's input devices were removed", ErrClosed)
		}
	}
	if err := runGuards(ctx, guards); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			for _, dr := range drags {
				dr.Seat.dev.releaseHeldLocked()
			}
		}
	}()
	for _, dr := range drags {
		d := &dr.Seat.dev
		d.motionLocked(dr.Path[0].X, dr.Path[0].Y)
		d.buttonLocked(dr.Button, true)
		if err := d.sync(); err != nil {
			return 0, err
		}
		if err := d.waitPressed(ctx, dr.Button, pressSettle); err != nil && !errors.Is(err, ErrTimeout) {
			return 0, err
		}
	}
	// Each goroutine sends on its own seat's connection and touches only its own seat's
	// pressed state; the input semaphore stays held by this call until all are done.
	start := time.Now()
	counts := make([]int, len(drags))
	errs := make([]error, len(drags))
	var wg sync.WaitGroup
	for i, dr := range drags {
		wg.Go(func() {
			counts[i], errs[i] = dr.glideLocked(ctx, start)
		})
	}
	wg.Wait()
	for _, n := range counts {
		motions += n
	}
	return motions, errors.Join(errs...)
}

// glideLocked moves dr's pointer through dr.Path[1:] from start on and releases its
// button at the end. Preconditions: input semaphore held by the caller's operation, the
// button pressed.
func (dr ParallelDrag) glideLocked(ctx context.Context, start time.Time) (int, error) {
	d := &dr.Seat.dev
	steps := len(dr.Path) - 1
	for i, p := range dr.Path[1:] {
		if err := sleepUntil(ctx, start.Add(dr.Duration*time.Duration(i+1)/time.Duration(steps))); err != nil {
			_ = d.sync()
			return i, err
		}
		d.motionLocked(p.X, p.Y)
	}
	d.buttonLocked(dr.Button, false)
	return steps, d.sync()
}

// pressSettle bounds the wait for a press a window manager holds back.
const pressSettle = 200 * time.Millisecond

// waitPressed waits until the server has processed the press of btn sent through d: the
// pointer's own button state says it is down. A window manager that grabs presses to focus
// on a click freezes the pointer until it replays the press; events sent meanwhile wait
// in the server, and a second pointer's press frozen on the same window at the same time
// may be lost. It gives up after max with ErrTimeout.
func (d *Devices) waitPressed(ctx context.Context, btn Button, max time.Duration) error {
	deadline := time.Now().Add(max)
	poll := newPoller()
	for {
		r, err := xproto.QueryPointer(d.conn, d.b.root).Reply()
		if err != nil {
			return xerr("QueryPointer", err)
		}
		if r.Mask&(1<<(7+uint(btn))) != 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s is not down after %v", ErrTimeout, btn, max)
		}
		if err := poll.next(ctx); err != nil {
			return err
		}
	}
}

// WaitPointerAt waits until the pointer of d reads back at p (a window manager may hold
// the events of a pointer whose press it grabbed for a moment), for at most max, and
// returns where it last read it.
func (d *Devices) WaitPointerAt(ctx context.Context, p Point, max time.Duration) (Point, error) {
	deadline := time.Now().Add(max)
	for {
		at, err := d.Pointer(ctx)
		if err != nil || at == p || time.Now().After(deadline) {
			return at, err
		}
		if err := sleepCtx(ctx, 2*time.Millisecond); err != nil {
			return at, err
		}
	}
}

// sleepUntil waits until t, or fails when ctx ends first; a time past is no wait, but an
// ended ctx still fails.
func sleepUntil(ctx context.Context, t time.Time) error {
	if wait := time.Until(t); wait > 0 {
		return sleepCtx(ctx, wait)
	}
	return ctx.Err()
}
