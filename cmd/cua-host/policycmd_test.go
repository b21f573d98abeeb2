package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// policyTestFiles writes the policies used by the CLI tests and returns
// their directory.
func policyTestFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"user.yaml": `
allow:
  tools: [get_config, type_text]
  rules:
    - tool: click
      constraints: {x: {min: 0, max: 1920}, y: {min: 0, max: 1080}}
deny:
  tools: [kill_app]
`,
		"managed.rego": `package cua.policy

default allow := false

allow if input.tool != "type_text"
`,
		"bad.yaml":       "allow: {tools: [click], rulez: []}\n",
		"bad.rego":       "package cua.policy\n\nallow := \"yes\"\n",
		"rego.d/a.rego":  "package cua.lib\n\nsafe := {\"get_config\"}\n",
		"rego.d/b.rego":  "package cua.policy\n\nimport data.cua.lib\n\nallow if lib.safe[input.tool]\n",
		"unsupported.js": "{}",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runPolicyForTest runs runPolicy with an environment and captured output.
func runPolicyForTest(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runPolicy(t.Context(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPolicyCheck(t *testing.T) {
	dir := policyTestFiles(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	sha := func(name string) string {
		l, err := policy.Load(p(name))
		if err != nil {
			t.Fatalf("Load(%s) = %v", name, err)
		}
		return l.SHA256()
	}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		code     int
		stdout   []string // substrings
		stderr   []string // substrings
		noStdout []string
	}{
		{
			name: "no policy", args: []string{"check"}, code: 0,
			stdout: []string{"no policy configured"},
		},
		{
			name: "user yaml from the flag", args: []string{"check", "--policy", p("user.yaml")}, code: 0,
			stdout: []string{
				"managed policy: not configured",
				"user policy: " + p("user.yaml"), "kind:    yaml", "sha256:  " + sha("user.yaml"),
				"summary: allow.tools: 2 tools, deny.tools: 1 tool, allow.rules: 1 rule for 1 tool",
			},
		},
		{
			name: "both layers from the environment",
			args: []string{"check"},
			env:  map[string]string{policy.EnvManagedPolicyFile: p("managed.rego"), policy.EnvPolicyFile: p("rego.d")},
			code: 0,
			stdout: []string{
				"managed policy: " + p("managed.rego"), "kind:    rego", "sha256:  " + sha("managed.rego"),
				"summary: 1 module: managed.rego (package cua.policy)",
				"user policy: " + p("rego.d"), "sha256:  " + sha("rego.d"),
				"summary: 2 modules: a.rego (package cua.lib), b.rego (package cua.policy)",
			},
		},
		{
			name: "flags win over the environment",
			args: []string{"check", "--policy", p("user.yaml")},
			env:  map[string]string{policy.EnvPolicyFile: p("bad.yaml")},
			code: 0, stdout: []string{"user policy: " + p("user.yaml")},
		},
		{
			name: "invalid yaml names the layer and the file",
			args: []string{"check", "--policy", p("bad.yaml")}, code: 2,
			stderr:   []string{"user policy: " + p("bad.yaml") + ": bad.yaml: line 1: unknown key 'rulez' in allow"},
			noStdout: []string{"sha256"},
		},
		{
			name: "invalid managed rego, valid user layer still reported",
			args: []string{"check", "--managed-policy", p("bad.rego"), "--policy", p("user.yaml")}, code: 2,
			stdout: []string{"user policy: " + p("user.yaml"), "sha256:  " + sha("user.yaml")},
			stderr: []string{"managed policy: " + p("bad.rego") + ": data.cua.policy.allow must be boolean"},
		},
		{
			name: "missing file", args: []string{"check", "--policy", p("nope.yaml")}, code: 2,
			stderr: []string{"user policy: " + p("nope.yaml") + ": configured permission policy path does not exist"},
		},
		{
			name: "unsupported format", args: []string{"check", "--managed-policy", p("unsupported.js")}, code: 2,
			stderr: []string{"managed policy: " + p("unsupported.js") + ": unsupported policy format"},
		},
		{
			name: "positional file", args: []string{"check", p("user.yaml")}, code: 2,
			stderr: []string{"unexpected argument"},
		},
		{
			name: "unknown flag", args: []string{"check", "--polcy", "x"}, code: 2,
			stderr: []string{"flag provided but not defined: -polcy"},
		},
		{name: "flag help", args: []string{"check", "-h"}, code: 0, stdout: []string{"-managed-policy FILE"}}, // like every command's -h
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runPolicyForTest(t, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("runPolicy(%q) = %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, stdout, stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("runPolicy(%q) stdout = %q, want it to contain %q", tt.args, stdout, s)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("runPolicy(%q) stderr = %q, want it to contain %q", tt.args, stderr, s)
				}
			}
			for _, s := range tt.noStdout {
				if strings.Contains(stdout, s) {
					t.Errorf("runPolicy(%q) stdout = %q, want no %q", tt.args, stdout, s)
				}
			}
		})
	}
}

func TestPolicyEval(t *testing.T) {
	dir := policyTestFiles(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	user := []string{"--policy", p("user.yaml")}
	both := []string{"--managed-policy", p("managed.rego"), "--policy", p("user.yaml")}
	with := func(base []string, more ...string) []string {
		return append(append([]string{"eval"}, base...), more...)
	}
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		want   *policyEvalOutput // nil: nothing on stdout
		stderr string
	}{
		{
			name: "allowed by a rule", args: with(user, "--tool", "click", "--args", `{"x": 10, "y": 20}`), code: 0,
			want: &policyEvalOutput{Decision: "allow", Tool: "click", Reason: "allowed by the user policy"},
		},
		{
			name: "denied by a constraint", args: with(user, "--tool", "click", "--args", `{"x": 10, "y": 2000}`), code: 1,
			want: &policyEvalOutput{Decision: "deny", Tool: "click", Layer: "user",
				Reason: "Permission denied: user policy: tool 'click' argument constraints were not satisfied: argument 'y' must be <= 1080"},
		},
		{
			name: "args default to {}", args: with(user, "--tool", "click"), code: 1,
			want: &policyEvalOutput{Decision: "deny", Tool: "click", Layer: "user",
				Reason: "Permission denied: user policy: tool 'click' argument constraints were not satisfied: missing required argument 'x', missing required argument 'y'"},
		},
		{
			name: "explicitly denied", args: with(user, "--tool", "kill_app"), code: 1,
			want: &policyEvalOutput{Decision: "deny", Tool: "kill_app", Layer: "user",
				Reason: "Permission denied: user policy: tool 'kill_app' is explicitly denied"},
		},
		{
			name: "managed layer denies first, alias canonicalized", args: with(both, "--tool", "type_text_chars", "--args", `{"text": "hi"}`), code: 1,
			want: &policyEvalOutput{Decision: "deny", Tool: "type_text", Layer: "managed",
				Reason: "Permission denied: managed policy: tool 'type_text' is not allowed by the Rego policy"},
		},
		{
			name: "both layers allow", args: with(both, "--tool", "get_config"), code: 0,
			want: &policyEvalOutput{Decision: "allow", Tool: "get_config", Reason: "allowed by the managed and user policies"},
		},
		{
			name: "reserved arguments are dropped", args: with(user, "--tool", "click", "--args", `{"x": 1, "y": 1, "_x": -5}`), code: 0,
			want: &policyEvalOutput{Decision: "allow", Tool: "click", Reason: "allowed by the user policy"},
		},
		{
			name: "layers from the environment", args: []string{"eval", "--tool", "get_config"},
			env: map[string]string{policy.EnvManagedPolicyFile: p("rego.d")}, code: 0,
			want: &policyEvalOutput{Decision: "allow", Tool: "get_config", Reason: "allowed by the managed policy"},
		},
		{
			name: "no policy", args: []string{"eval", "--tool", "kill_app"}, code: 0,
			want: &policyEvalOutput{Decision: "allow", Tool: "kill_app", Reason: "no policy configured"},
		},
		{name: "missing --tool", args: with(user), code: 2, stderr: "--tool is required"},
		{name: "args not JSON", args: with(user, "--tool", "click", "--args", `{x: 1}`), code: 2, stderr: "--args:"},
		{name: "args an array", args: with(user, "--tool", "click", "--args", `[1, 2]`), code: 2, stderr: "--args must be a JSON object"},
		{name: "args null", args: with(user, "--tool", "click", "--args", `null`), code: 2, stderr: "--args must be a JSON object"},
		{name: "args a string", args: with(user, "--tool", "click", "--args", `"x"`), code: 2, stderr: "--args must be a JSON object"},
		{name: "args with trailing data", args: with(user, "--tool", "click", "--args", `{} {}`), code: 2, stderr: "--args:"},
		{name: "invalid policy", args: []string{"eval", "--policy", p("bad.rego"), "--tool", "click"}, code: 2,
			stderr: "cua-host policy eval: user policy: " + p("bad.rego") + ":"},
		{name: "missing managed policy from the environment", args: []string{"eval", "--tool", "click"},
			env: map[string]string{policy.EnvManagedPolicyFile: p("gone.rego")}, code: 2,
			stderr: "managed policy: " + p("gone.rego") + ": configured permission policy path does not exist"},
		{name: "extra argument", args: with(user, "--tool", "click", "extra"), code: 2, stderr: `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runPolicyForTest(t, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("runPolicy(%q) = %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, stdout, stderr)
			}
			if tt.stderr != "" && !strings.Contains(stderr, tt.stderr) {
				t.Errorf("runPolicy(%q) stderr = %q, want it to contain %q", tt.args, stderr, tt.stderr)
			}
			if tt.want == nil {
				if stdout != "" {
					t.Errorf("runPolicy(%q) stdout = %q, want nothing", tt.args, stdout)
				}
				return
			}
			if strings.Count(stdout, "\n") != 1 {
				t.Errorf("runPolicy(%q) stdout = %q, want one JSON line", tt.args, stdout)
			}
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.DisallowUnknownFields()
			var got policyEvalOutput
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("runPolicy(%q) stdout = %q: %v", tt.args, stdout, err)
			}
			if got != *tt.want {
				t.Errorf("runPolicy(%q) = %+v, want %+v", tt.args, got, *tt.want)
			}
		})
	}
}

func TestPolicyCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "no subcommand", code: 2, stderr: "usage:"},
		{name: "unknown subcommand", args: []string{"lint"}, code: 2, stderr: `unknown command "lint"`},
		{name: "help", args: []string{"help"}, code: 0, stdout: "cua-host policy eval"},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: "cua-host policy check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runPolicyForTest(t, nil, tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("runPolicy(%q) = %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}
