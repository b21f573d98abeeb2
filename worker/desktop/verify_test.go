package desktop_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/a11yenv"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

// verifyJSON is verify_state's structured result, decoded strictly: a field outside the
// contract's shape fails the decode.
type verifyJSON struct {
	Status     string          `json:"status"`
	Stable     bool            `json:"stable"`
	Samples    int             `json:"samples"`
	ElapsedMS  int64           `json:"elapsed_ms"`
	Predicates []predicateJSON `json:"predicates"`
}

// predicateJSON is one predicate's result.
type predicateJSON struct {
	Index         int     `json:"index"`
	Status        string  `json:"status"`
	UnknownReason *string `json:"unknown_reason"`
	ObservedJSON  *string `json:"observed_json"`
}

func decodeVerify(t *testing.T, r *tool.Result) verifyJSON {
	t.Helper()
	b, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"status", "stable", "samples", "elapsed_ms", "predicates"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("structured result %s lacks %q", b, k)
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var v verifyJSON
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("structured result %s: %v", b, err)
	}
	for i, p := range v.Predicates {
		if p.Index != i {
			t.Errorf("predicates[%d].index = %d", i, p.Index)
		}
		if (p.Status == "unknown") != (p.UnknownReason != nil) {
			t.Errorf("predicates[%d]: status %s with unknown_reason %v", i, p.Status, p.UnknownReason)
		}
		if !strings.Contains(string(b), fmt.Sprintf(`"index":%d,"status":%q,"unknown_reason":`, i, p.Status)) {
			t.Errorf("predicates[%d] does not carry unknown_reason explicitly: %s", i, b)
		}
	}
	return v
}

func reason(p predicateJSON) string {
	if p.UnknownReason == nil {
		return ""
	}
	return *p.UnknownReason
}

// cpuTime is the user and system time this process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func bounds(x, y, w, h, tol int) map[string]any {
	return map[string]any{"window": map[string]any{"bounds": map[string]any{"x": x, "y": y, "width": w, "height": h, "tolerance_px": tol}}}
}

// TestVerifyStateWindowBounds: a window moved and resized by xdotool; its frame as
// xwininfo reads it satisfies a bounds predicate, within tolerance; an off frame is
// unsatisfied after about timeout_ms, sampled every 100 ms without spinning; a frame that
// comes true while verify_state waits is seen.
func TestVerifyStateWindowBounds(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	id := fmt.Sprint(xl.Window)
	harness.Command(t, "xdotool", "windowsize", "--sync", id, "320", "240")
	harness.Command(t, "xdotool", "windowmove", "--sync", id, "210", "160")
	time.Sleep(100 * time.Millisecond)
	x, y, w, h := a11yenv.Geometry(t, xl.Window)
	if w != 320 || h != 240 {
		t.Fatalf("xwininfo says %dx%d after windowsize 320 240", w, h)
	}
	sess := ownSession("v", "unrestricted")
	base := map[string]any{"pid": xl.PID, "window_id": xl.Window, "session": "v"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	r, err := callAs(t, reg, sess, "verify_state", with(map[string]any{"expect": []any{
		map[string]any{"window": map[string]any{"exists": true}}, bounds(x, y, w, h, 0), bounds(x+3, y-3, w+3, h-3, 3),
	}}))
	if err != nil {
		t.Fatalf("verify_state: %v", err)
	}
	v := decodeVerify(t, r)
	t.Logf("%s", r.Content[0].Text)
	if v.Status != "satisfied" || !v.Stable || v.Samples != 2 || len(v.Predicates) != 3 {
		t.Fatalf("exact frame: %+v", v)
	}
	for _, p := range v.Predicates {
		if p.Status != "satisfied" || p.ObservedJSON == nil {
			t.Errorf("predicate %d = %s", p.Index, p.Status)
		}
	}
	want := fmt.Sprintf(`"bounds":{"height":%d,"width":%d,"x":%d,"y":%d}`, h, w, x, y)
	if !strings.Contains(*v.Predicates[1].ObservedJSON, want) {
		t.Errorf("observed %s, want %s", *v.Predicates[1].ObservedJSON, want)
	}
	if len(r.Content) != 1 {
		t.Errorf("%d content blocks without include_screenshot", len(r.Content))
	}

	// Off by 3 with a tolerance of 2: unsatisfied, after the whole wait, not sooner and
	// not much later, with one sample per interval and little CPU.
	const timeout = 1000
	cpu0, t0 := cpuTime(t), time.Now()
	r, err = callAs(t, reg, sess, "verify_state", with(map[string]any{"timeout_ms": timeout, "expect": []any{
		bounds(x, y, w, h, 0), bounds(x+3, y, w, h, 2),
	}}))
	wall, cpu := time.Since(t0), cpuTime(t)-cpu0
	if err != nil {
		t.Fatalf("verify_state: %v", err)
	}
	v = decodeVerify(t, r)
	t.Logf("timeout path: %d samples, elapsed %d ms, wall %v, cpu %v", v.Samples, v.ElapsedMS, wall, cpu)
	if v.Status != "unsatisfied" || v.Stable || v.Predicates[0].Status != "satisfied" || v.Predicates[1].Status != "unsatisfied" {
		t.Fatalf("off frame: %+v", v)
	}
	if v.ElapsedMS < timeout || wall > timeout*time.Millisecond+400*time.Millisecond {
		t.Errorf("the timeout path took %d ms (wall %v), want about %d ms", v.ElapsedMS, wall, timeout)
	}
	if v.Samples < 8 || v.Samples > timeout/100+2 {
		t.Errorf("%d samples in %d ms, want one per 100 ms", v.Samples, timeout)
	}
	if cpu > wall/4 {
		t.Errorf("verify_state used %v of CPU in %v: it spins instead of sleeping", cpu, wall)
	}

	// timeout_ms 0: one sample.
	r, err = callAs(t, reg, sess, "verify_state", with(map[string]any{"timeout_ms": 0, "expect": []any{bounds(x, y, w+50, h, 10)}}))
	if v := decodeVerify(t, r); err != nil || v.Samples != 1 || v.Status != "unsatisfied" || v.ElapsedMS > 200 {
		t.Errorf("one sample: %+v, %v", v, err)
	}

	// A frame that comes true while verify_state waits.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(400 * time.Millisecond)
		harness.Command(t, "xdotool", "windowsize", "--sync", id, "360", "250")
	}()
	t0 = time.Now()
	r, err = callAs(t, reg, sess, "verify_state", with(map[string]any{"timeout_ms": 5000, "stable_samples": 3, "include_screenshot": true,
		"expect": []any{map[string]any{"window": map[string]any{"bounds": map[string]any{"x": x, "y": y, "width": 360, "height": 250}}}}}))
	<-done
	if err != nil {
		t.Fatalf("verify_state: %v", err)
	}
	v = decodeVerify(t, r)
	if took := time.Since(t0); v.Status != "satisfied" || !v.Stable || took < 400*time.Millisecond || took > 2*time.Second || v.Samples < 4 {
		t.Errorf("waiting for the resize: %+v after %v", v, took)
	}
	if _, _, w2, h2 := a11yenv.Geometry(t, xl.Window); w2 != 360 || h2 != 250 {
		t.Errorf("xwininfo says %dx%d", w2, h2)
	}
	if len(r.Content) != 2 || !r.Content[1].IsImage() {
		t.Errorf("include_screenshot: %d blocks", len(r.Content))
	}
}

