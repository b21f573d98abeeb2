package desktop_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/tool"
)

// The contract's success shapes of the agent-cursor tools (0.7.0), closed: decoding a
// result into them with unknown fields disallowed, then finding no nil pointer, proves the
// result has exactly the contract's fields with the contract's types.
type (
	contractMotion struct {
		StartHandle       *float64 `json:"start_handle"`
		EndHandle         *float64 `json:"end_handle"`
		ArcSize           *float64 `json:"arc_size"`
		ArcFlow           *float64 `json:"arc_flow"`
		Spring            *float64 `json:"spring"`
		GlideDurationMS   *float64 `json:"glide_duration_ms"`
		DwellAfterClickMS *float64 `json:"dwell_after_click_ms"`
		IdleHideMS        *float64 `json:"idle_hide_ms"`
		TurnRadius        *float64 `json:"turn_radius"`
	}
	contractTheme struct {
		ID            *string         `json:"id"`
		Version       *string         `json:"version"`
		Profile       *string         `json:"profile"`
		ReducedMotion *string         `json:"reduced_motion"`
		Fallback      json.RawMessage `json:"fallback"` // string or null, but present
	}
	contractEnabled struct {
		Session *string `json:"session"`
		Enabled *bool   `json:"enabled"`
	}
	contractMotionResult struct {
		Session *string         `json:"session"`
		Motion  *contractMotion `json:"motion"`
	}
	contractThemeResult struct {
		Session *string        `json:"session"`
		Theme   *contractTheme `json:"theme"`
	}
	contractState struct {
		Session  *string `json:"session"`
		Enabled  *bool   `json:"enabled"`
		Position *struct {
			X *float64 `json:"x"`
			Y *float64 `json:"y"`
		} `json:"position"`
		Theme       *contractTheme `json:"theme"`
		VisualState *struct {
			RequestedAction *string  `json:"requested_action"`
			ResolvedAction  *string  `json:"resolved_action"`
			Modifiers       []string `json:"modifiers"`
			Phase           *string  `json:"phase"`
			Frame           *uint64  `json:"frame"`
			PreemptedCount  *uint64  `json:"preempted_count"`
		} `json:"visual_state"`
		Motion *contractMotion `json:"motion"`
	}
)

var visualActions = []string{"idle", "observe", "click", "drag", "scroll", "text", "key", "navigate", "app", "transfer", "record", "system"}

// contractDecode decodes r's structured content into v (a pointer to one of the shapes
// above), failing on an unknown field or a missing one.
func contractDecode(t *testing.T, r *tool.Result, v any) {
	t.Helper()
	raw, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("structured content %s does not fit the contract: %v", raw, err)
	}
	if missing := missingFields(reflect.ValueOf(v).Elem(), ""); len(missing) > 0 {
		t.Fatalf("structured content %s lacks the contract's required %v", raw, missing)
	}
	if th := reflect.ValueOf(v).Elem().FieldByName("Theme"); th.IsValid() {
		theme := th.Interface().(*contractTheme)
		if !slices.Contains([]string{"auto", "on", "off"}, *theme.ReducedMotion) {
			t.Errorf("theme.reduced_motion %q is not auto, on or off", *theme.ReducedMotion)
		}
		if f := string(theme.Fallback); f != "null" && !strings.HasPrefix(f, `"`) {
			t.Errorf("theme.fallback %s is neither a string nor null", f)
		}
	}
	if st, ok := v.(*contractState); ok {
		if !slices.Contains(visualActions, *st.VisualState.RequestedAction) || !slices.Contains(visualActions, *st.VisualState.ResolvedAction) {
			t.Errorf("visual_state actions %q/%q outside the contract's enum", *st.VisualState.RequestedAction, *st.VisualState.ResolvedAction)
		}
	}
}

// missingFields lists the nil pointers, slices and raw messages below v.
func missingFields(v reflect.Value, path string) []string {
	var out []string
	for i := range v.NumField() {
		f, name := v.Field(i), path+v.Type().Field(i).Tag.Get("json")
		switch f.Kind() {
		case reflect.Pointer:
			if f.IsNil() {
				out = append(out, name)
			} else if f.Elem().Kind() == reflect.Struct {
				out = append(out, missingFields(f.Elem(), name+".")...)
			}
		case reflect.Slice:
			if f.IsNil() {
				out = append(out, name)
			}
		}
	}
	return out
}

