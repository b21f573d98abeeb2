package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/internal/secretservice"
	"github.com/cua-host/cua-host/policy"
)

// sessionFlags are the authorization flags `run` and `call` share.
type sessionFlags struct {
	auth          *authFlags
	consent       string
	sessionTTL    time.Duration
	idleTTL       time.Duration
	policyPath    string
	managedPolicy string

	journal            string
	journalText        bool
	journalScreenshots bool
	journalMaxShots    int
	journalMaxBytes    int64

	sandbox string
	// secretsDir is --secrets-dir: the credentials directory type_secret reads from.
	secretsDir string
	// secretService is --secret-service: ATTR=VALUE[,ATTR=VALUE…] selecting the items of
	// the person's secret store type_secret reads from.
	secretService string

	// tools and excludeTools are --tools and --exclude-tools as given (comma-separated).
	tools, excludeTools string
}

// addSessionFlags registers the shared flags on fs.
func addSessionFlags(fs *flag.FlagSet) *sessionFlags {
	f := &sessionFlags{auth: addAuthFlags(fs)}
	fs.StringVar(&f.consent, "consent", "", "consent provider for standard mode: dialog (a window on the display), tty (ask on /dev/tty) or deny (refuse with authorization_required); default dialog on a shared display, deny on a private one")
	fs.DurationVar(&f.sessionTTL, "session-ttl", 8*time.Hour, "session lifetime (≤ 24h)")
	fs.DurationVar(&f.idleTTL, "idle-ttl", 30*time.Minute, "idle timeout (≤ session TTL)")
	fs.StringVar(&f.policyPath, "policy", "", "user policy file or Rego directory (default $"+policy.EnvPolicyFile+")")
	fs.StringVar(&f.managedPolicy, "managed-policy", "", "managed policy file or Rego directory (default $"+policy.EnvManagedPolicyFile+")")
	fs.StringVar(&f.journal, "journal", "", "keep a tamper-evident journal of every call in this directory (docs/journal.md)")
	fs.BoolVar(&f.journalText, "journal-text", false, "keep type_text text and clipboard_write content in the journal (redacted by default)")
	fs.BoolVar(&f.journalScreenshots, "journal-screenshots", true, "record a screenshot before and after every action in the journal")
	fs.IntVar(&f.journalMaxShots, "journal-max-shots", 0, "screenshots kept per session; the oldest are removed beyond it (0: 500, -1: no limit)")
	fs.Int64Var(&f.journalMaxBytes, "journal-max-shot-bytes", 0, "screenshot bytes kept per session (0: 128 MiB, -1: no limit)")
	fs.StringVar(&f.sandbox, "sandbox", "on", "on: every program a session launches runs in a bubblewrap sandbox that hides the person's cookies, the journal and every other process, and launches are refused where none can be built; off: launched programs run unconfined, as you (docs/security.md)")
	fs.StringVar(&f.secretsDir, "secrets-dir", "", "credentials directory: each file in it is a secret the sessions can type with type_secret (its name the handle, listed by find_credentials) without ever seeing it; hidden from launched programs (docs/security.md)")
	fs.StringVar(&f.secretService, "secret-service", "", "ATTR=VALUE[,ATTR=VALUE…]: the credentials are the items of your secret store (the freedesktop Secret Service on your session bus: gnome-keyring, KeePassXC, KWallet) whose attributes match all of these, never the rest of it; handles come from the items' labels; a locked keyring is refused, never prompted for; not with --secrets-dir (docs/security.md)")
	fs.StringVar(&f.tools, "tools", "", "serve only these tools (comma-separated): tools/list shows only them and the worker refuses any other with permission_denied; an unknown name is a startup error")
	fs.StringVar(&f.excludeTools, "exclude-tools", "", "never serve these tools (comma-separated); an unknown name is a startup error")
	return f
}

// sessionSetup is what the flags resolve to, everything loaded and checked before anything
// starts.
type sessionSetup struct {
	ceiling authz.Ceiling
	policy  *policy.Set
	spec    host.SessionSpec
	// consent is the --consent provider's name ("" picks one for the display: consentFor).
	consent string
	// manifest is the parsed bounded manifest (nil in other modes); the worker parses
	// the same bytes again and checks their hash.
	manifest *authz.Manifest
	// journal is the journal to keep, or nil.
	journal *host.JournalOptions
	// sandbox confines launched programs (--sandbox).
	sandbox host.SandboxOptions
	// secretsDir is the absolute path of --secrets-dir, or "".
	secretsDir string
	// secretService is --secret-service's selection, or nil.
	secretService *host.SecretServiceOptions
}

// maxTTL bounds --session-ttl as the reference system does.
const maxTTL = 24 * time.Hour

