package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
)

// argTypes are the argument structs of every tool the worker registers: the desktop's, and
// the empty struct of the worker's own tools (health_report, get_config, session_info).
var argTypes = []func() any{
	func() any { return new(pointArgs) },
	func() any { return new(findCredentialsArgs) },
	func() any { return new(typeSecretArgs) },
	func() any { return new(walkArgs) },
	func() any { return new(winArgs) },
	func() any { return new(launchArgs) },
	func() any { return new(killArgs) },
	func() any { return new(frameArgs) },
	func() any { return new(sessionArgs) },
	func() any { return new(clipboardWriteArgs) },
	func() any { return new(listWindowsArgs) },
	func() any { return new(desktopStateArgs) },
	func() any { return new(zoomArgs) },
	func() any { return new(setValueArgs) },
	func() any { return new(typeTextArgs) },
	func() any { return new(pressKeyArgs) },
	func() any { return new(hotkeyArgs) },
	func() any { return new(dragArgs) },
	func() any { return new(mouseDragArgs) },
	func() any { return new(parallelDragArgs) },
	func() any { return new(scrollArgs) },
	func() any { return new(verifyArgs) },
	func() any { return new(menuArgs) },
	func() any { return new(struct{}) },
}

// decodeSeeds are arguments from the tools' tests, plus the edges of the JSON to Go
// mapping: numbers that are integers only once decoded, overflow, null, wrong types.
var decodeSeeds = []string{
	`{}`, `null`, `[]`, `{"pid":42,"window_id":4194305,"x":10,"y":20,"_mode":"x"}`,
	`{"text":"hi","pid":1}`, `{"handle":"mail","pid":1}`, `{"query":"ma","attributes":{"url":"x"}}`, `{"attributes":{"url":1}}`, `{"key":"ctrl+shift+t"}`, `{"key":"Return","modifier":["alt"]}`,
	`{"keys":["ctrl","c"]}`, `{"keys":["ctrl",1]}`, `{"modifier":null}`, `{"modifier":[]}`,
	`{"element_token":"s0123abcd:4"}`, `{"snapshot_id":"s0123abcd","element_index":0}`,
	`{"snapshot_id":"s0123abcd","element_index":"1"}`, `{"element_index":-1}`,
	`{"value":"hello"}`, `{"value":7}`, `{"value":null}`, `{"value":{"b":[1,"<&>"],"a":1.50}}`,
	`{"name":"xterm","urls":["https://example.com"],"additional_arguments":["-e","true"],"timeout_ms":0}`,
	`{"pid":1,"grace_ms":30000}`, `{"pid":1,"window_id":2,"x":1,"y":2,"width":3,"height":4}`,
	`{"x1":0,"y1":0,"x2":10.5,"y2":1e2,"format":"jpeg","quality":90}`,
	`{"max_dimension":1024,"include_windows":false,"format":"png"}`,
	`{"from_x":1,"from_y":2,"to_x":3,"to_y":4,"duration_ms":300,"steps":20,"button":"left"}`,
	`{"direction":"down","amount":3,"by":"line","x":1,"y":1}`,
	`{"include_screenshot":true,"max_elements":50,"max_depth":8,"query":"ok","timeout_ms":100}`,
	`{"scope":"desktop","x":1e300,"y":0}`, `{"window_id":4294967296}`, `{"window_id":-1}`,
	`{"window_id":-0}`, `{"pid":1.0}`, `{"pid":1e3}`, `{"pid":1.5}`, `{"pid":9007199254740993}`,
	`{"pid":1152921504606846976}`, `{"pid":9223372036854775807}`, `{"pid":-9223372036854775808}`,
	`{"pid":1e21}`, `{"pid":1e-7}`, `{"count":true}`, `{"text":5}`, `{"text":null}`,
	`{"session":null,"pid":null,"x":null}`, `{"pid":[1]}`, `{"pid":{"a":1}}`, `{"Pid":1}`,
	`{"pi\u212Ad":1}`, `{"targetArgs":{}}`, `{"zz":1,"aa":2}`, `{"x":"1","y":true,"pid":"p"}`,
	`{"text":"\ud800"}`, `{"text":"a\u0000b"}`, `{"urls":["a",null,"b"]}`,
	`{"expect":[{"window":{"exists":true}}],"timeout_ms":0,"stable_samples":1}`, `{"expect":null}`,
	`{"path":["File","Save As…"]}`, `{"path":["a",null]}`, `{"path":"File"}`, `{"include_screenshot":null}`,
}

