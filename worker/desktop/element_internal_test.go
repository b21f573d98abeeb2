package desktop

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

var elementArgTests = []struct {
	name string
	args string
	want atspi.Target
	code authz.Code
}{
	{"token", `{"element_token":"s0123abcd:4"}`, atspi.Target{SnapshotID: "s0123abcd", Index: 4}, ""},
	{"id and index", `{"snapshot_id":"s0123abcd","element_index":0}`, atspi.Target{SnapshotID: "s0123abcd", Index: 0}, ""},
	{"both forms", `{"element_token":"s0123abcd:4","snapshot_id":"s0123abcd","element_index":4}`, atspi.Target{}, authz.CodeInvalidArguments},
	{"id without index", `{"snapshot_id":"s0123abcd"}`, atspi.Target{}, authz.CodeInvalidArguments},
	{"index without id", `{"element_index":3}`, atspi.Target{}, authz.CodeInvalidArguments},
	{"negative index", `{"snapshot_id":"s0123abcd","element_index":-1}`, atspi.Target{}, authz.CodeInvalidArguments},
	{"bad id", `{"snapshot_id":"S0123abcd","element_index":1}`, atspi.Target{}, authz.CodeInvalidArguments},
	{"bad token", `{"element_token":"s0123abcd:x"}`, atspi.Target{}, authz.CodeInvalidArguments},
	{"index not a number", `{"snapshot_id":"s0123abcd","element_index":"1"}`, atspi.Target{}, authz.CodeInvalidArguments},
}

// decodeElement runs what the element tools do with their arguments before they look
// anything up.
func decodeElement(raw string) (atspi.Target, error) {
	var a elementArgs
	if err := tool.DecodeArgs(json.RawMessage(raw), &a); err != nil {
		return atspi.Target{}, err
	}
	return a.target()
}

func TestElementArgs(t *testing.T) {
	for _, tc := range elementArgTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeElement(tc.args)
			var r *authz.Refusal
			switch {
			case tc.code == "" && (err != nil || got != tc.want):
				t.Fatalf("decodeElement(%s) = %v, %v; want %v", tc.args, got, err, tc.want)
			case tc.code != "" && (!errors.As(err, &r) || r.Code != tc.code):
				t.Fatalf("decodeElement(%s) = %v, %v; want refusal %s", tc.args, got, err, tc.code)
			}
		})
	}
}

func FuzzElementArgs(f *testing.F) {
	for _, tc := range elementArgTests {
		f.Add(tc.args)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := decodeElement(raw)
		if err != nil {
			var r *authz.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("decodeElement(%q) error %v is not a refusal", raw, err)
			}
			return
		}
		back, err := atspi.ParseToken(got.Token())
		if err != nil || back != got {
			t.Fatalf("decodeElement(%q) = %v, which does not round-trip: %v, %v", raw, got, back, err)
		}
	})
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		text  string
		num   float64
		isNum bool
		bad   bool
	}{
		{"text", `"hello"`, "hello", 0, false, false},
		{"numeric text", `"42.5"`, "42.5", 42.5, true, false},
		{"number", `7`, "7", 7, true, false},
		{"missing", ``, "", 0, false, true},
		{"null", `null`, "", 0, false, true},
		{"object", `{"a":1}`, "", 0, false, true},
		{"bool", `true`, "", 0, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, num, isNum, err := parseValue(json.RawMessage(tc.raw))
			if tc.bad {
				if err == nil {
					t.Fatalf("parseValue(%s) = %q, %v, %v; want a refusal", tc.raw, text, num, isNum)
				}
				return
			}
			if err != nil || text != tc.text || num != tc.num || isNum != tc.isNum {
				t.Fatalf("parseValue(%s) = %q, %v, %v, %v", tc.raw, text, num, isNum, err)
			}
		})
	}
}
