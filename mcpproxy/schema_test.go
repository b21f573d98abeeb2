package mcpproxy

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/worker"
)

// catalogCaller lists the tools a shipped worker registers (worker.Catalog) and runs none.
type catalogCaller struct{}

func (catalogCaller) ListTools(context.Context) ([]client.ToolInfo, error) {
	var out []client.ToolInfo
	for _, t := range worker.Catalog() {
		ann, _ := json.Marshal(t.Annotations)
		out = append(out, client.ToolInfo{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: ann})
	}
	return out, nil
}

func (catalogCaller) Call(context.Context, string, json.RawMessage) (client.Result, error) {
	return client.Result{Outcome: client.NotStarted, IsError: true, Refusal: &client.Refusal{Code: "unsupported", Message: "the catalog runs nothing"}}, nil
}

// listViaSDK lists caller's tools through a proxy and a go-sdk client connected in memory.
func listViaSDK(t *testing.T, caller Caller) []*mcp.Tool {
	t.Helper()
	p := New(caller, Options{Logger: testLogger(t)})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "schema-test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		ss.Wait()
	}()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// compile resolves a tool's advertised schema (as the client received it) for validation.
func compile(t *testing.T, name string, schema any) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatalf("%s: marshal schema: %v", name, err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: schema %s: %v", name, b, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve schema %s: %v", name, b, err)
	}
	return r
}

// structuredOf is a result's structuredContent as a client decodes it.
func structuredOf(t *testing.T, res *mcp.CallToolResult) any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// motionExample is the agent cursor's motion as the cursor tools report it.
const motionExample = `{"start_handle":0.3,"end_handle":0.3,"arc_size":0.2,"arc_flow":0,"spring":0.5,"glide_duration_ms":120,"dwell_after_click_ms":80,"idle_hide_ms":3000,"turn_radius":8}`