// FuzzDecodeMatchesJSON: for every handler's argument struct, Call.Decode from the
// authorizer's decoded object (Call.Arguments) gives what encoding/json's strict decode of
// that object's encoding (Call.Args, what handlers decoded until now) gives: the same
// acceptance, the same refusal message, the same struct. It parses no JSON doing so.
func FuzzDecodeMatchesJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	for _, tc := range clickArgTests {
		f.Add(tc.args)
	}
	for _, tc := range elementArgTests {
		f.Add(tc.args)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			return
		}
		args, ok := v.(map[string]any)
		if !ok {
			return
		}
		encoded, err := json.Marshal(args)
		if err != nil {
			t.Fatalf("json.Marshal(%v) = %v", args, err)
		}
		for _, newArgs := range argTypes {
			want, got := newArgs(), newArgs()
			wantErr := tool.DecodeArgs(encoded, want)
			var parses atomic.Int64
			stop := tool.CountParses(&parses)
			gotErr := (&tool.Call{Arguments: args}).Decode(got)
			stop()
			typ := reflect.TypeOf(want).Elem()
			if n := parses.Load(); n != 0 {
				t.Fatalf("%v: Decode(%s) parsed JSON %d times, want 0", typ, raw, n)
			}
			if !sameRefusal(gotErr, wantErr) {
				t.Fatalf("%v: Decode(%s) = %v, want %v", typ, raw, gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%v: Decode(%s) = %+v, want %+v", typ, raw, got, want)
			}
		}
	})
}

// sameRefusal reports whether got and want are the same outcome. When several arguments
// are unknown, DecodeArgs names whichever it meets first in map order; any one will do.
func sameRefusal(got, want error) bool {
	if got == nil || want == nil {
		return got == want
	}
	var g, w *authz.Refusal
	if !errors.As(got, &g) || !errors.As(want, &w) || g.Code != w.Code {
		return false
	}
	const unknown = "unknown argument "
	if strings.HasPrefix(g.Message, unknown) && strings.HasPrefix(w.Message, unknown) {
		return true
	}
	return g.Message == w.Message
}

// TestHandlersDecodeWithoutJSON: every desktop tool's handler decodes the authorizer's
// object without parsing JSON: its argument struct is one the decoder of package tool
// handles. (argTypes must list the struct of any handler added.)
func TestHandlersDecodeWithoutJSON(t *testing.T) {
	d := &desk{sessions: newSessionStore()}
	for _, s := range d.specs() {
		t.Run(s.name, func(t *testing.T) {
			var parses atomic.Int64
			stop := tool.CountParses(&parses)
			defer stop()
			call := &tool.Call{Name: s.name, Arguments: map[string]any{"zz_not_an_argument": 1.0}, Session: tool.NewSession("t", "standard")}
			_, err := s.handler(context.Background(), call)
			var r *authz.Refusal
			if !errors.As(err, &r) || r.Code != authz.CodeInvalidArguments || r.Message != `unknown argument "zz_not_an_argument"` {
				t.Fatalf("%s handler = %v, want the unknown argument refused", s.name, err)
			}
			if n := parses.Load(); n != 0 {
				t.Errorf("%s handler parsed JSON %d times, want 0", s.name, n)
			}
		})
	}
}

// TestHandlersReadTheDeclaredArgs: every desktop tool declares its argument struct and its
// handler reads the value the worker decoded (tool.ArgsOf), never the arguments again: a
// handler given a decode's refusal returns exactly it, and a handler given its struct
// neither decodes again (Call.Decode panics then) nor reads another type (ArgsOf panics).
// A struct that takes pid and window_id names its target and takes the pinned window; a
// pointer tool's struct names its points.
func TestHandlersReadTheDeclaredArgs(t *testing.T) {
	d := &desk{sessions: newSessionStore()}
	inv := authz.DefaultInventory()
	for _, s := range d.specs() {
		t.Run(s.name, func(t *testing.T) {
			if s.args == nil {
				t.Fatalf("%s declares no argument struct", s.name)
			}
			sentinel := authz.Refuse(authz.CodeInvalidArguments, "the worker's decode refused this call")
			_, err := s.handler(context.Background(), &tool.Call{Name: s.name, ArgsErr: sentinel, Arguments: map[string]any{}, Session: tool.NewSession("t", "standard")})
			if err != sentinel {
				t.Errorf("handler given the decode's refusal = %v, want it", err)
			}
			call := &tool.Call{Name: s.name, Args: s.args(), Arguments: map[string]any{"zz_not_an_argument": 1.0}, Session: tool.NewSession("t", "standard")}
			if msg := decodePanic(func() { s.handler(context.Background(), call) }); msg != "" {
				t.Errorf("handler given its struct: %s", msg)
			}
			v := s.args()
			if takesWindow(s.schema) {
				_, targeted := v.(tool.Targeted)
				_, pinned := v.(tool.Pinned)
				if !targeted || !pinned {
					t.Errorf("%T takes pid and window_id: Targeted %v, Pinned %v; want both", v, targeted, pinned)
				}
			}
			if e, ok := inv.Lookup(s.name); ok && e.Shape == authz.ShapePointer {
				if _, ok := v.(tool.Pointed); !ok {
					t.Errorf("%T is a pointer tool's struct and names no points (tool.Pointed)", v)
				}
			}
		})
	}
}

// decodePanic runs f and returns the message of a panic package tool raises for a
// handler that decodes again or reads another type, "" otherwise (a handler without a
// display may panic on its own; that is not this test's concern).
func decodePanic(f func()) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			if s, ok := p.(string); ok && strings.HasPrefix(s, "tool: ") {
				msg = s
			}
		}
	}()
	f()
	return ""
}
