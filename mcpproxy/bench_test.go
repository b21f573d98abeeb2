package mcpproxy

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCall compares a no-op tool call made directly on the session channel with the
// same call made through the proxy by a go-sdk client (in-memory transport): the
// difference is what the MCP layer costs.
func BenchmarkCall(b *testing.B) {
	s := startStack(b, Options{})
	b.Run("session_channel", func(b *testing.B) {
		for b.Loop() {
			if res, err := s.conn.Call(b.Context(), "noop", nil); err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp_proxy", func(b *testing.B) {
		params := &mcp.CallToolParams{Name: "noop"}
		for b.Loop() {
			if res, err := s.cs.CallTool(b.Context(), params); err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
}
