package policy_test

import (
	"testing"

	"go.yaml.in/yaml/v3"
	"pgregory.net/rapid"

	"github.com/cua-host/cua-host/policy"
)

var (
	propTools = []string{"click", "type_text", "type_text_chars", "kill_app", "get_config", "zoom", "press_key"}
	propArgs  = []string{"x", "y", "text", "key"}
)

// genValue draws a JSON value of the kind tool arguments hold.
func genValue() *rapid.Generator[any] {
	return rapid.OneOf(
		rapid.Map(rapid.Float64Range(-100, 2000), func(f float64) any { return f }),
		rapid.Map(rapid.IntRange(-5, 5), func(i int) any { return float64(i) }),
		rapid.Map(rapid.SampledFrom([]string{"", "a", "abc", "Return", "hello world", "日本語", "rm -rf /"}), func(s string) any { return s }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Just[any](nil),
		rapid.Just[any]([]any{1.0, "a"}),
	)
}

// genArgs draws tool arguments, sometimes with reserved keys.
func genArgs() *rapid.Generator[map[string]any] {
	return rapid.MapOf(rapid.SampledFrom(append([]string{"_meta", "_x"}, propArgs...)), genValue())
}

// genReserved draws only reserved arguments.
func genReserved() *rapid.Generator[map[string]any] {
	return rapid.MapOf(rapid.SampledFrom([]string{"_", "_meta", "_x", "__y", "_text"}), genValue())
}

// genConstraint draws one valid constraint as YAML data.
func genConstraint() *rapid.Generator[map[string]any] {
	return rapid.Custom(func(t *rapid.T) map[string]any {
		c := map[string]any{}
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			lo := rapid.IntRange(-10, 1000).Draw(t, "min")
			if rapid.Bool().Draw(t, "hasMin") {
				c["min"] = lo
			}
			c["max"] = lo + rapid.IntRange(0, 1000).Draw(t, "span")
		case 1:
			c["max_length"] = rapid.IntRange(0, 12).Draw(t, "max_length")
			if rapid.Bool().Draw(t, "alsoPattern") {
				c["pattern"] = rapid.SampledFrom([]string{"^[a-z]+$", "a", "^R", "."}).Draw(t, "pattern")
			}
		case 2:
			c["pattern"] = rapid.SampledFrom([]string{"^[a-z]+$", "a", "^R", ".", "world$"}).Draw(t, "pattern")
		default:
			c["allowed"] = rapid.SliceOfN(genValue(), 1, 4).Draw(t, "allowed")
		}
		return c
	})
}

// genPolicy draws a valid YAML policy as data (mapping form).
func genPolicy() *rapid.Generator[map[string]any] {
	return rapid.Custom(func(t *rapid.T) map[string]any {
		var rules []any
		for range rapid.IntRange(0, 4).Draw(t, "rules") {
			rules = append(rules, map[string]any{
				"tool":        rapid.SampledFrom(propTools).Draw(t, "ruleTool"),
				"constraints": rapid.MapOf(rapid.SampledFrom(propArgs), genConstraint()).Draw(t, "constraints"),
			})
		}
		return map[string]any{
			"allow": map[string]any{
				"tools": rapid.SliceOfN(rapid.SampledFrom(propTools), 0, 3).Draw(t, "allowTools"),
				"rules": rules,
			},
			"deny": map[string]any{
				"tools": rapid.SliceOfN(rapid.SampledFrom(propTools), 0, 2).Draw(t, "denyTools"),
			},
		}
	})
}

// layerOf renders policy data as YAML and parses it.
func layerOf(t *rapid.T, data map[string]any) *policy.Layer {
	src, err := yaml.Marshal(data)
	if err != nil {
		t.Fatalf("yaml.Marshal() = %v", err)
	}
	l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "p.yaml", Data: src}})
	if err != nil {
		t.Fatalf("Parse(%s) = %v", src, err)
	}
	return l
}

func TestPropertyDenyEntryNeverAllows(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		data := genPolicy().Draw(rt, "policy")
		tool := rapid.SampledFrom(propTools).Draw(rt, "tool")
		args := genArgs().Draw(rt, "args")
		before := policy.NewSet(nil, layerOf(rt, data))

		deny := data["deny"].(map[string]any)
		deny["tools"] = append(deny["tools"].([]string), rapid.SampledFrom(propTools).Draw(rt, "newDeny"))
		after := policy.NewSet(nil, layerOf(rt, data))

		b, a := before.Decide(t.Context(), tool, args), after.Decide(t.Context(), tool, args)
		if a.Allow && !b.Allow {
			rt.Fatalf("adding a deny entry turned %+v into %+v", b, a)
		}
		if after.Listed(t.Context(), tool) && !before.Listed(t.Context(), tool) {
			rt.Fatalf("adding a deny entry listed %s", tool)
		}
	})
}

func TestPropertyDeterministic(t *testing.T) {
	ro := regoLayer(t, readOnlyRego)
	rapid.Check(t, func(rt *rapid.T) {
		data := genPolicy().Draw(rt, "policy")
		tool := rapid.SampledFrom(propTools).Draw(rt, "tool")
		args := genArgs().Draw(rt, "args")
		l1, l2 := layerOf(rt, data), layerOf(rt, data)
		if l1.SHA256() != l2.SHA256() {
			rt.Fatalf("SHA256() = %s then %s for the same files", l1.SHA256(), l2.SHA256())
		}
		for _, s := range []*policy.Set{policy.NewSet(l1, ro), policy.NewSet(ro, l2)} {
			first := s.Decide(t.Context(), tool, args)
			for range 3 {
				if again := s.Decide(t.Context(), tool, args); again != first {
					rt.Fatalf("Decide() = %+v, then %+v", first, again)
				}
			}
		}
		if a, b := policy.NewSet(nil, l1).Decide(t.Context(), tool, args), policy.NewSet(nil, l2).Decide(t.Context(), tool, args); a != b {
			rt.Fatalf("two parses of one policy decided %+v and %+v", a, b)
		}
	})
}

func TestPropertyReservedArgumentsIgnored(t *testing.T) {
	regoSets := []*policy.Set{
		policy.NewSet(nil, regoLayer(t, readOnlyRego)),
		// Sees every argument it is given: reserved ones must not arrive.
		policy.NewSet(nil, regoLayer(t, "package cua.policy\n\nallow if count(input.arguments) == 0\n")),
	}
	rapid.Check(t, func(rt *rapid.T) {
		sets := append([]*policy.Set{policy.NewSet(layerOf(rt, genPolicy().Draw(rt, "policy")), nil)}, regoSets...)
		tool := rapid.SampledFrom(propTools).Draw(rt, "tool")
		args := rapid.MapOf(rapid.SampledFrom(propArgs), genValue()).Draw(rt, "args")
		withReserved := genReserved().Draw(rt, "reserved")
		for k, v := range args {
			withReserved[k] = v
		}
		for _, s := range sets {
			if a, b := s.Decide(t.Context(), tool, args), s.Decide(t.Context(), tool, withReserved); a != b {
				rt.Fatalf("Decide(%v) = %+v but Decide(%v) = %+v", args, a, withReserved, b)
			}
		}
	})
}