// successExamples are, per shipped tool, a successful result's structured value as the
// tool builds it.
var successExamples = map[string]string{
	"click":               `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"foreground","delivered_count":1}}`,
	"double_click":        `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"background","delivered_count":2}}`,
	"right_click":         `{"effect":"unverifiable","route":"accessibility","delivery":{"mode":"background"}}`,
	"move_cursor":         `{"effect":"confirmed","route":"global_input","delivery":{"mode":"foreground","delivered_count":1},"evidence":[{"kind":"window_change"}]}`,
	"mouse_button_down":   `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"foreground","delivered_count":1}}`,
	"mouse_button_up":     `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"foreground","delivered_count":1}}`,
	"drag":                `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"background","delivered_count":7}}`,
	"scroll":              `{"effect":"suspected_noop","route":"global_input","delivery":{"mode":"foreground","delivered_count":3},"escalation":{"target":"foreground","reason":"suspected_noop"}}`,
	"type_text":           `{"effect":"confirmed","route":"accessibility","delivery":{"mode":"background","delivered_count":5},"evidence":[{"kind":"value_readback"}]}`,
	"press_key":           `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"foreground","delivered_count":1}}`,
	"hotkey":              `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"foreground","delivered_count":2}}`,
	"set_value":           `{"effect":"confirmed","route":"accessibility","delivery":{"mode":"background","delivered_count":1},"evidence":[{"kind":"value_readback"}]}`,
	"set_window_frame":    `{"effect":"partial","route":"system_api","delivery":{"mode":"not_applicable"},"evidence":[{"kind":"window_change"}]}`,
	"invoke_menu":         `{"effect":"unverifiable","route":"accessibility","delivery":{"mode":"background","delivered_count":2}}`,
	"list_windows":        `{"windows":[{"id":4194316,"pid":4242,"title":"xterm","class":"XTerm","frame":{"x":0,"y":0,"width":484,"height":316},"mapped":true}],"count":1}`,
	"list_apps":           `{"apps":null,"count":0}`,
	"get_screen_size":     `{"width":1280,"height":800,"scale_factor":1}`,
	"get_cursor_position": `{"x":10,"y":20,"pointer":"session","available":true,"source":"x11_session"}`,
	"get_desktop_state": `{"width":1280,"height":800,"scale":1,"source":{"width":1280,"height":800},"mime_type":"image/png","capture_route":"shm",` +
		`"platform":"linux","display":":99","screen_width":1280,"screen_height":800,"scale_factor":1,"screenshot_width":1280,"screenshot_height":800,` +
		`"screenshot_mime_type":"image/png","windows":[],"screenshot_file_path":"/tmp/d.png"}`,
	"zoom": `{"width":100,"height":50,"scale":1,"source":{"width":100,"height":50},"mime_type":"image/jpeg","capture_route":"get_image",` +
		`"window_id":4194316,"pid":4242,"region":{"x":0,"y":0,"width":100,"height":50},"masked":null}`,
	"get_window_state": `{"window_id":4194316,"pid":4242,"title":"t","window_frame":{"x":0,"y":0,"width":10,"height":10},"snapshot_id":"s0000000a",` +
		`"elements":[{"element_index":0,"role":"push button"}],"element_count":1,"returned_element_count":1,"total_element_count":9,` +
		`"elements_complete":true,"truncated":false,"degraded":false,"walk_ms":1.5,"screenshot_width":10,"screenshot_height":10,` +
		`"screenshot_scale":1,"screenshot_mime_type":"image/png","screenshot_masked":null}`,
	"get_accessibility_tree": `{"window_id":4194316,"pid":4242,"title":"t","window_frame":{"x":0,"y":0,"width":10,"height":10},"snapshot_id":"s0000000b",` +
		`"elements":null,"element_count":0,"returned_element_count":0,"total_element_count":0,"elements_complete":false,"truncated":false,` +
		`"degraded":true,"degraded_reason":"atspi_tree_empty","walk_ms":0.2}`,
	"verify_state": `{"status":"unknown","stable":false,"samples":1,"elapsed_ms":0,"predicates":[{"index":0,"status":"unknown","unknown_reason":"target_missing","observed_json":null}]}`,
	"launch_app": `{"effect":"launched","route":"exec","verified":true,"pid":4242,"executable":"/usr/bin/xterm","argv":["/usr/bin/xterm"],` +
		`"command":"/usr/bin/xterm","desktop_id":"","declared":false,"untrusted_x_client":false,"window_ids":[4194316],"windows":[{"id":4194316}],` +
		`"window_timed_out":false,"exited":false}`,
	"kill_app":                 `{"effect":"terminated","route":"signal","signal":"SIGTERM","verified":true,"pid":4242,"evidence":{"process_gone":true}}`,
	"bring_to_front":           `{"effect":"activated","route":"ewmh","verified":true,"window_id":4194316,"pid":4242,"evidence":{"focused":true,"stack":0}}`,
	"clipboard_read":           `{"supported":true,"types":["text/plain"],"privacy_sensitive":true,"content_redacted_from_telemetry":true,"text":null}`,
	"clipboard_write":          `{"supported":true,"types":["text/plain"],"privacy_sensitive":true,"content_redacted_from_telemetry":true,"written_type":"text/plain"}`,
	"set_agent_cursor_enabled": `{"session":"s","enabled":true}`,
	"set_agent_cursor_motion":  `{"session":"s","motion":` + motionExample + `}`,
	"set_agent_cursor_theme":   `{"session":"s","theme":{"id":"default","version":"1","profile":"p","reduced_motion":"on","fallback":null}}`,
	"get_agent_cursor_state": `{"session":"s","enabled":false,"position":{"x":1.5,"y":2},"theme":{"id":"cua.default","version":"1","profile":"p","reduced_motion":"auto","fallback":null},` +
		`"visual_state":{"requested_action":"click","resolved_action":"idle","modifiers":[],"phase":"idle","frame":0,"preempted_count":0},"motion":` + motionExample + `}`,
	"get_session": `{"session":"run","implicit":true,"state":"active","client_kind":"mcp","transport":"mcp_stdio","cursor_visible":false,` +
		`"recording_active":false,"idle_seconds":0,"expires_in_seconds":3600,"label":"run","mode":"standard","expires_at":"2030-01-01T00:00:00Z",` +
		`"idle_timeout":"30m0s","launched_pids":[],"consent_grants":0}`,
	"end_session": `{"session":"run","active":false,"label":"run","ended":true}`,
	"start_session": `{"session":"lab","capture_scope":"auto","effective_scope":"window","desktop_unlocked":false,"escalation_reason":null,` +
		`"escalation_detail":null,"active":true,"revived":false}`,
	"list_sessions": `{"sessions":[{"session":"run","implicit":true,"state":"active","client_kind":"mcp","transport":"mcp_stdio",` +
		`"cursor_visible":false,"recording_active":false,"idle_seconds":0,"expires_in_seconds":3600}],"next_cursor":null}`,
	"escalate_session": `{"session":"lab","capture_scope":"window","effective_scope":"window","desktop_unlocked":false,` +
		`"escalation_reason":"other","escalation_detail":"why"}`,
	"get_session_state": `{"session":"lab","capture_scope":"auto","effective_scope":"desktop","desktop_unlocked":true,` +
		`"escalation_reason":null,"escalation_detail":null}`,
	"health_report": `{"pid":1234,"generation":"ab12","protocol_version":1,"display":":99","private_display":true,"sessions":1,` +
		`"backends":[{"name":"x11","available":true,"detail":":99"},{"name":"xres","available":false}]}`,
	"mouse_drag":          `{"effect":"confirmed","route":"global_input","delivery":{"mode":"background","delivered_count":20}}`,
	"parallel_mouse_drag": `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"background","delivered_count":3}}`,
	"type_secret":         `{"effect":"unverifiable","route":"global_input","delivery":{"mode":"foreground","delivered_count":1}}`,
	"find_credentials":    `{"credentials":[{"handle":"mail","label":"mail","attributes":{"url":"https://mail.example","username":"ada"}}]}`,
	"start_recording":     recordingExample,
	"stop_recording":      recordingExample,
	"get_recording_state": recordingExample,
	"get_config": `{"session":{"label":"run","mode":"standard"},"policy":{"managed":null,"user":null},"display":{"name":":99","private":true},` +
		`"ceiling":{"allowed_modes":["standard"]},"limits":{"max_in_flight":8},"protocol_version":1,"tool_contract_version":"0.7.0"}`,
}

