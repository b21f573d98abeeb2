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

// ToolResult converts a worker result to MCP: text and image content in order, isError,
// and structuredContent holding the outcome, the refusal when there is one, and the
// tool's own structured fields (which never override outcome or refusal). A refusal's
// "code: message" line is always among the text blocks.
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

	fields := map[string]json.RawMessage{}
	if len(res.Structured) > 0 {
		if err := json.Unmarshal(res.Structured, &fields); err != nil || fields == nil {
			// Not an object (the worker sends objects; be safe): keep it under "value".
			fields = map[string]json.RawMessage{}
			if json.Valid(res.Structured) {
				fields["value"] = append(json.RawMessage(nil), res.Structured...)
			}
		}
	}
	fields["outcome"] = mustMarshal(OutcomeName(res.Outcome))
	if res.Refusal != nil {
		fields["refusal"] = mustMarshal(res.Refusal)
	}
	out.StructuredContent = fields
	return out
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
