package desktop_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/testkit"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

const button1Mask = 0x100

// TestMouseDragMovesTheHeldButton: mouse_button_down, mouse_drag, mouse_button_up into
// xevlog, through the core pointer (a display the session owns) and through the session's
// own pointer (a shared display): xevlog sees the press, then motions with the button held
// (its state) up to the drag's end point, then the release there; on the shared display the
// core pointer (xdotool getmouselocation) did not move.
func TestMouseDragMovesTheHeldButton(t *testing.T) {
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "mouse-drag", Width: 300, Height: 200})
	windowOfTest(t, b, xl.Window)
	for _, tc := range []struct {
		name     string
		sess     *tool.Session
		delivery string
	}{
		{"core pointer", ownSession("md-own", "unrestricted"), "foreground"},
		{"session pointer", sharedSession("md-shared"), "background"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			harness.Command(t, "xdotool", "mousemove", "3", "3")
			target := map[string]any{"pid": xl.PID, "window_id": xl.Window}
			with := func(kv ...any) map[string]any {
				m := map[string]any{}
				for k, v := range target {
					m[k] = v
				}
				for i := 0; i < len(kv); i += 2 {
					m[kv[i].(string)] = kv[i+1]
				}
				return m
			}
			xl.Reset()
			if _, err := callAs(t, reg, tc.sess, "mouse_button_down", with("x", 20, "y", 30)); err != nil {
				t.Fatalf("mouse_button_down: %v", err)
			}
			r, err := callAs(t, reg, tc.sess, "mouse_drag", with("x", 150, "y", 120, "steps", 10, "duration_ms", 100))
			if err != nil {
				t.Fatalf("mouse_drag: %v", err)
			}
			st := structured(t, r)
			del := asObject(t, st["delivery"])
			if st["effect"] != "confirmed" || del["mode"] != tc.delivery || del["delivered_count"] != 10.0 {
				t.Errorf("mouse_drag = %v (%v), want effect confirmed, %s, 10 delivered", st, details(t, r), tc.delivery)
			}
			if _, err := callAs(t, reg, tc.sess, "mouse_button_up", with("x", 150, "y", 120)); err != nil {
				t.Fatalf("mouse_button_up: %v", err)
			}
			evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) > 0 })
			evs = harness.Filter(evs, "button_press", "motion", "button_release")
			press := slices.IndexFunc(evs, func(e harness.Event) bool { return e.Type == "button_press" })
			release := slices.IndexFunc(evs, func(e harness.Event) bool { return e.Type == "button_release" })
			if press < 0 || evs[press].X != 20 || evs[press].Y != 30 {
				t.Fatalf("no press at (20,30): %+v", evs)
			}
			if rel := evs[release]; rel.X != 150 || rel.Y != 120 || rel.State&button1Mask == 0 {
				t.Errorf("release = %+v, want at (150,120) with button 1 held before it", rel)
			}
			moves := harness.Filter(evs[press+1:release], "motion")
			if len(moves) < 10 {
				t.Fatalf("%d motions between press and release, want ≥10: %+v", len(moves), evs)
			}
			for _, m := range moves {
				if m.State&button1Mask == 0 {
					t.Errorf("motion without button 1 held: %+v", m)
				}
			}
			if last := moves[len(moves)-1]; last.X != 150 || last.Y != 120 {
				t.Errorf("last motion at (%d,%d), want (150,120)", last.X, last.Y)
			}
			if tc.delivery == "background" {
				if loc := harness.Command(t, "xdotool", "getmouselocation"); !strings.HasPrefix(loc, "x:3 y:3 ") {
					t.Errorf("the core pointer moved: %s", loc)
				}
			}
		})
	}
}

// TestMouseDragNeedsAHeldButton: without a button held by the calling session on the
// pointer the call goes through, mouse_drag is refused (invalid_arguments, naming
// mouse_button_down) and xevlog sees no pointer event at all; a button another session
// holds on the core pointer does not count.
func TestMouseDragNeedsAHeldButton(t *testing.T) {
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "mouse-drag-none", Width: 300, Height: 200})
	windowOfTest(t, b, xl.Window)
	drag := map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 100, "y": 100, "steps": 5}
	other := ownSession("md-other", "unrestricted")
	for _, tc := range []struct {
		name string
		sess *tool.Session
		prep func(t *testing.T)
	}{
		{"nothing held", ownSession("md-none", "unrestricted"), func(*testing.T) {}},
		{"nothing held, session pointer", sharedSession("md-none-bg"), func(*testing.T) {}},
		{"held by another session", ownSession("md-mine", "unrestricted"), func(t *testing.T) {
			if _, err := callAs(t, reg, other, "mouse_button_down", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 10, "y": 10}); err != nil {
				t.Fatal(err)
			}
			// The other session's press reaches xevlog before the log is reset, so that
			// only what mouse_drag sends could be logged afterwards.
			xl.WaitFor(t, 10*time.Second, func(evs []harness.Event) bool {
				return len(harness.Filter(evs, "button_press")) > 0
			})
			t.Cleanup(func() {
				_, _ = callAs(t, reg, other, "mouse_button_up", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 10, "y": 10})
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prep(t)
			time.Sleep(50 * time.Millisecond)
			xl.Reset()
			r, err := callAs(t, reg, tc.sess, "mouse_drag", drag)
			if code := refusalCode(err); code != authz.CodeInvalidArguments || !strings.Contains(err.Error(), "mouse_button_down first") {
				t.Fatalf("mouse_drag = %v, %v; want invalid_arguments naming mouse_button_down", r, err)
			}
			time.Sleep(100 * time.Millisecond)
			if evs := harness.Filter(xl.Events(), "motion", "button_press", "button_release"); len(evs) != 0 {
				t.Errorf("refused mouse_drag sent events: %+v", evs)
			}
		})
	}
}

