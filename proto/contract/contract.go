package contract

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Protocol versions this build speaks, on the control channel and on session channels.
// The host offers [MinProtocolVersion, MaxProtocolVersion] in Hello; the worker chooses
// one inside it; every frame and envelope carries the chosen one.
const (
	MinProtocolVersion = 1
	MaxProtocolVersion = 1
)

// GenerationLen is the length of a worker generation in bytes (128 random bits, minted by
// the host for each worker and stamped on every session envelope).
const GenerationLen = 16

// Descriptor numbers at which children inherit their channels (exec.Cmd.ExtraFiles
// places them at 3, 4, … in order). The Descriptor values below pair each with its name
// and type; the host places descriptors by them and the children check them.
const (
	// WorkerControlFD is the worker's end of its control channel (SOCK_SEQPACKET).
	WorkerControlFD = 3
	// WorkerCredentialsFD is the credentials directory a worker inherits when Hello's
	// credentials.directory is set (an O_PATH descriptor of the directory).
	WorkerCredentialsFD = 4
	// ProxySessionFD is the proxy's end of its one session channel (SOCK_STREAM).
	ProxySessionFD = 3
	// ProxyBootstrapFD is the read end of the proxy's bootstrap pipe: one line
	// (Bootstrap) once the session is bound, then end-of-file when the host lets the
	// proxy go.
	ProxyBootstrapFD = 4
	// ProxyEndpointFD is a listening AF_UNIX SOCK_STREAM socket the proxy serves MCP on
	// (newline-delimited JSON-RPC, one MCP session per connection) when started with
	// --endpoint: a session endpoint of `cua-host serve`.
	ProxyEndpointFD = 5
	// ProxyHTTPListenerFD is a listening loopback TCP socket the proxy serves streamable
	// HTTP on, behind the bootstrap line's bearer token, when started with --endpoint-http
	// (which needs --endpoint).
	ProxyHTTPListenerFD = 6
	// JanitorPipeFD is the read end of a pipe `cua-host serve`'s endpoint janitor
	// (JanitorSubcommand) inherits: end-of-file on it says the serve host is gone.
	JanitorPipeFD = 3
)

// Descriptor is one descriptor a child inherits at a fixed number. The host places each
// at its number (os/exec's ExtraFiles holds descriptors 3, 4, … in order, so a child's
// descriptors are numbered from 3 without gaps); the child opens it by that number and
// checks its type.
type Descriptor struct {
	// FD is the descriptor's number in the child.
	FD int
	// Name names it in logs and errors ("control", "session", …).
	Name string
	// Type is what it must be: a file type bit pattern of stat's st_mode (S_IFSOCK,
	// S_IFIFO, S_IFDIR).
	Type uint32
}

// The descriptors children inherit, by number.
var (
	WorkerControl     = Descriptor{FD: WorkerControlFD, Name: "control", Type: unix.S_IFSOCK}
	WorkerCredentials = Descriptor{FD: WorkerCredentialsFD, Name: "credentials", Type: unix.S_IFDIR}
	ProxySession      = Descriptor{FD: ProxySessionFD, Name: "session", Type: unix.S_IFSOCK}
	ProxyBootstrap    = Descriptor{FD: ProxyBootstrapFD, Name: "bootstrap", Type: unix.S_IFIFO}
	ProxyEndpoint     = Descriptor{FD: ProxyEndpointFD, Name: "endpoint", Type: unix.S_IFSOCK}
	ProxyHTTPListener = Descriptor{FD: ProxyHTTPListenerFD, Name: "http-listener", Type: unix.S_IFSOCK}
	JanitorPipe       = Descriptor{FD: JanitorPipeFD, Name: "janitor-pipe", Type: unix.S_IFIFO}
)

// Check reports whether this process holds the descriptor at its number with its type.
func (d Descriptor) Check() error {
	var st unix.Stat_t
	if err := unix.Fstat(d.FD, &st); err != nil {
		return fmt.Errorf("descriptor %d (%s): %w", d.FD, d.Name, err)
	}
	if got := st.Mode & unix.S_IFMT; got != d.Type {
		return fmt.Errorf("descriptor %d (%s) has file type %#o, want %#o", d.FD, d.Name, got, d.Type)
	}
	return nil
}

// ProxyExitIdle is the proxy's exit code when no call came within its --idle-exit
// lifetime: its host ends the session as idle-expired.
const ProxyExitIdle = 3

// Journal credits (docs/adr/0008-journal-written-by-the-host.md). The host grants the
// worker credits for journal records whose space it has already reserved on disk: a
// JournalAck with call_id 0 grants JournalCreditBatch of them. While the worker holds a
// credit, it sends an action's BEGIN entry with call_id 0 and runs the action without
// waiting for the host's acknowledgement, as long as the entry carries no screenshot and
// its encoded size is at most JournalCreditEntryMax bytes; each such entry spends one
// credit. Any other BEGIN waits for its JournalAck as before.
const (
	JournalCreditBatch    = 32
	JournalCreditEntryMax = 2 << 10
)

// ToolContractVersion is the version of the reference driver's published tool contract
// (its tool names, argument and result shapes, refusal codes) whose files cua-host is
// checked against (test/conformance/testdata/cua-driver-contract). get_config,
// `cua-host status` and `cua-host manifest` report it; docs/compatibility.md says what
// cua-host takes from the reference's later changes and where it differs.
const ToolContractVersion = "0.7.0"
