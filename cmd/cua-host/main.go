// Command cua-host is a computer-use driver for Linux/X11: a trusted host that runs a
// private worker per trust domain and lets AI agents operate a desktop through it.
//
// Usage:
//
//	cua-host run [flags]                     serve MCP to one agent (stdio or loopback HTTP)
//	cua-host call [flags] TOOL [ARGS_JSON]   run one tool in a fresh host, worker and session
//	cua-host call --session EP TOOL [ARGS]   run one tool in a running session
//	cua-host serve [flags]                   a host driven by JSON-RPC on stdin/stdout
//	cua-host session start|stop              a detached session for shell scripts
//	cua-host mcp-connect ENDPOINT            a stdio MCP server relaying to a session endpoint
//	cua-host journal verify|head|show DIR    check or look at a journal (--journal DIR)
//	cua-host replay DIR [flags]              re-run a journal's completed actions
//	cua-host policy check|eval …             test policy files without a desktop
//	cua-host inventory [--json]              print the reviewed tool inventory
//	cua-host status [--json]                 the mode, policy layers and manifest run would use
//	cua-host doctor [--json]                 whether this machine has what run needs (exit 1: no)
//	cua-host list-tools [--json]             every tool with its input schema
//	cua-host manifest                        every tool in the reference driver's tool-manifest format
//	cua-host version                         print the version
//	cua-host help                            print every command with its flags
//
// This list and `cua-host help` come from one table, commands (commands.go); a test checks
// that this list is the table's.
//
// The hidden entry points `__worker`, `__mcp-proxy` and `__serve-janitor` are how the host re-executes itself
// as a worker, as the MCP proxy, and as the process that removes serve's endpoint
// directory after it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cua-host/cua-host/host"
)

// version is the program version; release builds set it with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	// Before anything opens files: nothing this process inherited may reach a child.
	if err := host.SealInheritedFDs(); err != nil {
		fmt.Fprintln(os.Stderr, "cua-host:", err)
		os.Exit(1)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a command line (commands) and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if c, ok := lookupCommand(args[0]); ok {
		if c.run == nil {
			usage(stdout)
			return 0
		}
		return c.run(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "cua-host: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}
