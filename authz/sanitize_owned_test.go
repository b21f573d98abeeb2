package authz_test

import (
	"maps"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/cua-host/cua-host/authz"
)

// TestPropertySanitizeOwned: SanitizeOwned returns what Sanitize returns, in the map it
// was given.
func TestPropertySanitizeOwned(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tool := rapid.SampledFrom(append([]string{"_x", ""}, propTools...)).Draw(rt, "tool")
		args := genArgs().Draw(rt, "args")
		wantTool, want := authz.Sanitize(tool, args)
		owned := maps.Clone(args)
		gotTool, got := authz.SanitizeOwned(tool, owned)
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
	tool, clean := authz.SanitizeOwned("type_text_chars", nil)
	if tool != "type_text" || clean == nil || len(clean) != 0 {
		t.Errorf("SanitizeOwned(type_text_chars, nil) = %s, %#v, want type_text, an empty map", tool, clean)
	}
}
