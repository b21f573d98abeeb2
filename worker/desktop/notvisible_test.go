package desktop_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/a11yenv"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11/atspi"
)

// TestElementScrolledOutOfViewIsNotVisible: a row of a real GTK list (zenity) scrolled
// out of its window is refused element_not_visible for pointer input, and the pointer does
// not move (xdotool getmouselocation); scroll with its token and no direction brings it
// into view, after which the same pointer click selects it, which zenity prints once
// Return is pressed.
func TestElementScrolledOutOfViewIsNotVisible(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	args := []string{"--list", "--title", "CUA hidden row", "--column=x", "--height", "300"}
	for i := range 200 {
		args = append(args, fmt.Sprint("row ", i))
	}
	zen := a11yenv.Zenity(t, bus, args...)
	sess := ownSession("s", "unrestricted")
	_, st := windowState(t, reg, sess, map[string]any{"pid": zen.PID, "window_id": zen.Window, "query": "row 150"})
	cell := elementOf(t, st, "table cell", "row 150")
	with := func(kv ...any) map[string]any {
		m := map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": cell.Token}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	harness.Command(t, "xdotool", "mousemove", "3", "3")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"click", with("modifier", []string{"shift"})},
		{"scroll", with("direction", "down")},
	} {
		r, err := callAs(t, reg, sess, tc.tool, tc.args)
		if code := refusalCode(err); code != authz.CodeElementNotVisible {
			t.Errorf("%s on a row scrolled out of view = %v, %v; want refusal %s", tc.tool, r, err, authz.CodeElementNotVisible)
		}
	}
	if loc := harness.Command(t, "xdotool", "getmouselocation"); !strings.HasPrefix(loc, "x:3 y:3 ") {
		t.Errorf("the pointer moved although every call was refused: %s", loc)
	}

	// Scrolling into view goes through the toolkit, not the pointer: it is not refused
	// element_not_visible (GTK 3's tree view answers that it does not scroll a cell).
	if _, err := callAs(t, reg, sess, "scroll", with()); refusalCode(err) == authz.CodeElementNotVisible {
		t.Fatalf("scroll into view refused: %v", err)
	}
	// Turn the wheel over the list (visible) until the row is in view: the click is
	// refused until then, never sent elsewhere.
	// (Through another session, whose snapshot does not replace the first one's.)
	other := ownSession("other", "unrestricted")
	_, full := windowState(t, reg, other, map[string]any{"pid": zen.PID, "window_id": zen.Window, "max_elements": 40})
	table := elementOf(t, full, "table", "")
	for i := 0; ; i++ {
		_, err := callAs(t, reg, sess, "click", with("modifier", []string{"shift"}))
		if err == nil {
			break
		}
		if refusalCode(err) != authz.CodeElementNotVisible || i == 40 {
			t.Fatalf("click after %d scrolls: %v", i, err)
		}
		if _, err := callAs(t, reg, other, "scroll", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": table.Token, "direction": "down", "amount": 10}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
	}
	if _, err := callAs(t, reg, sess, "press_key", map[string]any{"pid": zen.PID, "window_id": zen.Window, "key": "Return"}); err != nil {
		t.Fatal(err)
	}
	if !zen.WaitExit(5*time.Second) || strings.TrimSpace(zen.Stdout()) != "row 150" {
		t.Errorf("zenity printed %q, want the row clicked once in view", zen.Stdout())
	}
}
