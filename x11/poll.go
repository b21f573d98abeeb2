package x11

import (
	"context"
	"time"
)

// pollSpin is how long a wait for another client to act (a window manager replaying a
// press it grabbed, letting go of its grab) polls the server back to back, a round trip
// apart, before it sleeps between polls. Such clients usually act within a millisecond or
// two, and a sleep shorter than a millisecond is no help: Go's timers on an idle machine
// wake a sleep of 50 µs after about 1.1 ms.
const pollSpin = 3 * time.Millisecond

// Sleeps between polls once pollSpin has passed: the first, and the longest.
const (
	pollFirstSleep = time.Millisecond
	pollMaxSleep   = 5 * time.Millisecond
)

// poller paces the polls of one wait. The zero value is not ready: use newPoller.
type poller struct {
	start time.Time
	sleep time.Duration
}

func newPoller() poller { return poller{start: time.Now(), sleep: pollFirstSleep} }

// next returns when the next poll is due: at once within pollSpin of the start, then after
// a sleep that doubles from pollFirstSleep up to pollMaxSleep. It fails when ctx ends.
func (p *poller) next(ctx context.Context) error {
	if time.Since(p.start) < pollSpin {
		return ctx.Err()
	}
	if err := sleepCtx(ctx, p.sleep); err != nil {
		return err
	}
	p.sleep = min(2*p.sleep, pollMaxSleep)
	return nil
}
