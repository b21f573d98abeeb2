package e2e

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// refusalCases gives, per tool, arguments it refuses at once over a real `cua-host run`,
// and the code: a window that never existed (of a live process, this test's) for the tools
// that act on a window, else an argument of the wrong type or value.
func refusalCases() map[string]struct {
	args map[string]any
	code string
} {
	pid := os.Getpid()
	const win = 0x3fffff0 // a window id that never existed
	target := map[string]any{"kind": "window", "pid": pid, "window_id": win}
	type c = struct {
		args map[string]any
		code string
	}
	gone := func(args map[string]any) c { return c{args, "window_target_not_found"} }
	bad := func(args map[string]any) c { return c{args, "invalid_arguments"} }
	at := func(more map[string]any) map[string]any {
		m := map[string]any{"target": target}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	onWindow := func(more map[string]any) map[string]any {
		m := map[string]any{"pid": pid, "window_id": win}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	xy := map[string]any{"x": 1, "y": 1}
	drags := map[string]any{"drags": []map[string]any{{"from_x": 1, "from_y": 1, "to_x": 5, "to_y": 5}, {"path": [][]int{{1, 2}, {5, 6}}}}}
	return map[string]c{
		"click":                    gone(at(xy)),
		"double_click":             gone(at(xy)),
		"right_click":              gone(at(xy)),
		"move_cursor":              gone(at(xy)),
		"mouse_button_down":        gone(at(xy)),
		"mouse_button_up":          gone(at(xy)),
		"drag":                     gone(at(map[string]any{"from_x": 1, "from_y": 1, "to_x": 5, "to_y": 5})),
		"scroll":                   gone(at(map[string]any{"x": 1, "y": 1, "direction": "down"})),
		"mouse_drag":               gone(at(xy)),
		"parallel_mouse_drag":      gone(at(drags)),
		"type_text":                gone(at(map[string]any{"text": "x"})),
		"press_key":                gone(at(map[string]any{"key": "a"})),
		"hotkey":                   gone(at(map[string]any{"keys": []string{"ctrl", "c"}})),
		"set_value":                gone(onWindow(map[string]any{"value": "x", "element_token": "s00000001:1"})),
		"set_window_frame":         gone(onWindow(map[string]any{"x": 0, "y": 0, "width": 10, "height": 10})),
		"invoke_menu":              gone(onWindow(map[string]any{"path": []string{"File"}})),
		"bring_to_front":           gone(onWindow(nil)),
		"zoom":                     gone(onWindow(map[string]any{"x1": 0, "y1": 0, "x2": 5, "y2": 5})),
		"get_window_state":         gone(onWindow(nil)),
		"get_accessibility_tree":   gone(onWindow(nil)),
		"verify_state":             gone(onWindow(map[string]any{"expect": []any{map[string]any{"window": map[string]any{"exists": true}}}, "timeout_ms": 0})),
		"list_windows":             bad(map[string]any{"pid": "x"}),
		"list_apps":                bad(map[string]any{"no_such_argument": 1}),
		"get_screen_size":          bad(map[string]any{"no_such_argument": 1}),
		"get_cursor_position":      bad(map[string]any{"no_such_argument": 1}),
		"get_desktop_state":        bad(map[string]any{"format": "gif"}),
		"launch_app":               bad(map[string]any{"name": "no-such-program-xyz"}),
		"kill_app":                 bad(map[string]any{"pid": 1}),
		"clipboard_read":           bad(map[string]any{"include_text": "yes"}),
		"clipboard_write":          bad(map[string]any{}),
		"set_agent_cursor_enabled": bad(map[string]any{"session": "e2e"}),
		"set_agent_cursor_motion":  bad(map[string]any{"session": "e2e", "spring": "x"}),
		"set_agent_cursor_theme":   {map[string]any{"session": "e2e", "theme_id": "no-such-theme"}, "unsupported"},
		"get_agent_cursor_state":   bad(map[string]any{}),
		"start_session":            bad(map[string]any{"capture_scope": "sideways"}),
		"get_session":              bad(map[string]any{"session": 5}),
		"end_session":              bad(map[string]any{"session": 5}),
		"list_sessions":            bad(map[string]any{"limit": 1000}),
		"escalate_session":         bad(map[string]any{"session": "e2e", "reason": "bogus"}),
		"get_session_state":        bad(map[string]any{"session": 5}),
		"start_recording":          {map[string]any{}, "unsupported"},
		"stop_recording":           {map[string]any{}, "recording_inactive"},
		"get_recording_state":      bad(map[string]any{"no_such_argument": 1}),
		// This run has no --secrets-dir.
		"find_credentials": {map[string]any{}, "unsupported"},
		"type_secret":      gone(at(map[string]any{"handle": "mail"})),
		"health_report":    bad(map[string]any{"no_such_argument": 1}),
		"get_config":       bad(map[string]any{"no_such_argument": 1}),
	}
}

// TestOutputSchemaAdmitsRefusals drives every tool `cua-host run` lists into a refusal
// through the go-sdk client and checks each result, and a success of the tools that
// succeed without a window, against the outputSchema the tool advertises (the check a
// validating client such as the MCP TypeScript SDK makes): refusals are results the agent
// gets, never schema errors. Every advertised schema is an object schema without "const".
func TestOutputSchemaAdmitsRefusals(t *testing.T) {
	needDesktop(t)
	rp := startRun(t, unrestricted...)
	res, err := rp.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tl := range res.Tools {
		for what, s := range map[string]any{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			if b, _ := json.Marshal(s); strings.Contains(string(b), `"const"`) {
				t.Errorf("%s: the advertised %s uses const: %s", tl.Name, what, b)
			}
		}
		if tl.OutputSchema == nil {
			t.Errorf("%s advertises no outputSchema, and its results carry structuredContent", tl.Name)
			continue
		}
		schemas[tl.Name] = resolveSchema(t, tl.Name, tl.OutputSchema)
	}
	check := func(t *testing.T, name string, res *mcp.CallToolResult) map[string]any {
		t.Helper()
		if res.StructuredContent == nil {
			t.Fatalf("%s: no structuredContent (isError %v, %q)", name, res.IsError, text(res))
		}
		sc := structured(t, res)
		if s := schemas[name]; s != nil {
			if err := s.Validate(sc); err != nil {
				t.Errorf("%s: structuredContent %v does not validate against the advertised outputSchema: %v", name, sc, err)
			}
		}
		return sc
	}

	cases := refusalCases()
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run("refusal/"+name, func(t *testing.T) {
			c, ok := cases[name]
			if !ok {
				t.Fatalf("no refusal case for the listed tool %s: add one to refusalCases", name)
			}
			res := rp.call(t, name, c.args)
			sc := check(t, name, res)
			if !res.IsError || sc["status"] != "refused" || refusalCode(t, res) != c.code {
				t.Errorf("%s(%v) = isError %v, structuredContent %v; want a refusal with %s", name, c.args, res.IsError, sc, c.code)
			}
		})
	}
	// Successes of the tools that need no window, against the same schemas.
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"get_screen_size", nil}, {"get_cursor_position", nil}, {"list_windows", nil}, {"list_apps", nil},
		{"get_desktop_state", map[string]any{"max_dimension": 64}}, {"clipboard_write", map[string]any{"text": "e2e"}},
		{"clipboard_read", map[string]any{"include_text": true}}, {"move_cursor", map[string]any{"x": 5, "y": 5, "scope": "desktop"}},
		{"start_session", map[string]any{"session": "e2e"}}, {"get_session", nil}, {"get_session_state", map[string]any{"session": "e2e"}},
		{"list_sessions", nil}, {"escalate_session", map[string]any{"session": "e2e", "reason": "other"}},
		{"set_agent_cursor_enabled", map[string]any{"session": "e2e", "enabled": true}}, {"get_agent_cursor_state", map[string]any{"session": "e2e"}},
		{"health_report", nil}, {"get_config", nil}, {"get_recording_state", nil}, {"end_session", map[string]any{"session": "e2e"}},
	} {
		t.Run("success/"+c.name, func(t *testing.T) {
			res := rp.call(t, c.name, c.args)
			sc := check(t, c.name, res)
			if res.IsError {
				t.Errorf("%s(%v) = isError, %v; want a success", c.name, c.args, sc)
			}
		})
	}
}

// resolveSchema resolves an advertised schema for validation.
func resolveSchema(t *testing.T, name string, schema any) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: outputSchema %s: %v", name, b, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve outputSchema %s: %v", name, b, err)
	}
	return r
}
