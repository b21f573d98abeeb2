package desktop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// setup registers the tools against the harness display.
func setup(t *testing.T) (*tool.Registry, *x11.Backend) {
	t.Helper()
	harness.Require(t)
	b, err := x11.Open(t.Context(), x11.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	reg := tool.NewRegistry()
	desktop.Register(reg, b, desktop.Options{})
	return reg, b
}

func call(t *testing.T, reg *tool.Registry, name string, args any) (*tool.Result, error) {
	t.Helper()
	tl, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("tool %q not registered", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := args.(string); ok {
		raw = json.RawMessage(s)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	return tl.Handler(ctx, &tool.Call{Name: name, JSON: raw, Session: ownSession("test", "unrestricted")})
}

func structured(t *testing.T, r *tool.Result) map[string]any {
	t.Helper()
	return asObject(t, r.Structured)
}

// details returns a result's details (what the tool reports beyond its contract shape).
func details(t *testing.T, r *tool.Result) map[string]any {
	t.Helper()
	return asObject(t, r.Details)
}

func asObject(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func refusalCode(err error) authz.Code {
	var r *authz.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return ""
}

func TestNoDisplayRefusesUnsupported(t *testing.T) {
	reg := tool.NewRegistry()
	desktop.Register(reg, nil, desktop.Options{Unavailable: fmt.Errorf("%w: DISPLAY is not set", x11.ErrNoDisplay)})
	if len(reg.Tools()) < 23 {
		t.Fatalf("%d tools registered, want ≥23", len(reg.Tools()))
	}
	for _, tl := range reg.Tools() {
		_, err := tl.Handler(t.Context(), &tool.Call{Name: tl.Name, JSON: json.RawMessage("{}"), Session: ownSession("s", "m")})
		if code := refusalCode(err); code != authz.CodeUnsupported || !strings.Contains(err.Error(), "DISPLAY is not set") {
			t.Errorf("%s: %v, want unsupported naming the reason", tl.Name, err)
		}
	}
	caps := reg.Capabilities()
	if len(caps) == 0 || caps[0].Name != "x11" || caps[0].Available {
		t.Errorf("capabilities = %+v, want x11 unavailable first", caps)
	}
}

func TestSchemasAreStrictObjects(t *testing.T) {
	reg := tool.NewRegistry()
	desktop.Register(reg, nil, desktop.Options{})
	want := []string{"list_windows", "list_apps", "get_screen_size", "get_cursor_position", "get_desktop_state", "zoom",
		"click", "double_click", "right_click", "move_cursor", "mouse_button_down", "mouse_button_up", "drag", "scroll",
		"type_text", "press_key", "hotkey", "launch_app", "kill_app", "bring_to_front", "set_window_frame",
		"clipboard_read", "clipboard_write"}
	for _, name := range want {
		tl, ok := reg.Lookup(name)
		if !ok {
			t.Errorf("%s not registered", name)
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		if s["type"] != "object" || s["additionalProperties"] != false {
			t.Errorf("%s schema = %s", name, tl.InputSchema)
		}
	}
}

func TestRefusalsBeforeEffects(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	dead := deadPID(t)
	tests := []struct {
		name string
		tool string
		args any
		code authz.Code
	}{
		{"desktop coords need scope", "click", map[string]any{"x": 10, "y": 10}, authz.CodeDesktopCoordinateScopeRequired},
		{"bad window id", "click", map[string]any{"pid": xl.PID, "window_id": 12345, "x": 1, "y": 1}, authz.CodeWindowNotFound},
		{"pid does not own window", "click", map[string]any{"pid": os.Getpid(), "window_id": xl.Window, "x": 1, "y": 1}, authz.CodeWindowNotFound},
		{"dead pid", "click", map[string]any{"pid": dead, "window_id": xl.Window, "x": 1, "y": 1}, authz.CodeWindowNotFound},
		{"window_id without pid", "click", map[string]any{"window_id": xl.Window, "x": 1, "y": 1}, authz.CodeInvalidArguments},
		{"negative window coordinate", "click", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": -1, "y": 1}, authz.CodeInvalidArguments},
		{"huge desktop coordinate", "click", map[string]any{"scope": "desktop", "x": 1e9, "y": 1}, authz.CodeInvalidArguments},
		{"off-screen desktop coordinate", "move_cursor", map[string]any{"scope": "desktop", "x": 5000, "y": 1}, authz.CodeInvalidArguments},
		{"count too high", "click", map[string]any{"scope": "desktop", "x": 1, "y": 1, "count": 4}, authz.CodeInvalidArguments},
		{"unknown button", "click", map[string]any{"scope": "desktop", "x": 1, "y": 1, "button": "thumb"}, authz.CodeInvalidArguments},
		{"unknown field", "click", map[string]any{"scope": "desktop", "x": 1, "y": 1, "force": true}, authz.CodeInvalidArguments},
		{"unknown key", "press_key", map[string]any{"key": "ctrl+nosuchkey"}, authz.CodeInvalidArguments},
		{"unknown modifier", "press_key", map[string]any{"key": "a", "modifier": []string{"hyper-ctrl"}}, authz.CodeInvalidArguments},
		{"hotkey one key", "hotkey", map[string]any{"keys": []string{"a"}}, authz.CodeInvalidArguments},
		{"control char", "type_text", map[string]any{"text": "a\x07b"}, authz.CodeInvalidArguments},
		{"scroll direction", "scroll", map[string]any{"scope": "desktop", "x": 1, "y": 1, "direction": "sideways"}, authz.CodeInvalidArguments},
		{"scroll amount", "scroll", map[string]any{"scope": "desktop", "x": 1, "y": 1, "direction": "up", "amount": 51}, authz.CodeInvalidArguments},
		{"drag steps", "drag", map[string]any{"scope": "desktop", "from_x": 1, "from_y": 1, "to_x": 2, "to_y": 2, "steps": 0}, authz.CodeInvalidArguments},
		{"zoom outside window", "zoom", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x1": 0, "y1": 0, "x2": 4000, "y2": 10}, authz.CodeInvalidArguments},
		{"zoom bad window", "zoom", map[string]any{"pid": xl.PID, "window_id": 99, "x1": 0, "y1": 0, "x2": 10, "y2": 10}, authz.CodeWindowNotFound},
		{"kill dead pid", "kill_app", map[string]any{"pid": dead}, authz.CodeInvalidArguments},
		{"launch missing program", "launch_app", map[string]any{"name": "no-such-program-xyz"}, authz.CodeInvalidArguments},
		{"launch relative path", "launch_app", map[string]any{"launch_path": "bin/sh"}, authz.CodeInvalidArguments},
		{"frame of bad window", "set_window_frame", map[string]any{"pid": xl.PID, "window_id": 7, "width": 10}, authz.CodeWindowNotFound},
		{"not an object", "list_windows", `[1,2]`, authz.CodeInvalidArguments},
		{"max_dimension", "get_desktop_state", map[string]any{"max_dimension": 10}, authz.CodeInvalidArguments},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xl.Reset()
			r, err := call(t, reg, tc.tool, tc.args)
			if code := refusalCode(err); code != tc.code {
				t.Fatalf("%s(%v) = %v, %v; want refusal %s", tc.tool, tc.args, r, err, tc.code)
			}
			time.Sleep(20 * time.Millisecond)
			if evs := harness.Filter(xl.Events(), "button_press", "key_press"); len(evs) != 0 {
				t.Errorf("refused call had effects: %+v", evs)
			}
		})
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := p.Wait()
	return st.Pid()
}

func TestClickThroughTool(t *testing.T) {
	reg, b := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	xl.Reset()
	r, err := call(t, reg, "double_click", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 30, "y": 40})
	if err != nil {
		t.Fatalf("double_click: %v", err)
	}
	st := details(t, r)
	if st["route"] != "xtest" || st["verified"] != true {
		t.Errorf("details = %v, want route xtest verified", st)
	}
	// The contract shape: closed, the route by the contract's name, two clicks delivered.
	c := structured(t, r)
	dl, _ := c["delivery"].(map[string]any)
	if c["effect"] != "unverifiable" || c["route"] != "global_input" || dl["delivered_count"] != float64(2) || len(c) > 5 {
		t.Errorf("structured = %v, want effect unverifiable, route global_input, 2 delivered, nothing else", c)
	}
	for k := range c {
		if k != "effect" && k != "route" && k != "delivery" && k != "evidence" && k != "escalation" {
			t.Errorf("structured has %q, outside the contract's action shape", k)
		}
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) == 2 })
	for _, e := range harness.Filter(evs, "button_press", "button_release") {
		if e.X != 30 || e.Y != 40 || e.Button != 1 {
			t.Errorf("event %+v, want button 1 at (30,40)", e)
		}
	}
	_ = b
}

func TestCaptureTools(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200, Color: "00ff00"})
	r, err := call(t, reg, "get_desktop_state", map[string]any{"max_dimension": 640})
	if err != nil {
		t.Fatal(err)
	}
	st := structured(t, r)
	if st["width"] != 640.0 || st["height"] != 400.0 || st["scale"] != 0.5 || len(r.Content) != 2 || !r.Content[1].IsImage() {
		t.Errorf("get_desktop_state structured = %v", st)
	}
	r, err = call(t, reg, "zoom", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x1": 10, "y1": 10, "x2": 110, "y2": 60})
	if err != nil {
		t.Fatal(err)
	}
	if st := structured(t, r); st["width"] != 100.0 || st["height"] != 50.0 || st["scale"] != 1.0 {
		t.Errorf("zoom structured = %v", st)
	}
}

func TestTypeTextAndHotkeyThroughTools(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	xl.Reset()
	if _, err := call(t, reg, "type_text", map[string]any{"pid": xl.PID, "window_id": xl.Window, "text": "hé→"}); err != nil {
		t.Fatal(err)
	}
	// Every key typed is released before the log is reset, so that no late release of the
	// text is counted as the hotkey's.
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(charsOf(evs)) >= 3 && len(harness.Filter(evs, "key_release")) == len(harness.Filter(evs, "key_press"))
	})
	if got := strings.Join(charsOf(evs), ""); got != "hé→" {
		t.Errorf("typed %q, want %q", got, "hé→")
	}
	xl.Reset()
	if _, err := call(t, reg, "hotkey", map[string]any{"pid": xl.PID, "window_id": xl.Window, "keys": []string{"ctrl", "alt", "x"}}); err != nil {
		t.Fatal(err)
	}
	evs = xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "key_release")) == 3 })
	if p := harness.Filter(evs, "key_press"); len(p) != 3 || p[2].Keysym != 0x78 || p[2].State&(4|8) != 12 {
		t.Errorf("hotkey presses = %+v, want x with Control|Mod1", p)
	}
}

