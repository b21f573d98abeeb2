package desktop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/a11yenv"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// a11ySetup registers the tools with an AT-SPI client on a private session bus.
func a11ySetup(t *testing.T, opts atspi.Options) (*tool.Registry, *x11.Backend, *a11yenv.Bus) {
	t.Helper()
	harness.Require(t)
	bus := a11yenv.StartBus(t)
	b, err := x11.Open(t.Context(), x11.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if opts.SessionBusAddress == "" {
		opts.SessionBusAddress = bus.Addr
	}
	c := atspi.New(opts)
	t.Cleanup(func() { c.Close() })
	reg := tool.NewRegistry()
	desktop.Register(reg, b, desktop.Options{Accessibility: c})
	return reg, b, bus
}

// callAs calls a tool as session sess.
func callAs(t *testing.T, reg *tool.Registry, sess *tool.Session, name string, args any) (*tool.Result, error) {
	t.Helper()
	tl, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("tool %q not registered", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	return tl.Handler(ctx, &tool.Call{Name: name, JSON: raw, Session: sess})
}

type elementJSON struct {
	Index   int      `json:"element_index"`
	Token   string   `json:"element_token"`
	Role    string   `json:"role"`
	Name    string   `json:"name"`
	Value   *string  `json:"value"`
	States  []string `json:"states"`
	Actions []string `json:"actions"`
	Frame   *x11.Rect
	Screen  *x11.Rect `json:"screen_frame"`
}

type stateJSON struct {
	SnapshotID       string        `json:"snapshot_id"`
	Elements         []elementJSON `json:"elements"`
	Truncated        bool          `json:"truncated"`
	TruncationReason string        `json:"truncation_reason"`
	Degraded         bool          `json:"degraded"`
	DegradedReason   string        `json:"degraded_reason"`
	ScreenshotWidth  int           `json:"screenshot_width"`
	ScreenshotScale  float64       `json:"screenshot_scale"`
	WalkMS           float64       `json:"walk_ms"`
}

func decodeState(t *testing.T, r *tool.Result) stateJSON {
	t.Helper()
	b, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	var s stateJSON
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// windowState calls get_window_state until the application's tree is there.
func windowState(t *testing.T, reg *tool.Registry, sess *tool.Session, args map[string]any) (*tool.Result, stateJSON) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := callAs(t, reg, sess, "get_window_state", args)
		if err != nil {
			t.Fatalf("get_window_state(%v): %v", args, err)
		}
		s := decodeState(t, r)
		if !s.Degraded || time.Now().After(deadline) {
			return r, s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func elementOf(t *testing.T, s stateJSON, role, name string) elementJSON {
	t.Helper()
	for _, e := range s.Elements {
		if e.Role == role && (name == "*" || e.Name == name) {
			return e
		}
	}
	t.Fatalf("no %s %q among %+v", role, name, s.Elements)
	return elementJSON{}
}

func TestA11yToolSchemas(t *testing.T) {
	reg := tool.NewRegistry()
	desktop.Register(reg, nil, desktop.Options{})
	for _, name := range []string{"get_window_state", "get_accessibility_tree", "set_value", "click", "double_click", "right_click", "type_text", "scroll"} {
		tl, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "get_") {
			continue
		}
		for _, p := range []string{"element_token", "snapshot_id", "element_index"} {
			if _, ok := s.Properties[p]; !ok {
				t.Errorf("%s has no %s property", name, p)
			}
		}
	}
	if caps := reg.Capabilities(); caps[len(caps)-1].Name != "atspi" || caps[len(caps)-1].Available {
		t.Errorf("capabilities = %+v, want atspi unavailable last", caps)
	}
}

// TestZenityThroughTools is the end-to-end check: a zenity entry dialog in the
// background, read with get_window_state, filled with set_value and confirmed with a
// click on OK by element, while the pointer and the focused window stay where they were.
func TestZenityThroughTools(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	zen := a11yenv.Zenity(t, bus, "--entry", "--title", "CUA probe", "--text", "Type here:")
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200}) // takes the focus
	harness.Command(t, "xdotool", "mousemove", "--window", fmt.Sprint(xl.Window), "40", "50")
	px, py, active := a11yenv.Pointer(t)
	// The window manager activates the new window shortly after it maps.
	for deadline := time.Now().Add(3 * time.Second); active != fmt.Sprint(xl.Window) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		px, py, active = a11yenv.Pointer(t)
	}
	if active != fmt.Sprint(xl.Window) {
		t.Fatalf("active window %s, want xevlog %d", active, xl.Window)
	}
	unchanged := func(when string) {
		t.Helper()
		x, y, a := a11yenv.Pointer(t)
		if x != px || y != py || a != active {
			t.Errorf("%s: pointer (%d,%d) active %s; was (%d,%d) active %s", when, x, y, a, px, py, active)
		}
	}

	s1 := ownSession("one", "unrestricted")
	win := map[string]any{"pid": zen.PID, "window_id": zen.Window}
	r, st := windowState(t, reg, s1, win)
	text := r.Content[0].Text
	t.Logf("get_window_state: %d bytes of text, walk %.1f ms:\n%s", len(text), st.WalkMS, text)
	if st.Degraded || len(text) > 2048 || st.ScreenshotWidth == 0 || len(r.Content) != 2 || !r.Content[1].IsImage() {
		t.Fatalf("state: degraded %v %q, %d bytes, screenshot %d, %d blocks", st.Degraded, st.DegradedReason, len(text), st.ScreenshotWidth, len(r.Content))
	}
	entry := elementOf(t, st, "text", "*")
	ok := elementOf(t, st, "push button", "OK")
	if !strings.Contains(text, fmt.Sprintf("- [%d] push button \"OK\"", ok.Index)) || !strings.Contains(text, "snapshot="+st.SnapshotID) {
		t.Errorf("text lacks the OK row or the snapshot id")
	}
	x, y, w, h := a11yenv.Geometry(t, zen.Window)
	if ok.Screen == nil || ok.Frame == nil || ok.Screen.X != x+ok.Frame.X || ok.Screen.Y != y+ok.Frame.Y ||
		ok.Frame.X+ok.Frame.Width > w || ok.Frame.Y+ok.Frame.Height > h {
		t.Errorf("OK frame %+v screen %+v vs window %dx%d+%d+%d", ok.Frame, ok.Screen, w, h, x, y)
	}

	r, err := callAs(t, reg, s1, "set_value", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": entry.Token, "value": "typed by set_value"})
	if err != nil {
		t.Fatalf("set_value: %v", err)
	}
	res := details(t, r)
	ev, _ := res["evidence"].(map[string]any)
	if res["route"] != "atspi_editable_text" || res["verified"] != true || ev["read_back"] != "typed by set_value" {
		t.Fatalf("set_value = %v", res)
	}
	unchanged("after set_value")

	// A newer snapshot of the window makes the older tokens stale.
	_, st2 := windowState(t, reg, s1, win)
	if st2.SnapshotID == st.SnapshotID {
		t.Fatal("the second snapshot has the first one's id")
	}
	if elementOf(t, st2, "text", "*").Value == nil || *elementOf(t, st2, "text", "*").Value != "typed by set_value" {
		t.Errorf("the new snapshot does not show the value: %+v", elementOf(t, st2, "text", "*"))
	}
	ok2 := elementOf(t, st2, "push button", "OK")
	refusals := []struct {
		name string
		sess *tool.Session
		tool string
		args map[string]any
		code authz.Code
	}{
		{"stale token", s1, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": ok.Token}, authz.CodeStaleElement},
		{"stale snapshot index", s1, "set_value", map[string]any{"pid": zen.PID, "window_id": zen.Window, "snapshot_id": st.SnapshotID, "element_index": entry.Index, "value": "x"}, authz.CodeStaleElement},
		{"other session", ownSession("two", "unrestricted"), "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": ok2.Token}, authz.CodeStaleElement},
		{"other window", s1, "click", map[string]any{"pid": xl.PID, "window_id": xl.Window, "element_token": ok2.Token}, authz.CodeInvalidArguments},
		{"no window", s1, "click", map[string]any{"element_token": ok2.Token}, authz.CodeInvalidArguments},
		{"token and point", s1, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": ok2.Token, "x": 1, "y": 1}, authz.CodeInvalidArguments},
		{"malformed token", s1, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": "s1234:1"}, authz.CodeInvalidArguments},
		{"index past end", s1, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "snapshot_id": st2.SnapshotID, "element_index": 999}, authz.CodeInvalidArguments},
		{"set_value on a button", s1, "set_value", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": ok2.Token, "value": "x"}, authz.CodeUnsupported},
		{"scroll into view unsupported", s1, "scroll", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": ok2.Token}, authz.CodeUnsupported},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r, err := callAs(t, reg, tc.sess, tc.tool, tc.args)
			if code := refusalCode(err); code != tc.code {
				t.Fatalf("%s(%v) = %v, %v; want refusal %s", tc.tool, tc.args, r, err, tc.code)
			}
		})
	}
	if strings.TrimSpace(zen.Stdout()) != "" {
		t.Fatalf("a refused call had an effect: zenity printed %q", zen.Stdout())
	}
	unchanged("after the refusals")

	r, err = callAs(t, reg, s1, "type_text", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": elementOf(t, st2, "text", "*").Token, "text": " ✓"})
	if err != nil || details(t, r)["route"] != "atspi_editable_text" || details(t, r)["verified"] != true {
		t.Fatalf("type_text by element = %v, %v", r, err)
	}
	r, err = callAs(t, reg, s1, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": ok2.Token})
	if err != nil {
		t.Fatalf("click OK: %v", err)
	}
	if res := details(t, r); res["route"] != "atspi_action" || res["verified"] != true {
		t.Fatalf("click = %v", res)
	}
	if !zen.WaitExit(5 * time.Second) {
		t.Fatal("zenity did not exit after OK")
	}
	if got := strings.TrimSpace(zen.Stdout()); got != "typed by set_value ✓" {
		t.Errorf("zenity printed %q", got)
	}
	unchanged("after the click")
	if evs := harness.Filter(xl.Events(), "button_press", "key_press"); len(evs) != 0 {
		t.Errorf("xevlog, which had the focus, saw input: %+v", evs)
	}
}

// TestPlainWindowDegrades: a window without accessibility gets its geometry, degraded,
// and a click on that element is pointer input at its centre.
func TestPlainWindowDegrades(t *testing.T) {
	reg, _, _ := a11ySetup(t, atspi.Options{})
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	sess := ownSession("s", "unrestricted")
	r, err := callAs(t, reg, sess, "get_window_state", map[string]any{"pid": xl.PID, "window_id": xl.Window, "include_screenshot": false})
	if err != nil {
		t.Fatal(err)
	}
	st := decodeState(t, r)
	t.Logf("%s", r.Content[0].Text)
	if !st.Degraded || !strings.HasPrefix(st.DegradedReason, atspi.DegradedNoApplication) || len(st.Elements) != 1 || len(r.Content) != 1 {
		t.Fatalf("plain window state = %+v", st)
	}
	xl.Reset()
	r, err = callAs(t, reg, sess, "click", map[string]any{"pid": xl.PID, "window_id": xl.Window, "element_token": st.Elements[0].Token})
	if err != nil {
		t.Fatal(err)
	}
	if res := details(t, r); res["route"] != desktop.RouteXTestPointer || res["verified"] != true {
		t.Fatalf("click = %v", res)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) == 1 })
	if p := harness.Filter(evs, "button_press"); len(p) != 1 || p[0].X != 150 || p[0].Y != 100 {
		t.Errorf("press %+v, want one at the centre (150,100)", p)
	}
	// double_click and right_click by element fall back to the pointer the same way.
	for _, tc := range []struct {
		tool    string
		button  int
		presses int
	}{{"double_click", 1, 2}, {"right_click", 3, 1}} {
		xl.Reset()
		r, err := callAs(t, reg, sess, tc.tool, map[string]any{"pid": xl.PID, "window_id": xl.Window, "element_token": st.Elements[0].Token})
		if err != nil || details(t, r)["route"] != desktop.RouteXTestPointer {
			t.Fatalf("%s = %v, %v", tc.tool, r, err)
		}
		evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) == tc.presses })
		for _, p := range harness.Filter(evs, "button_press") {
			if p.Button != tc.button || p.X != 150 || p.Y != 100 {
				t.Errorf("%s: press %+v, want button %d at (150,100)", tc.tool, p, tc.button)
			}
		}
	}
}

