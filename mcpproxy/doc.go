// Package mcpproxy is cua-host's MCP surface: an MCP server (modelcontextprotocol/go-sdk)
// that speaks to an agent over stdio or loopback streamable HTTP and forwards every
// tools/list and tools/call over one session channel to the worker.
//
// It runs in its own process (`cua-host __mcp-proxy`, see Main), the only process that
// parses the agent's untrusted input. It holds one session channel and nothing else: no
// control channel, no way to create, widen or revoke a session. It does not authorize
// anything either: the worker is the chokepoint and answers every call, including calls of
// tools that are not listed (a denied tool, a hidden alias such as type_text_chars, a name
// that does not exist), with a result or a refusal.
//
// What the proxy adds to the worker's answers is their MCP shape: text and image content,
// structuredContent in the tool contract's shape, _meta carrying the outcome
// ("cua-host/outcome": completed, not_started or unknown) and the tool's details
// ("cua-host/details"), refusals as isError results with {"status": "refused",
// "refusal": {"code", "message"}} (docs/adr/0010),
// JSON-RPC errors for unknown methods and malformed parameters, a deadline on every call
// and cancellation forwarded to the worker.
//
// Besides the tools it serves one resource of its own, the agent guide (GuideURI,
// docs/agent-guide.md embedded through package docs), which grants nothing.
//
// It is not for embedding programs that want to call tools from Go: they use host.Session
// or package client directly.
package mcpproxy
