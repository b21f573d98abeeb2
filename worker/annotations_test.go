package worker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
)

// TestToolsListAnnotationsAreTheInventorys: tools/list reports, for every tool, exactly the
// MCP annotations of its inventory entry, and the registry carries the same ones.
func TestToolsListAnnotationsAreTheInventorys(t *testing.T) {
	h := startTestWorker(t, testWorkerOptions{register: func(reg *tool.Registry) {
		desktop.Register(reg, nil, desktop.Options{Unavailable: errors.New("no display in this test")})
	}})
	c := h.mustSession("u", authz.Unrestricted, "")
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	inv := authz.DefaultInventory()
	listed := 0
	for _, ti := range tools {
		e, ok := inv.Lookup(ti.Name)
		if !ok {
			continue // a test-only tool
		}
		listed++
		var got authz.Annotations
		if err := json.Unmarshal(ti.Annotations, &got); err != nil {
			t.Errorf("%s: annotations %s: %v", ti.Name, ti.Annotations, err)
			continue
		}
		if got != e.Annotations {
			t.Errorf("tools/list %s annotations = %+v, want the inventory's %+v", ti.Name, got, e.Annotations)
		}
		a := e.Annotations
		want := tool.Annotations{ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld}
		if reg := desktop.Annotations(ti.Name); reg != want {
			t.Errorf("desktop.Annotations(%s) = %+v, want %+v", ti.Name, reg, want)
		}
	}
	if listed < 10 {
		t.Errorf("tools/list named %d inventory tools, want the desktop tools and the built-ins", listed)
	}
}

// TestToolsListOutputSchemas: the action tools declare the contract's closed action shape
// as their output schema, every other shipped tool its own (all of them return a structured
// value on every success), and the test-only tools, which do not, declare none.
func TestToolsListOutputSchemas(t *testing.T) {
	h := startTestWorker(t, testWorkerOptions{register: func(reg *tool.Registry) {
		desktop.Register(reg, nil, desktop.Options{Unavailable: errors.New("no display in this test")})
	}})
	c := h.mustSession("u", authz.Unrestricted, "")
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ti := range tools {
		got[ti.Name] = string(ti.OutputSchema)
	}
	for _, name := range []string{"click", "type_text", "press_key", "drag", "scroll", "set_window_frame", "invoke_menu"} {
		if got[name] != string(tool.ActionSchema) {
			t.Errorf("%s declares output schema %q, want the action schema", name, got[name])
		}
	}
	for _, name := range []string{"list_windows", "get_desktop_state", "get_session", "verify_state", "clipboard_read", "health_report", "get_config", "start_session"} {
		if want := string(tool.OutputSchema(name)); want == "" || got[name] != want {
			t.Errorf("%s declares output schema %q, want its own %q", name, got[name], want)
		}
	}
	for _, name := range []string{"noop", "sleep", "marker"} {
		if s, listed := got[name]; listed && s != "" {
			t.Errorf("test tool %s declares output schema %q, want none", name, s)
		}
	}
	var schema map[string]any
	if err := json.Unmarshal(tool.ActionSchema, &schema); err != nil || schema["additionalProperties"] != false {
		t.Errorf("tool.ActionSchema = %s (%v), want a closed object schema", tool.ActionSchema, err)
	}
}

// TestEveryShippedToolHasAnOutputSchema: tool.OutputSchema has an entry for every tool a
// shipped worker registers and for no other, and each is an object schema without
// "const" (some clients reject it).
func TestEveryShippedToolHasAnOutputSchema(t *testing.T) {
	shipped := map[string]bool{}
	for _, tl := range Catalog() {
		shipped[tl.Name] = true
		if tl.OutputSchema == nil {
			t.Errorf("%s declares no output schema", tl.Name)
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(tl.OutputSchema, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s output schema %s (%v): want a JSON object schema of type object", tl.Name, tl.OutputSchema, err)
		}
		if strings.Contains(string(tl.OutputSchema), `"const"`) {
			t.Errorf("%s output schema uses const: %s", tl.Name, tl.OutputSchema)
		}
	}
	for _, name := range tool.OutputSchemaNames() {
		if !shipped[name] {
			t.Errorf("tool.OutputSchema has an entry for %s, which no shipped worker registers", name)
		}
	}
}
