package policy_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// FuzzYAMLLoad feeds arbitrary bytes to the YAML loader: it never panics,
// fails only with ErrInvalid or ErrTooLarge, and a policy it accepts
// decides deterministically, identically after a rebuild from Files().
func FuzzYAMLLoad(f *testing.F) {
	for _, src := range []string{"{}", readOnlyYAML, constraintsYAML, "allow: [a, {tool: b}]\ndeny: [c]\n"} {
		f.Add([]byte(src), "click", []byte(`{"x": 5, "y": 7}`))
	}
	for _, tt := range yamlLoadErrorCases {
		f.Add([]byte(tt.src), "click", []byte(`{}`))
	}
	f.Fuzz(func(t *testing.T, src []byte, tool string, argsJSON []byte) {
		l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "p.yaml", Data: src}})
		if err != nil {
			if !errors.Is(err, policy.ErrInvalid) && !errors.Is(err, policy.ErrTooLarge) {
				t.Fatalf("Parse() = %v, want ErrInvalid or ErrTooLarge", err)
			}
			return
		}
		var args map[string]any
		if json.Unmarshal(argsJSON, &args) != nil {
			args = nil
		}
		again, err := policy.Parse(l.Kind(), l.Files())
		if err != nil || again.SHA256() != l.SHA256() {
			t.Fatalf("Parse(Files()) = %v, want the same layer", err)
		}
		_ = l.Summary()
		d1 := policy.NewSet(l, nil).Decide(t.Context(), tool, args)
		d2 := policy.NewSet(again, nil).Decide(t.Context(), tool, args)
		if d1 != d2 {
			t.Fatalf("Decide() = %+v, then %+v after a rebuild", d1, d2)
		}
		policy.NewSet(nil, l).Listed(t.Context(), tool)
	})
}

// FuzzDecide feeds arbitrary tool names and JSON arguments to YAML and Rego
// layers: no panic, a canonical tool name, a deterministic decision that
// does not depend on reserved arguments.
func FuzzDecide(f *testing.F) {
	for _, tt := range constraintCases {
		argsJSON, err := json.Marshal(tt.args)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tt.tool, argsJSON)
	}
	f.Add("type_text_chars", []byte(`{"text": "hi", "_force": true}`))
	f.Add("click", []byte(`{"x": 1e308, "y": -0, "nested": {"a": [1, {"b": null}]}}`))
	sets := []*policy.Set{
		policy.NewSet(nil, yamlLayer(f, constraintsYAML)),
		policy.NewSet(yamlLayer(f, readOnlyYAML), regoLayer(f, readOnlyRego)),
		policy.NewSet(nil, regoLayer(f, "package cua.policy\n\nallow if count(input.arguments) < 2\n")),
	}
	f.Fuzz(func(t *testing.T, tool string, argsJSON []byte) {
		var args map[string]any
		if json.Unmarshal(argsJSON, &args) != nil {
			return
		}
		canonical, clean := sanitized(tool, args)
		for _, s := range sets {
			d := s.Decide(t.Context(), tool, args)
			if d.Tool != canonical {
				t.Fatalf("Decide(%q).Tool = %q, want %q", tool, d.Tool, canonical)
			}
			if again := s.Decide(t.Context(), tool, args); again != d {
				t.Fatalf("Decide() = %+v, then %+v", d, again)
			}
			if sane := s.Decide(t.Context(), canonical, clean); sane != d {
				t.Fatalf("Decide(raw) = %+v but Decide(sanitized) = %+v", d, sane)
			}
			if d.Allow != (d.Layer == "") || (!d.Allow && d.Reason == "") {
				t.Fatalf("Decide() = %+v: an allow has no layer, a deny has a layer and a reason", d)
			}
			s.Listed(t.Context(), tool)
		}
	})
}

// sanitized is what the authorization pipeline hands the policy for tool and args
// (authz.Sanitize): the canonical name and the arguments without reserved keys.
func sanitized(tool string, args map[string]any) (string, map[string]any) {
	clean := map[string]any{}
	for k, v := range args {
		if !policy.Reserved(k) {
			clean[k] = v
		}
	}
	return policy.CanonicalTool(tool), clean
}
