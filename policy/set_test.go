package policy_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

func TestLayerCombinations(t *testing.T) {
	allowYAML := yamlLayer(t, "allow: [get_config, click]\n")
	denyYAML := yamlLayer(t, "deny: [get_config]\n")
	allowRego := regoLayer(t, "package cua.policy\n\nallow if input.tool == \"get_config\"\n")
	denyRego := regoLayer(t, "package cua.policy\n\nallow := false\n")
	const (
		managedYAMLDeny = "Permission denied: managed policy: tool 'get_config' is explicitly denied"
		managedRegoDeny = "Permission denied: managed policy: tool 'get_config' is not allowed by the Rego policy"
		userYAMLDeny    = "Permission denied: user policy: tool 'get_config' is explicitly denied"
		userRegoDeny    = "Permission denied: user policy: tool 'get_config' is not allowed by the Rego policy"
	)
	tests := []struct {
		name          string
		managed, user *policy.Layer
		want          policy.Decision
	}{
		{name: "no layers", want: policy.Decision{Allow: true, Tool: "get_config", Reason: "no policy configured"}},
		{name: "managed allows", managed: allowYAML, want: policy.Decision{Allow: true, Tool: "get_config", Reason: "allowed by the managed policy"}},
		{name: "managed denies", managed: denyYAML, want: policy.Decision{Tool: "get_config", Layer: "managed", Reason: managedYAMLDeny}},
		{name: "user allows", user: allowRego, want: policy.Decision{Allow: true, Tool: "get_config", Reason: "allowed by the user policy"}},
		{name: "user denies", user: denyRego, want: policy.Decision{Tool: "get_config", Layer: "user", Reason: userRegoDeny}},
		{name: "both allow", managed: allowRego, user: allowYAML, want: policy.Decision{Allow: true, Tool: "get_config", Reason: "allowed by the managed and user policies"}},
		{name: "managed allows, user denies", managed: allowYAML, user: denyYAML, want: policy.Decision{Tool: "get_config", Layer: "user", Reason: userYAMLDeny}},
		{name: "managed denies, user allows", managed: denyRego, user: allowRego, want: policy.Decision{Tool: "get_config", Layer: "managed", Reason: managedRegoDeny}},
		{name: "both deny: managed decides first", managed: denyYAML, user: denyRego, want: policy.Decision{Tool: "get_config", Layer: "managed", Reason: managedYAMLDeny}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := policy.NewSet(tt.managed, tt.user)
			if got := s.Decide(t.Context(), "get_config", map[string]any{"_session": "x"}); got != tt.want {
				t.Errorf("Decide(get_config) = %+v, want %+v", got, tt.want)
			}
			if s.Managed() != tt.managed || s.User() != tt.user {
				t.Errorf("Managed(), User() = %p, %p, want %p, %p", s.Managed(), s.User(), tt.managed, tt.user)
			}
		})
	}
}

func TestNilSet(t *testing.T) {
	var s *policy.Set
	want := policy.Decision{Allow: true, Tool: "type_text", Reason: "no policy configured"}
	if got := s.Decide(t.Context(), "type_text_chars", nil); got != want {
		t.Errorf("(*Set)(nil).Decide() = %+v, want %+v", got, want)
	}
	if !s.Listed(t.Context(), "anything") || s.Managed() != nil || s.User() != nil {
		t.Errorf("(*Set)(nil) must list everything and hold no layer")
	}
}

func TestListed(t *testing.T) {
	// The reference's tools/list test, with a valid constraint instead of
	// the rejected "const" key, so the listing is really exercised.
	refYAML := yamlLayer(t, `
allow:
  tools: [get_config, list_apps]
  rules:
    - tool: screenshot
      constraints: {x: {min: 0}}
deny:
  tools: [list_apps]
`)
	ro := yamlLayer(t, readOnlyYAML)
	roRego := regoLayer(t, readOnlyRego)
	erring := regoLayer(t, "package cua.policy\n\nallow if {\n\tinput.tool != \"\"\n\tto_number(input.tool) > 0\n}\n")
	tests := []struct {
		name          string
		managed, user *policy.Layer
		listed        []string
		hidden        []string
	}{
		{name: "no layer lists everything", listed: []string{"kill_app", "anything"}},
		{name: "reference yaml", user: refYAML, listed: []string{"get_config", "screenshot"}, hidden: []string{"list_apps", "click"}},
		{
			name: "yaml: allow.tools or a rule, unless denied", user: ro,
			listed: []string{"get_config", "get_window_state", "type_text", "type_text_chars", "click"},
			hidden: []string{"list_windows", "kill_app", "zoom"},
		},
		{
			name: "rego: allow holds with no arguments", user: roRego,
			listed: []string{"get_config", "get_window_state", "type_text", "type_text_chars"},
			hidden: []string{"click", "list_windows", "kill_app", "zoom"},
		},
		{name: "both layers must list", managed: ro, user: roRego, listed: []string{"get_config", "type_text"}, hidden: []string{"click", "list_windows"}},
		{name: "both layers must list (reversed)", managed: roRego, user: ro, listed: []string{"get_window_state"}, hidden: []string{"click", "kill_app"}},
		{name: "evaluation error hides", user: erring, listed: []string{"12"}, hidden: []string{"abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := policy.NewSet(tt.managed, tt.user)
			for _, tool := range tt.listed {
				if !s.Listed(t.Context(), tool) {
					t.Errorf("Listed(%s) = false, want true", tool)
				}
			}
			for _, tool := range tt.hidden {
				if s.Listed(t.Context(), tool) {
					t.Errorf("Listed(%s) = true, want false", tool)
				}
				// A hidden tool is also refused without arguments.
				if d := s.Decide(t.Context(), tool, nil); d.Allow {
					t.Errorf("Decide(%s) = %+v for a hidden tool, want deny", tool, d)
				}
			}
		})
	}
	// The listed screenshot rule still enforces its constraint.
	s := policy.NewSet(nil, refYAML)
	if d := s.Decide(t.Context(), "screenshot", map[string]any{"x": -1.0}); d.Allow {
		t.Errorf("Decide(screenshot x=-1) = %+v, want deny", d)
	}
	if d := s.Decide(t.Context(), "screenshot", map[string]any{"x": 0.0}); !d.Allow {
		t.Errorf("Decide(screenshot x=0) = %+v, want allow", d)
	}
}

func TestSetConcurrentUse(t *testing.T) {
	s := policy.NewSet(yamlLayer(t, readOnlyYAML), regoLayer(t, readOnlyRego))
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"get_config", nil},
		{"click", map[string]any{"x": 5.0, "y": 5.0}},
		{"click", map[string]any{"x": 5000.0, "y": 5.0}},
		{"kill_app", map[string]any{"pid": 1.0}},
		{"type_text_chars", map[string]any{"text": "hi", "_meta": 1.0}},
	}
	want := make([]policy.Decision, len(calls))
	for i, c := range calls {
		want[i] = s.Decide(t.Context(), c.tool, c.args)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % len(calls)
				if got := s.Decide(t.Context(), calls[i].tool, calls[i].args); got != want[i] {
					errs <- fmt.Errorf("Decide(%s) = %+v, want %+v", calls[i].tool, got, want[i])
					return
				}
				s.Listed(t.Context(), calls[i].tool)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNewSetRejectsZeroLayer(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("NewSet(&Layer{}) did not panic")
		}
	}()
	policy.NewSet(&policy.Layer{}, nil)
}
