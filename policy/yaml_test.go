package policy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// yamlLoadErrorCases are invalid YAML policies; FuzzYAMLLoad is seeded
// from them.
var yamlLoadErrorCases = []struct {
	name string
	src  string
	want string // part of the error message after "policy.yaml: "
}{
	{name: "empty file", src: "", want: "empty YAML policy"},
	{name: "only comments", src: "# nothing\n", want: "empty YAML policy"},
	{name: "null document", src: "---\n~\n", want: "empty YAML policy"},
	{name: "two documents", src: "allow: [a]\n---\ndeny: [a]\n", want: "line 2: a policy file holds one YAML document; found a second one"},
	{name: "syntax error", src: "allow: [a\n", want: "yaml: line 1"},
	{name: "root is a list", src: "- click\n", want: "line 1: the policy must be a mapping"},
	{name: "unknown top-level key", src: "allow: []\nversion: 1\n", want: "line 2: unknown key 'version' in the policy; expected allow, deny"},
	{name: "non-string key", src: "1: [a]\n", want: "line 1: keys in the policy must be strings"},
	{name: "duplicate top-level key", src: "deny: [a]\ndeny: [b]\n", want: "line 2: duplicate key 'deny' in the policy (first at line 1)"},
	{name: "merge key", src: "base: &b {tools: [a]}\n", want: "unknown key 'base'"},
	{name: "merge key inside allow", src: "allow:\n  <<: {tools: [a]}\n", want: "line 2: merge keys (<<) are not supported in allow"},
	{name: "unknown key in allow", src: "allow:\n  tool: [a]\n", want: "line 2: unknown key 'tool' in allow; expected tools, rules"},
	{name: "unknown key in deny", src: "deny:\n  rules: []\n", want: "line 2: unknown key 'rules' in deny; expected tools"},
	{name: "allow is a string", src: "allow: click\n", want: "line 1: allow must be a mapping {tools, rules} or a list"},
	{name: "deny is a number", src: "deny: 3\n", want: "line 1: deny must be a mapping {tools} or a list"},
	{name: "allow.tools is a mapping", src: "allow: {tools: {a: 1}}\n", want: "line 1: allow.tools must be a list"},
	{name: "deny list holds a rule", src: "deny: [{tool: a}]\n", want: "line 1: tool names must be strings (in deny)"},
	{name: "empty name in allow.tools", src: "allow: {tools: [a, '']}\n", want: "YAML tool lists cannot contain an empty tool name (in allow.tools)"},
	{name: "null name in deny.tools", src: "deny:\n  tools:\n    - a\n    -\n", want: "line 4: YAML tool lists cannot contain an empty tool name (in deny.tools)"},
	{name: "empty name in flat allow", src: "allow: ['']\n", want: "YAML tool lists cannot contain an empty tool name (in allow)"},
	{name: "number as tool name", src: "allow: [123]\n", want: "tool names must be strings (in allow)"},
	{name: "tool name with spaces", src: "deny: [' type_text']\n", want: "tool name ' type_text' has leading or trailing spaces (in deny)"},
	{name: "rule with empty tool", src: "allow: {rules: [{tool: ''}]}\n", want: "YAML allow rule has an empty tool name"},
	{name: "rule without tool", src: "allow: {rules: [{constraints: {x: {min: 0}}}]}\n", want: "YAML allow rule has no tool"},
	{name: "rule is a string", src: "allow: {rules: [click]}\n", want: "allow rule must be a mapping {tool, constraints}"},
	{name: "unknown key in rule", src: "allow: [{tool: click, constraint: {}}]\n", want: "unknown key 'constraint' in allow rule; expected tool, constraints"},
	{name: "constraints is a list", src: "allow: [{tool: click, constraints: [x]}]\n", want: "constraints for tool 'click' must be a mapping"},
	{
		name: "unknown key in constraint (the reference's vacuous const)",
		src:  "allow:\n  rules:\n    - tool: screenshot\n      constraints:\n        x: {const: 0}\n",
		want: "line 5: unknown key 'const' in constraint for 'screenshot.x'; expected min, max, max_length, pattern, allowed",
	},
	{name: "duplicate check", src: "allow: [{tool: click, constraints: {x: {min: 0, min: 1}}}]\n", want: "duplicate key 'min' in constraint for 'click.x'"},
	{name: "duplicate argument", src: "allow: [{tool: click, constraints: {x: {min: 0}, x: {max: 1}}}]\n", want: "duplicate key 'x' in constraints for tool 'click'"},
	{name: "unknown target field", src: "allow: [{tool: click, constraints: {target.title: {pattern: x}}}]\n", want: "invalid constraint for 'click.target.title': the resolved target has no field 'title' (want one of kind, pid, window_id, executable, owner)"},
	{name: "no checks", src: "allow: [{tool: click, constraints: {x: {}}}]\n", want: "invalid constraint for 'click.x': constraint must define at least one check"},
	{name: "null checks", src: "allow: [{tool: click, constraints: {x: }}]\n", want: "invalid constraint for 'click.x': constraint must define at least one check"},
	{name: "checks are a list", src: "allow: [{tool: click, constraints: {x: [1]}}]\n", want: "invalid constraint for 'click.x': must be a mapping of checks"},
	{name: "min greater than max", src: "allow: [{tool: click, constraints: {x: {min: 10, max: 5}}}]\n", want: "invalid constraint for 'click.x': min cannot be greater than max (10 > 5)"},
	{name: "min is a string", src: "allow: [{tool: click, constraints: {x: {min: zero}}}]\n", want: "invalid constraint for 'click.x': min: must be a number"},
	{name: "max is quoted", src: "allow: [{tool: click, constraints: {x: {max: '5'}}}]\n", want: "invalid constraint for 'click.x': max: must be a number"},
	{name: "max is NaN", src: "allow: [{tool: click, constraints: {x: {max: .nan}}}]\n", want: "invalid constraint for 'click.x': max: must be a finite number"},
	{name: "min is infinite", src: "allow: [{tool: click, constraints: {x: {min: -.inf}}}]\n", want: "invalid constraint for 'click.x': min: must be a finite number"},
	{name: "negative max_length", src: "allow: [{tool: type_text, constraints: {text: {max_length: -1}}}]\n", want: "invalid constraint for 'type_text.text': max_length: must be a non-negative integer"},
	{name: "fractional max_length", src: "allow: [{tool: type_text, constraints: {text: {max_length: 1.5}}}]\n", want: "max_length: must be a non-negative integer"},
	{name: "bad pattern", src: "allow: [{tool: type_text, constraints: {text: {pattern: '(a'}}}]\n", want: "invalid constraint for 'type_text.text': pattern: invalid regex pattern: error parsing regexp: missing closing )"},
	{name: "lookahead is not RE2", src: "allow: [{tool: type_text, constraints: {text: {pattern: '(?=a)'}}}]\n", want: "invalid constraint for 'type_text.text': pattern: invalid regex pattern"},
	{name: "pattern is a number", src: "allow: [{tool: type_text, constraints: {text: {pattern: 5}}}]\n", want: "pattern: must be a string"},
	{name: "allowed is empty", src: "allow: [{tool: press_key, constraints: {key: {allowed: []}}}]\n", want: "invalid constraint for 'press_key.key': allowed: must list at least one value"},
	{name: "allowed is a scalar", src: "allow: [{tool: press_key, constraints: {key: {allowed: Return}}}]\n", want: "allowed: must be a list of values"},
	{name: "allowed holds binary", src: "allow: [{tool: press_key, constraints: {key: {allowed: [!!binary aGk=]}}}]\n", want: "allowed: line 1: values with tag !!binary are not JSON values"},
	{name: "allowed object with a number key", src: "allow: [{tool: press_key, constraints: {key: {allowed: [{1: a}]}}}]\n", want: "allowed: line 1: object keys must be strings"},
	{name: "numeric and string checks mixed", src: "allow: [{tool: click, constraints: {x: {min: 0, max_length: 3}}}]\n", want: "invalid constraint for 'click.x': min/max need a number and max_length/pattern need a string"},
	{name: "reserved argument", src: "allow: [{tool: click, constraints: {_meta: {max_length: 3}}}]\n", want: "invalid constraint for 'click._meta': arguments starting with '_' are removed"},
	{name: "empty argument name", src: "allow: [{tool: click, constraints: {'': {min: 0}}}]\n", want: "constraints for tool 'click' name an empty argument"},
	{name: "alias bomb", src: "a: &a [x, x, x, x, x, x, x, x]\n", want: "unknown key 'a'"},
}

