package worker

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
)

// session is one delegated session, bound to the channel it was created with. Its context
// (label, mode, manifest hash, lifetimes) is fixed at creation; nothing a request carries
// can change it.
type session struct {
	w     *worker
	conn  *wire.SessionConn
	label string
	// authority is what the session may do (mode, manifest, lifetimes, policy hashes),
	// built once at CreateSession and bound to this channel; it is never assigned to.
	authority *authz.Authority
	state     *tool.Session
	// grants are the session's consent grants; revoked when the session ends.
	grants authz.Grants
	// labels are the public labels calls carry (labels.go); they carry no authority.
	labels labels
	// recording is the session's recording state (recording.go): spans of its calls
	// marked in the host's journal.
	recording recordingState
	// reach is how the session is reached, as the host said (get_session reports it).
	reach reach
	// tools is the host's selection of the tools the session serves (CreateSession's
	// tools and exclude_tools); fixed at creation like authority.
	tools authz.ToolSelection

	// ctx is cancelled when the session is revoked or ends; in-flight calls derive from it.
	ctx    context.Context
	cancel context.CancelCauseFunc

	// mu guards the fields below.
	mu           sync.Mutex
	lastActivity time.Time
	// ended is non-empty once the session can no longer run calls; it is the refusal code
	// every later request gets.
	ended       authz.Code
	endedReason string
	// inflight maps request ids to running calls.
	inflight map[uint64]*inflightCall
	// quick is the quick call running on the reader, if any (it is not in inflight).
	quick *inflightCall
	// awaitingConsent counts the calls waiting for a consent decision.
	awaitingConsent int
	// asking maps grant scopes to the consent request in flight for them.
	asking map[authz.GrantKey]*pendingConsent

	// lastRequestID is owned by the session's reader goroutine (serve).
	lastRequestID uint64
}

// errSessionEnded is the cancellation cause of a session's context once it ended.
var errSessionEnded = errors.New("session ended")

// inflightCall is one call between acceptance and reply.
type inflightCall struct {
	// cancel ends an ordinary call (a Cancel envelope, its deadline); nil for the quick
	// call, whose context cancels itself (quickCtx).
	cancel context.CancelCauseFunc
	// tool is the registered tool's name ("" for a name that is no tool); received is
	// when the call was accepted. Both are reported by StatusRequest.
	tool     string
	received time.Time
	// started is set once the handler was invoked (guarded by session.mu).
	started bool
}

