package policy_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

func TestRegoLoadErrors(t *testing.T) {
	const pkg = "package cua.policy\n\ndefault allow := false\n\n"
	disabled := "is not available to cua-host policies (nondeterministic and network builtins, print and trace are disabled)"
	tests := []struct {
		name string
		src  string
		want string
	}{
		{name: "http.send", src: pkg + "allow if {\n\tr := http.send({\"method\": \"get\", \"url\": \"http://127.0.0.1/\"})\n\tr.status_code == 200\n}\n", want: "policy.rego:6: http.send " + disabled},
		{name: "time.now_ns", src: pkg + "allow if time.now_ns() > 0\n", want: "policy.rego:5: time.now_ns " + disabled},
		{name: "net.lookup_ip_addr", src: pkg + "allow if count(net.lookup_ip_addr(\"localhost\")) > 0\n", want: "net.lookup_ip_addr " + disabled},
		{name: "rand.intn", src: pkg + "allow if rand.intn(\"x\", 10) > 5\n", want: "rand.intn " + disabled},
		{name: "uuid.rfc4122", src: pkg + "allow if uuid.rfc4122(\"x\") != \"\"\n", want: "uuid.rfc4122 " + disabled},
		{name: "opa.runtime", src: pkg + "allow if opa.runtime().env.HOME != \"\"\n", want: "opa.runtime " + disabled},
		{name: "io.jwt.decode_verify", src: pkg + "allow if {\n\t[ok, _, _] := io.jwt.decode_verify(input.tool, {})\n\tok\n}\n", want: "io.jwt.decode_verify " + disabled},
		{name: "io.jwt.decode", src: pkg + "allow if {\n\t[h, _, _] := io.jwt.decode(input.tool)\n\th.alg == \"none\"\n}\n", want: "io.jwt.decode " + disabled},
		{name: "print", src: pkg + "allow if {\n\tprint(input.tool)\n\tinput.tool == \"click\"\n}\n", want: "policy.rego:6: print " + disabled},
		{name: "trace", src: pkg + "allow if {\n\ttrace(input.tool)\n\tinput.tool == \"click\"\n}\n", want: "trace " + disabled},
		{name: "nested call", src: pkg + "allow if count([x | x := time.now_ns()]) > 0\n", want: "time.now_ns " + disabled},
		{name: "allow is a string", src: "package cua.policy\n\nallow := \"yes\"\n", want: "data.cua.policy.allow must be boolean, but the type checker infers string"},
		{name: "allow copies input", src: "package cua.policy\n\nallow := x if x := input.arguments.ok\n", want: "data.cua.policy.allow must be boolean, but the type checker infers any"},
		{name: "allow is a set", src: "package cua.policy\n\nallow contains input.tool if true\n", want: "must be boolean, but the type checker infers set"},
		{name: "allow is an object", src: "package cua.policy\n\nallow[input.tool] := true\n", want: "must be boolean"},
		{name: "allow is a function", src: "package cua.policy\n\nallow(x) if x == 1\n", want: "function data.cua.policy.allow used as reference, not called"},
		{name: "no allow rule", src: "package cua.policy\n\ndeny if true\n", want: "the policy defines no rule data.cua.policy.allow"},
		{name: "wrong package", src: "package policy\n\nallow if true\n", want: "the policy defines no rule data.cua.policy.allow"},
		{name: "v0 syntax", src: "package cua.policy\n\nallow { true }\n", want: "policy.rego:3: rego_parse_error: `if` keyword is required before rule body"},
		{name: "parse error", src: "package cua.policy\n\nallow if {\n", want: "policy.rego:4: rego_parse_error: unexpected eof token"},
		{name: "strict: unused import", src: "package cua.policy\n\nimport data.other\n\nallow if true\n", want: "rego_compile_error: import data.other unused"},
		{name: "undefined function", src: pkg + "allow if nope(input.tool)\n", want: "rego_type_error: undefined function nope"},
		{
			name: "synthetic input raises an error",
			src:  pkg + "allow if to_number(input.tool) > 0\n",
			want: `evaluating data.cua.policy.allow for the input {"server":"cua-host","tool":"","arguments":{}}: policy.rego:5: eval_builtin_error: to_number`,
		},
		{
			name: "synthetic input gives conflicting values",
			src:  "package cua.policy\n\nallow := true if input.tool == \"\"\n\nallow := false if input.server == \"cua-host\"\n",
			want: "policy.rego:5: eval_conflict_error: rule data.cua.policy.allow produced conflicting values: true at policy.rego:3; false at policy.rego:5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := policy.Parse(policy.KindRego, []policy.File{{Name: "policy.rego", Data: []byte(tt.src)}})
			if err == nil {
				t.Fatalf("Parse(%q) = layer %s, want error %q", tt.src, l.Summary(), tt.want)
			}
			if !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse() = %q, want ErrInvalid containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse() = %q, want a single-line message", err)
			}
		})
	}
}