func TestYAMLLoadErrors(t *testing.T) {
	for _, tt := range yamlLoadErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "policy.yaml", Data: []byte(tt.src)}})
			if err == nil {
				t.Fatalf("Parse(%q) = layer %s, want error %q", tt.src, l.Summary(), tt.want)
			}
			if !errors.Is(err, policy.ErrInvalid) {
				t.Errorf("Parse(%q) = %v, want ErrInvalid", tt.src, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "policy.yaml: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("Parse(%q) = %q, want %q naming the file", tt.src, msg, tt.want)
			}
		})
	}
}

func TestYAMLAliasBudget(t *testing.T) {
	// Ten levels of nine-fold aliases: a few hundred bytes that would
	// expand to 9^10 values.
	var b strings.Builder
	b.WriteString("allow:\n  - tool: t\n    constraints:\n      v:\n        allowed:\n")
	b.WriteString("          - &a0 [v, v, v, v, v, v, v, v, v]\n")
	for i := 1; i <= 9; i++ {
		prev := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "          - &a%d [%s%s]\n", i, strings.Repeat(prev+", ", 8), prev)
	}
	_, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "policy.yaml", Data: []byte(b.String())}})
	if !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), "too many YAML nodes") {
		t.Errorf("Parse(alias bomb) = %v, want a too-complex error", err)
	}
}

