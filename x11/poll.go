package x11

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// pollSpin is how long a wait for another client to act (a window manager replaying a
// press it grabbed, letting go of its grab) polls the server pollGap apart before it
// sleeps longer between polls. Such clients usually act within a millisecond or two.
const pollSpin = 3 * time.Millisecond

// pollGap is the pause between two polls within pollSpin. Polls back to back keep the X
// server and this process busy, on a two-core machine both cores, while the client waited
// for needs one to act: a background click through the whole stack took 0.2–0.3 ms longer
// that way (scripts/bench-shared.sh). Go's timers cannot pause this briefly (on an idle
// machine they wake a sleep of 50 µs after about 1.1 ms), so the pause is a nanosleep of
// the thread.
const pollGap = 100 * time.Microsecond

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

// next returns when the next poll is due: pollGap later within pollSpin of the start,
// then after a sleep that doubles from pollFirstSleep up to pollMaxSleep. It fails when
// ctx ends.
func (p *poller) next(ctx context.Context) error {
	if time.Since(p.start) < pollSpin {
		gap := unix.NsecToTimespec(pollGap.Nanoseconds())
		_ = unix.Nanosleep(&gap, nil) // interrupted early by a signal: only a poll sooner
		return ctx.Err()
	}
	if err := sleepCtx(ctx, p.sleep); err != nil {
		return err
	}
	p.sleep = min(2*p.sleep, pollMaxSleep)
	return nil
}
