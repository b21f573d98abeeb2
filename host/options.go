package host

import (
	"context"
	"log/slog"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/policy"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// Options configures Start.
type Options struct {
	// Logger receives the host's logs and the worker's, re-emitted as structured records
	// under the group "worker". Nil discards them.
	Logger *slog.Logger
	// WorkerLogLevel is the worker's log level; the zero value is Info.
	WorkerLogLevel slog.Level

	// WorkerPath is the worker binary. Empty means this program re-executed through
	// /proc/self/exe (same inode, no path race) with WorkerArgs. Embedders whose binary is
	// not cua-host point it at cmd/cua-worker.
	WorkerPath string
	// WorkerArgs are the arguments before the worker's own flags (contract.WorkerFlags);
	// nil means [contract.WorkerSubcommand] for the re-executed binary and none for a
	// WorkerPath.
	WorkerArgs []string
	// WorkerSHA256, when set, pins the worker binary: the host opens the file, hashes the
	// open descriptor and executes that same descriptor, never the path twice.
	WorkerSHA256 string

	// Env adds or overrides variables of the worker's environment. Only the allowlisted
	// names (EnvAllowlist) are accepted. The rest of the environment is cleared.
	Env []string

	// Ceiling bounds every session. The zero value means authz.DefaultCeiling().
	Ceiling authz.Ceiling
	// Policy is the process-lifetime policy snapshot (from policy.LoadLayers) shipped to
	// the worker, which re-parses it and checks its hashes; nil means no policy layer is
	// configured.
	Policy *policy.Set
	// Display describes the X display the worker drives.
	Display DisplayFacts
	// Person, on a nested display (Display.Nested), watches whether the person is using
	// the display's window on their own display; while they are, the worker refuses the
	// sessions' acting calls with person_active (docs/adr/0013). Start runs it once the
	// worker is ready and returns only after its first report reached the worker; Close
	// stops it. Nil sends nothing: the agent acts whatever the person does.
	Person PersonWatcher
	// OnPerson, with Person, is called with every change of the person's activity once the
	// worker was told (the first report included), from the watch's goroutine; it must not
	// block. `cua-host run` shows on the session indicator who has control.
	OnPerson func(active bool)
	// ProtectedPIDs are processes no tool may target, in addition to the host's own pid.
	ProtectedPIDs []int
	// ProtectAncestors adds the host's ancestors (AncestorPIDs) to ProtectedPIDs: the
	// program that started the host and the terminal showing it are never a target. The
	// command line always sets it; an embedding app whose parent is a desktop shell may
	// leave it off.
	ProtectAncestors bool
	// Consent answers the worker's consent requests (standard sessions touching windows
	// they did not launch, the whole display, the clipboard). Nil means there is no
	// provider: such calls are refused with authorization_required. ConsentTTY prompts on
	// the controlling terminal.
	Consent ConsentFunc

	// Journal, when set, makes the host keep a journal of every call that reaches the
	// worker (docs/journal.md). Start opens a new segment in Journal.Dir before it spawns
	// the worker and fails when it cannot; Close ends the segment.
	Journal *JournalOptions

	// Sandbox says how programs the sessions launch are confined. The zero value runs
	// each in a bubblewrap sandbox that hides the person's cookie files, the journal and
	// cua-host's runtime directories and every other process, and refuses launches where
	// no sandbox can be built (docs/security.md).
	Sandbox SandboxOptions

	// SecretsDir, when set, is a credentials directory (docs/security.md, "Typing a
	// secret the agent never sees"): each regular file in it is a credential the sessions
	// can list with find_credentials and type with type_secret, its name the handle, its
	// content the secret. Start opens it once without following symbolic links and hands
	// the worker the open directory; launched programs never see it. The host never reads
	// a secret.
	SecretsDir string

	// SecretService, when set, makes the credentials the items of the person's secret
	// store (the freedesktop Secret Service) that the operator selects by attributes
	// (docs/security.md, "The person's secret store"). The worker reads a secret only when
	// type_secret runs, through an encrypted session; the host reads none. It may not be
	// combined with SecretsDir.
	SecretService *SecretServiceOptions
	// secretService is SecretService checked, its bus address resolved, as Hello
	// carries it; Start sets it.
	secretService *cuav1.SecretService

	// StartTimeout bounds spawn → Ready; zero means 10 s.
	StartTimeout time.Duration
	// CloseGrace is how long Close waits for the worker to exit after closing the control
	// channel before it kills the worker's process group; zero means 2 s. A worker that
	// typed into a client which cannot say it has read the keys keeps the remapped rows
	// of the keyboard for up to a second more before it restores them and exits.
	CloseGrace time.Duration
}

// SecretServiceOptions select the items of the person's secret store the sessions may
// use.
type SecretServiceOptions struct {
	// Attributes select the items: only those whose attributes include every one of
	// these are listed and typed. At least one is required; the whole keyring is never
	// made available.
	Attributes map[string]string
	// BusAddress is the D-Bus address of the person's session bus; "" means the host's
	// own $DBUS_SESSION_BUS_ADDRESS. A socket it names by path is hidden from launched
	// programs.
	BusAddress string
}

// SandboxOptions configure the sandbox of launched programs.
type SandboxOptions struct {
	// Disabled launches programs unconfined: they can read every file the user can, the
	// person's X cookie among them, and see every process. Only for an operator who says
	// so (`--sandbox=off`).
	Disabled bool
	// Hide adds files and directories launched programs must not see, besides those the
	// host hides on its own (Journal.Dir, the XAUTHORITY of the host's environment and of
	// Display) and those the worker finds (internal/sandbox.PersonSecrets).
	Hide []string
}

// DisplayFacts describes the X display given to the worker.
type DisplayFacts struct {
	// Name is the DISPLAY value, for example ":7".
	Name string
	// Private is true when the host started the display for this worker.
	Private bool
	// Nested is true when the display the host started is shown as a window on the
	// person's display (Xephyr): the session's own desktop, which the person watches and
	// may take over. Private is true as well.
	Nested bool
	// ServerPID is the display server's pid when Private.
	ServerPID int
	// XAuthority is the Xauthority file with the display's cookie, for the host's own
	// connection: after the worker exits, the host removes the input devices the worker
	// created on the display and could not remove itself (it was killed). Empty connects
	// without a cookie.
	XAuthority string
}

// ConsentRequest is a worker's request to grant one operation on one resource.
type ConsentRequest struct {
	// Session is the requesting session's label.
	Session string
	Tool    string
	// Resource names the exact resource ("window:pid=…,id=…" or "display").
	Resource string
	// Operation is Op's name: "observe", "input", "terminate", "launch", "read" or "write".
	Operation   string
	Description string
	// Kind is the kind of resource asked about (window, process, display, clipboard,
	// application or file) and Op the operation class asked for. The host passes on only
	// requests whose kind and operation it knows: a provider never sees an unknown one.
	Kind authz.ResourceKind
	Op   authz.Operation
	// Title, Executable and PID describe the resource's window and process, Command is a
	// launch's exact command line (shell-quoted) and Path a file's canonical path, when
	// the worker knows them. They are for display only: Resource says exactly what a
	// grant covers.
	Title      string
	Executable string
	PID        int
	Command    string
	Path       string
}

// ConsentDecision answers a ConsentRequest.
type ConsentDecision struct {
	Granted bool
	// TTL is how long the grant may be reused for the same resource and operation; zero
	// grants this one call only. Whole seconds travel on the wire.
	TTL time.Duration
	// Unavailable says that no one could be asked (no terminal, no user session): the
	// call is refused with authorization_required instead of authorization_declined.
	Unavailable bool
}

// ConsentFunc decides a consent request. It must return promptly or honour ctx; it may be
// called concurrently.
type ConsentFunc func(ctx context.Context, req ConsentRequest) ConsentDecision

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Ceiling.AllowedModes == nil {
		o.Ceiling = authz.DefaultCeiling()
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.CloseGrace == 0 {
		o.CloseGrace = 2 * time.Second
	}
}