func TestYAMLAnchorsWork(t *testing.T) {
	l := yamlLayer(t, `
allow:
  rules:
    - tool: click
      constraints:
        x: &coord {min: 0, max: 100}
        y: *coord
`)
	s := policy.NewSet(nil, l)
	if d := s.Decide(t.Context(), "click", map[string]any{"x": 1.0, "y": 100.0}); !d.Allow {
		t.Errorf("Decide(click in range) = %+v, want allow", d)
	}
	if d := s.Decide(t.Context(), "click", map[string]any{"x": 1.0, "y": 101.0}); d.Allow {
		t.Errorf("Decide(click y=101) = %+v, want deny through the aliased constraint", d)
	}
}

// constraintsYAML has one rule per constraint kind.
const constraintsYAML = `
allow:
  rules:
    - tool: num
      constraints: {n: {min: 1, max: 3}}
    - tool: min_only
      constraints: {n: {min: 0.5}}
    - tool: max_only
      constraints: {n: {max: -1}}
    - tool: length
      constraints: {s: {max_length: 3}}
    - tool: pattern
      constraints: {s: {pattern: '^[a-z]+$'}}
    - tool: unanchored
      constraints: {s: {pattern: 'ab'}}
    - tool: enum
      constraints: {v: {allowed: [1, one, true, null, [1, 2], {k: v}, 2.5e3]}}
    - tool: combined
      constraints:
        s: {max_length: 5, pattern: '^a', allowed: [abc, abcdef, b]}
        n: {min: 0}
    - tool: two_rules
      constraints: {n: {max: 10}}
    - tool: two_rules
      constraints: {s: {allowed: [ok]}}
    - tool: no_constraints
`

// deny starts the reason of a user-layer denial.
const deny = "Permission denied: user policy: tool "