// masters returns the names of the display's master pointers (xinput list --short).
func masters(t *testing.T) []string {
	t.Helper()
	var out []string
	for line := range strings.SplitSeq(harness.Command(t, "xinput", "list", "--short"), "\n") {
		if strings.Contains(line, "master pointer") {
			name, _, _ := strings.Cut(strings.TrimLeft(line, "⎡⎜↳ "), "\tid=")
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}

// TestParallelMouseDrag: three drags at once into one xevlog window that logs XI2 events:
// each comes from a master pointer of its own (neither the person's nor the session's),
// presses once, moves with its button held and releases once at its end point; the
// motions of the drags interleave; the core pointer did not move; the temporary master
// pointers are gone afterwards (xinput list).
func TestParallelMouseDrag(t *testing.T) {
	harness.Require(t)
	testkitRequire(t, "xinput")
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "parallel-drag", Width: 400, Height: 300, XI2: true})
	windowOfTest(t, b, xl.Window)
	sess := sharedSession("pdrag")
	before := masters(t)
	harness.Command(t, "xdotool", "mousemove", "5", "5")
	xl.Reset()
	drags := []map[string]any{
		{"from_x": 20, "from_y": 40, "to_x": 300, "to_y": 40, "duration_ms": 400, "steps": 20},
		{"path": [][]float64{{20, 120}, {150, 160}, {300, 120}}, "duration_ms": 400, "steps": 20},
		{"from_x": 300, "from_y": 250, "to_x": 40, "to_y": 200, "button": "middle", "duration_ms": 400, "steps": 20},
	}
	ends := [][2]int{{300, 40}, {300, 120}, {40, 200}}
	r, err := callAs(t, reg, sess, "parallel_mouse_drag", map[string]any{"pid": xl.PID, "window_id": xl.Window, "drags": drags})
	if err != nil {
		t.Fatalf("parallel_mouse_drag: %v", err)
	}
	st := structured(t, r)
	if del := asObject(t, st["delivery"]); del["mode"] != "background" || del["delivered_count"] != 60.0 {
		t.Errorf("result = %v, want background with 60 motions", st)
	}
	if d := details(t, r); d["verified"] != true {
		t.Errorf("details = %v, want every pointer read back at its end", d)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) >= 3 })
	evs = harness.Filter(evs, "button_press", "motion", "button_release")
	byDev := map[int][]int{} // device → indexes into evs
	for i, e := range evs {
		byDev[e.Device] = append(byDev[e.Device], i)
	}
	if len(byDev) != 3 {
		t.Fatalf("events from %d devices, want 3: %+v", len(byDev), evs)
	}
	var order [][]int
	for dev, idx := range byDev {
		if dev == 0 || dev == 2 {
			t.Errorf("events from device %d: want a temporary master, not the core pointer", dev)
		}
		// The pointer's way to the start point comes before the press.
		start := slices.IndexFunc(idx, func(i int) bool { return evs[i].Type == "button_press" })
		last := evs[idx[len(idx)-1]]
		if start < 0 || last.Type != "button_release" {
			t.Fatalf("device %d: no press, or %s last; want a press, then a release last: %+v", dev, last.Type, evs)
		}
		for _, i := range idx[:start] {
			if evs[i].Type != "motion" {
				t.Errorf("device %d: %+v before its press", dev, evs[i])
			}
		}
		idx = idx[start:]
		var presses, motions int
		for _, i := range idx {
			switch e := evs[i]; e.Type {
			case "button_press":
				presses++
			case "motion":
				motions++
				if e.State&(0x100|0x200) == 0 {
					t.Errorf("device %d: motion without its button held: %+v", dev, e)
				}
			}
		}
		if presses != 1 || motions < 20 {
			t.Errorf("device %d: %d presses, %d motions after it; want 1 and ≥20", dev, presses, motions)
		}
		end := [2]int{last.X, last.Y}
		if !slices.Contains(ends, end) {
			t.Errorf("device %d released at %v, not at an end point %v", dev, end, ends)
		}
		order = append(order, idx)
	}
	// Interleaved: every drag's motions overlap every other's in the order the server
	// delivered them.
	for i := range order {
		for j := range order {
			if i == j {
				continue
			}
			a, b := order[i], order[j]
			if !slices.ContainsFunc(b, func(k int) bool { return k > a[1] && k < a[len(a)-2] }) {
				t.Errorf("drag %d's motions do not interleave with drag %d's: %v / %v", i, j, a, b)
			}
		}
	}
	if loc := harness.Command(t, "xdotool", "getmouselocation"); !strings.HasPrefix(loc, "x:5 y:5 ") {
		t.Errorf("the core pointer moved: %s", loc)
	}
	if after := masters(t); !slices.Equal(after, before) {
		t.Errorf("master pointers after = %q, want %q as before", after, before)
	}
}

