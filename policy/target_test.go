package policy_test

import (
	"strings"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// TestDecideTarget: a policy can decide on the resolved target, which a call cannot choose
// through its arguments: a keyboard call without a pid still has the focused window as
// its target.
func TestDecideTarget(t *testing.T) {
	const yamlSrc = `allow:
  rules:
    - tool: type_text
      constraints:
        target.owner: {allowed: [session]}
    - tool: kill_app
      constraints:
        target.executable: {pattern: "^/usr/bin/xterm$"}
        target.pid: {min: 100}
`
	const regoSrc = `package cua.policy

user_terminal := 4242

default allow := false

allow if {
	input.tool == "type_text"
	input.target.pid != user_terminal
}
`
	yamlLayer, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "p.yaml", Data: []byte(yamlSrc)}})
	if err != nil {
		t.Fatalf("Parse(yaml): %v", err)
	}
	regoLayer, err := policy.Parse(policy.KindRego, []policy.File{{Name: "p.rego", Data: []byte(regoSrc)}})
	if err != nil {
		t.Fatalf("Parse(rego): %v", err)
	}
	own := &policy.Target{Kind: "window", PID: 500, WindowID: 0x400001, Executable: "/usr/bin/xterm", Owner: policy.OwnerSession}
	user := &policy.Target{Kind: "window", PID: 4242, WindowID: 0x600001, Executable: "/usr/bin/xterm", Owner: policy.OwnerForeign}
	tests := []struct {
		name   string
		layer  *policy.Layer
		tool   string
		args   map[string]any
		target *policy.Target
		allow  bool
		reason string // part of a denial's reason
	}{
		{name: "yaml: own window", layer: yamlLayer, tool: "type_text", args: map[string]any{"text": "x"}, target: own, allow: true},
		{name: "yaml: the user's window, no pid argument", layer: yamlLayer, tool: "type_text", args: map[string]any{"text": "x"}, target: user, reason: "target 'owner' is not in the allowed values"},
		{name: "yaml: no target", layer: yamlLayer, tool: "type_text", args: map[string]any{"text": "x"}, reason: "the call's target has no 'owner'"},
		{name: "yaml: a forged argument named like the target", layer: yamlLayer, tool: "type_text", args: map[string]any{"text": "x", "owner": "session"}, target: user, reason: "target 'owner'"},
		{name: "yaml: two target fields", layer: yamlLayer, tool: "kill_app", args: map[string]any{"pid": 500.0}, target: &policy.Target{Kind: "process", PID: 500, Executable: "/usr/bin/xterm", Owner: policy.OwnerSession}, allow: true},
		{name: "yaml: wrong executable", layer: yamlLayer, tool: "kill_app", args: map[string]any{"pid": 500.0}, target: &policy.Target{Kind: "process", PID: 500, Executable: "/usr/bin/bash"}, reason: "target 'executable' does not match"},
		{name: "rego: own window", layer: regoLayer, tool: "type_text", args: map[string]any{}, target: own, allow: true},
		{name: "rego: the user's terminal, no pid argument", layer: regoLayer, tool: "type_text", args: map[string]any{}, target: user, reason: "not allowed by the Rego policy"},
		{name: "rego: no target is undefined, so denied", layer: regoLayer, tool: "type_text", args: map[string]any{}, reason: "not allowed by the Rego policy"},
		{name: "rego: pid argument does not stand in for the target", layer: regoLayer, tool: "type_text", args: map[string]any{"pid": 500.0}, target: user, reason: "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := policy.NewSet(nil, tt.layer).DecideTarget(t.Context(), tt.tool, tt.args, tt.target)
			if d.Allow != tt.allow {
				t.Fatalf("DecideTarget(%s, %v, %v) = %+v, want allow %v", tt.tool, tt.args, tt.target, d, tt.allow)
			}
			if !tt.allow && !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("DecideTarget reason = %q, want it to contain %q", d.Reason, tt.reason)
			}
		})
	}
}