func (w *worker) createSession(callID uint64, req *cuav1.CreateSession, fd *os.File) {
	defer func() {
		if fd != nil {
			fd.Close()
		}
	}()
	label := req.GetLabel()
	if err := validLabel(label); err != nil {
		w.controlError(callID, authz.CodeInvalidRequest, "%v", err)
		return
	}
	mode, err := authz.ModeFromProto(req.GetMode())
	if err != nil {
		w.controlError(callID, authz.CodeInvalidRequest, "session %q: %v", label, err)
		return
	}
	reach, err := reachOf(req.GetClientKind(), req.GetTransport())
	if err != nil {
		w.controlError(callID, authz.CodeInvalidRequest, "session %q: %v", label, err)
		return
	}
	tools, err := authz.NewToolSelection(req.GetTools(), req.GetExcludeTools(), w.authorizer.pipe.Inventory())
	if err != nil {
		w.controlError(callID, authz.CodeInvalidRequest, "session %q: %v", label, err)
		return
	}
	ttl := time.Duration(req.GetTtlSeconds()) * time.Second
	idle := time.Duration(req.GetIdleTtlSeconds()) * time.Second
	if err := w.ceiling.Admit(mode, ttl, idle); err != nil {
		w.controlError(callID, authz.CodePermissionDenied, "session %q: %v", label, err)
		return
	}
	now := w.cfg.Now()
	managedSHA, userSHA := w.authorizer.policyHashes()
	auth, err := authz.NewAuthority(w.ceiling, authz.SessionRequest{
		Label: label, Mode: mode, Manifest: req.GetManifest(), ManifestSHA256: req.GetManifestSha256(), TTL: ttl, IdleTTL: idle,
		OwnsDisplay: w.hello.GetDisplay().GetPrivate(),
		Generation:  hex.EncodeToString(w.generation), ManagedPolicySHA256: managedSHA, UserPolicySHA256: userSHA,
	}, w.authorizer.inventory, now)
	if err != nil {
		w.controlError(callID, authz.CodeInvalidRequest, "session %q: %v", label, err)
		return
	}
	conn, err := wire.NewSessionConn(fd)
	fd = nil // NewSessionConn took ownership
	if err != nil {
		w.controlError(callID, authz.CodeInvalidRequest, "session %q: %v", label, err)
		return
	}
	s := &session{
		w:            w,
		conn:         conn,
		label:        label,
		reach:        reach,
		tools:        tools,
		authority:    auth,
		state:        newToolSession(label, mode.String(), w.hello.GetDisplay().GetPrivate(), w.launchRootOf),
		lastActivity: now,
		inflight:     map[uint64]*inflightCall{},
		asking:       map[authz.GrantKey]*pendingConsent{},
	}
	s.ctx, s.cancel = context.WithCancelCause(w.baseCtx)

	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		conn.Close()
		s.cancel(errSessionEnded)
		return
	}
	if _, dup := w.sessions[label]; dup {
		w.mu.Unlock()
		conn.Close()
		s.cancel(errSessionEnded)
		w.controlError(callID, authz.CodeInvalidRequest, "a session labelled %q already exists", label)
		return
	}
	w.sessions[label] = s
	w.wg.Add(1)
	w.mu.Unlock()

	w.log.Info("session created", "label", label, "mode", mode.String(), "expires", auth.Expires, "idle_ttl", auth.IdleTTL, "manifest_sha256", auth.ManifestSHA256, "tools", tools.String())
	w.sendControl(callID, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_SessionCreated{SessionCreated: &cuav1.SessionCreated{
		Label: label, ExpiresAtUnixMs: auth.Expires.UnixMilli(),
	}}}, nil)
	go s.serve()
}

func validLabel(label string) error {
	if label == "" {
		return errors.New("session label is empty")
	}
	if len(label) > 128 {
		return fmt.Errorf("session label is %d bytes; at most 128", len(label))
	}
	if !utf8.ValidString(label) {
		return errors.New("session label is not valid UTF-8")
	}
	for _, r := range label {
		if unicode.IsSpace(r) || unicode.IsControl(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("session label %q contains whitespace, control or unprintable characters", label)
		}
	}
	return nil
}

func (w *worker) revokeSession(callID uint64, req *cuav1.RevokeSession) {
	w.mu.Lock()
	var targets []*session
	switch {
	case req.GetAll():
		for _, s := range w.sessions {
			targets = append(targets, s)
		}
	case req.GetLabel() != "":
		if s, ok := w.sessions[req.GetLabel()]; ok {
			targets = append(targets, s)
		}
	}
	w.mu.Unlock()
	if !req.GetAll() && len(targets) == 0 {
		w.controlError(callID, authz.CodeInvalidRequest, "no session labelled %q", req.GetLabel())
		return
	}
	labels := make([]string, 0, len(targets))
	for _, s := range targets {
		if s.revoke(authz.CodeAuthorizationRevoked, "the host revoked this session") {
			labels = append(labels, s.label)
		}
	}
	if len(targets) > 0 {
		rctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		w.reg.Release(rctx)
		cancel()
	}
	w.sendControl(callID, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_Revoked{Revoked: &cuav1.Revoked{Labels: labels}}}, nil)
}