func charsOf(evs []harness.Event) []string {
	var out []string
	for _, e := range harness.Filter(evs, "key_press") {
		if e.Char != "" {
			out = append(out, e.Char)
		}
	}
	return out
}

func TestAppsAndClipboardTools(t *testing.T) {
	reg, b := setup(t)
	sess := ownSession("s", "m")
	tl, _ := reg.Lookup("launch_app")
	r, err := tl.Handler(t.Context(), &tool.Call{Name: "launch_app", JSON: json.RawMessage(`{"name":"xterm","additional_arguments":["-title","tooltest"]}`), Session: sess})
	if err != nil {
		t.Fatal(err)
	}
	st := structured(t, r)
	pid := int(st["pid"].(float64))
	if !sess.Launched(pid) || st["verified"] != true {
		t.Fatalf("launch_app = %v; session launched %v", st, sess.LaunchedPIDs())
	}
	wid := st["window_ids"].([]any)[0].(float64)
	r, err = call(t, reg, "set_window_frame", map[string]any{"pid": pid, "window_id": wid, "x": 50, "y": 60, "width": 400, "height": 300})
	if err != nil {
		t.Fatal(err)
	}
	if st := details(t, r); st["verified"] != true {
		t.Logf("set_window_frame not exact (xterm snaps to its character grid): %v", st)
	}
	if r, err = call(t, reg, "bring_to_front", map[string]any{"pid": pid, "window_id": wid}); err != nil || structured(t, r)["verified"] != true {
		t.Errorf("bring_to_front = %v, %v", r, err)
	}
	if r, err = call(t, reg, "list_apps", map[string]any{}); err != nil || !strings.Contains(r.Content[0].Text, "xterm") {
		t.Errorf("list_apps = %v, %v", r, err)
	}
	if r, err = call(t, reg, "kill_app", map[string]any{"pid": pid}); err != nil || structured(t, r)["verified"] != true {
		t.Errorf("kill_app = %v, %v", r, err)
	}
	if r, err = call(t, reg, "clipboard_write", map[string]any{"text": "über"}); err != nil || details(t, r)["verified"] != true {
		t.Errorf("clipboard_write = %v, %v", r, err)
	}
	if got := harness.Command(t, "xclip", "-selection", "clipboard", "-o"); got != "über" {
		t.Errorf("xclip -o = %q", got)
	}
	if r, err = call(t, reg, "clipboard_read", map[string]any{"include_text": true}); err != nil || r.Content[0].Text != "über" {
		t.Errorf("clipboard_read = %v, %v", r, err)
	}
	if caps := reg.Capabilities(); len(caps) < 5 || !caps[0].Available || !caps[4].Available {
		t.Errorf("capabilities = %+v", caps)
	}
	_ = b
}

