package desktop

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

var win = &x11.Window{ID: 0x400001, PID: 42, Frame: x11.Rect{X: 100, Y: 50, Width: 400, Height: 300}}

var clickArgTests = []struct {
	name string
	args string
	win  *x11.Window
	want x11.Point
	code authz.Code
}{
	{"window relative", `{"pid":42,"window_id":4194305,"x":10,"y":20}`, win, x11.Point{X: 110, Y: 70}, ""},
	{"rounded", `{"pid":42,"window_id":4194305,"x":10.6,"y":20.2}`, win, x11.Point{X: 111, Y: 70}, ""},
	{"desktop", `{"scope":"desktop","x":5,"y":6}`, nil, x11.Point{X: 5, Y: 6}, ""},
	{"desktop needs scope", `{"x":5,"y":6}`, nil, x11.Point{}, authz.CodeDesktopCoordinateScopeRequired},
	{"outside window", `{"pid":42,"window_id":4194305,"x":400,"y":20}`, win, x11.Point{}, authz.CodeInvalidArguments},
	{"negative", `{"pid":42,"window_id":4194305,"x":-1,"y":20}`, win, x11.Point{}, authz.CodeInvalidArguments},
	{"huge", `{"scope":"desktop","x":1e300,"y":0}`, nil, x11.Point{}, authz.CodeInvalidArguments},
	{"missing y", `{"scope":"desktop","x":1}`, nil, x11.Point{}, authz.CodeInvalidArguments},
	{"scope with pid", `{"scope":"desktop","pid":42,"x":1,"y":1}`, nil, x11.Point{}, authz.CodeInvalidArguments},
	{"window without pid", `{"window_id":4194305,"x":1,"y":1}`, nil, x11.Point{}, authz.CodeInvalidArguments},
	{"bad scope", `{"scope":"screen","x":1,"y":1}`, nil, x11.Point{}, authz.CodeInvalidArguments},
	{"string x", `{"scope":"desktop","x":"1","y":1}`, nil, x11.Point{}, authz.CodeInvalidArguments},
	{"unknown field", `{"scope":"desktop","x":1,"y":1,"z":3}`, nil, x11.Point{}, authz.CodeInvalidArguments},
	{"window id too big", `{"pid":1,"window_id":4294967296,"x":1,"y":1}`, nil, x11.Point{}, authz.CodeInvalidArguments},
}

// decodeClick runs everything click does before it touches the display, with win standing
// in for the resolved window.
func decodeClick(raw string, w *x11.Window) (x11.Point, error) {
	var a pointArgs
	if err := tool.DecodeArgs(json.RawMessage(raw), &a); err != nil {
		return x11.Point{}, err
	}
	if err := a.targetArgs.check(); err != nil {
		return x11.Point{}, err
	}
	if _, err := x11.ParseButton(a.Button); err != nil {
		return x11.Point{}, refusal(err)
	}
	if _, err := x11.ParseModifiers(a.Modifier); err != nil {
		return x11.Point{}, refusal(err)
	}
	if a.PID == nil {
		w = nil
	}
	return toRoot(w, a.Scope, 1280, 800, a.X, a.Y)
}

func TestClickArgs(t *testing.T) {
	for _, tc := range clickArgTests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := decodeClick(tc.args, tc.win)
			var r *authz.Refusal
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("decodeClick(%s) = %v", tc.args, err)
			case tc.code != "" && (!errors.As(err, &r) || r.Code != tc.code):
				t.Fatalf("decodeClick(%s) = %v, %v, want refusal %s", tc.args, p, err, tc.code)
			case tc.code == "" && p != tc.want:
				t.Fatalf("decodeClick(%s) = %v, want %v", tc.args, p, tc.want)
			}
		})
	}
}

func FuzzClickArgs(f *testing.F) {
	for _, tc := range clickArgTests {
		f.Add(tc.args)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := decodeClick(raw, win)
		if err != nil {
			var r *authz.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("decodeClick(%q) error %v is not a refusal", raw, err)
			}
			return
		}
		if p.X < 0 || p.Y < 0 || p.X >= 1280 || p.Y >= 800 {
			t.Fatalf("decodeClick(%q) = %v: off screen but accepted", raw, p)
		}
	})
}

func FuzzKeyArgs(f *testing.F) {
	for _, s := range []string{`{"key":"ctrl+shift+t"}`, `{"key":"Return","modifier":["alt"]}`, `{"key":"U+2192"}`, `{"key":""}`, `{"key":"a","modifier":["a"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var a struct {
			targetArgs
			Key      string   `json:"key"`
			Modifier []string `json:"modifier"`
		}
		if err := tool.DecodeArgs(json.RawMessage(raw), &a); err != nil {
			return
		}
		combo, err := keyCombo(a.Key, a.Modifier)
		var r *authz.Refusal
		if err != nil && !errors.As(err, &r) {
			t.Fatalf("keyCombo error %v is not a refusal", err)
		}
		if err == nil && len(combo.Mods)+len(combo.Keys) == 0 {
			t.Fatal("empty combination accepted")
		}
	})
}

// TestResolveKnownWindow: the window the authorizer decided on is the handler's target
// without another lookup (a nil backend would fail any), and only when it is the one the
// arguments name.
func TestResolveKnownWindow(t *testing.T) {
	pid, wid, other := 4242, uint32(0x400001), uint32(0x400002)
	known := &x11.Window{ID: wid, PID: pid, Mapped: true, Frame: x11.Rect{X: 10, Y: 20, Width: 300, Height: 200}}
	for _, tt := range []struct {
		name string
		t    targetArgs
	}{
		{name: "pid and window_id", t: targetArgs{PID: &pid, WindowID: &wid}},
		{name: "pid alone", t: targetArgs{PID: &pid}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := resolve(t.Context(), nil, known, tt.t)
			if err != nil || w == nil || *w != *known || w == known {
				t.Fatalf("resolve(known) = %v, %v, want a copy of %v", w, err, *known)
			}
		})
	}
	otherPID := pid + 1
	if _, err := resolve(t.Context(), nil, known, targetArgs{PID: &otherPID, WindowID: &other}); err == nil {
		t.Fatalf("resolve(another window) = nil error, want a lookup that fails for a process that is not running")
	}
}