// revoke ends the session: every later request is refused with code and every in-flight
// call is cancelled. The channel stays open so the client learns why. It reports whether
// the session was live.
func (s *session) revoke(code authz.Code, reason string) bool {
	s.mu.Lock()
	if s.ended != "" {
		s.mu.Unlock()
		return false
	}
	s.ended, s.endedReason = code, reason
	s.mu.Unlock()
	s.grants.Revoke()
	s.cancel(errSessionEnded)
	s.state.End()
	s.recording.sessionEnded(s.w.cfg.Now())
	s.w.log.Info("session ended", "label", s.label, "code", code, "reason", reason)
	return true
}

// newToolSession is the state handlers see for a session.
func newToolSession(label, mode string, ownsDisplay bool, launchRootOf func(int) int) *tool.Session {
	st := tool.NewSession(label, mode)
	st.OwnsDisplay = ownsDisplay
	st.LaunchRootOf = launchRootOf
	return st
}

// launchRootOf is tool.Session.LaunchRootOf: the worker's child that pid is or descends
// from, or 0; nil without an authorizer.
func (w *worker) launchRootOf(pid int) int {
	if w.authorizer == nil {
		return 0
	}
	procs := &w.authorizer.res.procs
	return procs.launchRootOf(pid, procs.read(pid))
}

// serve is the session's reader: the one goroutine that reads the channel, for as long as
// it is open. It alone touches lastRequestID, so replay checks and the order of
// acceptance are the order on the wire.
//
// A quick tool's call (tool.Tool.Quick) runs here, on the reader, and its reply leaves from
// this goroutine: no goroutine is started or woken for it, which BenchmarkDispatchScheme
// shows is most of a no-op round trip's dispatch cost. While it runs the channel is not
// read, so a Cancel for it is read only after it returned; its deadline still ends it
// (startCall registers it with the worker's deadlines), and the session's end cancels it.
// Any other call runs on a goroutine of its own, so the reader keeps reading (Cancel,
// further calls) while it runs. Replies are sent by whichever goroutine finished the call,
// taking turns on the connection's send lock.
func (s *session) serve() {
	defer s.w.wg.Done()
	for {
		env, err := s.conn.Recv()
		if err != nil {
			if v, ok := wire.IsViolation(err); ok {
				s.w.log.Warn("session channel protocol violation; closing it", "label", s.label, "reason", v.Reason, "detail", v.Detail)
			} else if !errors.Is(err, wire.ErrClosed) {
				s.w.log.Debug("session channel read", "label", s.label, "err", err)
			}
			s.finish()
			return
		}
		run, quick, ok := s.handle(env)
		switch {
		case !ok:
			s.finish()
			return
		case run == nil:
		case quick && quickOnReader:
			run()
		default:
			s.w.wg.Add(1) // the reader holds a count, so the group cannot reach zero meanwhile
			go func() {
				defer s.w.wg.Done()
				run()
			}()
		}
	}
}

// quickOnReader is false only in BenchmarkDispatchScheme, which measures what running quick
// calls on the reader saves over a goroutine per call.
var quickOnReader = true

// finish runs when the channel is gone: the session ends for good.
func (s *session) finish() {
	s.revoke(authz.CodeSessionEnded, "the session channel closed")
	s.conn.Close()
	s.w.mu.Lock()
	if s.w.sessions[s.label] == s {
		delete(s.w.sessions, s.label)
	}
	s.w.mu.Unlock()
}

