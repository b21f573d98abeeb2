// Package docs is cua-host's documentation. The Go side of it embeds the pages the binary
// serves, straight from the files in this directory, so that what an agent reads is the
// page the repository keeps: there is no copy to drift.
//
// It is not for documentation of Go APIs (that is each package's doc.go) and holds no
// logic.
package docs

import _ "embed"

// AgentGuide is agent-guide.md: how an agent works with cua-host's tools (observe, act,
// verify; element tokens; delivery; outcomes; every refusal code and what to do next).
// The MCP proxy serves it as a resource (mcpproxy.GuideURI).
//
//go:embed agent-guide.md
var AgentGuide string
