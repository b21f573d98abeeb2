package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAgentGuideResource: `cua-host run` serves the agent guide as an MCP resource, and
// what the go-sdk client reads through resources/read is docs/agent-guide.md as the
// repository has it, byte for byte.
func TestAgentGuideResource(t *testing.T) {
	needDesktop(t)
	want, err := os.ReadFile("../../docs/agent-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	rp := startRun(t, "--display", "private")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if caps := rp.cs.InitializeResult().Capabilities; caps.Resources == nil {
		t.Errorf("initialize announced no resources capability: %+v", caps)
	}
	var found *mcp.Resource
	for r, err := range rp.cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		if r.URI == "cua-host://guide/agent" {
			found = r
		}
	}
	if found == nil || found.MIMEType != "text/markdown" || found.Size != int64(len(want)) {
		t.Fatalf("resources/list has the guide as %+v, want cua-host://guide/agent, text/markdown, %d bytes", found, len(want))
	}
	res, err := rp.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: found.URI})
	if err != nil {
		t.Fatalf("resources/read %s: %v", found.URI, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].Text != string(want) || res.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("resources/read %s returned %d contents; want docs/agent-guide.md (%d bytes) as text/markdown", found.URI, len(res.Contents), len(want))
	}
	// The tools are still the worker's.
	if names := rp.toolNames(t); !names["get_session"] {
		t.Errorf("tools/list beside the resource lacks get_session: %v", names)
	}
}