// TestParallelMouseDragRefusals: what parallel_mouse_drag refuses before anything is sent:
// xevlog sees no pointer event, and no master pointer is left behind.
func TestParallelMouseDragRefusals(t *testing.T) {
	testkitRequire(t, "xinput")
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "parallel-refused", Width: 300, Height: 200, XI2: true})
	win := windowOfTest(t, b, xl.Window)
	seg := func(y int) map[string]any {
		return map[string]any{"from_x": 10, "from_y": y, "to_x": 200, "to_y": y, "duration_ms": 50}
	}
	call := func(drags ...map[string]any) map[string]any {
		return map[string]any{"pid": xl.PID, "window_id": xl.Window, "drags": drags}
	}
	nine := make([]map[string]any, 9)
	for i := range nine {
		nine[i] = seg(10 + 10*i)
	}
	before := masters(t)
	tests := []struct {
		name string
		args map[string]any
		code authz.Code
		want string
	}{
		{"one item", call(seg(20)), authz.CodeInvalidArguments, "2–8"},
		{"nine items", call(nine...), authz.CodeInvalidArguments, "2–8"},
		{"waypoint outside the window", call(seg(20), map[string]any{"path": [][]float64{{10, 50}, {120, 80}, {310, 90}}}), authz.CodeInvalidArguments, "outside window"},
		{"function path", call(seg(20), map[string]any{"fn": "x", "x_from": 0, "x_to": 100}), authz.CodeInvalidArguments, "not supported"},
		{"no window", map[string]any{"drags": []map[string]any{seg(20), seg(40)}}, authz.CodeInvalidArguments, "one window"},
		{"foreground", map[string]any{"pid": xl.PID, "window_id": xl.Window, "delivery_mode": "foreground", "drags": []map[string]any{seg(20), seg(40)}}, authz.CodeInvalidArguments, "foreground"},
	}
	sess := sharedSession("pdrag-refused")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xl.Reset()
			r, err := callAs(t, reg, sess, "parallel_mouse_drag", tc.args)
			if code := refusalCode(err); code != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parallel_mouse_drag = %v, %v; want %s saying %q", r, err, tc.code, tc.want)
			}
		})
	}
	t.Run("covered point", func(t *testing.T) {
		// A window of another process over the lower half: a path into it is refused
		// target_covered, although its start and end lie on the uncovered part.
		cover := coverWith(t, &x11.Rect{X: win.Frame.X + 150, Y: win.Frame.Y + 120, Width: 100, Height: 50})
		xl.Reset()
		cover.Reset()
		path := map[string]any{"path": [][]float64{{20, 100}, {200, 150}, {20, 190}}, "duration_ms": 50}
		r, err := callAs(t, reg, sess, "parallel_mouse_drag", call(seg(20), path))
		if code := refusalCode(err); code != authz.CodeTargetCovered {
			t.Fatalf("parallel_mouse_drag over a covered point = %v, %v; want target_covered", r, err)
		}
		time.Sleep(100 * time.Millisecond)
		if evs := harness.Filter(cover.Events(), "button_press", "motion"); len(evs) != 0 {
			t.Errorf("the covering window got events: %+v", evs)
		}
	})
	t.Run("no master pointers", func(t *testing.T) {
		reg := tool.NewRegistry()
		desktop.Register(reg, b, desktop.Options{NoSessionDevices: true})
		r, err := callAs(t, reg, sharedSession("pdrag-nodev"), "parallel_mouse_drag", call(seg(20), seg(40)))
		if code := refusalCode(err); code != authz.CodeBackgroundUnavailable {
			t.Fatalf("parallel_mouse_drag without session devices = %v, %v; want background_unavailable", r, err)
		}
	})
	time.Sleep(100 * time.Millisecond)
	if evs := harness.Filter(xl.Events(), "button_press", "motion", "button_release"); len(evs) != 0 {
		t.Errorf("refused calls sent events: %+v", evs)
	}
	if after := masters(t); !slices.Equal(after, before) {
		t.Errorf("master pointers after = %q, want %q as before", after, before)
	}
}

// testkitRequire skips (or fails under CI) when program is missing.
func testkitRequire(t *testing.T, program string) {
	t.Helper()
	harness.Require(t)
	testkit.Require(t, testkit.Missing(program))
}
