package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
)

// Reasons a session ended, as session_ended reports them.
const (
	reasonRevoked      = "revoked"
	reasonExpired      = "expired"
	reasonIdle         = "idle_expired"
	reasonEnded        = "ended"
	reasonProxyExited  = "proxy_exited"
	reasonWorkerExited = "worker_exited"
	reasonShutdown     = "host_shutdown"
)

// SessionInfo describes a session (create_session, list_sessions, status).
type SessionInfo struct {
	Label       string    `json:"label"`
	TrustDomain string    `json:"trust_domain"`
	Mode        string    `json:"mode"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	IdleTTL     string    `json:"idle_ttl"`
	Display     string    `json:"display"`
	Private     bool      `json:"private_display"`
	WorkerPID   int       `json:"worker_pid"`
	ProxyPID    int       `json:"proxy_pid"`
	Endpoint    Endpoint  `json:"endpoint"`
}

// Endpoint says how to reach a session.
type Endpoint struct {
	// Unix is the session's unix socket: MCP as newline-delimited JSON-RPC, one MCP
	// session per connection, for this user only (`cua-host mcp-connect PATH`).
	Unix string `json:"unix"`
	// HTTP is the loopback streamable HTTP endpoint, when asked for.
	HTTP *HTTPEndpoint `json:"http,omitempty"`
}

// HTTPEndpoint is a loopback streamable HTTP endpoint and its bearer token. The token is
// returned by create_session only.
type HTTPEndpoint struct {
	URL   string `json:"url"`
	Token string `json:"token,omitempty"`
}

// session is one delegated session: its proxy, its endpoint and its place in a domain.
type session struct {
	s     *Server
	d     *domain
	label string
	spec  sessionSpec
	proxy *host.Proxy

	created, expires time.Time
	sock, httpURL    string
	httpTok          string
	workerPID        int
	displayName      string

	// done is closed once the session ended and its endpoint is gone.
	done    chan struct{}
	endOnce sync.Once
	// mu guards reason: why the session ended.
	mu     sync.Mutex
	reason string
}

func (s *Server) createSession(ctx context.Context, params json.RawMessage) (any, *Error) {
	var p createParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	spec, e := checkCreate(p, s.opts.Ceiling)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return nil, errorf(CodeRefused, "the host is shutting down")
	}
	if _, dup := s.sessions[spec.label]; dup {
		s.mu.Unlock()
		return nil, errorf(CodeRefused, "a session labelled %q exists", spec.label)
	}
	s.sessions[spec.label] = nil // reserved while it starts
	d := s.domains[spec.domain]
	if d == nil {
		d = &domain{s: s, name: spec.domain, sessions: map[string]*session{}, stopDone: make(chan struct{})}
		s.domains[spec.domain] = d
	}
	s.mu.Unlock()

	sess, err := s.startSession(ctx, d, spec)
	s.mu.Lock()
	if err != nil || s.stopping {
		delete(s.sessions, spec.label)
	} else {
		s.sessions[spec.label] = sess
	}
	stopping := s.stopping
	s.mu.Unlock()
	if err != nil {
		s.log.Warn("create_session failed", "label", spec.label, "trust_domain", spec.domain, "err", err)
		var re *Error
		if errors.As(err, &re) {
			return nil, re
		}
		return nil, errorf(CodeStartFailed, "create session %q: %v", spec.label, err)
	}
	if stopping {
		sess.finish(reasonShutdown)
		return nil, errorf(CodeRefused, "the host is shutting down")
	}
	info := sess.info()
	if info.Endpoint.HTTP != nil {
		info.Endpoint.HTTP.Token = sess.token()
	}
	s.wg.Add(1)
	go sess.watch()
	return info, nil
}

// startSession starts the domain when it has not started, then the session's endpoint,
// proxy and worker session.
func (s *Server) startSession(ctx context.Context, d *domain, spec sessionSpec) (_ *session, err error) {
	d.startMu.Lock()
	defer d.startMu.Unlock()
	d.mu.Lock()
	stopped, started, want, name := d.stopped, d.h != nil, d.wantDisplay, d.displayName
	d.mu.Unlock()
	if stopped {
		return nil, errorf(CodeRefused, "trust domain %q is stopping; try again", d.name)
	}
	if started && want != spec.display {
		return nil, errorf(CodeRefused, "trust domain %q already drives display %s (%s); its sessions share it", d.name, name, want)
	}
	fresh := !started
	if fresh {
		if spec.display != "private" && spec.display != "nested" { // those start a display of the domain's own
			s.mu.Lock()
			for _, other := range s.domains {
				if other != d && other.drives(spec.display) {
					s.mu.Unlock()
					return nil, errorf(CodeRefused, "display %s is driven by trust domain %q; different trust domains never share a display", spec.display, other.name)
				}
			}
			s.mu.Unlock()
		}
		if err := d.startLocked(ctx, spec.display); err != nil {
			s.mu.Lock()
			if s.domains[d.name] == d {
				delete(s.domains, d.name)
			}
			s.mu.Unlock()
			return nil, err
		}
	}
	defer func() {
		if err != nil && fresh {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownBudget)
			d.stop(sctx, reasonShutdown)
			cancel()
		}
	}()
	d.mu.Lock()
	h := d.h
	d.mu.Unlock()

	sess := &session{s: s, d: d, label: spec.label, spec: spec, done: make(chan struct{}), workerPID: h.PID(), displayName: d.displayName}
	epFile, sock, err := s.dir.listen(spec.label)
	if err != nil {
		return nil, err
	}
	sess.sock = sock
	defer func() {
		if err != nil {
			s.dir.remove(sock)
		}
	}()
	var httpFile *os.File
	var tok string
	if spec.http {
		if httpFile, sess.httpURL, tok, err = listenHTTP(); err != nil {
			epFile.Close()
			return nil, err
		}
	}
	proxyEnd, workerEnd, err := wire.SessionPair()
	if err != nil {
		epFile.Close()
		if httpFile != nil {
			httpFile.Close()
		}
		return nil, fmt.Errorf("session channel: %w", err)
	}
	// The proxy re-executes this program, so the worker protects it by its executable
	// although it starts after the worker's Hello (docs/adr/0009-serve-endpoints.md).
	px, err := host.StartProxy(host.ProxyOptions{
		Logger:       s.log,
		Path:         s.opts.ProxyPath,
		Args:         s.opts.ProxyArgs,
		Flags:        contract.ProxyFlags{LogLevel: s.opts.WorkerLogLevel, IdleExit: spec.idleTTL, CallTimeout: s.opts.CallTimeout},
		Session:      proxyEnd,
		Endpoint:     epFile,
		HTTPListener: httpFile,
		Stderr:       s.opts.LogOut,
	})
	if err != nil {
		workerEnd.Close()
		return nil, err
	}
	sess.proxy = px
	defer func() {
		if err != nil {
			px.Close()
		}
	}()
	info, err := h.CreateSessionOn(ctx, host.SessionSpec{Label: spec.label, Mode: spec.mode, Manifest: spec.manifest, TTL: spec.ttl, IdleTTL: spec.idleTTL,
		ClientKind: contract.ClientMCP, Transport: serveTransport(spec.http), Tools: spec.tools.Only(), ExcludeTools: spec.tools.Exclude()}, workerEnd)
	if err != nil {
		var re *host.RequestError
		if errors.As(err, &re) {
			return nil, errorf(CodeRefused, "the worker refused the session: %s", re.Error())
		}
		return nil, err
	}
	if err := px.Activate(contract.Bootstrap{Generation: h.GenerationBytes(), Version: h.ProtocolVersion(), HTTPToken: tok}); err != nil {
		return nil, err
	}
	sess.created, sess.expires = time.Now(), info.ExpiresAt
	sess.httpTok = tok
	d.mu.Lock()
	d.sessions[spec.label] = sess
	d.mu.Unlock()
	s.log.Info("session created", "label", spec.label, "trust_domain", d.name, "mode", spec.mode.String(), "endpoint", sock,
		"http", sess.httpURL, "worker_pid", h.PID(), "proxy_pid", px.PID(), "expires", info.ExpiresAt)
	return sess, nil
}

// watch ends the session when its proxy exits (the worker closed the channel: TTL,
// end_session; the proxy's idle limit) or its lifetime is over.
func (sess *session) watch() {
	defer sess.s.wg.Done()
	t := time.NewTimer(time.Until(sess.expires))
	defer t.Stop()
	select {
	case <-sess.proxy.Exited():
		reason := reasonEnded
		switch code := sess.proxy.ExitCode(); {
		case code == contract.ProxyExitIdle:
			reason = reasonIdle
		case !time.Now().Before(sess.expires):
			reason = reasonExpired
		case code != 0:
			reason = reasonProxyExited
		}
		sess.end(context.WithoutCancel(sess.s.baseCtx), reason)
	case <-t.C:
		sess.end(context.WithoutCancel(sess.s.baseCtx), reasonExpired)
	case <-sess.done:
	}
}

// end revokes the session in the worker, releases its proxy, removes its endpoint and
// tells the app (session_ended). The last session of a domain stops the domain. It is
// idempotent and returns once the endpoint is gone.
func (sess *session) end(ctx context.Context, reason string) {
	d := sess.d
	d.mu.Lock()
	h, stopped := d.h, d.stopped
	d.mu.Unlock()
	if !stopped && h != nil {
		rctx, cancel := context.WithTimeout(ctx, shutdownBudget)
		if _, err := h.RevokeLabel(rctx, sess.label); err != nil {
			sess.s.log.Debug("revoke in the worker", "label", sess.label, "err", err)
		}
		cancel()
	}
	sess.finish(reason)
	d.sessionEnded(sess)
}

// finish releases the proxy, removes the endpoint and reports session_ended, once.
func (sess *session) finish(reason string) {
	sess.endOnce.Do(func() {
		sess.mu.Lock()
		sess.reason = reason
		sess.mu.Unlock()
		sess.proxy.Close()
		sess.s.dir.remove(sess.sock)
		s := sess.s
		s.mu.Lock()
		if s.sessions[sess.label] == sess {
			delete(s.sessions, sess.label)
		}
		s.mu.Unlock()
		select {
		case s.ended <- struct{}{}:
		default:
		}
		s.log.Info("session ended", "label", sess.label, "trust_domain", sess.d.name, "reason", reason)
		s.notify("session_ended", map[string]any{"session": sess.label, "trust_domain": sess.d.name, "reason": reason})
		close(sess.done)
	})
	<-sess.done
}

func (sess *session) token() string { return sess.httpTok }

func (sess *session) info() SessionInfo {
	si := SessionInfo{
		Label: sess.label, TrustDomain: sess.d.name, Mode: sess.spec.mode.String(),
		CreatedAt: sess.created.UTC().Truncate(time.Millisecond), ExpiresAt: sess.expires.UTC(), IdleTTL: sess.spec.idleTTL.String(),
		Display: sess.displayName, Private: sess.spec.display == "private" || sess.spec.display == "nested",
		WorkerPID: sess.workerPID, ProxyPID: sess.proxy.PID(),
		Endpoint: Endpoint{Unix: sess.sock},
	}
	if sess.httpURL != "" {
		si.Endpoint.HTTP = &HTTPEndpoint{URL: sess.httpURL}
	}
	return si
}

// serveTransport is how a served session is reached: its unix socket endpoint, a daemon's
// socket in the reference's words, unless it asked for HTTP as well.
func serveTransport(http bool) contract.Transport {
	if http {
		return contract.TransportMCPHTTP
	}
	return contract.TransportDaemon
}
