package authz_test

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/policy"
)

var propTools = []string{"click", "type_text", "type_text_chars", "kill_app", "get_config", "zoom", "press_key"}

// genArgs draws tool arguments, sometimes with reserved keys.
func genArgs() *rapid.Generator[map[string]any] {
	value := rapid.OneOf(
		rapid.Map(rapid.Float64Range(-100, 2000), func(f float64) any { return f }),
		rapid.Map(rapid.SampledFrom([]string{"", "a", "Return", "日本語"}), func(s string) any { return s }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Just[any](nil),
		rapid.Just[any]([]any{1.0, "a"}),
	)
	return rapid.MapOf(rapid.SampledFrom([]string{"_meta", "_x", "x", "y", "text", "key"}), value)
}

func TestPropertySanitizeIdempotent(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tool := rapid.SampledFrom(append([]string{"_x", ""}, propTools...)).Draw(rt, "tool")
		args := genArgs().Draw(rt, "args")
		t1, a1 := authz.Sanitize(tool, args)
		t2, a2 := authz.Sanitize(t1, a1)
		if t1 != t2 || !reflect.DeepEqual(a1, a2) {
			rt.Fatalf("Sanitize(Sanitize(x)) = %s %v, want %s %v", t2, a2, t1, a1)
		}
		for k := range a1 {
			if policy.Reserved(k) {
				rt.Fatalf("Sanitize() kept reserved key %q", k)
			}
		}
	})
}