func TestStoppedAppThroughTools(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{CallTimeout: 300 * time.Millisecond})
	zen := a11yenv.Zenity(t, bus, "--entry", "--title", "CUA stop", "--text", "x")
	sess := ownSession("s", "unrestricted")
	win := map[string]any{"pid": zen.PID, "window_id": zen.Window, "include_screenshot": false}
	_, st := windowState(t, reg, sess, win)
	ok := elementOf(t, st, "push button", "OK")
	zen.Stop()
	defer zen.Continue()
	start := time.Now()
	r, err := callAs(t, reg, sess, "get_window_state", win)
	if err != nil {
		t.Fatal(err)
	}
	st2 := decodeState(t, r)
	if took := time.Since(start); took > 2*time.Second || !st2.Degraded || !strings.HasPrefix(st2.DegradedReason, atspi.DegradedNotResponding) {
		t.Fatalf("stopped app: %v, %+v", took, st2)
	}
	// The degraded snapshot superseded the old one: its tokens are stale, not retried.
	if _, err := callAs(t, reg, sess, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": ok.Token}); refusalCode(err) != authz.CodeStaleElement {
		t.Errorf("click with a superseded token = %v", err)
	}
}

func TestLargeListThroughTools(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	args := []string{"--list", "--title", "CUA big", "--column=x", "--height", "400"}
	for i := range 3000 {
		args = append(args, fmt.Sprint("row ", i))
	}
	zen := a11yenv.Zenity(t, bus, args...)
	sess := ownSession("s", "unrestricted")
	start := time.Now()
	r, st := windowState(t, reg, sess, map[string]any{"pid": zen.PID, "window_id": zen.Window, "max_elements": 50, "timeout_ms": 1500})
	t.Logf("%v, walk %.1f ms, truncated %v (%s), %d bytes of text:\n%s", time.Since(start), st.WalkMS, st.Truncated, st.TruncationReason, len(r.Content[0].Text), r.Content[0].Text)
	if !st.Truncated || !strings.Contains(st.TruncationReason, "max_elements") || len(st.Elements) != 50 || st.WalkMS > 1600 {
		t.Fatalf("big list: %+v", st)
	}
	if !strings.Contains(r.Content[0].Text, "truncated: max_elements") {
		t.Errorf("the text does not say it is truncated")
	}
	// Select a row by element: Selection.SelectChild, verified by the selected state.
	cell := elementOf(t, st, "table cell", "row 2")
	r, err := callAs(t, reg, sess, "click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": cell.Token})
	if err != nil {
		t.Fatal(err)
	}
	if res := details(t, r); res["route"] != atspi.RouteSelection || res["verified"] != true {
		t.Errorf("click on a row = %v", res)
	}
	// Turn the wheel over the table by element: pointer input at its centre.
	table := elementOf(t, st, "table", "")
	r, err = callAs(t, reg, sess, "scroll", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": table.Token, "direction": "down", "amount": 10})
	if err != nil {
		t.Fatal(err)
	}
	if res := details(t, r); res["route"] != desktop.RouteXTestPointer || res["verified"] != true {
		t.Errorf("scroll over the table = %v", res)
	}
	r, err = callAs(t, reg, sess, "get_accessibility_tree", map[string]any{"pid": zen.PID, "query": "row 2"})
	if err != nil {
		t.Fatal(err)
	}
	if st := decodeState(t, r); len(r.Content) != 1 || len(st.Elements) == 0 || !strings.Contains(r.Content[0].Text, `"row 2" [selected`) {
		t.Errorf("get_accessibility_tree query: %s", r.Content[0].Text)
	}
	// A double-click on a row activates it: zenity answers with the row and exits.
	row := elementOf(t, decodeState(t, r), "table cell", "row 2")
	r, err = callAs(t, reg, sess, "double_click", map[string]any{"pid": zen.PID, "window_id": zen.Window, "element_token": row.Token})
	if err != nil {
		t.Fatal(err)
	}
	if res := details(t, r); res["route"] != atspi.RouteAction || res["verified"] != true || res["evidence"].(map[string]any)["action"] != "activate" {
		t.Errorf("double_click on a row = %v", res)
	}
	if !zen.WaitExit(5*time.Second) || strings.TrimSpace(zen.Stdout()) != "row 2" {
		t.Errorf("zenity printed %q", zen.Stdout())
	}
}

func TestNoBusThroughTools(t *testing.T) {
	reg, _, _ := a11ySetup(t, atspi.Options{SessionBusAddress: "unix:path=/nonexistent/bus"})
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	r, err := callAs(t, reg, ownSession("s", "m"), "get_accessibility_tree", map[string]any{"pid": xl.PID})
	if err != nil {
		t.Fatal(err)
	}
	if st := decodeState(t, r); !st.Degraded || !strings.HasPrefix(st.DegradedReason, atspi.DegradedUnavailable) {
		t.Errorf("without a bus: %+v", st)
	}
}