// constraintCases are decisions of constraintsYAML as the user layer;
// FuzzDecide is seeded from them.
var constraintCases = []struct {
	name   string
	tool   string
	args   map[string]any
	reason string // "" means allow
}{
	{name: "number in range", tool: "num", args: map[string]any{"n": 2.0}},
	{name: "number at min", tool: "num", args: map[string]any{"n": 1.0}},
	{name: "number at max", tool: "num", args: map[string]any{"n": 3.0}},
	{name: "Go int", tool: "num", args: map[string]any{"n": 2}},
	{name: "json.Number", tool: "num", args: map[string]any{"n": json.Number("2")}},
	{name: "below min", tool: "num", args: map[string]any{"n": 0.0}, reason: deny + "'num' argument constraints were not satisfied: argument 'n' must be >= 1"},
	{name: "above max", tool: "num", args: map[string]any{"n": 3.5}, reason: deny + "'num' argument constraints were not satisfied: argument 'n' must be <= 3"},
	{name: "numeric string", tool: "num", args: map[string]any{"n": "2"}, reason: deny + "'num' argument constraints were not satisfied: argument 'n' must be a number"},
	{name: "bool is not a number", tool: "num", args: map[string]any{"n": true}, reason: deny + "'num' argument constraints were not satisfied: argument 'n' must be a number"},
	{name: "missing argument", tool: "num", args: map[string]any{"m": 2.0}, reason: deny + "'num' argument constraints were not satisfied: missing required argument 'n'"},
	{name: "nil arguments", tool: "num", reason: deny + "'num' argument constraints were not satisfied: missing required argument 'n'"},
	{name: "reserved key does not count", tool: "num", args: map[string]any{"_n": 2.0}, reason: deny + "'num' argument constraints were not satisfied: missing required argument 'n'"},
	{name: "fractional min", tool: "min_only", args: map[string]any{"n": 0.5}},
	{name: "below fractional min", tool: "min_only", args: map[string]any{"n": 0.49}, reason: deny + "'min_only' argument constraints were not satisfied: argument 'n' must be >= 0.5"},
	{name: "negative max", tool: "max_only", args: map[string]any{"n": -1.0}},
	{name: "above negative max", tool: "max_only", args: map[string]any{"n": 0.0}, reason: deny + "'max_only' argument constraints were not satisfied: argument 'n' must be <= -1"},
	{name: "short string", tool: "length", args: map[string]any{"s": "abc"}},
	{name: "length counts characters not bytes", tool: "length", args: map[string]any{"s": "日本語"}},
	{name: "long string", tool: "length", args: map[string]any{"s": "abcd"}, reason: deny + "'length' argument constraints were not satisfied: argument 's' must be at most 3 characters"},
	{name: "number is not a string", tool: "length", args: map[string]any{"s": 3.0}, reason: deny + "'length' argument constraints were not satisfied: argument 's' must be a string"},
	{name: "pattern match", tool: "pattern", args: map[string]any{"s": "abc"}},
	{name: "pattern mismatch", tool: "pattern", args: map[string]any{"s": "abc1"}, reason: deny + "'pattern' argument constraints were not satisfied: argument 's' does not match the required pattern"},
	{name: "pattern is unanchored", tool: "unanchored", args: map[string]any{"s": "xxabyy"}},
	{name: "unanchored mismatch", tool: "unanchored", args: map[string]any{"s": "a b"}, reason: deny + "'unanchored' argument constraints were not satisfied: argument 's' does not match the required pattern"},
	{name: "allowed YAML int equals JSON float", tool: "enum", args: map[string]any{"v": 1.0}},
	{name: "allowed equals json.Number", tool: "enum", args: map[string]any{"v": json.Number("1.0")}},
	{name: "allowed exponent", tool: "enum", args: map[string]any{"v": 2500.0}},
	{name: "allowed string", tool: "enum", args: map[string]any{"v": "one"}},
	{name: "allowed bool", tool: "enum", args: map[string]any{"v": true}},
	{name: "allowed null", tool: "enum", args: map[string]any{"v": nil}},
	{name: "allowed array", tool: "enum", args: map[string]any{"v": []any{1.0, 2.0}}},
	{name: "allowed object", tool: "enum", args: map[string]any{"v": map[string]any{"k": "v"}}},
	{name: "not allowed number", tool: "enum", args: map[string]any{"v": 2.0}, reason: deny + "'enum' argument constraints were not satisfied: argument 'v' is not in the allowed values"},
	{name: "not allowed case", tool: "enum", args: map[string]any{"v": "ONE"}, reason: deny + "'enum' argument constraints were not satisfied: argument 'v' is not in the allowed values"},
	{name: "string 1 is not number 1", tool: "enum", args: map[string]any{"v": "1"}, reason: deny + "'enum' argument constraints were not satisfied: argument 'v' is not in the allowed values"},
	{name: "array order matters", tool: "enum", args: map[string]any{"v": []any{2.0, 1.0}}, reason: deny + "'enum' argument constraints were not satisfied: argument 'v' is not in the allowed values"},
	{name: "object with extra key", tool: "enum", args: map[string]any{"v": map[string]any{"k": "v", "x": 1.0}}, reason: deny + "'enum' argument constraints were not satisfied: argument 'v' is not in the allowed values"},
	{name: "false is not true", tool: "enum", args: map[string]any{"v": false}, reason: deny + "'enum' argument constraints were not satisfied: argument 'v' is not in the allowed values"},
	{name: "combined pass", tool: "combined", args: map[string]any{"s": "abc", "n": 0.0}},
	{name: "combined: length before allowed", tool: "combined", args: map[string]any{"s": "abcdef", "n": 1.0}, reason: deny + "'combined' argument constraints were not satisfied: argument 's' must be at most 5 characters"},
	{name: "combined: pattern", tool: "combined", args: map[string]any{"s": "b", "n": 1.0}, reason: deny + "'combined' argument constraints were not satisfied: argument 's' does not match the required pattern"},
	{name: "combined: allowed", tool: "combined", args: map[string]any{"s": "ab", "n": 1.0}, reason: deny + "'combined' argument constraints were not satisfied: argument 's' is not in the allowed values"},
	{name: "combined: every failure, in argument order", tool: "combined", args: map[string]any{"s": "abcdef", "n": -1.0}, reason: deny + "'combined' argument constraints were not satisfied: argument 'n' must be >= 0, argument 's' must be at most 5 characters"},
	{name: "first of two rules", tool: "two_rules", args: map[string]any{"n": 10.0}},
	{name: "second of two rules", tool: "two_rules", args: map[string]any{"n": 11.0, "s": "ok"}},
	{name: "every rule's reason", tool: "two_rules", args: map[string]any{"n": 11.0}, reason: deny + "'two_rules' argument constraints were not satisfied: rule 1: argument 'n' must be <= 10; rule 2: missing required argument 's'"},
	{name: "rule without constraints", tool: "no_constraints", args: map[string]any{"anything": 1.0}},
	{name: "tool without rule", tool: "other", reason: deny + "'other' is not allowed by the YAML policy"},
	{name: "hostile tool name is quoted", tool: "x'\ny", reason: deny + `"x'\ny" is not allowed by the YAML policy`},
}

