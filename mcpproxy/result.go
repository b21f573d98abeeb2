package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/client"
)

// ForwardArgs checks the arguments of a tools/call before they are forwarded: absent and
// null mean the empty object; anything else must be one JSON object of at most
// MaxArgumentBytes. The bytes are forwarded as they are (the worker sanitizes and decodes
// them strictly); an error becomes a JSON-RPC invalid-params error.
func ForwardArgs(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) > MaxArgumentBytes {
		return nil, fmt.Errorf("arguments are %d bytes; at most %d", len(raw), MaxArgumentBytes)
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}"), nil
	}
	if !isJSONObject(t) {
		return nil, errors.New("arguments must be a JSON object")
	}
	return json.RawMessage(t), nil
}

// isJSONObject reports whether b is exactly one valid JSON object (surrounding space
// allowed).
func isJSONObject(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) >= 2 && t[0] == '{' && json.Valid(t)
}

// Keys of the _meta object every tools/call result carries (docs/adr/0010).
const (
	// MetaOutcome holds the outcome: "completed", "not_started" or "unknown".
	MetaOutcome = "cua-host/outcome"
	// MetaDetails holds the tool's own account of the call beyond structuredContent, when
	// it gave one.
	MetaDetails = "cua-host/details"
)

// ToolResult converts a worker result to MCP: text and image content in order, isError,
// structuredContent in the tool contract's shape, and _meta carrying the outcome and the
// tool's details.
//
// A refusal's structuredContent is {"status":"refused","refusal":{code, message}} and its
// "code: message" line is always among the text blocks. Otherwise structuredContent is
// the tool's structured value unchanged (an object; anything else, which the worker never
// sends, is kept under "value"). The outcome is never in structuredContent, whose shape
// may be closed; it is in _meta on every result.
func ToolResult(res client.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Content: make([]mcp.Content, 0, len(res.Content)+1)}
	if res.Refusal != nil {
		out.IsError = true
		line := res.Refusal.Code + ": " + res.Refusal.Message
		if !hasText(res.Content, line) {
			out.Content = append(out.Content, &mcp.TextContent{Text: line})
		}
	}
	for _, c := range res.Content {
		if c.Type == "image" {
			out.Content = append(out.Content, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType})
			continue
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
	}

	switch {
	case res.Refusal != nil:
		out.StructuredContent = map[string]any{"status": "refused", "refusal": res.Refusal}
	case len(res.Structured) > 0:
		out.StructuredContent = objectOrValue(res.Structured)
	}
	out.Meta = mcp.Meta{MetaOutcome: OutcomeName(res.Outcome)}
	if len(res.Details) > 0 {
		out.Meta[MetaDetails] = objectOrValue(res.Details)
	}
	return out
}

// objectOrValue returns raw when it is a JSON object, else {"value": raw} (or an empty
// object for invalid JSON).
func objectOrValue(raw json.RawMessage) json.RawMessage {
	if isJSONObject(raw) {
		return append(json.RawMessage(nil), raw...)
	}
	if json.Valid(raw) {
		return mustMarshal(map[string]json.RawMessage{"value": raw})
	}
	return json.RawMessage("{}")
}

// OutcomeName is the outcome as structuredContent carries it. An outcome that is not
// set is "unknown": the proxy never reports completion without the worker's word.
func OutcomeName(o client.Outcome) string {
	switch o {
	case client.Completed:
		return "completed"
	case client.NotStarted:
		return "not_started"
	}
	return "unknown"
}

func hasText(cs []client.Content, line string) bool {
	for _, c := range cs {
		if c.Type != "image" && strings.Contains(c.Text, line) {
			return true
		}
	}
	return false
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("mcpproxy: marshal %T: %v", v, err)) // strings and Refusal always marshal
	}
	return b
}