// recordingExample is a recording tool's result while a recording runs.
const recordingExample = `{"enabled":true,"recording":true,"active":true,"available":true,"owner":"run",` +
	`"journal":{"kept":true,"screenshots":true,"text":false},"name":"rec-1","turns":1,"next_turn":2,"max_turns":2,"turns_left":1,` +
	`"max_duration_ms":null,"duration_ms":40,"duration_left_ms":null,"started":"2026-12-01T00:00:00Z","stopped":null,"stop_reason":null,` +
	`"output_dir":null,"video_active":false,"last_video_path":null,"last_error":null}`

// TestOutputSchemaAdmitsEveryResult: for every tool a shipped worker registers, the
// outputSchema a client receives in tools/list admits a success of the tool, a refusal
// with every refusal code and a tool-level error, each as ToolResult renders it, and
// rejects a refusal with a code that does not exist; the action tools' schema still
// rejects a success with a key outside the contract. No advertised schema uses "const".
func TestOutputSchemaAdmitsEveryResult(t *testing.T) {
	tools := listViaSDK(t, catalogCaller{})
	if len(tools) < 30 {
		t.Fatalf("tools/list has %d tools, want every shipped tool", len(tools))
	}
	for _, tl := range tools {
		t.Run(tl.Name, func(t *testing.T) {
			for what, s := range map[string]any{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
				b, _ := json.Marshal(s)
				if strings.Contains(string(b), `"const"`) {
					t.Errorf("%s uses const: %s", what, b)
				}
			}
			if tl.OutputSchema == nil {
				t.Fatalf("no outputSchema: every shipped tool returns structured content")
			}
			schema := compile(t, tl.Name, tl.OutputSchema)
			root, _ := structuredOf(t, &mcp.CallToolResult{StructuredContent: tl.OutputSchema}).(map[string]any)
			if root["type"] != "object" {
				t.Errorf("outputSchema type = %v, want object at the root", root["type"])
			}
			valid := func(what string, res client.Result) {
				t.Helper()
				sc := structuredOf(t, ToolResult(res))
				if err := schema.Validate(sc); err != nil {
					t.Errorf("%s: structuredContent %v does not validate: %v", what, sc, err)
				}
			}
			example, ok := successExamples[tl.Name]
			if !ok {
				t.Fatalf("no success example for %s: add one to successExamples", tl.Name)
			}
			valid("success", client.Result{Outcome: client.Completed, Structured: json.RawMessage(example)})
			for _, code := range refusalCodes {
				valid("refusal "+code, client.Result{Outcome: client.NotStarted, IsError: true, Refusal: &client.Refusal{Code: code, Message: "why"}})
			}
			for _, code := range []string{"tool_error", "internal_error", "deadline_exceeded", "menu_path_not_found"} {
				valid("error "+code, client.Result{Outcome: client.Completed, IsError: true, Structured: json.RawMessage(`{"error_code":"` + code + `","error":"what failed"}`)})
			}
			bad := structuredOf(t, ToolResult(client.Result{Outcome: client.NotStarted, IsError: true, Refusal: &client.Refusal{Code: "no_such_code", Message: "m"}}))
			if err := schema.Validate(bad); err == nil {
				t.Errorf("a refusal with an unknown code validates: %v", bad)
			}
			// A closed success shape (the action tools') stays closed beside the others.
			if success, _ := root["anyOf"].([]any); len(success) != 3 {
				t.Errorf("outputSchema anyOf has %d variants, want success, refusal and error", len(success))
			} else if v, _ := success[0].(map[string]any); v["additionalProperties"] == false {
				extra := json.RawMessage(`{"effect":"confirmed","route":"accessibility","verified":true}`)
				if err := schema.Validate(structuredOf(t, ToolResult(client.Result{Outcome: client.Completed, Structured: extra}))); err == nil {
					t.Errorf("a success with a key outside its closed shape validates")
				}
			}
		})
	}
	for name := range successExamples {
		if !slices.ContainsFunc(tools, func(tl *mcp.Tool) bool { return tl.Name == name }) {
			t.Errorf("successExamples has %s, which no shipped worker registers", name)
		}
	}
}

