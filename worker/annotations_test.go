package worker

import (
	"context"
	"encoding/json"
	"errors"
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
// as their output schema, and tools whose results have another shape declare none.
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
	for _, name := range []string{"list_windows", "get_desktop_state", "get_session", "verify_state", "clipboard_read"} {
		if got[name] != "" {
			t.Errorf("%s declares output schema %q, want none", name, got[name])
		}
	}
	var schema map[string]any
	if err := json.Unmarshal(tool.ActionSchema, &schema); err != nil || schema["additionalProperties"] != false {
		t.Errorf("tool.ActionSchema = %s (%v), want a closed object schema", tool.ActionSchema, err)
	}
}
