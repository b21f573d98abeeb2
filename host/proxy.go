package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// ProxyOptions configures StartProxy.
type ProxyOptions struct {
	// Logger receives the host's debug lines about the proxy; nil discards them.
	Logger *slog.Logger
	// Path is the proxy binary; empty means this program re-executed through
	// /proc/self/exe with Args.
	Path string
	// Args are the arguments before Flags; nil means [contract.ProxySubcommand] for the
	// re-executed binary and none for a Path.
	Args []string
	// Flags are the proxy's flags, written after Args (contract.ProxyFlags.Args). Their
	// Endpoint and EndpointHTTP are set by StartProxy from Endpoint and HTTPListener.
	Flags contract.ProxyFlags
	// Session is the proxy's end of a session channel (wire.SessionPair). StartProxy
	// takes ownership: the child receives it at contract.ProxySessionFD and the host's copy is
	// closed before StartProxy returns, whatever happens.
	Session *os.File
	// Endpoint, when set, is a listening unix socket (a session endpoint): the proxy serves
	// MCP on it instead of stdio (--endpoint), to peers of this user only. HTTPListener,
	// when set, is a listening loopback TCP socket the proxy also serves streamable HTTP on
	// (--endpoint-http; it needs Endpoint, and a token in the bootstrap line). StartProxy
	// takes ownership of both: the child receives them at contract.ProxyEndpointFD and
	// contract.ProxyHTTPListenerFD and the host's copies are closed before StartProxy
	// returns, whatever happens.
	Endpoint, HTTPListener *os.File
	// Stdin and Stdout are the agent's stream, inherited as they are; nil means
	// /dev/null. The host never reads or writes them. The caller keeps ownership.
	Stdin, Stdout *os.File
	// Stderr receives the proxy's logs; nil means /dev/null. The caller keeps ownership.
	Stderr *os.File
	// CloseGrace is how long Close waits for the proxy to exit after releasing it before
	// it kills the proxy's process group; zero means 1 s.
	CloseGrace time.Duration
}

// Proxy is a running MCP proxy process (the hidden `__mcp-proxy` command). It holds one
// session channel and nothing else of the host's: no control channel, no listener. It is
// spawned like the worker (own process group, Pdeathsig SIGKILL from a thread held for
// its life, a cleared environment, descriptors only through ExtraFiles), and before the
// worker, so that its pid can be in the worker's protected list (Hello); the session is
// bound to the other end of its channel afterwards (Host.CreateSessionOn) and the proxy
// learns the worker's generation and protocol version through Activate.
//
// Its methods are safe for concurrent use.
type Proxy struct {
	log   *slog.Logger
	proc  *process
	grace time.Duration

	// mu guards the fields below.
	mu sync.Mutex
	// bootstrap is the write end of the bootstrap pipe; nil once closed. Holding it open
	// keeps the proxy alive; closing it tells the proxy to exit.
	bootstrap *os.File
	activated bool

	closeOnce sync.Once
}

