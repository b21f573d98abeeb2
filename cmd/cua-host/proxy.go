package main

import "github.com/cua-host/cua-host/mcpproxy"

// runProxy is the hidden contract.ProxySubcommand entry point: `cua-host run` re-executes
// itself (/proc/self/exe) as the MCP proxy with the descriptors its flags name
// (contract.ProxyFlags.Descriptors; see host.StartProxy).
func runProxy(args []string) int {
	return mcpproxy.Main(args, version)
}