// cursorCall calls an agent-cursor tool as sess and decodes its result into v.
func cursorCall(t *testing.T, reg *tool.Registry, sess *tool.Session, name string, args map[string]any, v any) *tool.Result {
	t.Helper()
	r, err := callAs(t, reg, sess, name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	contractDecode(t, r, v)
	return r
}

// cursorState reads get_agent_cursor_state as sess.
func cursorState(t *testing.T, reg *tool.Registry, sess *tool.Session) (contractState, map[string]any) {
	t.Helper()
	var st contractState
	r := cursorCall(t, reg, sess, "get_agent_cursor_state", map[string]any{"session": sess.Label}, &st)
	return st, details(t, r)
}

// overlayWindow is the overlay's id from a result's details.
func overlayWindow(t *testing.T, d map[string]any) uint32 {
	t.Helper()
	id, ok := d["overlay_window"].(float64) // details are read as JSON
	if !ok || id == 0 {
		t.Fatalf("no overlay window in %v", d)
	}
	return uint32(id)
}

// waitOverlay polls xwininfo until ok holds for the overlay, failing after 3 s.
func waitOverlay(t *testing.T, id uint32, what string, ok func(harness.WindowInfo) bool) harness.WindowInfo {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		wi := harness.XWinInfo(t, id)
		if ok(wi) {
			return wi
		}
		if time.Now().After(deadline) {
			t.Fatalf("overlay 0x%x: %s: xwininfo says %+v", id, what, wi)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentCursorOverlay: a session on the core devices turns its cursor on: an
// override-redirect overlay follows its pointer after move_cursor and click; the person's
// click at the overlay reaches the window below; list_windows does not show it, targeting
// it is refused, a capture of the window below paints it grey; off unmaps it; the session's
// end destroys it. Every result fits the contract's closed shape.
func TestAgentCursorOverlay(t *testing.T) {
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 220})
	w := windowOfTest(t, b, xl.Window)
	sess := ownSession("cursor-core", "unrestricted")
	defer sess.End()

	st, d := cursorState(t, reg, sess)
	if *st.Enabled || d["route"] != "none" || *st.Theme.ID != "cua.default" || *st.Session != sess.Label {
		t.Fatalf("initial state = %+v %v, want off with cua.default", st, d)
	}
	var mr contractMotionResult
	cursorCall(t, reg, sess, "set_agent_cursor_motion", map[string]any{"session": "any label", "glide_duration_ms": 0, "spring": nil}, &mr)
	if *mr.Session != "any label" || *mr.Motion.GlideDurationMS != 0 || *mr.Motion.Spring != 0.6 {
		t.Errorf("set_agent_cursor_motion = %+v, want the label echoed, glide 0, spring kept", mr)
	}
	var er contractEnabled
	r := cursorCall(t, reg, sess, "set_agent_cursor_enabled", map[string]any{"session": sess.Label, "enabled": true}, &er)
	if !*er.Enabled {
		t.Fatalf("set_agent_cursor_enabled = %+v", er)
	}
	win := overlayWindow(t, details(t, r))

	// It follows the pointer (the arrow's hotspot is its top-left pixel).
	if _, err := callAs(t, reg, sess, "move_cursor", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 60, "y": 50}); err != nil {
		t.Fatal(err)
	}
	wi := waitOverlay(t, win, "viewable at the pointer", func(wi harness.WindowInfo) bool { return wi.Viewable })
	if !wi.OverrideRedirect || wi.X != w.Frame.X+60 || wi.Y != w.Frame.Y+50 {
		t.Errorf("after move_cursor the overlay is %+v, want override-redirect at (%d,%d)", wi, w.Frame.X+60, w.Frame.Y+50)
	}
	xl.Reset()
	if _, err := callAs(t, reg, sess, "click", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 100, "y": 80}); err != nil {
		t.Fatal(err)
	}
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) > 0 })
	p := struct{ x, y int }{w.Frame.X + 100, w.Frame.Y + 80}
	waitOverlay(t, win, "at the click", func(wi harness.WindowInfo) bool { return wi.Viewable && wi.X == p.x && wi.Y == p.y })
	st, _ = cursorState(t, reg, sess)
	if *st.Position.X != float64(p.x) || *st.Position.Y != float64(p.y) || *st.VisualState.RequestedAction != "click" || *st.VisualState.Frame < 2 {
		t.Errorf("state after the click = position (%v,%v) action %q frame %d; want (%d,%d) click ≥2",
			*st.Position.X, *st.Position.Y, *st.VisualState.RequestedAction, *st.VisualState.Frame, p.x, p.y)
	}

	// The person's click where the overlay is drawn goes to the window below.
	xl.Reset()
	harness.Command(t, "xdotool", "mousemove", "--sync", fmt.Sprint(p.x+5), fmt.Sprint(p.y+10), "click", "1")
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) > 0 })
	if press := harness.Filter(evs, "button_press"); len(press) != 1 || press[0].X != 105 || press[0].Y != 90 {
		t.Errorf("a click on the overlay gave xevlog %+v, want one press at (105,90)", press)
	}

	// No tool sees it as a window, targets it or captures it.
	lr, err := callAs(t, reg, sess, "list_windows", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(lr.Structured); strings.Contains(string(raw), fmt.Sprintf(`"window_id":%d,`, win)) {
		t.Errorf("list_windows shows the overlay 0x%x: %s", win, raw)
	}
	if _, err := callAs(t, reg, sess, "click", map[string]any{"pid": os.Getpid(), "window_id": win, "x": 2, "y": 2}); refusalCode(err) != authz.CodeWindowNotFound {
		t.Errorf("click on the overlay window = %v, want window_target_not_found", err)
	}
	zr, err := callAs(t, reg, sess, "zoom", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x1": 90, "y1": 70, "x2": 140, "y2": 130})
	if err != nil {
		t.Fatal(err)
	}
	var img []byte
	for _, c := range zr.Content {
		if c.IsImage() {
			img = c.Image
		}
	}
	pic, err := png.Decode(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	// (105,90) in the window: (15,20) in the zoom, inside the arrow's fill.
	if r, g, bl, _ := pic.At(15, 20).RGBA(); r>>8 != 0x80 || g>>8 != 0x80 || bl>>8 != 0x80 {
		t.Errorf("the zoom shows %02x%02x%02x under the overlay, want the mask's grey 808080", r>>8, g>>8, bl>>8)
	}

	cursorCall(t, reg, sess, "set_agent_cursor_enabled", map[string]any{"session": sess.Label, "enabled": false}, &er)
	if wi := harness.XWinInfo(t, win); !wi.Exists || wi.Viewable {
		t.Errorf("after enabled=false the overlay is %+v, want unmapped", wi)
	}
	sess.End()
	if wi := harness.XWinInfo(t, win); wi.Exists {
		t.Errorf("after the session ended the overlay still exists: %+v", wi)
	}
}

// TestAgentCursorMotion: with a glide the overlay moves over several frames and arrives;
// reduced_motion "on" makes it jump; idle_hide_ms unmaps it after that much idleness.
func TestAgentCursorMotion(t *testing.T) {
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 400, Height: 300})
	w := windowOfTest(t, b, xl.Window)
	sess := ownSession("cursor-motion", "unrestricted")
	defer sess.End()
	var mr contractMotionResult
	cursorCall(t, reg, sess, "set_agent_cursor_motion", map[string]any{"session": sess.Label, "glide_duration_ms": 400}, &mr)
	move := func(x, y int) {
		t.Helper()
		if _, err := callAs(t, reg, sess, "move_cursor", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": x, "y": y}); err != nil {
			t.Fatal(err)
		}
	}
	move(20, 20)
	var er contractEnabled
	r := cursorCall(t, reg, sess, "set_agent_cursor_enabled", map[string]any{"session": sess.Label, "enabled": true}, &er)
	win := overlayWindow(t, details(t, r))
	waitOverlay(t, win, "shown at the pointer", func(wi harness.WindowInfo) bool { return wi.Viewable && wi.X == w.Frame.X+20 })

	st0, _ := cursorState(t, reg, sess)
	move(320, 250)
	st, _ := cursorState(t, reg, sess)
	if *st.VisualState.Phase != "gliding" {
		t.Errorf("right after the move the phase is %q, want gliding", *st.VisualState.Phase)
	}
	for deadline := time.Now().Add(3 * time.Second); *st.VisualState.Phase == "gliding"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the glide did not end within 3 s")
		}
		st, _ = cursorState(t, reg, sess)
	}
	if wi := harness.XWinInfo(t, win); wi.X != w.Frame.X+320 || wi.Y != w.Frame.Y+250 {
		t.Errorf("after the glide the overlay is at (%d,%d), want (%d,%d)", wi.X, wi.Y, w.Frame.X+320, w.Frame.Y+250)
	}
	if frames := *st.VisualState.Frame - *st0.VisualState.Frame; frames < 5 || *st.VisualState.Phase != "resting" {
		t.Errorf("the glide drew %d frames and ended %q; want several and resting", frames, *st.VisualState.Phase)
	}

	var tr contractThemeResult
	cursorCall(t, reg, sess, "set_agent_cursor_theme", map[string]any{"session": sess.Label, "theme_id": "cua-host.ring", "reduced_motion": "on"}, &tr)
	if *tr.Theme.ID != "cua-host.ring" || *tr.Theme.ReducedMotion != "on" || string(tr.Theme.Fallback) != "null" {
		t.Errorf("set_agent_cursor_theme = %+v", tr.Theme)
	}
	move(40, 30)
	// The ring's hotspot is its centre (12,12): no glide, there at once.
	if wi := harness.XWinInfo(t, win); wi.X != w.Frame.X+40-12 || wi.Y != w.Frame.Y+30-12 {
		t.Errorf("with reduced motion the overlay is at (%d,%d) right after the move, want (%d,%d)", wi.X, wi.Y, w.Frame.X+28, w.Frame.Y+18)
	}

	cursorCall(t, reg, sess, "set_agent_cursor_motion", map[string]any{"session": sess.Label, "idle_hide_ms": 150}, &mr)
	move(60, 30)
	waitOverlay(t, win, "hidden when idle", func(wi harness.WindowInfo) bool { return wi.Exists && !wi.Viewable })
	if st, d := cursorState(t, reg, sess); !*st.Enabled || d["visible"] != false || !strings.Contains(fmt.Sprint(d["hidden_reason"]), "idle") {
		t.Errorf("idle state = enabled %v, details %v", *st.Enabled, d)
	}
	move(80, 30)
	waitOverlay(t, win, "shown again by the next action", func(wi harness.WindowInfo) bool { return wi.Viewable && wi.X == w.Frame.X+80-12 })
}

