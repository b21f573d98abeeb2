package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// Result is a tool call's result; its Outcome is always set.
type Result = client.Result

// ToolInfo describes a tool a session may call.
type ToolInfo = client.ToolInfo

// Outcome says whether a call had an effect.
type Outcome = client.Outcome

// Outcomes.
const (
	NotStarted = client.NotStarted
	Completed  = client.Completed
	Unknown    = client.Unknown
)

// SessionSpec describes a session to create.
type SessionSpec struct {
	// Label is the public label: unique on the worker, at most 128 printable bytes, no
	// whitespace. It names the session; it grants nothing.
	Label string
	// Mode is the session's permission mode; zero means authz.Standard.
	Mode authz.Mode
	// Manifest is the bounded manifest's YAML bytes (bounded mode only). The worker parses
	// it strictly (authz.ParseManifest) and refuses the session when it is invalid; its
	// expires_after and idle_timeout shorten TTL and IdleTTL.
	Manifest []byte
	// TTL and IdleTTL are the session's lifetimes; zero means the ceiling's maximum.
	TTL     time.Duration
	IdleTTL time.Duration
	// ClientKind and Transport say how the session is reached, as get_session reports it
	// (the reference contract's values, contract.ClientKinds and contract.Transports).
	// Empty means contract.ClientDirect and contract.TransportDaemon: a program calling
	// through this package. They grant nothing.
	ClientKind contract.ClientKind
	Transport  contract.Transport
	// Tools and ExcludeTools select the tools the session serves: when Tools is not empty,
	// those and no other; never those in ExcludeTools (authz.NewToolSelection checks the
	// names). The worker leaves the others out of tools/list and refuses their calls with
	// permission_denied. Both empty: every tool the mode, policy and manifest allow.
	Tools        []string
	ExcludeTools []string
}

// SessionInfo is what the worker confirmed about a new session.
type SessionInfo struct {
	Label     string
	ExpiresAt time.Time
}

// Session is one delegated session as the embedding program sees it. Its methods are safe
// for concurrent use.
type Session struct {
	h     *Host
	info  SessionInfo
	conn  *client.Conn
	label string

	// mu guards revoked.
	mu      sync.Mutex
	revoked bool
}

// CreateSessionChannel asks the worker to bind a new session to a fresh socketpair and
// returns the caller's end, which the caller owns (for instance to hand to an MCP proxy
// process). Use CreateSession for an in-process client.
func (h *Host) CreateSessionChannel(ctx context.Context, spec SessionSpec) (*os.File, SessionInfo, error) {
	mine, theirs, err := wire.SessionPair()
	if err != nil {
		return nil, SessionInfo{}, fmt.Errorf("create session %q: %w", spec.Label, err)
	}
	info, err := h.CreateSessionOn(ctx, spec, theirs)
	if err != nil {
		mine.Close()
		return nil, SessionInfo{}, err
	}
	return mine, info, nil
}

// CreateSession creates a session and returns an in-process client for it.
func (h *Host) CreateSession(ctx context.Context, spec SessionSpec) (*Session, error) {
	f, info, err := h.CreateSessionChannel(ctx, spec)
	if err != nil {
		return nil, err
	}
	conn, err := client.New(f, client.Options{Generation: h.generation, Version: h.version, Logger: h.log})
	if err != nil {
		return nil, fmt.Errorf("create session %q: %w", spec.Label, err)
	}
	s := &Session{h: h, info: info, conn: conn, label: info.Label}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		conn.Close()
		return nil, fmt.Errorf("create session %q: %w: host closed", spec.Label, ErrWorkerGone)
	}
	h.sessions[info.Label] = s
	h.mu.Unlock()
	return s, nil
}

// Label returns the session's label.
func (s *Session) Label() string { return s.label }

// Info returns what the worker confirmed when it created the session.
func (s *Session) Info() SessionInfo { return s.info }

// ListTools returns the tools this session may call.
func (s *Session) ListTools(ctx context.Context) ([]ToolInfo, error) {
	if s.isRevoked() {
		return nil, fmt.Errorf("list tools: %s: the session was revoked", authz.CodeAuthorizationRevoked)
	}
	return s.conn.ListTools(ctx)
}

// Call runs a tool. The result's Outcome is always set; the error is non-nil only when the
// channel failed. A refusal is a result with Outcome NotStarted and a Refusal.
func (s *Session) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	if s.isRevoked() {
		return Result{
			Outcome: NotStarted, IsError: true,
			Refusal: &client.Refusal{Code: string(authz.CodeAuthorizationRevoked), Message: "the session was revoked by its host"},
			Content: []client.Content{{Type: "text", Text: "authorization_revoked: the session was revoked by its host"}},
		}, nil
	}
	return s.conn.Call(ctx, name, args)
}

// Revoke asks the worker to revoke the session; later calls are NOT_STARTED
// authorization_revoked. The channel is closed afterwards.
func (s *Session) Revoke(ctx context.Context) error {
	s.mu.Lock()
	already := s.revoked
	s.revoked = true
	s.mu.Unlock()
	if already {
		return nil
	}
	_, err := s.h.request(ctx, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{Label: s.label}}}, nil)
	s.conn.Close()
	s.h.mu.Lock()
	delete(s.h.sessions, s.label)
	s.h.mu.Unlock()
	if err != nil {
		return fmt.Errorf("revoke session %q: %w", s.label, err)
	}
	return nil
}

// Done is closed when the session's channel has ended.
func (s *Session) Done() <-chan struct{} { return s.conn.Done() }

func (s *Session) isRevoked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revoked
}

// hostClosed marks the session revoked and closes its channel; called by Host.Close.
func (s *Session) hostClosed() {
	s.mu.Lock()
	s.revoked = true
	s.mu.Unlock()
	s.conn.Close()
}

// RevokeLabel revokes the session labelled label, whoever holds its channel (a proxy
// bound with CreateSessionOn, or a Session of this host). The worker closes the session's
// channel. It returns the labels the worker revoked.
func (h *Host) RevokeLabel(ctx context.Context, label string) ([]string, error) {
	reply, err := h.request(ctx, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{Label: label}}}, nil)
	if err != nil {
		return nil, fmt.Errorf("revoke session %q: %w", label, err)
	}
	h.mu.Lock()
	s := h.sessions[label]
	delete(h.sessions, label)
	h.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.revoked = true
		s.mu.Unlock()
		s.conn.Close()
	}
	return reply.GetRevoked().GetLabels(), nil
}

// RevokeAll revokes every session on the worker and returns their labels.
func (h *Host) RevokeAll(ctx context.Context) ([]string, error) {
	reply, err := h.request(ctx, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{All: true}}}, nil)
	if err != nil {
		return nil, fmt.Errorf("revoke all sessions: %w", err)
	}
	h.mu.Lock()
	sessions := h.sessions
	h.sessions = map[string]*Session{}
	h.mu.Unlock()
	for _, s := range sessions {
		s.mu.Lock()
		s.revoked = true
		s.mu.Unlock()
	}
	return reply.GetRevoked().GetLabels(), nil
}
