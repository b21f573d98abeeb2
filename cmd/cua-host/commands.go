package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cua-host/cua-host/host/serve"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/worker"
)

// command is one subcommand of cua-host: the one table from which run dispatches, `help`
// prints the usage and the package documentation's list is checked (TestUsageListsCommands).
type command struct {
	// names are the words that select it; the first is its name.
	names []string
	// synopsis is its line in the package documentation, after "cua-host ": the arguments
	// in short and what it does. Several lines for several forms; none for a hidden
	// entry point, which the documentation names in a sentence.
	synopsis []string
	// usage is its entry in `cua-host help`: the lines after "  cua-host ", flags
	// included. Hidden entry points have none.
	usage []string
	// run runs it with the words after its name; nil prints the usage (help).
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// hidden reports whether the command is an entry point the host re-executes itself as,
// left out of the help.
func (c command) hidden() bool { return len(c.usage) == 0 }

// consentProviders are the values of --consent (sessionflags.go).
var consentProviders = []string{"dialog", "tty", "deny"}

// commands lists every subcommand, in the order the help shows them.
var commands = []command{
	{
		names:    []string{"run"},
		synopsis: []string{"run [flags]                     serve MCP to one agent (stdio or loopback HTTP)"},
		usage: []string{
			"run [--display auto|private|nested|shared|:N] [--screen WxH] [--mode M] [--manifest F] [--policy F]",
			"             [--permission-mode M] [--capability-manifest F --approve-capability-manifest]",
			"             [--dangerously-bypass-approvals]",
			"             [--managed-policy F] [--consent " + strings.Join(consentProviders, "|") + "] [--indicator=false] [--session-ttl D] [--idle-ttl D]",
			"             [--http 127.0.0.1:PORT] [--log-file F] [--log-level L]   serve MCP (stdio) to one agent",
			"             [--journal DIR [--journal-text] [--journal-screenshots=false]",
			"              [--journal-max-shots N] [--journal-max-shot-bytes N]] [--sandbox on|off]",
			"             [--secrets-dir DIR | --secret-service ATTR=VALUE,…]   credentials type_secret types without the agent seeing them",
			"             [--tools T,…] [--exclude-tools T,…]   serve only these tools / never these (the worker refuses the others)",
		},
		run: runRun,
	},
	{
		names: []string{"call"},
		synopsis: []string{
			"call [flags] TOOL [ARGS_JSON]   run one tool in a fresh host, worker and session",
			"call --session EP TOOL [ARGS]   run one tool in a running session",
		},
		usage: []string{
			"call [--display auto|private|nested|shared|:N] [--timeout D] [--log-level L] [--journal DIR …]",
			"              [--secrets-dir DIR | --secret-service ATTR=VALUE,…] [--tools T,…] [--exclude-tools T,…] TOOL [ARGS_JSON]",
			"call --session ENDPOINT [--timeout D] TOOL [ARGS_JSON]   (or $" + envSession + ") a running session",
		},
		run: runCall,
	},
	{
		names:    []string{"serve"},
		synopsis: []string{"serve [flags]                   a host driven by JSON-RPC on stdin/stdout"},
		usage:    []string{"serve [--log-file F] [--allow-modes M,…] [--policy F] [--consent-timeout D]   JSON-RPC on stdio (docs/serve.md)"},
		run:      runServe,
	},
	{
		names:    []string{"session"},
		synopsis: []string{"session start|stop              a detached session for shell scripts"},
		usage: []string{
			"session start [--display auto|private|nested|shared|:N] [--mode M] [--manifest F] [--label L] [--json]",
			"session stop [ENDPOINT]",
		},
		run: runSession,
	},
	{
		names:    []string{"mcp-connect"},
		synopsis: []string{"mcp-connect ENDPOINT            a stdio MCP server relaying to a session endpoint"},
		usage:    []string{"mcp-connect ENDPOINT               stdio MCP relayed to a session's endpoint"},
		run:      runMCPConnect,
	},
	{
		names:    []string{"journal"},
		synopsis: []string{"journal verify|head|show DIR    check or look at a journal (--journal DIR)"},
		usage: []string{
			"journal verify [--json] [--head HASH] DIR  exit 0: intact and ended in order; 1: tampered, cut off, head not found",
			"journal head [--json] DIR          the newest segment's last hash: keep it elsewhere",
			"journal show DIR [-o FILE] [--json] [--recording NAME]  one self-contained HTML report (or JSON), or one recording's calls",
		},
		run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return runJournal(args, stdout, stderr)
		},
	},
	{
		names:    []string{"replay"},
		synopsis: []string{"replay DIR [flags]              re-run a journal's completed actions"},
		usage:    []string{"replay DIR [--display private|nested|:N] [--json]  re-run a journal's completed actions"},
		run:      runReplay,
	},
	{
		names:    []string{"policy"},
		synopsis: []string{"policy check|eval …             test policy files without a desktop"},
		usage: []string{
			"policy check [--managed-policy FILE] [--policy FILE]",
			"policy eval [--managed-policy FILE] [--policy FILE] --tool NAME [--args JSON]",
		},
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return runPolicy(ctx, args, os.Getenv, stdout, stderr)
		},
	},
	{
		names:    []string{"inventory"},
		synopsis: []string{"inventory [--json]              print the reviewed tool inventory"},
		usage:    []string{"inventory [--json | --markdown]"},
		run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return runInventory(args, stdout, stderr)
		},
	},
	{
		names:    []string{"status"},
		synopsis: []string{"status [--json]                 the mode, policy layers and manifest run would use"},
		usage: []string{
			"status [--mode M] [--manifest F | --capability-manifest F --approve-capability-manifest]",
			"                [--policy F] [--managed-policy F] [--json]   the startup configuration run would use",
		},
		run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return runStatus(args, os.Getenv, stdout, stderr)
		},
	},
	{
		names:    []string{"doctor"},
		synopsis: []string{"doctor [--json]                 whether this machine has what run needs (exit 1: no)"},
		usage: []string{
			"doctor [--display auto|private|:N] [--json]   whether run has what it needs here: the display,",
			"                its extensions, window manager, accessibility bus, sandbox, programs (exit 0 ready, 1 not)",
		},
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return runDoctor(ctx, args, os.Getenv, stdout, stderr)
		},
	},
	{
		names:    []string{"list-tools"},
		synopsis: []string{"list-tools [--json]             every tool with its input schema"},
		usage:    []string{"list-tools [--json]                every tool (with --json its input schema)"},
		run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return runListTools(args, stdout, stderr)
		},
	},
	{
		names:    []string{"manifest"},
		synopsis: []string{"manifest                        every tool in the reference driver's tool-manifest format"},
		usage: []string{
			"manifest                           every tool in the reference driver's tool-manifest format",
			"                                            (input, success and error output schemas, aliases)",
		},
		run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return runManifest(args, stdout, stderr)
		},
	},
	{
		names:    []string{"version", "--version"},
		synopsis: []string{"version                         print the version"},
		usage:    []string{"version"},
		run: func(_ context.Context, _ []string, stdout, _ io.Writer) int {
			fmt.Fprintf(stdout, "cua-host %s (protocol v%d–v%d)\n", version, contract.MinProtocolVersion, contract.MaxProtocolVersion)
			return 0
		},
	},
	{
		names:    []string{"help", "-h", "--help"},
		synopsis: []string{"help                            print every command with its flags"},
		usage:    []string{"help"},
		// run is left nil: a command that prints the table cannot be in it (run prints it).
	},
	// The hidden entry points through which the host re-executes itself.
	{
		names: []string{contract.WorkerSubcommand},
		run: func(_ context.Context, args []string, _, _ io.Writer) int {
			return worker.Main(args, worker.Config{NewRegistry: worker.DesktopRegistry})
		},
	},
	{
		names: []string{contract.ProxySubcommand},
		run:   func(_ context.Context, args []string, _, _ io.Writer) int { return runProxy(args) },
	},
	{
		names: []string{contract.JanitorSubcommand},
		run:   func(_ context.Context, args []string, _, stderr io.Writer) int { return serve.RunJanitor(args, stderr) },
	},
}

// lookupCommand returns the command name selects.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		for _, n := range c.names {
			if n == name {
				return c, true
			}
		}
	}
	return command{}, false
}

// usage prints every command that is not hidden with its flags.
func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, c := range commands {
		for _, line := range c.usage {
			if strings.HasPrefix(line, " ") {
				b.WriteString("  " + line + "\n") // a continuation
				continue
			}
			b.WriteString("  cua-host " + line + "\n")
		}
	}
	fmt.Fprint(w, b.String())
}

// synopsis returns the package documentation's list of commands, one "cua-host …" line
// per form.
func synopsis() []string {
	var out []string
	for _, c := range commands {
		for _, line := range c.synopsis {
			out = append(out, "cua-host "+line)
		}
	}
	return out
}