// TestAgentCursorOnSessionPointer: on a shared display the session's own pointer shows the
// theme (its cursor, as XFixes reports it) once the session has one, without an overlay;
// the person's core pointer keeps its cursor; off gives the session's pointer its default
// cursor back.
func TestAgentCursorOnSessionPointer(t *testing.T) {
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	windowOfTest(t, b, xl.Window)
	sess := sharedSession("cursor-seat")
	defer sess.End()
	person := harness.CursorImage(t, 0)

	var er contractEnabled
	cursorCall(t, reg, sess, "set_agent_cursor_enabled", map[string]any{"session": sess.Label, "enabled": true}, &er)
	if _, d := cursorState(t, reg, sess); d["visible"] != false {
		t.Errorf("before the session's first action: %v, want nothing shown", d)
	}
	r, err := callAs(t, reg, sess, "click", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 30, "y": 40})
	if err != nil {
		t.Fatal(err)
	}
	if res := details(t, r); res["delivery"] != "background" {
		t.Fatalf("click = %v, want background delivery", res)
	}
	// Park the session's pointer on the desktop background, where no window defines a
	// cursor (move_cursor has no desktop-background check: no press is sent).
	if _, err := callAs(t, reg, sess, "move_cursor", map[string]any{"scope": "desktop", "x": 1275, "y": 795}); err != nil {
		t.Fatal(err)
	}
	st, d := cursorState(t, reg, sess)
	if d["route"] != "session_pointer" || d["visible"] != true || *st.Position.X != 1275 || *st.Position.Y != 795 {
		t.Fatalf("state = %+v, %v; want the session pointer's route at (1275,795)", st, d)
	}
	dev, ok := d["pointer_device"].(float64) // details are read as JSON
	if !ok {
		t.Fatalf("no pointer device in %v", d)
	}
	ptr := uint16(dev)
	if wi := harness.XWinInfo(t, overlayWindow(t, d)); wi.Viewable {
		t.Errorf("the overlay is shown while the session's own pointer carries the cursor: %+v", wi)
	}
	got := harness.CursorImage(t, ptr)
	if got.Width != 24 || got.Height != 38 || got.Xhot != 0 || got.Yhot != 0 {
		t.Errorf("the session pointer's cursor is %dx%d hot (%d,%d), want the 24x38 arrow hot (0,0)", got.Width, got.Height, got.Xhot, got.Yhot)
	}
	// (4,12) lies in the arrow's fill: the session's colour, not the outline's white.
	if c := got.CursorImage[12*int(got.Width)+4] & 0xffffff; c == 0xffffff || c == 0 {
		t.Errorf("the arrow's fill pixel is %06x, want the session's colour", c)
	}
	if now := harness.CursorImage(t, 0); now.CursorSerial != person.CursorSerial {
		t.Errorf("the person's core cursor changed: serial %d, was %d", now.CursorSerial, person.CursorSerial)
	}

	cursorCall(t, reg, sess, "set_agent_cursor_enabled", map[string]any{"session": sess.Label, "enabled": false}, &er)
	if back := harness.CursorImage(t, ptr); back.CursorSerial == got.CursorSerial || back.Width == 24 && back.Height == 38 {
		t.Errorf("after enabled=false the session pointer still shows the theme (serial %d)", back.CursorSerial)
	}
	if now := harness.CursorImage(t, 0); now.CursorSerial != person.CursorSerial {
		t.Errorf("the person's core cursor changed: serial %d, was %d", now.CursorSerial, person.CursorSerial)
	}
}

