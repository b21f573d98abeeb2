package desktop

import (
	"testing"
	"time"

	"github.com/cua-host/cua-host/worker/tool"
)

// TestForegroundGate: a foreground retry is allowed only for the window whose background
// attempt failed, only for ForegroundRetryWindow, only in that session, and never after the
// session ended.
func TestForegroundGate(t *testing.T) {
	g := newForegroundGate()
	a, b := &tool.Session{Label: "a"}, &tool.Session{Label: "b"}
	now := time.Now()
	w7, w8 := gateKey{window: 7}, gateKey{window: 8}
	if g.allowed(a, w7, now) {
		t.Fatal("allowed before any failure")
	}
	g.record(a, w7, now)
	g.record(a, gateKey{x: 10, y: 20}, now)
	switch {
	case !g.allowed(a, w7, now.Add(ForegroundRetryWindow)):
		t.Error("not allowed within the retry window")
	case g.allowed(a, w7, now.Add(ForegroundRetryWindow+time.Second)):
		t.Error("allowed after the retry window")
	case g.allowed(a, w8, now):
		t.Error("allowed for another window")
	case g.allowed(b, w7, now):
		t.Error("allowed for another session")
	case !g.allowed(a, gateKey{x: 10, y: 20}, now):
		t.Error("not allowed at the desktop point that failed")
	case g.allowed(a, gateKey{x: 11, y: 20}, now):
		t.Error("a failure at one desktop point allowed another")
	}
	// Old failures are forgotten as new ones are recorded.
	g.record(a, w8, now.Add(ForegroundRetryWindow+time.Minute))
	if n := len(g.failed[a]); n != 1 {
		t.Errorf("%d failures kept, want only the recent one", n)
	}
	a.End()
	if g.allowed(a, w8, now) {
		t.Error("allowed after the session ended")
	}
}

// TestForegroundGateAfterEnd: recording a failure for a session that has already ended
// (its call was cut off by end_session) returns and leaves nothing behind.
func TestForegroundGateAfterEnd(t *testing.T) {
	g := newForegroundGate()
	s := &tool.Session{Label: "gone"}
	s.End()
	done := make(chan struct{})
	go func() {
		g.record(s, gateKey{window: 7}, time.Now())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("record on an ended session did not return")
	}
	if g.allowed(s, gateKey{window: 7}, time.Now()) {
		t.Error("an ended session's failure unlocked the foreground")
	}
}