// handle processes one envelope. It returns a call to run when one was accepted (and
// whether its tool is quick), and false when the channel must be closed.
func (s *session) handle(env *cuav1.Envelope) (run func(), quick bool, ok bool) {
	id := env.GetRequestId()
	switch env.GetBody().(type) {
	case *cuav1.Envelope_ToolList, *cuav1.Envelope_ToolResult:
		s.w.log.Warn("session channel protocol violation; closing it", "label", s.label, "reason", "unexpected_kind")
		return nil, false, false
	}
	if id <= s.lastRequestID {
		s.refuse(id, authz.CodeReplayedRequest, "request id %d is not greater than the last one (%d); replay refused", id, s.lastRequestID)
		return nil, false, true
	}
	s.lastRequestID = id
	if env.GetProtocolVersion() != s.w.version {
		s.refuse(id, authz.CodeUnsupportedProtocolVersion, "envelope version %d; this channel speaks %d", env.GetProtocolVersion(), s.w.version)
		return nil, false, true
	}
	if !bytes.Equal(env.GetGeneration(), s.w.generation) {
		s.refuse(id, authz.CodeGenerationMismatch, "envelope generation does not match this worker")
		return nil, false, true
	}
	switch body := env.GetBody().(type) {
	case *cuav1.Envelope_Cancel:
		s.cancelCall(body.Cancel.GetRequestId())
	case *cuav1.Envelope_ListTools:
		if r := s.check(); r != nil {
			s.refuse(id, r.Code, "%s", r.Message)
			return nil, false, true
		}
		s.reply(id, &cuav1.Envelope{Body: &cuav1.Envelope_ToolList{ToolList: s.w.listTools(s)}})
	case *cuav1.Envelope_CallTool:
		run, quick := s.startCall(id, env.GetDeadlineUnixMs(), body.CallTool)
		return run, quick, true
	}
	return nil, false, true
}

// check refuses every request of a session that ended, expired or sat idle too long, and
// records activity otherwise.
func (s *session) check() *authz.Refusal {
	countStep(stepSessionCheck)
	now := s.w.cfg.Now()
	s.mu.Lock()
	if s.ended == "" {
		switch {
		case !now.Before(s.authority.Expires):
			s.ended, s.endedReason = authz.CodeSessionEnded, "the session's lifetime is over"
		case now.Sub(s.lastActivity) > s.authority.IdleTTL:
			s.ended, s.endedReason = authz.CodeAuthorizationExpired, fmt.Sprintf("the session was idle for more than %v", s.authority.IdleTTL)
		default:
			s.lastActivity = now
			s.mu.Unlock()
			return nil
		}
		code, reason := s.ended, s.endedReason
		s.mu.Unlock()
		s.grants.Revoke()
		s.cancel(errSessionEnded)
		s.state.End()
		s.recording.sessionEnded(now)
		s.w.log.Info("session ended", "label", s.label, "code", code, "reason", reason)
		return &authz.Refusal{Code: code, Message: reason}
	}
	r := &authz.Refusal{Code: s.ended, Message: s.endedReason}
	s.mu.Unlock()
	return r
}

func (s *session) cancelCall(target uint64) {
	s.mu.Lock()
	c := s.inflight[target]
	s.mu.Unlock()
	if c == nil {
		s.w.log.Debug("cancel of unknown request", "label", s.label, "request_id", target)
		return
	}
	c.cancel(context.Canceled)
}

func (s *session) refuse(id uint64, code authz.Code, format string, args ...any) {
	s.reply(id, &cuav1.Envelope{Body: &cuav1.Envelope_ToolResult{ToolResult: refusalResult(code, fmt.Sprintf(format, args...))}})
}

func refusalResult(code authz.Code, msg string) *cuav1.ToolResult {
	return &cuav1.ToolResult{
		Outcome: cuav1.Outcome_OUTCOME_NOT_STARTED,
		IsError: true,
		Refusal: &cuav1.Refusal{Code: string(code), Message: msg},
		Content: []*cuav1.Content{{Kind: &cuav1.Content_Text{Text: string(code) + ": " + msg}}},
	}
}

// reply stamps env as the answer to request id and sends it.
func (s *session) reply(id uint64, env *cuav1.Envelope) {
	env.ProtocolVersion = s.w.version
	env.RequestId = id
	env.Generation = s.w.generation
	if err := s.conn.Send(env); err != nil {
		s.w.log.Debug("session reply", "label", s.label, "request_id", id, "err", err)
	}
}
