package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reference driver's documented policy examples: a user YAML layer (an allowed tool, a
// rule with numeric constraints, a denied tool) and a managed Rego layer written for the
// reference (it tests input.server == "cua-driver").
const (
	referenceUserPolicy = `allow:
  tools: [get_screen_size]
  rules:
    - tool: click
      constraints: {x: {min: 0, max: 1920}, y: {min: 0, max: 1080}}
deny:
  tools: [type_text]
`
	referenceManagedPolicy = `package cua.policy

default allow = false

allow if {
	input.server == "cua-driver"
	input.tool != "kill_app"
}
`
)

// TestReferenceConfigurationDecides: a policy and a manifest written for the reference
// driver, named only by its CUA_DRIVER_* variables, give the decisions — and the messages —
// its documentation gives, through the shipped binary on a private display.
func TestReferenceConfigurationDecides(t *testing.T) {
	requireDisplayPrograms(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	managed := filepath.Join(dir, "managed.rego")
	for p, data := range map[string]string{user: referenceUserPolicy, managed: referenceManagedPolicy} {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	policyEnv := []string{"CUA_DRIVER_POLICY_FILE=" + user, "CUA_DRIVER_MANAGED_POLICY_FILE=" + managed,
		"CUA_DRIVER_PERMISSION_MODE=unrestricted", "CUA_DRIVER_DANGEROUSLY_BYPASS_APPROVALS=1"}
	manifest, _ := referenceManifestFile(t, dir)
	manifestEnv := []string{"CUA_DRIVER_PERMISSION_MODE=bounded", "CUA_DRIVER_CAPABILITY_MANIFEST_FILE=" + manifest,
		"CUA_DRIVER_CAPABILITY_MANIFEST_APPROVED=true"}
	tests := []struct {
		name string
		env  []string
		args []string
		exit int
		want string
	}{
		{"allowed by the YAML list", policyEnv, []string{"get_screen_size"}, 0, `"outcome":"completed"`},
		{"allowed by the YAML rule", policyEnv, []string{"click", `{"scope":"desktop","x":100,"y":100}`}, 0, `"outcome":"completed"`},
		{"outside the rule's constraints", policyEnv, []string{"click", `{"scope":"desktop","x":-5,"y":10}`}, 1,
			`Permission denied: user policy: tool 'click' argument constraints were not satisfied: argument 'x' must be \u003e= 0`},
		{"denied by the YAML deny list", policyEnv, []string{"type_text", `{"text":"x"}`}, 1, `Permission denied: user policy: tool 'type_text' is explicitly denied`},
		{"in neither YAML list", policyEnv, []string{"list_windows"}, 1, `Permission denied: user policy: tool 'list_windows' is not allowed by the YAML policy`},
		{"denied by the managed Rego layer first", policyEnv, []string{"kill_app", `{"pid":1}`}, 1, `Permission denied: managed policy: tool 'kill_app' is not allowed by the Rego policy`},
		{"the manifest's app launches", manifestEnv, []string{"launch_app", `{"name":"xterm"}`}, 0, `"outcome":"completed"`},
		{"another app is outside the manifest", manifestEnv, []string{"launch_app", `{"launch_path":"/usr/bin/xeyes"}`}, 1, `bounded_resource_outside_manifest`},
		{"a tool the manifest does not list", manifestEnv, []string{"get_screen_size"}, 1, `"code":"bounded_resource_outside_manifest"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runBinary(t, bin, tc.env, append([]string{"call", "--display", "private"}, tc.args...)...)
			if code != tc.exit || !strings.Contains(out, tc.want) {
				t.Errorf("call %v = exit %d\n%s%s\nwant exit %d and %s", tc.args, code, out, stderr, tc.exit, tc.want)
			}
		})
	}
}
