package policy_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// docExample is one call and the decision every version of a documented
// example must give; yaml and rego differ only where docs/policy.md says so.
type docExample struct {
	tool       string
	args       map[string]any
	target     *policy.Target
	yaml, rego bool
}

// docExamples are checked against the policies in docs/policy.md that start
// with "# example: NAME".
var docExamples = map[string][]docExample{
	// Rego only: a policy written for the reference driver (input.server "cua-driver").
	"reference-server": {
		{tool: "click", rego: true},
		{tool: "get_window_state", rego: true},
		{tool: "kill_app"},
	},
	"overview": {
		{tool: "get_config", yaml: true, rego: true},
		{tool: "click", args: map[string]any{"x": 5.0, "y": 5.0}, yaml: true, rego: true},
		{tool: "click", args: map[string]any{"x": -1.0, "y": 5.0}},
		{tool: "click", args: map[string]any{"x": "5", "y": 5.0}},
		{tool: "kill_app"},
		{tool: "zoom"},
	},
	"flat": {
		{tool: "get_config", yaml: true},
		{tool: "click", args: map[string]any{"x": 0.0}, yaml: true},
		{tool: "click", args: map[string]any{"x": -1.0}},
		{tool: "click"},
		{tool: "kill_app"},
	},
	"read-only": {
		{tool: "list_windows", yaml: true, rego: true},
		{tool: "zoom", args: map[string]any{"pid": 7.0}, yaml: true, rego: true},
		{tool: "health_report", yaml: true, rego: true},
		{tool: "clipboard_read"},
		{tool: "click", args: map[string]any{"x": 1.0, "y": 1.0}},
		{tool: "type_text", args: map[string]any{"text": "x"}},
		{tool: "kill_app", args: map[string]any{"pid": 7.0}},
	},
	"one-app": {
		{tool: "launch_app", args: map[string]any{"launch_path": "/usr/bin/gedit"}, yaml: true, rego: true},
		{tool: "launch_app", args: map[string]any{"launch_path": "/usr/bin/gedit", "timeout_ms": 5000.0}, yaml: true, rego: true},
		{tool: "launch_app", args: map[string]any{"launch_path": "/usr/bin/gedit", "urls": []any{"/etc/shadow"}}, yaml: true},
		{tool: "launch_app", args: map[string]any{"name": "gedit"}},
		{tool: "launch_app", args: map[string]any{"launch_path": "/usr/bin/xterm"}},
		{tool: "click", args: map[string]any{"x": 1.0, "y": 1.0}, yaml: true, rego: true},
		{tool: "kill_app", args: map[string]any{"pid": 7.0}},
		{tool: "clipboard_read"},
		{tool: "clipboard_write", args: map[string]any{"text": "x"}},
	},
	"own-windows": {
		{tool: "type_text", args: map[string]any{"text": "x"}, target: &policy.Target{Kind: "window", PID: 9, WindowID: 1, Owner: policy.OwnerSession}, yaml: true, rego: true},
		{tool: "type_text", args: map[string]any{"text": "x"}, target: &policy.Target{Kind: "window", PID: 7, WindowID: 2, Owner: policy.OwnerForeign}},
		{tool: "type_text", args: map[string]any{"text": "x", "pid": 9.0}, target: &policy.Target{Kind: "window", PID: 7, Owner: policy.OwnerForeign}},
		{tool: "type_text", args: map[string]any{"text": "x"}},
		{tool: "click", target: &policy.Target{Kind: "window", PID: 9, Owner: policy.OwnerSession}},
	},
	"typing": {
		{tool: "type_text", args: map[string]any{"text": "Hello, world!"}, yaml: true, rego: true},
		{tool: "type_text_chars", args: map[string]any{"text": "It's fine"}, yaml: true, rego: true},
		{tool: "type_text", args: map[string]any{"text": "日本語"}, yaml: true, rego: true},
		{tool: "type_text", args: map[string]any{"text": strings.Repeat("a", 200)}, yaml: true, rego: true},
		{tool: "type_text", args: map[string]any{"text": strings.Repeat("日", 200)}, yaml: true, rego: true}, // characters, not bytes
		{tool: "type_text", args: map[string]any{"text": strings.Repeat("日", 201)}},
		{tool: "type_text", args: map[string]any{"text": "rm -rf ~\n"}},
		{tool: "type_text", args: map[string]any{"text": 5.0}},
		{tool: "press_key", args: map[string]any{"key": "Return"}, yaml: true, rego: true},
		{tool: "press_key", args: map[string]any{"key": "Return", "modifier": []any{"ctrl"}}, yaml: true},
		{tool: "press_key", args: map[string]any{"key": "F5"}},
		{tool: "list_windows", yaml: true, rego: true},
		{tool: "kill_app", args: map[string]any{"pid": 1.0}},
	},
}

// TestDocsExamples loads every YAML and Rego policy in docs/policy.md and
// checks the documented decisions of the named examples.
func TestDocsExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(yaml|rego)\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 10 {
		t.Fatalf("docs/policy.md has %d yaml/rego blocks, want at least 10", len(blocks))
	}
	seen := map[string]map[string]bool{} // example → formats
	checked := 0
	for i, m := range blocks {
		lang, src := string(m[1]), string(m[2])
		name := "block"
		if first, _, _ := strings.Cut(src, "\n"); strings.HasPrefix(first, "# example: ") {
			name = strings.TrimPrefix(first, "# example: ")
		}
		file := "policy.yaml"
		if lang == "rego" {
			file = "policy.rego"
		}
		l := parse(t, file, src) // every policy on the page must load
		if name == "block" {
			t.Errorf("docs/policy.md block %d (%s) has no '# example: NAME' line", i, lang)
			continue
		}
		cases, ok := docExamples[name]
		if !ok {
			t.Errorf("docs/policy.md example %q has no decisions in docExamples", name)
			continue
		}
		if seen[name] == nil {
			seen[name] = map[string]bool{}
		}
		seen[name][lang] = true
		s := policy.NewSet(nil, l)
		for _, c := range cases {
			want := c.yaml
			if lang == "rego" {
				want = c.rego
			}
			checked++
			if d := s.DecideTarget(t.Context(), c.tool, c.args, c.target); d.Allow != want {
				t.Errorf("docs example %q (%s): Decide(%s, %v) = %+v, want allow=%v", name, lang, c.tool, c.args, d, want)
			}
		}
	}
	if checked < 60 {
		t.Errorf("checked %d documented decisions, want at least 60", checked)
	}
	for name := range docExamples {
		regoOnly := name == "reference-server"
		if (!regoOnly && !seen[name]["yaml"]) || (name != "flat" && !seen[name]["rego"]) {
			t.Errorf("docs example %q: formats %v, want yaml and rego", name, seen[name])
		}
	}
}
