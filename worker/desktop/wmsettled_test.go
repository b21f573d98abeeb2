package desktop_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/xevlog/harness"
)

// TestClickWaitsForTheWindowManagerAfterAKeymapChange: after a keyboard mapping change,
// openbox grabs its key bindings again, and holds a press it grabs to focus on a click
// until it has. A background click waits for openbox to say it has caught up; while
// openbox is stopped (SIGSTOP: it cannot), the click is refused input_busy and xevlog logs
// no press. Running again, the same click lands (xevlog's button_press) and says so.
func TestClickWaitsForTheWindowManagerAfterAKeymapChange(t *testing.T) {
	reg, b := setup(t)
	target := harness.StartXevlog(t, harness.XevlogOptions{Title: "wm-settled", Width: 300, Height: 200})
	windowOfTest(t, b, target.Window)
	sess := sharedSession("wm-settled")
	args := map[string]any{"pid": target.PID, "window_id": target.Window, "x": 40, "y": 40}
	// A first click makes the session's devices and settles everything.
	if _, err := callAs(t, reg, sess, "click", args); err != nil {
		t.Fatalf("first click: %v", err)
	}

	resume := harness.StopWindowManager(t)
	harness.ChangeKeymap(t)
	time.Sleep(200 * time.Millisecond) // the MappingNotify reaches the worker's backend
	target.Reset()

	_, err := callAs(t, reg, sess, "click", args)
	if code := refusalCode(err); code != authz.CodeInputBusy || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("click while openbox is stopped after a keymap change = %v, want input_busy saying nothing was sent", err)
	}
	resume()
	time.Sleep(100 * time.Millisecond)
	if evs := harness.Filter(target.Events(), "button_press"); len(evs) != 0 {
		t.Fatalf("the refused click reached the window: %+v", evs)
	}

	r, err := callAs(t, reg, sess, "click", args)
	if err != nil {
		t.Fatalf("click with openbox running again: %v", err)
	}
	if res := details(t, r); res["effect"] == nil && res["outcome"] == "unknown" {
		t.Errorf("click = %v", res)
	}
	target.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "button_press")) == 1
	})
}