func TestYAMLConstraints(t *testing.T) {
	s := policy.NewSet(nil, yamlLayer(t, constraintsYAML))
	for _, tt := range constraintCases {
		t.Run(tt.name, func(t *testing.T) {
			d := s.Decide(t.Context(), tt.tool, tt.args)
			if d.Allow != (tt.reason == "") || (tt.reason != "" && d.Reason != tt.reason) {
				t.Errorf("Decide(%s, %v) = %+v, want reason %q", tt.tool, tt.args, d, tt.reason)
			}
			if !d.Allow && (d.Layer != policy.LayerUser || d.Err != nil) {
				t.Errorf("Decide(%s, %v) = %+v, want a user-layer denial without error", tt.tool, tt.args, d)
			}
		})
	}
}

func TestYAMLEvaluationOrder(t *testing.T) {
	forms := []struct {
		name string
		src  string
	}{
		{name: "mapping form", src: `
allow:
  tools: [get_config, kill_app, type_text_chars]
  rules:
    - tool: click
      constraints: {x: {max: 10}}
    - tool: kill_app
      constraints: {pid: {min: 1}}
    - tool: get_config
      constraints: {never: {allowed: [nope]}}
deny:
  tools: [kill_app]
`},
		{name: "flat form", src: `
allow:
  - get_config
  - kill_app
  - type_text_chars
  - tool: click
    constraints: {x: {max: 10}}
  - tool: kill_app
    constraints: {pid: {min: 1}}
  - {tool: get_config, constraints: {never: {allowed: [nope]}}}
deny: [kill_app]
`},
	}
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		reason string
	}{
		{name: "deny beats allow.tools and rules", tool: "kill_app", args: map[string]any{"pid": 5.0}, reason: "tool 'kill_app' is explicitly denied"},
		{name: "allow.tools skips rules", tool: "get_config"},
		{name: "rule passes", tool: "click", args: map[string]any{"x": 10.0}},
		{name: "rule fails", tool: "click", args: map[string]any{"x": 11.0}, reason: "tool 'click' argument constraints were not satisfied: argument 'x' must be <= 10"},
		{name: "alias in the policy and the call", tool: "type_text_chars"},
		{name: "canonical name of an aliased entry", tool: "type_text"},
		{name: "unlisted", tool: "zoom", reason: "tool 'zoom' is not allowed by the YAML policy"},
	}
	for _, form := range forms {
		s := policy.NewSet(yamlLayer(t, form.src), nil)
		for _, tt := range tests {
			t.Run(form.name+"/"+tt.name, func(t *testing.T) {
				d := s.Decide(t.Context(), tt.tool, tt.args)
				want := ""
				if tt.reason != "" {
					want = "Permission denied: managed policy: " + tt.reason
				}
				if d.Allow != (want == "") || (want != "" && (d.Reason != want || d.Layer != policy.LayerManaged)) {
					t.Errorf("Decide(%s) = %+v, want reason %q", tt.tool, d, want)
				}
				if d.Tool != policy.CanonicalTool(tt.tool) {
					t.Errorf("Decide(%s).Tool = %q, want %q", tt.tool, d.Tool, policy.CanonicalTool(tt.tool))
				}
			})
		}
	}
}

func TestYAMLSummary(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{name: "empty", src: "{}", want: "allow.tools: 0 tools, deny.tools: 0 tools, allow.rules: 0 rules for 0 tools"},
		{name: "counts", src: constraintsYAML, want: "allow.tools: 0 tools, deny.tools: 0 tools, allow.rules: 11 rules for 10 tools"},
		{name: "read only", src: readOnlyYAML, want: "allow.tools: 4 tools, deny.tools: 2 tools, allow.rules: 1 rule for 1 tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := yamlLayer(t, tt.src).Summary(); got != tt.want {
				t.Errorf("Summary() = %q, want %q", got, tt.want)
			}
		})
	}
}