// TestVerifyStateWindowGone: exists false holds once the window's client is gone; a
// bounds predicate on a gone window is unknown (target_missing), exists true unsatisfied.
func TestVerifyStateWindowGone(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 200, Height: 100})
	sess := ownSession("g", "unrestricted")
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = syscall.Kill(xl.PID, syscall.SIGKILL)
	}()
	r, err := callAs(t, reg, sess, "verify_state", map[string]any{"pid": xl.PID, "window_id": xl.Window, "timeout_ms": 5000, "stable_samples": 1,
		"expect": []any{map[string]any{"window": map[string]any{"exists": false}}}})
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeVerify(t, r); v.Status != "satisfied" || v.ElapsedMS < 300 || v.ElapsedMS > 3000 {
		t.Fatalf("window gone: %+v", v)
	}
	if out, _ := harnessSearch(xl.PID); out != "" {
		t.Fatalf("xdotool still finds windows of pid %d: %s", xl.PID, out)
	}
}

// harnessSearch lists the visible windows of pid, as xdotool finds them.
func harnessSearch(pid int) (string, error) {
	out, err := execOutput("xdotool", "search", "--onlyvisible", "--pid", fmt.Sprint(pid))
	return strings.TrimSpace(out), err
}

// execOutput runs an oracle program and returns its standard output.
func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}

func asRefusal(err error, r **authz.Refusal) bool { return errors.As(err, r) }