func TestRegistryReleaseLetsGo(t *testing.T) {
	reg, _ := setup(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	if _, err := call(t, reg, "mouse_button_down", map[string]any{"pid": xl.PID, "window_id": xl.Window, "x": 5, "y": 5}); err != nil {
		t.Fatal(err)
	}
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_press")) == 1 })
	reg.Release(t.Context())
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) == 1 })
}

// ownSession returns the state of a session whose display is its own, as the test
// display is: its input goes through the core devices unless a call asks for background.
func ownSession(label, mode string) *tool.Session {
	s := tool.NewSession(label, mode)
	s.OwnsDisplay = true
	return s
}

// TestClipboardWriteImageAndFile: an image file and a file reference reach the clipboard
// as other clients read it (xclip, by target); malformed and unsafe paths are refused
// before the clipboard changes.
func TestClipboardWriteImageAndFile(t *testing.T) {
	reg, _ := setup(t)
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pngPath := filepath.Join(dir, "dot.png")
	if err := os.WriteFile(pngPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := call(t, reg, "clipboard_write", map[string]any{"image_path": pngPath})
	if err != nil {
		t.Fatalf("clipboard_write image_path: %v", err)
	}
	if st := structured(t, r); st["written_type"] != "image/png" || st["supported"] != true {
		t.Errorf("structured = %v", st)
	}
	if got := harness.Command(t, "xclip", "-selection", "clipboard", "-t", "image/png", "-o"); got != buf.String() {
		t.Errorf("xclip -t image/png read %d bytes, want the file's %d", len(got), buf.Len())
	}
	// clipboard_read reports what is on offer: an image, no text.
	if r, err := call(t, reg, "clipboard_read", map[string]any{"include_text": true}); err != nil {
		t.Errorf("clipboard_read: %v", err)
	} else if st := structured(t, r); fmt.Sprint(st["types"]) != "[image/png]" || st["text"] != nil {
		t.Errorf("clipboard_read with an image = %v, want types [image/png] and no text", st)
	}

	textPath := filepath.Join(dir, "notes with space.txt")
	if err := os.WriteFile(textPath, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, reg, "clipboard_write", map[string]any{"file_path": textPath}); err != nil {
		t.Fatalf("clipboard_write file_path: %v", err)
	}
	want := "file://" + strings.ReplaceAll(textPath, " ", "%20") + "\r\n"
	if got := harness.Command(t, "xclip", "-selection", "clipboard", "-t", "text/uri-list", "-o"); got != want {
		t.Errorf("xclip -t text/uri-list = %q, want %q", got, want)
	}
	if r, err := call(t, reg, "clipboard_read", map[string]any{}); err != nil {
		t.Errorf("clipboard_read: %v", err)
	} else if st := structured(t, r); fmt.Sprint(st["types"]) != "[text/plain text/uri-list x-special/gnome-copied-files]" || st["text"] != nil {
		t.Errorf("clipboard_read with a file reference = %v, want its three types and no text without include_text", st)
	}

	link := filepath.Join(dir, "link.png")
	if err := os.Symlink(pngPath, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"image_path": "dot.png"},
		{"image_path": dir + "/../dot.png"},
		{"image_path": link},
		{"image_path": textPath},
		{"image_path": dir},
		{"text": "a", "file_path": textPath},
		{},
	} {
		if _, err := call(t, reg, "clipboard_write", args); err == nil {
			t.Errorf("clipboard_write %v succeeded", args)
		}
	}
	if got := harness.Command(t, "xclip", "-selection", "clipboard", "-t", "text/uri-list", "-o"); got != want {
		t.Errorf("after the refusals the clipboard holds %q, want the file reference still", got)
	}
}