// TestAgentCursorRefusals: bad arguments are refused with invalid_arguments and a message
// naming what is accepted; the state is unchanged.
func TestAgentCursorRefusals(t *testing.T) {
	reg, _ := setup(t)
	sess := ownSession("cursor-bad", "unrestricted")
	defer sess.End()
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"no session", "get_agent_cursor_state", map[string]any{}, "session is required"},
		{"no enabled", "set_agent_cursor_enabled", map[string]any{"session": "s"}, "enabled is required"},
		{"enabled not bool", "set_agent_cursor_enabled", map[string]any{"session": "s", "enabled": "yes"}, "enabled"},
		{"empty theme", "set_agent_cursor_theme", map[string]any{"session": "s", "theme_id": ""}, "installed themes: cua.default"},
		{"reduced motion", "set_agent_cursor_theme", map[string]any{"session": "s", "theme_id": "cua.default", "reduced_motion": "sometimes"}, "auto, on or off"},
		{"glide too long", "set_agent_cursor_motion", map[string]any{"session": "s", "glide_duration_ms": 1e6}, "glide_duration_ms"},
		{"negative handle", "set_agent_cursor_motion", map[string]any{"session": "s", "start_handle": -0.5}, "start_handle"},
		{"motion not a number", "set_agent_cursor_motion", map[string]any{"session": "s", "arc_size": "big"}, "arc_size"},
		{"unknown argument", "set_agent_cursor_motion", map[string]any{"session": "s", "speed": 3}, "speed"},
		{"session not a string", "get_agent_cursor_state", map[string]any{"session": 7}, "session"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := callAs(t, reg, sess, tc.tool, tc.args)
			if refusalCode(err) != authz.CodeInvalidArguments || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%v) = %v; want invalid_arguments naming %q", tc.tool, tc.args, err, tc.want)
			}
		})
	}
	// A well-formed request for a theme that is not installed is not a malformed call.
	_, err := callAs(t, reg, sess, "set_agent_cursor_theme", map[string]any{"session": "s", "theme_id": "com.example.studio"})
	if refusalCode(err) != authz.CodeUnsupported || !strings.Contains(err.Error(), "cua.default, cua-host.contrast, cua-host.ring") {
		t.Errorf("unknown theme = %v; want unsupported naming the installed themes", err)
	}
	st, _ := cursorState(t, reg, sess)
	if *st.Enabled || *st.Theme.ID != "cua.default" || *st.Theme.ReducedMotion != "auto" || *st.Motion.GlideDurationMS != 150 || *st.Motion.StartHandle != 0.35 {
		t.Errorf("state after the refusals = %+v %+v %+v, want the defaults", *st.Enabled, *st.Theme.ID, *st.Motion.GlideDurationMS)
	}
}
