package authz_test

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/cua-host/cua-host/authz"
)

// TestPropertySanitizeOwned: SanitizeOwned returns what Sanitize returns, in the map it
// was given, and refuses exactly the calls with a name that is not reserved and not
// lowercase snake_case.
func TestPropertySanitizeOwned(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tool := rapid.SampledFrom(append([]string{"_x", ""}, propTools...)).Draw(rt, "tool")
		args := genArgs().Draw(rt, "args")
		if rapid.Bool().Draw(rt, "odd name") {
			args[rapid.SampledFrom([]string{"PID", "Window_Id", "\u017fcope", "x-y", "a b", "\u00e9"}).Draw(rt, "name")] = 1.0
		}
		wantTool, want := authz.Sanitize(tool, args)
		wantRefused := false
		for k := range want {
			if strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
				wantRefused = true
			}
		}
		owned := maps.Clone(args)
		gotTool, got, r := authz.SanitizeOwned(tool, owned)
		if refused := r != nil; refused != wantRefused || (refused && r.Code != authz.CodeInvalidArguments) {
			rt.Fatalf("SanitizeOwned(%s, %v) refusal %v, want refused %v", tool, args, r, wantRefused)
		}
		if gotTool != wantTool || !reflect.DeepEqual(got, want) {
			rt.Fatalf("SanitizeOwned(%s, %v) = %s %v, want %s %v", tool, args, gotTool, got, wantTool, want)
		}
		got["added"] = 1.0
		if _, ok := owned["added"]; !ok {
			rt.Fatalf("SanitizeOwned() returned a copy, want the map it was given")
		}
	})
}

func TestSanitizeOwnedNil(t *testing.T) {
	tool, clean, r := authz.SanitizeOwned("type_text_chars", nil)
	if tool != "type_text" || clean == nil || len(clean) != 0 || r != nil {
		t.Errorf("SanitizeOwned(type_text_chars, nil) = %s, %#v, want type_text, an empty map", tool, clean)
	}
}
