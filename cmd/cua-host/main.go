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
//	cua-host policy check|eval …             test policy files without a desktop
//	cua-host journal verify|head|show DIR    check or look at a journal (--journal DIR)
//	cua-host inventory [--json]              print the reviewed tool inventory
//	cua-host status [--json]                 the mode, policy layers and manifest run would use
//	cua-host doctor [--json]                 whether this machine has what run needs (exit 1: no)
//	cua-host list-tools [--json]             every tool with its input schema
//	cua-host version                         print the version
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
	"github.com/cua-host/cua-host/host/serve"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/worker"
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

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "__worker":
		return worker.Main(args[1:], worker.Config{NewRegistry: worker.DesktopRegistry})
	case "call":
		return runCall(ctx, args[1:], stdout, stderr)
	case "run":
		return runRun(ctx, args[1:], stdout, stderr)
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "session":
		return runSession(ctx, args[1:], stdout, stderr)
	case "mcp-connect":
		return runMCPConnect(ctx, args[1:], stdout, stderr)
	case "__serve-janitor":
		return serve.RunJanitor(args[1:], stderr)
	case "__mcp-proxy":
		return runProxy(args[1:])
	case "policy":
		return runPolicy(ctx, args[1:], os.Getenv, stdout, stderr)
	case "inventory":
		return runInventory(args[1:], stdout, stderr)
	case "status":
		return runStatus(args[1:], os.Getenv, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], os.Getenv, stdout, stderr)
	case "list-tools":
		return runListTools(args[1:], stdout, stderr)
	case "manifest":
		return runManifest(args[1:], stdout, stderr)
	case "journal":
		return runJournal(args[1:], stdout, stderr)
	case "replay":
		return runReplay(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "cua-host %s (protocol v%d–v%d)\n", version, contract.MinProtocolVersion, contract.MaxProtocolVersion)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "cua-host: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  cua-host run [--display auto|private|nested|shared|:N] [--screen WxH] [--mode M] [--manifest F] [--policy F]
               [--permission-mode M] [--capability-manifest F --approve-capability-manifest]
               [--dangerously-bypass-approvals]
               [--managed-policy F] [--consent dialog|tty|deny] [--indicator=false] [--session-ttl D] [--idle-ttl D]
               [--http 127.0.0.1:PORT] [--log-file F] [--log-level L]   serve MCP (stdio) to one agent
               [--journal DIR [--journal-text] [--journal-screenshots=false]
                [--journal-max-shots N] [--journal-max-shot-bytes N]] [--sandbox on|off]
               [--secrets-dir DIR | --secret-service ATTR=VALUE,…]   credentials type_secret types without the agent seeing them
               [--tools T,…] [--exclude-tools T,…]   serve only these tools / never these (the worker refuses the others)
  cua-host call [--display auto|private|nested|shared|:N] [--timeout D] [--log-level L] [--journal DIR …]
                [--secrets-dir DIR | --secret-service ATTR=VALUE,…] [--tools T,…] [--exclude-tools T,…] TOOL [ARGS_JSON]
  cua-host call --session ENDPOINT [--timeout D] TOOL [ARGS_JSON]   (or $CUA_HOST_SESSION) a running session
  cua-host serve [--log-file F] [--allow-modes M,…] [--policy F] [--consent-timeout D]   JSON-RPC on stdio (docs/serve.md)
  cua-host session start [--display auto|private|nested|shared|:N] [--mode M] [--manifest F] [--label L] [--json]
  cua-host session stop [ENDPOINT]
  cua-host mcp-connect ENDPOINT               stdio MCP relayed to a session's endpoint
  cua-host journal verify [--json] [--head HASH] DIR  exit 0: intact and ended in order; 1: tampered, cut off, head not found
  cua-host journal head [--json] DIR          the newest segment's last hash: keep it elsewhere
  cua-host journal show DIR [-o FILE] [--json] [--recording NAME]  one self-contained HTML report (or JSON), or one recording's calls
  cua-host replay DIR [--display private|nested|:N] [--json]  re-run a journal's completed actions
  cua-host policy check [--managed-policy FILE] [--policy FILE]
  cua-host policy eval [--managed-policy FILE] [--policy FILE] --tool NAME [--args JSON]
  cua-host inventory [--json | --markdown]
  cua-host status [--mode M] [--manifest F | --capability-manifest F --approve-capability-manifest]
                  [--policy F] [--managed-policy F] [--json]   the startup configuration run would use
  cua-host doctor [--display auto|private|:N] [--json]   whether run has what it needs here: the display,
                  its extensions, window manager, accessibility bus, sandbox, programs (exit 0 ready, 1 not)
  cua-host list-tools [--json]                every tool (with --json its input schema)
  cua-host manifest                           every tool in the reference driver's tool-manifest format
                                              (input, success and error output schemas, aliases)
  cua-host version
`)
}
