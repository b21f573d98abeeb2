package mcpproxy

import (
	"bytes"
	"encoding/json"
	"strings"
)

// refusalCodes are the refusal codes a result can carry: package authz's stable codes,
// among them the protocol's (package contract). The proxy may not import authz; a test
// holds this list to authz's and the contract's constants.
var refusalCodes = []string{
	"permission_denied", "unclassified_tool", "bounded_resource_outside_manifest", "manifest_denied",
	"authorization_required", "authorization_declined", "authorization_expired", "authorization_revoked",
	"session_ended", "self_target_denied", "protected_ui_denied", "foreign_process_termination_denied",
	"invalid_arguments", "stale_element_token", "window_target_not_found", "deadline_exceeded", "unsupported",
	"unknown_tool", "canceled", "too_many_requests", "replayed_request", "generation_mismatch",
	"unsupported_protocol_version", "invalid_request", "worker_unavailable", "input_busy", "target_covered",
	"activation_failed", "background_unavailable", "desktop_coordinate_scope_required", "ambiguous_window_target",
	"foreground_required", "menu_path_not_found", "journal_unavailable", "person_active",
	"window_minimized", "element_not_visible", "clipboard_unavailable", "type_text_incomplete", "credential_not_found",
	"recording_inactive", "recording_active",
}

// errorCodes are the codes of a tool-level error's structured value ({error_code, error},
// which the worker sends for a tool that failed after it started): a refusal code, or
// tool_error (the tool failed) or internal_error (it panicked).
var errorCodes = append(append([]string(nil), refusalCodes...), "tool_error", "internal_error")

// refusalSchema is the JSON Schema of a refusal's structuredContent (ToolResult), and
// errorSchema that of a tool-level error's.
var refusalSchema, errorSchema = buildResultSchemas()

func buildResultSchemas() (refusal, toolError string) {
	enum := func(codes []string) string {
		b, _ := json.Marshal(codes) // strings always marshal
		return string(b)
	}
	refusal = `{"type":"object","additionalProperties":false,"required":["status","refusal"],"properties":{` +
		`"status":{"type":"string","enum":["refused"]},` +
		`"refusal":{"type":"object","additionalProperties":false,"required":["code","message"],"properties":{` +
		`"code":{"type":"string","enum":` + enum(refusalCodes) + `},"message":{"type":"string"}}}}}`
	toolError = `{"type":"object","additionalProperties":false,"required":["error_code","error"],"properties":{` +
		`"error_code":{"type":"string","enum":` + enum(errorCodes) + `},"error":{"type":"string"}}}`
	return refusal, toolError
}

// OutputSchema returns the outputSchema tools/list advertises for a tool whose successful
// results' structured value follows success (the worker's output schema):
//
//	{"type": "object", "anyOf": [success, refusal, tool-level error]}
//
// A client that validates structuredContent against the outputSchema (the MCP TypeScript
// SDK's callTool does, for errors too) then accepts every result the tool can return,
// refusals included, and a success still only in its own shape. It returns nil when
// success is not a JSON object: a tool that declares no schema gets none, since a
// validating client requires structured content on every success of a tool that has one.
func OutputSchema(success json.RawMessage) json.RawMessage {
	if !isJSONObject(success) {
		return nil
	}
	var b bytes.Buffer
	b.Grow(len(success) + len(refusalSchema) + len(errorSchema) + 32)
	b.WriteString(`{"type":"object","anyOf":[`)
	b.Write(bytes.TrimSpace(success))
	b.WriteByte(',')
	b.WriteString(refusalSchema)
	b.WriteByte(',')
	b.WriteString(errorSchema)
	b.WriteString(`]}`)
	return withoutConst(b.Bytes())
}

// ErrorOutputSchema returns the JSON Schema of the structured value of every unsuccessful
// result a tool can return: {"anyOf": [refusal, tool-level error]}, without "const". It
// is the error_output_schema of a tool entry in `cua-host manifest`; OutputSchema
// advertises the same two shapes beside a tool's success shape.
func ErrorOutputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","anyOf":[` + refusalSchema + `,` + errorSchema + `]}`)
}

// withoutConst returns schema with every "const" keyword written as a one-value "enum",
// which means the same: some clients (Gemini's function declarations among them) reject
// "const". Only schema positions are rewritten (a property named "const" stays); schema
// itself is returned when it has no "const", or is not JSON.
func withoutConst(schema json.RawMessage) json.RawMessage {
	if !bytes.Contains(schema, []byte(`"const"`)) {
		return schema
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return schema
	}
	if !rewriteConst(v) {
		return schema
	}
	b, err := json.Marshal(v)
	if err != nil {
		return schema
	}
	return b
}

// rewriteConst rewrites "const" in the schema v and its subschemas, and reports whether it
// changed anything.
func rewriteConst(v any) bool {
	s, ok := v.(map[string]any)
	if !ok {
		return false
	}
	changed := false
	if c, ok := s["const"]; ok {
		if _, both := s["enum"]; !both {
			s["enum"] = []any{c}
			delete(s, "const")
			changed = true
		}
	}
	for k, sub := range s {
		switch {
		case subschemaMaps[k]: // an object of named subschemas
			if m, ok := sub.(map[string]any); ok {
				for _, x := range m {
					changed = rewriteConst(x) || changed
				}
			}
		case subschemaLists[k]: // a list of subschemas (items may be one schema too)
			if l, ok := sub.([]any); ok {
				for _, x := range l {
					changed = rewriteConst(x) || changed
				}
				continue
			}
			fallthrough
		case subschemaOne[k] || strings.HasPrefix(k, "unevaluated"):
			changed = rewriteConst(sub) || changed
		}
	}
	return changed
}

// The JSON Schema keywords whose values are subschemas.
var (
	subschemaMaps  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	subschemaLists = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true, "items": true}
	subschemaOne   = map[string]bool{"not": true, "if": true, "then": true, "else": true, "additionalProperties": true,
		"additionalItems": true, "contains": true, "propertyNames": true}
)
