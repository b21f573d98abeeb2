package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/policy"
)

// sessionFlags are the authorization flags `run` and `call` share.
type sessionFlags struct {
	mode          string
	manifest      string
	bypass        bool
	consent       string
	sessionTTL    time.Duration
	idleTTL       time.Duration
	policyPath    string
	managedPolicy string
}

// addSessionFlags registers the shared flags on fs.
func addSessionFlags(fs *flag.FlagSet) *sessionFlags {
	f := &sessionFlags{}
	fs.StringVar(&f.mode, "mode", "standard", "permission mode: standard, bounded or unrestricted")
	fs.StringVar(&f.manifest, "manifest", "", "bounded manifest (YAML); required with --mode bounded")
	fs.BoolVar(&f.bypass, "dangerously-bypass-approvals", false, "required with --mode unrestricted: skip consent prompts")
	fs.StringVar(&f.consent, "consent", "deny", "consent provider for standard mode: deny or tty")
	fs.DurationVar(&f.sessionTTL, "session-ttl", 8*time.Hour, "session lifetime (≤ 24h)")
	fs.DurationVar(&f.idleTTL, "idle-ttl", 30*time.Minute, "idle timeout (≤ session TTL)")
	fs.StringVar(&f.policyPath, "policy", "", "user policy file or Rego directory (default $"+policy.EnvPolicyFile+")")
	fs.StringVar(&f.managedPolicy, "managed-policy", "", "managed policy file or Rego directory (default $"+policy.EnvManagedPolicyFile+")")
	return f
}

// sessionSetup is what the flags resolve to, everything loaded and checked before anything
// starts.
type sessionSetup struct {
	ceiling authz.Ceiling
	policy  *policy.Set
	spec    host.SessionSpec
	consent host.ConsentFunc
}

// maxTTL bounds --session-ttl as the reference system does.
const maxTTL = 24 * time.Hour

// resolve validates flag combinations (with the meaning of the reference's startup
// errors) and loads the policy and manifest files. Any error stops the program before it
// starts anything.
func (f *sessionFlags) resolve(label string, getenv func(string) string) (*sessionSetup, error) {
	mode, err := authz.ParseMode(f.mode)
	if err != nil {
		return nil, err
	}
	switch {
	case mode == authz.Unrestricted && !f.bypass:
		return nil, fmt.Errorf("permission mode unrestricted requires --dangerously-bypass-approvals")
	case f.bypass && mode != authz.Unrestricted:
		return nil, fmt.Errorf("--dangerously-bypass-approvals cannot be combined with --mode %s", mode)
	case mode == authz.Bounded && f.manifest == "":
		return nil, fmt.Errorf("permission mode bounded requires --manifest <path>")
	case f.manifest != "" && mode != authz.Bounded:
		return nil, fmt.Errorf("--manifest applies only to --mode bounded (got --mode %s)", mode)
	}
	if f.sessionTTL <= 0 || f.sessionTTL > maxTTL {
		return nil, fmt.Errorf("--session-ttl %v must be in (0, %v]", f.sessionTTL, maxTTL)
	}
	if f.idleTTL <= 0 || f.idleTTL > f.sessionTTL {
		return nil, fmt.Errorf("--idle-ttl %v must be in (0, --session-ttl %v]", f.idleTTL, f.sessionTTL)
	}
	var consent host.ConsentFunc
	switch f.consent {
	case "deny":
		consent = nil // the host declines every request
	default:
		return nil, fmt.Errorf("--consent %q: want deny", f.consent)
	}
	managedPath, userPath := policy.ResolvePaths(f.managedPolicy, f.policyPath, getenv)
	set, err := policy.LoadLayers(managedPath, userPath)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var manifest []byte
	if f.manifest != "" {
		if manifest, err = os.ReadFile(f.manifest); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
	}
	return &sessionSetup{
		ceiling: authz.Ceiling{
			AllowedModes:             []authz.Mode{mode},
			UnrestrictedAcknowledged: mode == authz.Unrestricted,
			MaxSessionTTL:            f.sessionTTL,
			MaxIdleTTL:               f.idleTTL,
		},
		policy:  set,
		spec:    host.SessionSpec{Label: label, Mode: mode, Manifest: manifest, TTL: f.sessionTTL, IdleTTL: f.idleTTL},
		consent: consent,
	}, nil
}
