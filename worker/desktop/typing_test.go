package desktop_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/tool"
)

// TestTypeTextDelay: with delay_ms the X server stamps consecutive key presses (xevlog's
// log) at least delay_ms apart; without it they come at once.
func TestTypeTextDelay(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	for _, delay := range []int{0, 60} {
		xl.Reset()
		if _, err := call(t, reg, "type_text", map[string]any{"pid": xl.PID, "window_id": xl.Window, "text": "abcdef", "delay_ms": delay}); err != nil {
			t.Fatal(err)
		}
		evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(charsOf(evs)) >= 6 })
		if got := strings.Join(charsOf(evs), ""); got != "abcdef" {
			t.Fatalf("delay %d: typed %q, want abcdef", delay, got)
		}
		presses := harness.Filter(evs, "key_press")
		var gaps []uint32
		for i := 1; i < len(presses); i++ {
			gaps = append(gaps, presses[i].Time-presses[i-1].Time)
		}
		t.Logf("delay_ms %d: gaps %v ms (server time)", delay, gaps)
		for _, g := range gaps {
			if delay > 0 && g < uint32(delay) {
				t.Errorf("delay_ms %d: presses %d ms apart, want ≥ %d", delay, g, delay)
			}
			if delay == 0 && g > 40 {
				t.Errorf("no delay: presses %d ms apart", g)
			}
		}
	}
}

// TestTypeTextDelayRefusals: delay_ms out of range, or more time than the call has left,
// is refused invalid_arguments before any key (xevlog receives none).
func TestTypeTextDelayRefusals(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	for _, args := range []map[string]any{
		{"text": "ab", "delay_ms": 1001},
		{"text": "ab", "delay_ms": -1},
		// 100 characters a second apart do not fit in the test's 20 s call.
		{"text": strings.Repeat("x", 100), "delay_ms": 1000},
	} {
		args["pid"], args["window_id"] = xl.PID, xl.Window
		xl.Reset()
		r, err := call(t, reg, "type_text", args)
		if code := refusalCode(err); code != authz.CodeInvalidArguments {
			t.Errorf("type_text(delay_ms %v, %d chars) = %v, %v; want invalid_arguments", args["delay_ms"], len(args["text"].(string)), r, err)
		}
		time.Sleep(30 * time.Millisecond)
		if evs := harness.Filter(xl.Events(), "key_press"); len(evs) != 0 {
			t.Errorf("refused call typed: %+v", evs)
		}
	}
}

// TestTypeTextIncomplete: the window is killed while a long text is typed into it; the
// result is an error with code type_text_incomplete whose delivered_count matches what
// xevlog logged before it died, and whose message says what did not arrive.
func TestTypeTextIncomplete(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	var sb strings.Builder
	for i := 0; sb.Len() < 200; i++ {
		sb.WriteByte(byte('a' + i%26))
	}
	text := sb.String()
	type out struct {
		r   *tool.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := call(t, reg, "type_text", map[string]any{"pid": xl.PID, "window_id": xl.Window, "text": text, "delay_ms": 15})
		done <- out{r, err}
	}()
	xl.WaitFor(t, 10*time.Second, func(evs []harness.Event) bool { return len(charsOf(evs)) >= 20 })
	if err := syscall.Kill(xl.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var o out
	select {
	case o = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("type_text did not stop after its window died")
	}
	if o.err != nil {
		t.Fatalf("type_text = %v; want an error result", o.err)
	}
	logged := strings.Join(charsOf(xl.Events()), "")
	if !strings.HasPrefix(text, logged) || len(logged) < 20 {
		t.Fatalf("xevlog logged %q, not a prefix of the text of at least 20", logged)
	}
	st, d := structured(t, o.r), details(t, o.r)
	n, _ := d["delivered_count"].(float64)
	t.Logf("xevlog logged %d characters; delivered_count %v; %s", len(logged), n, o.r.Content[0].Text)
	if !o.r.IsError || st["error_code"] != string(authz.CodeTypeTextIncomplete) {
		t.Fatalf("result %+v; want an error with code %s", o.r, authz.CodeTypeTextIncomplete)
	}
	// Keys go out only after the check that the window has the focus; the one sent as
	// it died may have gone nowhere, and xevlog may not have read the last ones.
	if int(n) < len(logged) || int(n) > len(logged)+3 || int(n) >= len(text) {
		t.Errorf("delivered_count %v; xevlog logged %d of %d", n, len(logged), len(text))
	}
	if msg := o.r.Content[0].Text; !strings.Contains(msg, fmt.Sprintf("typed %d of %d characters", int(n), len(text))) || !strings.Contains(msg, text[int(n):int(n)+10]) {
		t.Errorf("message %q does not say what arrived and what did not", msg)
	}
}
