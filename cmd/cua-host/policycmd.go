package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/cua-host/cua-host/policy"
)

// Exit codes of `cua-host policy`.
const (
	policyExitOK    = 0 // check: every layer is valid; eval: allowed
	policyExitDeny  = 1 // eval: denied
	policyExitUsage = 2 // a usage error or a policy that does not load
)

const policyUsageText = `usage:
  cua-host policy check [--managed-policy FILE] [--policy FILE]
  cua-host policy eval  [--managed-policy FILE] [--policy FILE] --tool NAME [--args JSON]

FILE is a .yaml or .yml file, a .rego file, or a directory of .rego files.
Without the flag, FILE comes from $CUA_HOST_MANAGED_POLICY_FILE and
$CUA_HOST_POLICY_FILE. The managed layer is evaluated first; both must allow.

check  loads each configured layer and prints its kind, SHA-256 and a summary.
       Exit 0 when every layer is valid, 2 when one is not.
eval   decides one tool call as the worker would and prints one JSON object:
       {"decision":"allow"|"deny","tool":…,"layer":"managed"|"user"|"","reason":…}
       Exit 0 allow, 1 deny, 2 load or usage error. --args defaults to {}.
`

// policyEvalOutput is what `cua-host policy eval` prints.
type policyEvalOutput struct {
	Decision string `json:"decision"` // "allow" or "deny"
	Tool     string `json:"tool"`     // canonical tool name
	Layer    string `json:"layer"`    // the denying layer, "" when allowed
	Reason   string `json:"reason"`
}

// runPolicy runs `cua-host policy check|eval`; args are the words after
// "policy". getenv supplies the policy environment variables. It returns
// the exit code.
func runPolicy(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, policyUsageText)
		return policyExitUsage
	}
	switch args[0] {
	case "check":
		return policyCheck(args[1:], getenv, stdout, stderr)
	case "eval":
		return policyEval(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, policyUsageText)
		return policyExitOK
	}
	fmt.Fprintf(stderr, "cua-host policy: unknown command %q\n%s", args[0], policyUsageText)
	return policyExitUsage
}

// policyFlags holds the layer flags shared by check and eval.
type policyFlags struct {
	managed, user string
}

// newPolicyFlagSet returns a FlagSet for one subcommand with the layer
// flags registered.
func newPolicyFlagSet(name string, pf *policyFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cua-host policy "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&pf.managed, "managed-policy", "", "managed policy `FILE` (default $"+policy.EnvManagedPolicyFile+")")
	fs.StringVar(&pf.user, "policy", "", "user policy `FILE` (default $"+policy.EnvPolicyFile+")")
	return fs
}

// parsePolicyFlags parses args and rejects positional arguments. ok is
// false when the caller must return code.
func parsePolicyFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		if code == 0 {
			return policyExitOK, false
		}
		return policyExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (policy files are given with --policy and --managed-policy)\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return policyExitUsage, false
	}
	return 0, true
}

// policyCheck loads every configured layer, each on its own so that one
// report covers both, and prints what it found.
func policyCheck(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var pf policyFlags
	fs := newPolicyFlagSet("check", &pf, stderr)
	if code, ok := parsePolicyFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	managed, user, err := policy.ResolvePaths(pf.managed, pf.user, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host policy check: %v\n", err)
		return policyExitUsage
	}
	if managed == "" && user == "" {
		fmt.Fprintln(stdout, "no policy configured: every call passes the policy stage")
		return policyExitOK
	}
	code := policyExitOK
	for _, layer := range []struct{ name, path string }{
		{policy.LayerManaged, managed},
		{policy.LayerUser, user},
	} {
		if layer.path == "" {
			fmt.Fprintf(stdout, "%s policy: not configured\n", layer.name)
			continue
		}
		l, err := policy.Load(layer.path)
		if err != nil {
			fmt.Fprintf(stderr, "cua-host policy check: %s policy: %v\n", layer.name, err)
			code = policyExitUsage
			continue
		}
		fmt.Fprintf(stdout, "%s policy: %s\n  kind:    %s\n  sha256:  %s\n  summary: %s\n",
			layer.name, layer.path, l.Kind(), l.SHA256(), l.Summary())
	}
	return code
}

// policyEval decides one tool call and prints the decision as JSON.
func policyEval(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var pf policyFlags
	fs := newPolicyFlagSet("eval", &pf, stderr)
	tool := fs.String("tool", "", "tool `NAME` to decide (required)")
	argsJSON := fs.String("args", "{}", "tool arguments as a `JSON` object")
	if code, ok := parsePolicyFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *tool == "" {
		fmt.Fprintln(stderr, "cua-host policy eval: --tool is required")
		fs.Usage()
		return policyExitUsage
	}
	var decoded any
	if err := json.Unmarshal([]byte(*argsJSON), &decoded); err != nil {
		fmt.Fprintf(stderr, "cua-host policy eval: --args: %v\n", err)
		return policyExitUsage
	}
	toolArgs, isObject := decoded.(map[string]any)
	if !isObject {
		fmt.Fprintln(stderr, "cua-host policy eval: --args must be a JSON object")
		return policyExitUsage
	}

	managed, user, err := policy.ResolvePaths(pf.managed, pf.user, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host policy eval: %v\n", err)
		return policyExitUsage
	}
	set, err := policy.LoadLayers(managed, user)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host policy eval: %v\n", err)
		return policyExitUsage
	}
	d := set.Decide(ctx, *tool, toolArgs)
	out := policyEvalOutput{Decision: "deny", Tool: d.Tool, Layer: d.Layer, Reason: d.Reason}
	if d.Allow {
		out.Decision = "allow"
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "cua-host policy eval: %v\n", err)
		return policyExitUsage
	}
	if !d.Allow {
		return policyExitDeny
	}
	return policyExitOK
}
