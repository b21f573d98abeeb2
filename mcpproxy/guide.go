package mcpproxy

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/docs"
)

// GuideURI is the MCP resource that holds the agent guide (docs/agent-guide.md): how to
// work with cua-host's tools, and what every refusal code means and what to do next.
const GuideURI = "cua-host://guide/agent"

// guideResource describes the guide in resources/list.
var guideResource = &mcp.Resource{
	URI:         GuideURI,
	Name:        "agent-guide",
	Title:       "Working with cua-host: a guide for agents",
	Description: "How to use cua-host's tools: observe, act, verify; element tokens and when they go stale; background and foreground delivery; outcomes and when to retry; every refusal code and what to do next.",
	MIMEType:    "text/markdown",
	Size:        int64(len(docs.AgentGuide)),
}

// readGuide answers resources/read for GuideURI; the SDK answers other URIs with a
// resource-not-found error before calling it.
func readGuide(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: GuideURI, MIMEType: guideResource.MIMEType, Text: docs.AgentGuide},
	}}, nil
}
