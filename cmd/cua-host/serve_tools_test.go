package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeToolSelection: a session serve creates with tools lists exactly those through
// its endpoint (the go-sdk client over `cua-host mcp-connect`), and a call of another tool
// comes back refused permission_denied from the worker; create_session with an unknown
// name is invalid params and starts nothing.
func TestServeToolSelection(t *testing.T) {
	requireDisplayPrograms(t)
	bin := buildBinary(t)
	p := startServe(t, bin)
	_, e := p.call("create_session", map[string]any{"label": "bad", "tools": []string{"get_screen_size", "clik"}})
	if e == nil || !strings.Contains(e["message"].(string), `"tools": unknown tool "clik"`) {
		t.Errorf("create_session with tools [get_screen_size clik] = %v, want invalid params naming clik", e)
	}
	s := p.mustCall("create_session", map[string]any{"label": "picked", "tools": []string{"get_screen_size", "get_session"}})
	endpoint := s["endpoint"].(map[string]any)["unix"].(string)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "serve-tools", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "mcp-connect", endpoint)}, nil)
	if err != nil {
		t.Fatalf("connect through mcp-connect %s: %v", endpoint, err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"get_screen_size", "get_session"}) {
		t.Errorf("tools/list = %v, want exactly [get_screen_size get_session]", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_windows", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call list_windows: %v", err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !res.IsError || !strings.Contains(string(b), `"code":"permission_denied"`) || res.Meta["cua-host/outcome"] != "not_started" {
		t.Errorf("list_windows outside the selection = isError %v %s outcome %v, want refused permission_denied, not_started", res.IsError, b, res.Meta["cua-host/outcome"])
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_screen_size", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Errorf("get_screen_size in the selection = %+v, %v; want a result", res, err)
	}
}