// resolve validates flag combinations and the environment (the reference's startup
// errors, startupAuth) and loads the policy and manifest files. Any error stops the
// program before it starts anything.
func (f *sessionFlags) resolve(label string, getenv func(string) string) (*sessionSetup, error) {
	auth, err := f.auth.resolve(getenv)
	if err != nil {
		return nil, err
	}
	mode := auth.mode
	if f.sessionTTL < time.Second || f.sessionTTL > maxTTL {
		return nil, fmt.Errorf("--session-ttl %v must be in [1s, %v]", f.sessionTTL, maxTTL)
	}
	if f.idleTTL < time.Second || f.idleTTL > f.sessionTTL {
		return nil, fmt.Errorf("--idle-ttl %v must be in [1s, --session-ttl %v]", f.idleTTL, f.sessionTTL)
	}
	if f.consent != "" && !slices.Contains(consentProviders, f.consent) {
		last := len(consentProviders) - 1
		return nil, fmt.Errorf("--consent %q: want %s or %s", f.consent, strings.Join(consentProviders[:last], ", "), consentProviders[last])
	}
	if f.sandbox != "on" && f.sandbox != "off" {
		return nil, fmt.Errorf("--sandbox %q: want on or off", f.sandbox)
	}
	if f.journal == "" && (f.journalText || f.journalMaxShots != 0 || f.journalMaxBytes != 0) {
		return nil, fmt.Errorf("--journal-text, --journal-max-shots and --journal-max-shot-bytes need --journal DIR")
	}
	if f.journalMaxShots < -1 || f.journalMaxBytes < -1 {
		return nil, fmt.Errorf("--journal-max-shots and --journal-max-shot-bytes must be ≥ -1")
	}
	managedPath, userPath, err := policy.ResolvePaths(f.managedPolicy, f.policyPath, getenv)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	set, err := policy.LoadLayers(managedPath, userPath)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var manifest []byte
	var parsed *authz.Manifest
	ttl, idle := f.sessionTTL, f.idleTTL
	if auth.manifestPath != "" {
		if manifest, err = authz.ReadManifest(auth.manifestPath); err != nil {
			return nil, err
		}
		if parsed, err = authz.ParseManifest(manifest, authz.DefaultInventory()); err != nil {
			var me *authz.ManifestError
			if errors.As(err, &me) {
				me.File = auth.manifestPath
			}
			return nil, err
		}
		// The manifest's lifetimes bound the session's.
		ttl, idle = min(ttl, parsed.ExpiresAfter), min(idle, parsed.IdleTimeout)
	}
	tools, err := f.toolSelection()
	if err != nil {
		return nil, err
	}
	secretsDir, err := checkSecretsDir(f.secretsDir)
	if err != nil {
		return nil, err
	}
	var secretService *host.SecretServiceOptions
	if f.secretService != "" {
		if secretsDir != "" {
			return nil, fmt.Errorf("--secrets-dir and --secret-service cannot be combined: name one credential store")
		}
		attrs, err := secretservice.ParseSelection(f.secretService)
		if err != nil {
			return nil, fmt.Errorf("--secret-service: %w", err)
		}
		if getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
			return nil, fmt.Errorf("--secret-service needs your session bus, and DBUS_SESSION_BUS_ADDRESS is not set")
		}
		secretService = &host.SecretServiceOptions{Attributes: attrs, BusAddress: getenv("DBUS_SESSION_BUS_ADDRESS")}
	}
	var jr *host.JournalOptions
	if f.journal != "" {
		jr = &host.JournalOptions{
			Dir: f.journal, KeepText: f.journalText, Screenshots: f.journalScreenshots,
			MaxShots: f.journalMaxShots, MaxShotBytes: f.journalMaxBytes, Version: version,
		}
	}
	return &sessionSetup{
		secretsDir:    secretsDir,
		secretService: secretService,
		journal:       jr,
		sandbox:       host.SandboxOptions{Disabled: f.sandbox == "off"},
		ceiling: authz.Ceiling{
			AllowedModes:             []authz.Mode{mode},
			UnrestrictedAcknowledged: mode == authz.Unrestricted,
			MaxSessionTTL:            ttl,
			MaxIdleTTL:               idle,
		},
		policy:   set,
		spec:     host.SessionSpec{Label: label, Mode: mode, Manifest: manifest, TTL: ttl, IdleTTL: idle, Tools: tools.Only(), ExcludeTools: tools.Exclude()},
		consent:  f.consent,
		manifest: parsed,
	}, nil
}

// consentFor returns the consent provider for the display the worker drives: the one
// --consent names, or by default a dialog on a display shared with a person and none
// (deny) on a private display, where nobody could answer and the display is the session's
// own anyway. A dialog logs to log.
func (s *sessionSetup) consentFor(d *displaySetup, log *slog.Logger) host.ConsentFunc {
	kind := s.consent
	if kind == "" {
		kind = "dialog"
		if d.facts.Private {
			kind = "deny"
		}
	}
	switch kind {
	case "tty":
		return host.ConsentTTY(host.TTYConsentOptions{})
	case "dialog":
		ui := d
		if d.facts.Nested && d.person != nil {
			ui = d.person // the person's own display, outside the session's
		}
		return host.ConsentDialog(host.DialogConsentOptions{Display: ui.facts.Name, XAuthority: ui.xauthority(), Mode: s.spec.Mode.String(), Logger: log})
	}
	return nil // no provider: consent-needing calls are refused authorization_required
}

// toolSelection checks --tools and --exclude-tools against the shipped inventory: every
// name must be a tool cua-host serves, and no tool may be in both.
func (f *sessionFlags) toolSelection() (authz.ToolSelection, error) {
	split := func(v string) []string {
		if v == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	sel, err := authz.NewToolSelection(split(f.tools), split(f.excludeTools), authz.DefaultInventory())
	var se *authz.SelectionError
	if errors.As(err, &se) {
		name := "--tools"
		if se.List == "exclude_tools" {
			name = "--exclude-tools"
		}
		return authz.ToolSelection{}, fmt.Errorf("%s: %s", name, se.Reason)
	}
	return sel, err
}

// checkSecretsDir returns the absolute path of --secrets-dir after checking that it is a
// directory ("" when the flag is not given). The host opens it again, without following
// links, when it starts the worker.
func checkSecretsDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--secrets-dir: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("--secrets-dir: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("--secrets-dir %s is not a directory", abs)
	}
	return abs, nil
}
