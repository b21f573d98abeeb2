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
	if g.allowed(a, 7, now) {
		t.Fatal("allowed before any failure")
	}
	g.record(a, 7, now)
	switch {
	case !g.allowed(a, 7, now.Add(ForegroundRetryWindow)):
		t.Error("not allowed within the retry window")
	case g.allowed(a, 7, now.Add(ForegroundRetryWindow+time.Second)):
		t.Error("allowed after the retry window")
	case g.allowed(a, 8, now):
		t.Error("allowed for another window")
	case g.allowed(b, 7, now):
		t.Error("allowed for another session")
	}
	a.End()
	if g.allowed(a, 7, now) {
		t.Error("allowed after the session ended")
	}
}