// StartProxy spawns the proxy. It does not wait for the proxy to be ready: the proxy waits
// for Activate before it serves. On error nothing is left running and opts.Session is
// closed.
func StartProxy(opts ProxyOptions) (p *Proxy, err error) {
	defer func() {
		for _, f := range []*os.File{opts.Session, opts.Endpoint, opts.HTTPListener} {
			if f != nil {
				f.Close() // the child has its own copy once started
			}
		}
	}()
	if opts.Session == nil {
		return nil, errors.New("start proxy: no session channel")
	}
	if opts.HTTPListener != nil && opts.Endpoint == nil {
		return nil, errors.New("start proxy: an HTTP listener needs an endpoint")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CloseGrace == 0 {
		opts.CloseGrace = time.Second
	}
	bootR, bootW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start proxy: bootstrap pipe: %w", err)
	}
	flags := opts.Flags
	flags.Endpoint, flags.EndpointHTTP = opts.Endpoint != nil, opts.HTTPListener != nil
	if err := flags.Check(); err != nil {
		bootR.Close()
		bootW.Close()
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	files := map[contract.Descriptor]*os.File{
		contract.ProxySession: opts.Session, contract.ProxyBootstrap: bootR,
		contract.ProxyEndpoint: opts.Endpoint, contract.ProxyHTTPListener: opts.HTTPListener,
	}
	opts.Session, opts.Endpoint, opts.HTTPListener = nil, nil, nil // spawn owns them now
	c := child{
		role:      "MCP proxy",
		path:      opts.Path,
		args:      opts.Args,
		noDesktop: true,
		stdin:     stream{"agent-stdin", opts.Stdin},
		stdout:    stream{"agent-stdout", opts.Stdout},
		stderr:    stream{"logs", opts.Stderr},
	}
	for _, d := range flags.Descriptors() { // exactly those the flags tell the proxy to expect
		c.files = append(c.files, inherited{d, files[d]})
	}
	if c.path == "" {
		c.path = "/proc/self/exe"
		if c.args == nil {
			c.args = []string{contract.ProxySubcommand}
		}
	}
	c.args = append(append([]string{"cua-mcp-proxy"}, c.args...), flags.Args()...)
	proc, _, err := spawn(opts.Logger, c)
	if err != nil {
		bootW.Close()
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	return &Proxy{log: opts.Logger, proc: proc, grace: opts.CloseGrace, bootstrap: bootW}, nil
}

// PID returns the proxy's process id.
func (p *Proxy) PID() int { return p.proc.pid }

// Exited is closed once the proxy has exited and been reaped.
func (p *Proxy) Exited() <-chan struct{} { return p.proc.exited }

// ExitCode returns the proxy's exit code once Exited is closed: -1 while it runs or when
// a signal ended it.
func (p *Proxy) ExitCode() int {
	select {
	case <-p.proc.exited:
	default:
		return -1
	}
	if p.proc.state == nil {
		return -1
	}
	return p.proc.state.ExitCode()
}

// Activate sends the bootstrap line (contract.Bootstrap); the proxy starts serving once it has read it. It may
// be called once.
func (p *Proxy) Activate(b contract.Bootstrap) error {
	line, err := b.Encode()
	if err != nil {
		return fmt.Errorf("activate proxy: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.activated:
		return errors.New("activate proxy: already activated")
	case p.bootstrap == nil:
		return errors.New("activate proxy: proxy closed")
	}
	p.activated = true
	if _, err := io.WriteString(p.bootstrap, line); err != nil {
		return fmt.Errorf("activate proxy: %w", err)
	}
	p.log.Debug("activated MCP proxy", "pid", p.proc.pid, "version", b.Version, "http", b.HTTPToken != "")
	return nil
}

// Close releases the proxy (end-of-file on its bootstrap pipe), waits up to CloseGrace for
// it to exit, then kills its process group and reaps it. It is idempotent and returns once
// the proxy has been reaped.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		if p.bootstrap != nil {
			p.bootstrap.Close()
			p.bootstrap = nil
		}
		p.mu.Unlock()
		t := time.NewTimer(p.grace)
		select {
		case <-p.proc.exited:
		case <-t.C:
			p.log.Warn("MCP proxy did not exit after release; killing its process group", "pid", p.proc.pid, "grace", p.grace)
		}
		t.Stop()
		p.proc.killGroup()
		<-p.proc.exited
		p.log.Debug("MCP proxy reaped", "pid", p.proc.pid, "state", stateString(p.proc.state))
	})
	return nil
}

// CreateSessionOn asks the worker to bind a new session to theirs, the worker's end of a
// session channel whose other end the caller already handed to someone (a proxy started
// before the worker, so that its pid is protected from the first frame on). It takes
// ownership of theirs and closes the host's copy whatever happens.
func (h *Host) CreateSessionOn(ctx context.Context, spec SessionSpec, theirs *os.File) (SessionInfo, error) {
	defer theirs.Close() // the worker holds its own copy once sent (or never will)
	if spec.Mode == 0 {
		spec.Mode = authz.Standard
	}
	if spec.TTL == 0 {
		spec.TTL = h.opts.Ceiling.MaxSessionTTL
	}
	if spec.IdleTTL == 0 {
		spec.IdleTTL = min(h.opts.Ceiling.MaxIdleTTL, spec.TTL)
	}
	req := &cuav1.CreateSession{
		Label:          spec.Label,
		Mode:           authz.ModeToProto(spec.Mode),
		TtlSeconds:     uint32(spec.TTL / time.Second),
		IdleTtlSeconds: uint32(spec.IdleTTL / time.Second),
		ClientKind:     string(spec.ClientKind),
		Transport:      string(spec.Transport),
		Tools:          spec.Tools,
		ExcludeTools:   spec.ExcludeTools,
	}
	if len(spec.Manifest) > 0 {
		sum := sha256.Sum256(spec.Manifest)
		req.Manifest = spec.Manifest
		req.ManifestSha256 = hex.EncodeToString(sum[:])
	}
	h.journal.expect(spec, h.Generation(), req.ManifestSha256)
	reply, err := h.request(ctx, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_CreateSession{CreateSession: req}}, theirs)
	if err != nil {
		h.journal.forget(spec.Label)
		return SessionInfo{}, fmt.Errorf("create session %q: %w", spec.Label, err)
	}
	created := reply.GetSessionCreated()
	if created == nil || created.GetLabel() != spec.Label {
		return SessionInfo{}, fmt.Errorf("create session %q: unexpected reply %s", spec.Label, wire.KindOf(reply))
	}
	return SessionInfo{Label: created.GetLabel(), ExpiresAt: time.UnixMilli(created.GetExpiresAtUnixMs())}, nil
}

// GenerationBytes returns a copy of the worker's 16-byte generation.
func (h *Host) GenerationBytes() []byte { return append([]byte(nil), h.generation...) }
