package policy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cua-host/cua-host/policy"
)

func ExampleParse() {
	l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "policy.yaml", Data: []byte(`
allow:
  tools: [get_config]
  rules:
    - tool: type_text
      constraints:
        text: {max_length: 20, pattern: '^[A-Za-z0-9 .,]*$'}
deny:
  tools: [kill_app]
`)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.Kind(), l.Summary())

	s := policy.NewSet(nil, l)
	ctx := context.Background()
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"get_config", nil},
		{"type_text_chars", map[string]any{"text": "Hello, world."}},
		{"type_text", map[string]any{"text": "rm -rf ~; echo done"}},
		{"kill_app", map[string]any{"pid": 42}},
	} {
		d := s.Decide(ctx, call.tool, call.args)
		fmt.Printf("%s allow=%v %s\n", d.Tool, d.Allow, d.Reason)
	}
	// Output:
	// yaml allow.tools: 1 tool, deny.tools: 1 tool, allow.rules: 1 rule for 1 tool
	// get_config allow=true allowed by the user policy
	// type_text allow=true allowed by the user policy
	// type_text allow=false Permission denied: user policy: tool 'type_text' argument constraints were not satisfied: argument 'text' does not match the required pattern
	// kill_app allow=false Permission denied: user policy: tool 'kill_app' is explicitly denied
}

func ExampleNewSet() {
	managed, err := policy.Parse(policy.KindRego, []policy.File{{Name: "managed.rego", Data: []byte(`package cua.policy

default allow := false

# The administrator never lets an agent kill processes.
allow if input.tool != "kill_app"
`)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	user, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "user.yaml", Data: []byte("allow: [kill_app, list_windows]\n")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := policy.NewSet(managed, user)
	ctx := context.Background()
	for _, tool := range []string{"list_windows", "kill_app", "click"} {
		d := s.Decide(ctx, tool, nil)
		fmt.Printf("%s: allow=%v layer=%q %s\n", tool, d.Allow, d.Layer, d.Reason)
	}
	// Output:
	// list_windows: allow=true layer="" allowed by the managed and user policies
	// kill_app: allow=false layer="managed" Permission denied: managed policy: tool 'kill_app' is not allowed by the Rego policy
	// click: allow=false layer="user" Permission denied: user policy: tool 'click' is not allowed by the YAML policy
}

func ExampleSet_Listed() {
	l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "p.yaml", Data: []byte(`
allow:
  tools: [get_config, list_apps]
  rules:
    - {tool: click, constraints: {x: {min: 0}}}
deny: [list_apps]
`)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := policy.NewSet(nil, l)
	for _, tool := range []string{"get_config", "click", "list_apps", "zoom"} {
		fmt.Println(tool, s.Listed(context.Background(), tool))
	}
	// Output:
	// get_config true
	// click true
	// list_apps false
	// zoom false
}

func ExampleLoad() {
	dir, err := os.MkdirTemp("", "policy-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"10-tools.rego": "package cua.tools\n\nread_only := {\"get_config\", \"list_windows\"}\n",
		"20-main.rego":  "package cua.policy\n\nimport data.cua.tools\n\ndefault allow := false\n\nallow if tools.read_only[input.tool]\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	l, err := policy.Load(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.Kind(), l.Summary())
	fmt.Println(l.SHA256())

	_, err = policy.LoadLayers("", filepath.Join(dir, "missing.yaml"))
	fmt.Println(err != nil)
	// Output:
	// rego 2 modules: 10-tools.rego (package cua.tools), 20-main.rego (package cua.policy)
	// 2623bab498f3c03364515ccb44ad8520843b025fcfc9ee9f2e5336734e50e08f
	// true
}
