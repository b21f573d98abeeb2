package desktop

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

// verifyArgTests are verify_state arguments with what decoding and parsing them gives:
// a refusal whose message contains want, or (want "") predicates, of which invalid lists
// the indexes reported as invalid_predicate.
var verifyArgTests = []struct {
	name    string
	args    string
	want    string
	invalid []int
}{
	{name: "window exists", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}]}`},
	{name: "bounds with tolerance", args: `{"pid":1,"window_id":2,"expect":[{"window":{"bounds":{"x":1,"y":2,"width":3,"height":4,"tolerance_px":100}}}],"session":"s"}`},
	{name: "element with every assertion", args: `{"pid":1,"window_id":2,"expect":[{"element":{"selector":{"role":"push button","label_contains":"OK"},"exists":true,"enabled":true,"selected":false,"value_equals":"x"}}]}`},
	{name: "nulls are absent", args: `{"pid":1,"window_id":2,"expect":[{"window":null,"element":{"selector":{"role":"text"},"enabled":null,"selected":null,"value_equals":null}}],"include_screenshot":null}`},
	{name: "eight predicates", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}},{"window":{"exists":true}},{"window":{"exists":true}},{"window":{"exists":true}},{"window":{"exists":true}},{"window":{"exists":true}},{"window":{"exists":true}},{"window":{"exists":true}}]}`},
	{name: "empty item is reported", args: `{"pid":1,"window_id":2,"expect":[{},{"window":{"exists":true}}]}`, invalid: []int{0}},
	{name: "both kinds in one item", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true},"element":{"selector":{"role":"text"}}}]}`, invalid: []int{0}},
	{name: "window asserting nothing", args: `{"pid":1,"window_id":2,"expect":[{"window":{}},{"window":{"exists":null,"bounds":null}}]}`, invalid: []int{0, 1}},
	{name: "empty selector", args: `{"pid":1,"window_id":2,"expect":[{"element":{"selector":{}}}]}`, invalid: []int{0}},

	{name: "no expect", args: `{"pid":1,"window_id":2}`, want: "expect is required"},
	{name: "null expect", args: `{"pid":1,"window_id":2,"expect":null}`, want: "expect is required"},
	{name: "empty expect", args: `{"pid":1,"window_id":2,"expect":[]}`, want: "expect has 0 predicates: want 1–8"},
	{name: "nine predicates", args: `{"pid":1,"window_id":2,"expect":[{},{},{},{},{},{},{},{},{}]}`, want: "expect has 9 predicates"},
	{name: "expect not an array", args: `{"pid":1,"window_id":2,"expect":{"window":{}}}`, want: `argument "expect"`},
	{name: "item not an object", args: `{"pid":1,"window_id":2,"expect":[true]}`, want: "expect[0] must be an object, not a boolean"},
	{name: "unknown predicate key", args: `{"pid":1,"window_id":2,"expect":[{"windows":{}}]}`, want: `expect[0]: unknown key "windows"`},
	{name: "case-folded key", args: `{"pid":1,"window_id":2,"expect":[{"Window":{"exists":true}}]}`, want: `expect[0]: unknown key "Window"`},
	{name: "unknown window key", args: `{"pid":1,"window_id":2,"expect":[{"window":{"visible":true}}]}`, want: `expect[0].window: unknown key "visible"`},
	{name: "exists not a boolean", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":"yes"}}]}`, want: "expect[0].window.exists must be a boolean or null, not a string"},
	{name: "bounds without height", args: `{"pid":1,"window_id":2,"expect":[{"window":{"bounds":{"x":1,"y":2,"width":3}}}]}`, want: "expect[0].window.bounds.height is required"},
	{name: "bounds string", args: `{"pid":1,"window_id":2,"expect":[{"window":{"bounds":{"x":"1","y":2,"width":3,"height":4}}}]}`, want: "expect[0].window.bounds.x must be a number, not a string"},
	{name: "tolerance too big", args: `{"pid":1,"window_id":2,"expect":[{"window":{"bounds":{"x":1,"y":2,"width":3,"height":4,"tolerance_px":100.5}}}]}`, want: "tolerance_px 100.5: want 0–100"},
	{name: "negative tolerance", args: `{"pid":1,"window_id":2,"expect":[{"window":{"bounds":{"x":1,"y":2,"width":3,"height":4,"tolerance_px":-1}}}]}`, want: "tolerance_px -1"},
	{name: "element without selector", args: `{"pid":1,"window_id":2,"expect":[{"element":{"exists":true}}]}`, want: "expect[0].element.selector is required"},
	{name: "null selector", args: `{"pid":1,"window_id":2,"expect":[{"element":{"selector":null}}]}`, want: "expect[0].element.selector must be an object, not null"},
	{name: "empty role", args: `{"pid":1,"window_id":2,"expect":[{"element":{"selector":{"role":""}}}]}`, want: "selector.role must be a non-empty string"},
	{name: "unknown selector key", args: `{"pid":1,"window_id":2,"expect":[{"element":{"selector":{"name":"OK"}}}]}`, want: `selector: unknown key "name"`},
	{name: "exists false", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}},{"element":{"selector":{"role":"text"},"exists":false}}]}`, want: "expect[1].element.exists: false is not accepted"},
	{name: "exists null", args: `{"pid":1,"window_id":2,"expect":[{"element":{"selector":{"role":"text"},"exists":null}}]}`, want: "expect[0].element.exists must be true, not null"},
	{name: "value not a string", args: `{"pid":1,"window_id":2,"expect":[{"element":{"selector":{"role":"text"},"value_equals":3}}]}`, want: "value_equals must be a string or null, not a number"},
	{name: "timeout too long", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}],"timeout_ms":10001}`, want: "timeout_ms 10001: want 0–10000"},
	{name: "negative timeout", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}],"timeout_ms":-1}`, want: "timeout_ms -1"},
	{name: "fractional timeout", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}],"timeout_ms":1.5}`, want: `argument "timeout_ms" must be int`},
	{name: "no stable samples", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}],"stable_samples":0}`, want: "stable_samples 0: want 1–5"},
	{name: "six stable samples", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}],"stable_samples":6}`, want: "stable_samples 6"},
	{name: "unknown argument", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}],"timeout":5}`, want: `unknown argument "timeout"`},
	{name: "screenshot not a boolean", args: `{"pid":1,"window_id":2,"expect":[{"window":{"exists":true}}],"include_screenshot":"yes"}`, want: `argument "include_screenshot"`},
}

// decodeVerify decodes and checks verify_state arguments as the handler does, up to the
// point where it touches the desktop.
func decodeVerify(raw string) (verifyArgs, verifySettings, []predicate, error) {
	var a verifyArgs
	var obj map[string]any
	if err := json.Unmarshal([]byte(raw), &obj); err != nil {
		return a, verifySettings{}, nil, err
	}
	if err := (&tool.Call{Arguments: obj}).Decode(&a); err != nil {
		return a, verifySettings{}, nil, err
	}
	set, err := a.settings()
	if err != nil {
		return a, set, nil, err
	}
	preds, err := parsePredicates(a.Expect)
	return a, set, preds, err
}

func TestVerifyArguments(t *testing.T) {
	for _, tc := range verifyArgTests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, preds, err := decodeVerify(tc.args)
			if tc.want != "" {
				var r *authz.Refusal
				if !errors.As(err, &r) || r.Code != authz.CodeInvalidArguments || !strings.Contains(r.Message, tc.want) {
					t.Fatalf("verify_state(%s) = %v, want invalid_arguments containing %q", tc.args, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("verify_state(%s) = %v, want predicates", tc.args, err)
			}
			var invalid []int
			for i, p := range preds {
				if p.invalid != "" {
					invalid = append(invalid, i)
				}
			}
			if len(invalid) != len(tc.invalid) || (len(invalid) > 0 && !equalInts(invalid, tc.invalid)) {
				t.Errorf("invalid predicates %v, want %v (%+v)", invalid, tc.invalid, preds)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestVerifySettingsDefaults(t *testing.T) {
	tests := []struct {
		name   string
		args   string
		want   time.Duration
		stable int
	}{
		{name: "defaults", args: `{"expect":[{}]}`, want: 5 * time.Second, stable: 2},
		{name: "zero timeout takes one sample", args: `{"expect":[{}],"timeout_ms":0}`, want: 0, stable: 1},
		{name: "zero timeout keeps an explicit stability", args: `{"expect":[{}],"timeout_ms":0,"stable_samples":3}`, want: 0, stable: 3},
		{name: "explicit", args: `{"expect":[{}],"timeout_ms":10000,"stable_samples":5}`, want: 10 * time.Second, stable: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, set, _, err := decodeVerify(tc.args)
			if err != nil || set.timeout != tc.want || set.stable != tc.stable {
				t.Errorf("settings(%s) = %+v, %v; want %v and %d samples", tc.args, set, err, tc.want, tc.stable)
			}
		})
	}
}

// FuzzParsePredicates: any arguments object either decodes to predicates or is refused
// with invalid_arguments; nothing panics.
func FuzzParsePredicates(f *testing.F) {
	for _, tc := range verifyArgTests {
		f.Add(tc.args)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var obj map[string]any
		if json.Unmarshal([]byte(raw), &obj) != nil || obj == nil {
			return
		}
		_, _, preds, err := decodeVerify(raw)
		if err != nil {
			var r *authz.Refusal
			if !errors.As(err, &r) || r.Code != authz.CodeInvalidArguments {
				t.Fatalf("decode(%s) = %v, want an invalid_arguments refusal", raw, err)
			}
			return
		}
		if len(preds) < 1 || len(preds) > MaxPredicates {
			t.Fatalf("decode(%s) = %d predicates", raw, len(preds))
		}
		for i, p := range preds {
			if p.invalid == "" && (p.window == nil) == (p.element == nil) {
				t.Fatalf("decode(%s): predicate %d is neither invalid nor exactly one kind: %+v", raw, i, p)
			}
		}
	})
}

// TestMenuArguments: invoke_menu's path is checked before anything is touched.
func TestMenuArguments(t *testing.T) {
	long := strings.Repeat("é", MaxMenuLabelChars)
	tests := []struct {
		name string
		args string
		want string
	}{
		{name: "ok", args: `{"pid":1,"window_id":2,"path":["File","Save As…"],"session":"s"}`},
		{name: "longest label", args: `{"pid":1,"window_id":2,"path":["` + long + `"]}`},
		{name: "sixteen levels", args: `{"pid":1,"window_id":2,"path":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p"]}`},
		{name: "no path", args: `{"pid":1,"window_id":2}`, want: "path has 0 segments: want 1–16"},
		{name: "empty path", args: `{"pid":1,"window_id":2,"path":[]}`, want: "path has 0 segments"},
		{name: "seventeen levels", args: `{"pid":1,"window_id":2,"path":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}`, want: "path has 17 segments"},
		{name: "label too long", args: `{"pid":1,"window_id":2,"path":["` + long + `x"]}`, want: "path[0] is 201 characters (at most 200)"},
		{name: "blank label", args: `{"pid":1,"window_id":2,"path":["File","  "]}`, want: "path[1] is empty"},
		{name: "null label", args: `{"pid":1,"window_id":2,"path":["File",null]}`, want: "path[1] is empty"},
		{name: "number label", args: `{"pid":1,"window_id":2,"path":["File",3]}`, want: `argument "path" must be string`},
		{name: "path a string", args: `{"pid":1,"window_id":2,"path":"File"}`, want: `argument "path" must be []string`},
		{name: "no window", args: `{"pid":1,"path":["File"]}`, want: "pid and window_id are required"},
		{name: "unknown argument", args: `{"pid":1,"window_id":2,"path":["File"],"items":["x"]}`, want: `unknown argument "items"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var obj map[string]any
			if err := json.Unmarshal([]byte(tc.args), &obj); err != nil {
				t.Fatal(err)
			}
			var a menuArgs
			err := (&tool.Call{Arguments: obj}).Decode(&a)
			if err == nil {
				err = a.check()
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("invoke_menu(%s) = %v, want accepted", tc.args, err)
				}
				return
			}
			var r *authz.Refusal
			if !errors.As(err, &r) || r.Code != authz.CodeInvalidArguments || !strings.Contains(r.Message, tc.want) {
				t.Fatalf("invoke_menu(%s) = %v, want invalid_arguments containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestMenuRefusalCodes: each way a path can fail has its code and names the segment.
func TestMenuRefusalCodes(t *testing.T) {
	tests := []struct {
		reason string
		code   authz.Code
	}{
		{atspi.MenuMissing, authz.CodeMenuPathNotFound}, {atspi.MenuAmbiguous, authz.CodeMenuPathNotFound},
		{atspi.MenuNotSubmenu, authz.CodeMenuPathNotFound}, {atspi.MenuIsSubmenu, authz.CodeMenuPathNotFound},
		{atspi.MenuDisabled, authz.CodeUnsupported}, {atspi.MenuDidNotOpen, authz.CodeUnsupported},
	}
	for _, tc := range tests {
		err := menuRefusal(&atspi.MenuError{Hop: 1, Segment: "Sav", Reason: tc.reason, Available: []string{"Save", "Quit"}}, 7)
		var r *authz.Refusal
		if !errors.As(err, &r) || r.Code != tc.code || !strings.Contains(r.Message, `path[1] "Sav"`) || !strings.Contains(r.Message, `"Save", "Quit"`) {
			t.Errorf("menuRefusal(%s) = %v, want %s naming the segment and the entries", tc.reason, err, tc.code)
		}
	}
	if err := menuRefusal(atspi.ErrNoMenuBar, 7); refusalCodeOf(err) != authz.CodeUnsupported {
		t.Errorf("no menu bar = %v, want unsupported", err)
	}
}

func refusalCodeOf(err error) authz.Code {
	var r *authz.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return ""
}
