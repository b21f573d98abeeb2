package desktop_test

import (
	"maps"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

// TestClickAfterKeysWaitsForTheWindow: an application that keeps changing its window for a
// while after keys (xevlog -busy-after-key repaints it for 400 ms, as an editor scrolls
// its view after typed lines) gets a click sent right after the keys only once it is
// still: the press's server time is not before the time xevlog logged the end of its
// repainting. A click into a window no keys went to does not wait. Oracle: xevlog's log
// of server times.
func TestClickAfterKeysWaitsForTheWindow(t *testing.T) {
	reg, b, _ := a11ySetup(t, atspi.Options{})
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "busy-after-key", Width: 300, Height: 200, BusyAfterKey: 400 * time.Millisecond})
	w := windowOfTest(t, b, xl.Window)
	sess := sharedSession("typed-then-click")
	target := map[string]any{"pid": w.PID, "window_id": w.ID}
	with := func(more map[string]any) map[string]any {
		m := maps.Clone(target)
		maps.Copy(m, more)
		return m
	}

	// No keys went to the window yet: the click does not wait.
	r, err := callAs(t, reg, sess, "click", with(map[string]any{"x": 50, "y": 50}))
	if err != nil {
		t.Fatalf("first click: %v", err)
	}
	if ev := evidenceOf(t, r); ev["typed_settle_ms"] != nil {
		t.Errorf("a click into a window no keys went to waited: %v", ev)
	}

	xl.Reset()
	if _, err := callAs(t, reg, sess, "type_text", with(map[string]any{"text": "x"})); err != nil {
		t.Fatalf("type_text: %v", err)
	}
	r, err = callAs(t, reg, sess, "click", with(map[string]any{"x": 150, "y": 100}))
	if err != nil {
		t.Fatalf("click after the keys: %v", err)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "button_press")) > 0 && len(harness.Filter(evs, "still")) > 0
	})
	press, still := harness.Filter(evs, "button_press")[0], harness.Filter(evs, "still")[0]
	if press.Time < still.Time {
		t.Errorf("the press reached the window at server time %d, %d ms before it was still (%d)", press.Time, still.Time-press.Time, still.Time)
	}
	if ev := evidenceOf(t, r); ev["typed_settle_ms"] == nil {
		t.Errorf("the click's evidence does not say it waited: %v", ev)
	}
}

// evidenceOf returns a result's evidence (cua-host/details).
func evidenceOf(t *testing.T, r *tool.Result) map[string]any {
	t.Helper()
	ev, _ := details(t, r)["evidence"].(map[string]any)
	return ev
}