// TestOutputSchemaWithoutSuccessSchema: a tool whose worker declares no output schema
// (its successes may carry no structured content) is listed without one.
func TestOutputSchemaWithoutSuccessSchema(t *testing.T) {
	for _, in := range []string{"", "null", "[1]", `"x"`} {
		if got := OutputSchema(json.RawMessage(in)); got != nil {
			t.Errorf("OutputSchema(%q) = %s, want nil", in, got)
		}
	}
	for _, tl := range listViaSDK(t, fakeCaller{}) {
		if tl.OutputSchema != nil {
			t.Errorf("%s: outputSchema %v, want none", tl.Name, tl.OutputSchema)
		}
	}
}

func TestWithoutConst(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "no const", in: `{"type":"string"}`, want: `{"type":"string"}`},
		{name: "top level", in: `{"const":"window"}`, want: `{"enum":["window"]}`},
		{name: "in a property", in: `{"type":"object","properties":{"kind":{"const":"desktop"}}}`, want: `{"properties":{"kind":{"enum":["desktop"]}},"type":"object"}`},
		{name: "in anyOf", in: `{"anyOf":[{"properties":{"kind":{"const":"window"}}},{"const":null}]}`, want: `{"anyOf":[{"properties":{"kind":{"enum":["window"]}}},{"enum":[null]}]}`},
		{name: "items and additionalProperties", in: `{"items":{"const":1},"additionalProperties":{"const":false}}`, want: `{"additionalProperties":{"enum":[false]},"items":{"enum":[1]}}`},
		{name: "a property named const", in: `{"properties":{"const":{"type":"string"}}}`, want: `{"properties":{"const":{"type":"string"}}}`},
		{name: "const as data", in: `{"enum":[{"const":1}],"default":{"const":2}}`, want: `{"enum":[{"const":1}],"default":{"const":2}}`},
		{name: "const beside enum", in: `{"const":1,"enum":[1,2]}`, want: `{"const":1,"enum":[1,2]}`},
		{name: "big number kept exactly", in: `{"const":12345678901234567890}`, want: `{"enum":[12345678901234567890]}`},
		{name: "not JSON", in: `{"const":`, want: `{"const":`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(withoutConst(json.RawMessage(tc.in))); got != tc.want {
				t.Errorf("withoutConst(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzWithoutConst: withoutConst never panics, keeps valid JSON valid, and is idempotent.
func FuzzWithoutConst(f *testing.F) {
	for _, s := range []string{`{"const":1}`, `{"properties":{"const":{"const":"x"}}}`, `{"anyOf":[{"const":null}],"items":[{"const":[1]}]}`, `{"const":`, `[{"const":1}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := withoutConst(in)
		if json.Valid(in) && !json.Valid(out) {
			t.Fatalf("withoutConst(%q) = %q, not JSON", in, out)
		}
		if again := withoutConst(out); string(again) != string(out) {
			t.Fatalf("withoutConst is not idempotent on %q: %q then %q", in, out, again)
		}
	})
}

// TestRefusalCodesAreAuthzCodes: refusalCodes is exactly the set of authz's Code
// constants (some of them the contract's), and errorCodes adds exactly the codes the
// worker's tool-level errors use besides those. The proxy cannot import authz; this keeps
// the advertised enums from missing a code a result can carry.
func TestRefusalCodesAreAuthzCodes(t *testing.T) {
	contract := stringConsts(t, filepath.Join("..", "proto", "contract"), func(*ast.ValueSpec) bool { return true })
	authz := stringConsts(t, filepath.Join("..", "authz"), func(vs *ast.ValueSpec) bool {
		id, ok := vs.Type.(*ast.Ident)
		return ok && id.Name == "Code"
	})
	var want []string
	for name, c := range authz {
		v := c.value
		if c.ref != "" {
			v = contract[c.ref].value
		}
		if v == "" {
			t.Errorf("authz.%s: its value is neither a string nor a contract constant", name)
			continue
		}
		want = append(want, v)
	}
	if len(want) < 30 {
		t.Fatalf("found %d authz codes; the parse is broken", len(want))
	}
	sort.Strings(want)
	got := slices.Sorted(slices.Values(refusalCodes))
	if !slices.Equal(got, slices.Compact(want)) {
		t.Errorf("refusalCodes = %v\nauthz codes = %v", got, want)
	}
	extra := errorResultCodes(t, filepath.Join("..", "worker", "dispatch.go"))
	for _, c := range extra {
		if !slices.Contains(errorCodes, c) {
			t.Errorf("the worker sends tool-level errors with code %q, which errorCodes lacks", c)
		}
	}
	if len(errorCodes) != len(refusalCodes)+len(extra) {
		t.Errorf("errorCodes = %v, want the refusal codes and %v", errorCodes, extra)
	}
}

// constValue is a constant's string value, or the name of the other package's constant it
// is defined as (pkg.Name).
type constValue struct{ value, ref string }

// stringConsts returns the constants of the non-test files in dir that keep selects.
func stringConsts(t *testing.T, dir string, keep func(*ast.ValueSpec) bool) map[string]constValue {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	out := map[string]constValue{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if !keep(vs) {
					continue
				}
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					switch v := vs.Values[i].(type) {
					case *ast.BasicLit:
						if s, err := strconv.Unquote(v.Value); err == nil && v.Kind == token.STRING {
							out[n.Name] = constValue{value: s}
						}
					case *ast.SelectorExpr:
						out[n.Name] = constValue{ref: v.Sel.Name}
					default:
						out[n.Name] = constValue{}
					}
				}
			}
		}
	}
	return out
}

// errorResultCodes returns the string literals passed as the code of errorResult in file.
func errorResultCodes(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "errorResult" && len(call.Args) == 3 {
			if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && !slices.Contains(codes, s) {
					codes = append(codes, s)
				}
			}
		}
		return true
	})
	if len(codes) == 0 {
		t.Fatalf("no errorResult call with a literal code in %s; the parse is broken", file)
	}
	return codes
}

// TestRefusalPassesTheSDK: through the go-sdk server and client, with a real worker, a
// tool's refusals and its success both validate against the outputSchema the client
// listed, and a tool without structured results is listed without one.
func TestRefusalPassesTheSDK(t *testing.T) {
	s := startStack(t, Options{})
	res, err := s.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tl := range res.Tools {
		if tl.OutputSchema != nil {
			schemas[tl.Name] = compile(t, tl.Name, tl.OutputSchema)
		}
	}
	if schemas["noop"] != nil {
		t.Errorf("noop, whose results carry no structured content, lists an outputSchema")
	}
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		refusal string
	}{
		{name: "success", tool: "get_session"},
		{name: "label not a string", tool: "get_session", args: map[string]any{"session": 5}, refusal: "invalid_arguments"},
		{name: "unknown capture scope", tool: "start_session", args: map[string]any{"capture_scope": "sideways"}, refusal: "invalid_arguments"},
		{name: "bad limit", tool: "list_sessions", args: map[string]any{"limit": 1000}, refusal: "invalid_arguments"},
		{name: "unknown argument", tool: "health_report", args: map[string]any{"no_such_argument": 1}, refusal: "invalid_arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			schema := schemas[tc.tool]
			if schema == nil {
				t.Fatalf("%s lists no outputSchema", tc.tool)
			}
			res := s.call(t, tc.tool, tc.args)
			if got := refusalCode(t, res); got != tc.refusal {
				t.Errorf("%s(%v) refusal code = %q, want %q", tc.tool, tc.args, got, tc.refusal)
			}
			if sc := structuredOf(t, res); sc == nil {
				t.Errorf("%s(%v): no structuredContent", tc.tool, tc.args)
			} else if err := schema.Validate(sc); err != nil {
				t.Errorf("%s(%v) structuredContent %v does not validate against its outputSchema: %v", tc.tool, tc.args, sc, err)
			}
		})
	}
}
