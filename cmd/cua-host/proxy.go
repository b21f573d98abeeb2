package main

import "github.com/cua-host/cua-host/mcpproxy"

// runProxy is the hidden `__mcp-proxy` entry point: `cua-host run` re-executes itself
// (/proc/self/exe) as the MCP proxy with the session channel at fd 3 and the bootstrap
// pipe at fd 4 (see host.StartProxy).
func runProxy(args []string) int {
	return mcpproxy.Main(args, version)
}
