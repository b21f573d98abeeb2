package authz

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/tools.md from the inventory")

const toolsDoc = "../docs/tools.md"

// TestToolsDoc keeps docs/tools.md and the inventory in sync: the file is the inventory's
// Markdown. Regenerate it with `go generate ./authz`.
func TestToolsDoc(t *testing.T) {
	want := DefaultInventory().Markdown()
	if *update {
		if err := os.WriteFile(toolsDoc, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(toolsDoc)
	if err != nil {
		t.Fatalf("%v (run go generate ./authz)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with the inventory in authz/tools.go; run go generate ./authz", toolsDoc)
	}
}

func TestDefaultInventory(t *testing.T) {
	inv := DefaultInventory()
	// Every tool a shipped worker registers (desktop, accessibility, builtins).
	exposed := []string{
		"health_report", "get_session", "end_session", "get_config",
		"list_windows", "list_apps", "get_screen_size", "get_cursor_position", "get_desktop_state", "zoom",
		"get_window_state", "get_accessibility_tree", "set_value", "verify_state", "invoke_menu",
		"click", "double_click", "right_click", "move_cursor", "mouse_button_down", "mouse_button_up", "drag", "scroll",
		"type_text", "press_key", "hotkey", "launch_app", "kill_app", "bring_to_front", "set_window_frame",
		"clipboard_read", "clipboard_write",
		"set_agent_cursor_enabled", "set_agent_cursor_motion", "set_agent_cursor_theme", "get_agent_cursor_state",
	}
	for _, name := range exposed {
		e, r := inv.Classify(name)
		if r != nil {
			t.Errorf("Classify(%s) = %v, want an exposed entry", name, r)
			continue
		}
		if e.Bounded != ManifestScoped || e.Unrestricted != Allow {
			t.Errorf("%s: bounded %v unrestricted %v", name, e.Bounded, e.Unrestricted)
		}
	}
	if n := len(inv.Entries()); n <= len(exposed) {
		t.Errorf("inventory has %d entries; want the exposed ones plus the not_exposed reference tools", n)
	}
	for _, tt := range []struct {
		tool string
		code Code
	}{{"clik", CodeUnclassifiedTool}, {"noop", CodeUnclassifiedTool}, {"run_shell", CodeUnsupported}, {"screenshot", CodeUnsupported}, {"", CodeUnclassifiedTool}} {
		if _, r := inv.Classify(tt.tool); r == nil || r.Code != tt.code {
			t.Errorf("Classify(%q) = %v, want %s", tt.tool, r, tt.code)
		}
	}
}

func TestInventoryWith(t *testing.T) {
	base := DefaultInventory()
	inv, err := base.With(MetadataOnly("noop", "test", R0, ResourceNone, Annotations{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, r := inv.Classify("noop"); r != nil {
		t.Errorf("extended Classify(noop) = %v", r)
	}
	if _, r := base.Classify("noop"); r == nil {
		t.Error("With changed the shipped inventory")
	}
	if _, err := base.With(MetadataOnly("click", "dup", R0, ResourceNone, Annotations{})); err == nil {
		t.Error("With accepted a duplicate of a shipped tool")
	}
}

func TestEntryValidate(t *testing.T) {
	good := active("x", "s", R1, ResourceWindow, OpInput, ShapeWindow, annAction, RequireGrant, CodeAuthorizationRequired)
	tests := []struct {
		name string
		edit func(e *Entry)
	}{
		{name: "no name", edit: func(e *Entry) { e.Tool = "" }},
		{name: "alias name", edit: func(e *Entry) { e.Tool = "type_text_chars" }},
		{name: "no class", edit: func(e *Entry) { e.Class = 0 }},
		{name: "no state", edit: func(e *Entry) { e.State = 0 }},
		{name: "no resource", edit: func(e *Entry) { e.Resource = 0 }},
		{name: "no operation", edit: func(e *Entry) { e.Operation = 0 }},
		{name: "no shape", edit: func(e *Entry) { e.Shape = 0 }},
		{name: "no refusal", edit: func(e *Entry) { e.Refusal = "" }},
		{name: "bounded allow", edit: func(e *Entry) { e.Bounded = Allow }},
		{name: "unrestricted grant", edit: func(e *Entry) { e.Unrestricted = RequireGrant }},
		{name: "standard manifest", edit: func(e *Entry) { e.Standard = ManifestScoped }},
		{name: "metadata needing grant", edit: func(e *Entry) { e.State = StateMetadataOnly }},
		{name: "not exposed allowed", edit: func(e *Entry) { e.State = StateNotExposed }},
	}
	if _, err := NewInventory(good); err != nil {
		t.Fatalf("NewInventory(good) = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := good
			tt.edit(&e)
			if _, err := NewInventory(e); err == nil {
				t.Errorf("NewInventory(%+v) = nil error", e)
			}
		})
	}
}

func TestInventoryJSON(t *testing.T) {
	b, err := json.Marshal(DefaultInventory())
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	var click map[string]any
	for _, r := range rows {
		if r["tool"] == "click" {
			click = r
		}
	}
	want := map[string]any{"risk_class": "R1", "resource": "window", "operation": "input", "state": "active",
		"standard": "require_grant", "bounded": "manifest", "unrestricted": "allow", "refusal_code": "authorization_required"}
	for k, v := range want {
		if click[k] != v {
			t.Errorf("click[%s] = %v, want %v", k, click[k], v)
		}
	}
	if !strings.Contains(string(b), `"readOnlyHint"`) {
		t.Error("annotations missing from the JSON")
	}
}
