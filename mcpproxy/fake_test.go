package mcpproxy

import (
	"context"
	"encoding/json"

	"github.com/cua-host/cua-host/client"
)

// fakeCaller answers without a worker: one tool, "echo", whose result echoes the
// arguments as structured content.
type fakeCaller struct{}

func (fakeCaller) ListTools(context.Context) ([]client.ToolInfo, error) {
	return []client.ToolInfo{
		{Name: "echo", Description: "Echo.", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "bad_schema", InputSchema: json.RawMessage(`[1]`), Annotations: json.RawMessage(`nope`)},
	}, nil
}

func (fakeCaller) Call(ctx context.Context, name string, args json.RawMessage) (client.Result, error) {
	return client.Result{Outcome: client.Completed, Content: []client.Content{{Type: "text", Text: name}}, Structured: args}, nil
}