// TestVerifyStateElements: predicates on a zenity entry dialog's accessible elements,
// whose state the dialog's command line sets (--entry-text) and xdotool changes.
func TestVerifyStateElements(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	zen := a11yenv.Zenity(t, bus, "--entry", "--title", "verify", "--text", "Name:", "--entry-text", "kept")
	sess := ownSession("e", "unrestricted")
	// Wait until the application's tree is there.
	windowState(t, reg, sess, map[string]any{"pid": zen.PID, "window_id": zen.Window, "include_screenshot": false})
	elem := func(sel map[string]any, extra map[string]any) map[string]any {
		e := map[string]any{"selector": sel}
		for k, v := range extra {
			e[k] = v
		}
		return map[string]any{"element": e}
	}
	call := func(timeout int, preds ...any) verifyJSON {
		t.Helper()
		r, err := callAs(t, reg, sess, "verify_state", map[string]any{"pid": zen.PID, "window_id": zen.Window, "timeout_ms": timeout, "expect": preds, "session": "e"})
		if err != nil {
			t.Fatalf("verify_state(%v): %v", preds, err)
		}
		t.Logf("%s", r.Content[0].Text)
		return decodeVerify(t, r)
	}

	v := call(3000,
		elem(map[string]any{"role": "text"}, map[string]any{"value_equals": "kept"}),
		elem(map[string]any{"role": "push button", "label_contains": "OK"}, map[string]any{"exists": true, "enabled": true, "selected": false}),
		elem(map[string]any{"role": "PUSH BUTTON"}, nil),
		map[string]any{"window": map[string]any{"exists": true}},
	)
	if v.Status != "satisfied" || !v.Stable {
		t.Fatalf("zenity as started: %+v", v)
	}

	v = call(300,
		elem(map[string]any{"role": "text"}, map[string]any{"value_equals": "other"}),
		elem(map[string]any{"label_contains": "No such label"}, nil),
		elem(map[string]any{"role": "push button"}, map[string]any{"enabled": true}),
	)
	if v.Status != "unsatisfied" || v.Stable {
		t.Fatalf("wrong value: %+v", v)
	}
	if p := v.Predicates[0]; p.Status != "unsatisfied" || p.ObservedJSON == nil || !strings.Contains(*p.ObservedJSON, `"value":"kept"`) {
		t.Errorf("wrong value predicate = %+v", p)
	}
	if p := v.Predicates[1]; p.Status != "unknown" || reason(p) != "target_missing" {
		t.Errorf("absent element = %s (%s), want unknown target_missing", p.Status, reason(p))
	}
	if p := v.Predicates[2]; p.Status != "unknown" || reason(p) != "multi_match" {
		t.Errorf("OK and Cancel = %s (%s), want unknown multi_match", p.Status, reason(p))
	}

	// Only unknowns: the status is unknown, never satisfied.
	v = call(200, elem(map[string]any{"label_contains": "No such label"}, nil))
	if v.Status != "unknown" || v.Stable {
		t.Errorf("absent element alone: %+v", v)
	}
	// An item that asserts nothing is reported at once, not polled for.
	v = call(3000, map[string]any{}, map[string]any{"window": map[string]any{"exists": true}})
	if v.Status != "unknown" || v.Samples != 1 || reason(v.Predicates[0]) != "invalid_predicate" || v.Predicates[1].Status != "satisfied" {
		t.Errorf("empty predicate: %+v", v)
	}

	// The text changes while verify_state waits: xdotool types into the entry.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond)
		id := fmt.Sprint(zen.Window)
		_, _ = execOutput("xdotool", "windowactivate", "--sync", id)
		time.Sleep(200 * time.Millisecond) // the focus arrives after the activation
		_, _ = execOutput("xdotool", "key", "ctrl+a")
		_, _ = execOutput("xdotool", "type", "--delay", "30", "changed")
	}()
	v = call(8000, elem(map[string]any{"role": "text"}, map[string]any{"value_equals": "changed"}))
	<-done
	if v.Status != "satisfied" || v.ElapsedMS < 300 {
		t.Fatalf("typed text: %+v", v)
	}
	// zenity's own answer is the oracle for what the entry held.
	harness.Command(t, "xdotool", "key", "Return")
	if !zen.WaitExit(5*time.Second) || strings.TrimSpace(zen.Stdout()) != "changed" {
		t.Errorf("zenity printed %q", zen.Stdout())
	}
}

// TestVerifyStateRefusals: invalid input and foreign windows are refused before any
// sample.
func TestVerifyStateRefusals(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 200, Height: 100})
	other := harness.StartXevlog(t, harness.XevlogOptions{Title: "other", Width: 200, Height: 100})
	sess := ownSession("r", "unrestricted")
	ok := []any{map[string]any{"window": map[string]any{"exists": true}}}
	tests := []struct {
		name string
		args map[string]any
		code authz.Code
		msg  string
	}{
		{"exists false", map[string]any{"pid": xl.PID, "window_id": xl.Window, "expect": []any{map[string]any{"element": map[string]any{"selector": map[string]any{"role": "text"}, "exists": false}}}}, authz.CodeInvalidArguments, "absence cannot be proven"},
		{"no window_id", map[string]any{"pid": xl.PID, "expect": ok}, authz.CodeInvalidArguments, "pid and window_id are required"},
		{"another pid's window", map[string]any{"pid": xl.PID, "window_id": other.Window, "expect": ok}, authz.CodeWindowNotFound, "belongs to pid"},
		{"timeout", map[string]any{"pid": xl.PID, "window_id": xl.Window, "expect": ok, "timeout_ms": 20000}, authz.CodeInvalidArguments, "timeout_ms 20000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := callAs(t, reg, sess, "verify_state", tc.args)
			var r *authz.Refusal
			if refusalCode(err) != tc.code || !asRefusal(err, &r) || !strings.Contains(r.Message, tc.msg) {
				t.Fatalf("verify_state(%v) = %v, want %s containing %q", tc.args, err, tc.code, tc.msg)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("refusal took %v", took)
			}
		})
	}
}
