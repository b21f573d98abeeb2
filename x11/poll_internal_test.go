package x11

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPollerSpinsThenBacksOff: within pollSpin the next poll is due at once (no sleep is
// taken, so the sleep does not grow); after it the sleeps double from pollFirstSleep to
// pollMaxSleep; an ended context ends the wait.
func TestPollerSpinsThenBacksOff(t *testing.T) {
	p := newPoller()
	for range 5 {
		if err := p.next(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if p.sleep != pollFirstSleep {
		t.Fatalf("the sleep grew to %v within the spin", p.sleep)
	}
	p.start = time.Now().Add(-pollSpin)
	want := []time.Duration{2 * time.Millisecond, 4 * time.Millisecond, pollMaxSleep, pollMaxSleep}
	for i, w := range want {
		before := time.Now()
		if err := p.next(t.Context()); err != nil {
			t.Fatal(err)
		}
		if slept := time.Since(before); slept < w/2 {
			t.Errorf("poll %d after the spin slept %v, want at least %v", i, slept, w/2)
		}
		if p.sleep != w {
			t.Errorf("after poll %d the next sleep is %v, want %v", i, p.sleep, w)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("next on an ended context = %v", err)
	}
	q := newPoller()
	if err := q.next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("next within the spin on an ended context = %v", err)
	}
}
