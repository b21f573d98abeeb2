package x11_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// TestWindowManagerCaughtUp: the window manager answers the question in the order of its
// events. Running, openbox answers; stopped (SIGSTOP, the oracle: it cannot have
// answered), the question times out, and the answer comes once it runs again. After a
// keyboard mapping change (xmodmap), WindowManagerCaughtUpWithKeymap asks again, and
// waits while openbox is stopped; with no change since openbox answered, it does not ask.
func TestWindowManagerCaughtUp(t *testing.T) {
	b := open(t)
	if err := b.WindowManagerCaughtUp(t.Context(), 5*time.Second); err != nil {
		t.Fatalf("openbox running: %v", err)
	}
	resume := harness.StopWindowManager(t)
	if err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 300*time.Millisecond); err != nil {
		t.Errorf("no keymap change since openbox answered, yet WindowManagerCaughtUpWithKeymap = %v", err)
	}
	if err := b.WindowManagerCaughtUp(t.Context(), 300*time.Millisecond); !errors.Is(err, x11.ErrTimeout) {
		t.Errorf("openbox stopped: WindowManagerCaughtUp = %v, want ErrTimeout", err)
	}
	resume()
	if err := b.WindowManagerCaughtUp(t.Context(), 5*time.Second); err != nil {
		t.Fatalf("openbox running again: %v", err)
	}

	harness.ChangeKeymap(t)
	resume = harness.StopWindowManager(t)
	// The MappingNotify reaches the backend's event loop asynchronously: until it has,
	// the call may still count the mapping as settled.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 200*time.Millisecond)
		if errors.Is(err, x11.ErrTimeout) {
			break
		}
		if err != nil {
			t.Fatalf("openbox stopped after a mapping change: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("openbox stopped after a mapping change, yet WindowManagerCaughtUpWithKeymap kept returning nil")
		}
		time.Sleep(20 * time.Millisecond)
	}
	resume()
	if err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 5*time.Second); err != nil {
		t.Errorf("openbox running again after the mapping change: %v", err)
	}
}