func TestRegoAccepts(t *testing.T) {
	tests := []struct {
		name string
		src  string
	}{
		{name: "default and rules", src: readOnlyRego},
		{name: "no default", src: "package cua.policy\n\nallow if input.tool == \"get_config\"\n"},
		{name: "import rego.v1", src: "package cua.policy\n\nimport rego.v1\n\nallow if input.tool == \"get_config\"\n"},
		{name: "deterministic builtins", src: "package cua.policy\n\nallow if {\n\tregex.match(`^get_`, input.tool)\n\tnet.cidr_contains(\"10.0.0.0/8\", \"10.1.2.3\")\n\ttime.parse_rfc3339_ns(\"2024-01-01T00:00:00Z\") > 0\n}\n"},
		{name: "allow always", src: "package cua.policy\n\nallow := true\n"},
		{name: "allow never", src: "package cua.policy\n\nallow := false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			regoLayer(t, tt.src)
		})
	}
}

func TestRegoDecide(t *testing.T) {
	s := policy.NewSet(nil, regoLayer(t, readOnlyRego))
	probe := policy.NewSet(nil, regoLayer(t, `package cua.policy

default allow := false

# input.server is always "cua-host".
allow if {
	input.server == "cua-host"
	input.tool == "server_check"
}

# Reserved arguments never reach the policy.
allow if input.arguments._force == true

allow if {
	input.tool == "to_number"
	to_number(input.arguments.n) > 3
}

allow := true if input.arguments.a == 1

allow := false if input.arguments.b == 1
`))
	const notAllowed = "is not allowed by the Rego policy"
	tests := []struct {
		name    string
		set     *policy.Set
		tool    string
		args    map[string]any
		allow   bool
		reason  string // for a denial, the full reason
		wantErr bool
	}{
		{name: "listed tool", set: s, tool: "get_config", allow: true},
		{name: "alias reaches the policy canonical", set: s, tool: "type_text_chars", allow: true},
		{name: "denied tool", set: s, tool: "kill_app", reason: "Permission denied: user policy: tool 'kill_app' " + notAllowed},
		{name: "denied although listed", set: s, tool: "list_windows", reason: "Permission denied: user policy: tool 'list_windows' " + notAllowed},
		{name: "click in range", set: s, tool: "click", args: map[string]any{"x": 1920.0, "y": 0.0}, allow: true},
		{name: "click out of range", set: s, tool: "click", args: map[string]any{"x": 1921.0, "y": 0.0}, reason: "Permission denied: user policy: tool 'click' " + notAllowed},
		{name: "click with a string", set: s, tool: "click", args: map[string]any{"x": "5", "y": 0.0}, reason: "Permission denied: user policy: tool 'click' " + notAllowed},
		{name: "input.server", set: probe, tool: "server_check", allow: true},
		{name: "reserved argument is invisible", set: probe, tool: "x", args: map[string]any{"_force": true}, reason: "Permission denied: user policy: tool 'x' " + notAllowed},
		{name: "builtin error denies with an error", set: probe, tool: "to_number", args: map[string]any{"n": "many"}, wantErr: true,
			reason: "Policy evaluation error: user policy: policy.rego:16: eval_builtin_error: to_number: strconv.ParseFloat: parsing \"many\": invalid syntax"},
		{name: "builtin success", set: probe, tool: "to_number", args: map[string]any{"n": "4"}, allow: true},
		{name: "conflict denies with an error", set: probe, tool: "x", args: map[string]any{"a": 1.0, "b": 1.0}, wantErr: true},
		{name: "NaN argument denies with an error", set: probe, tool: "x", args: map[string]any{"n": math.NaN()}, wantErr: true,
			reason: "Policy evaluation error: user policy: arguments: argument 'n': not a finite number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.set.Decide(t.Context(), tt.tool, tt.args)
			if d.Allow != tt.allow {
				t.Fatalf("Decide(%s, %v) = %+v, want allow=%v", tt.tool, tt.args, d, tt.allow)
			}
			if tt.allow {
				return
			}
			if tt.reason != "" && d.Reason != tt.reason {
				t.Errorf("Decide(%s, %v).Reason = %q, want %q", tt.tool, tt.args, d.Reason, tt.reason)
			}
			if (d.Err != nil) != tt.wantErr || (tt.wantErr && !errors.Is(d.Err, policy.ErrEvaluation)) {
				t.Errorf("Decide(%s, %v).Err = %v, want error=%v", tt.tool, tt.args, d.Err, tt.wantErr)
			}
			if tt.wantErr && !strings.HasPrefix(d.Reason, "Policy evaluation error: user policy: ") {
				t.Errorf("Decide(%s, %v).Reason = %q, want an evaluation error", tt.tool, tt.args, d.Reason)
			}
			if d.Layer != policy.LayerUser {
				t.Errorf("Decide(%s, %v).Layer = %q, want user", tt.tool, tt.args, d.Layer)
			}
		})
	}
}

func TestRegoCancelledContext(t *testing.T) {
	s := policy.NewSet(regoLayer(t, "package cua.policy\n\nallow := true\n"), nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := s.Decide(ctx, "get_config", nil)
	if d.Allow || !errors.Is(d.Err, policy.ErrEvaluation) || d.Layer != policy.LayerManaged {
		t.Errorf("Decide(cancelled) = %+v, want an evaluation-error denial", d)
	}
}

func TestRegoSummary(t *testing.T) {
	if got, want := regoLayer(t, readOnlyRego).Summary(), "1 module: policy.rego (package cua.policy)"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}
