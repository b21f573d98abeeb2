package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// consentReply is the host's answer to one ConsentRequest: a decision, or an error when the
// host could ask no one (it has no consent provider, or the provider had no terminal).
type consentReply struct {
	decision *cuav1.ConsentDecision
	err      *cuav1.ControlError
}

// errControlClosed reports that the control channel ended while a consent request waited.
var errControlClosed = errors.New("control channel closed while waiting for consent")

// requestConsent asks the host's consent provider about one operation on one resource and
// waits for its reply or ctx. It never grants on error.
func (w *worker) requestConsent(ctx context.Context, req *cuav1.ConsentRequest) (consentReply, error) {
	ch := make(chan consentReply, 1)
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		return consentReply{}, fmt.Errorf("worker is stopping")
	}
	w.nextCallID++
	id := w.nextCallID
	w.consentWaiters[id] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.consentWaiters, id)
		w.mu.Unlock()
	}()
	if !w.sendControl(id, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_ConsentRequest{ConsentRequest: req}}, nil) {
		return consentReply{}, fmt.Errorf("send consent request: control channel closed")
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			return consentReply{}, errControlClosed
		}
		return rep, nil
	case <-ctx.Done():
		return consentReply{}, ctx.Err()
	}
}

// consentOpen reports whether any session's consent question is waiting for an answer.
func (w *worker) consentOpen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.consentWaiters) > 0
}

// deliverConsent routes the host's reply (a ConsentDecision or a ControlError) to the
// request waiting for it. A reply for an unknown call id (late, or never asked) is dropped:
// it can grant nothing.
func (w *worker) deliverConsent(callID uint64, rep consentReply) {
	w.mu.Lock()
	ch := w.consentWaiters[callID]
	delete(w.consentWaiters, callID)
	w.mu.Unlock()
	if ch == nil {
		w.log.Debug("consent reply for no pending request", "call_id", callID)
		return
	}
	ch <- rep
}

// pendingConsent is a consent request in flight for one grant scope; concurrent calls on
// the same scope wait for it instead of prompting again.
type pendingConsent struct {
	done chan struct{}
	// refusal is the outcome once done is closed; shared says whether calls that waited
	// may take it as their own (a decline, no provider) or must ask themselves (the
	// asker's own deadline or cancellation).
	refusal *authz.Refusal
	shared  bool
}

// obtainConsent makes sure session s holds a grant for r, asking the host's provider when
// it does not. A nil refusal means the call may run.
func (s *session) obtainConsent(ctx context.Context, toolName string, r authz.Resource) *authz.Refusal {
	key := r.Key()
	s.mu.Lock()
	s.awaitingConsent++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.awaitingConsent--
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		if p := s.asking[key]; p != nil {
			s.mu.Unlock()
			select {
			case <-p.done:
			case <-ctx.Done():
				return authz.Refuse(ctxCode(ctx), "no consent decision before the call ended")
			}
			if p.refusal != nil && p.shared {
				return p.refusal
			}
			if s.grants.Covers(key, s.w.cfg.Now()) {
				return nil
			}
			continue // a one-time grant was the asker's; ask for ours
		}
		p := &pendingConsent{done: make(chan struct{})}
		s.asking[key] = p
		s.mu.Unlock()
		p.refusal, p.shared = s.askConsent(ctx, toolName, r)
		s.mu.Lock()
		delete(s.asking, key)
		s.mu.Unlock()
		close(p.done)
		return p.refusal
	}
}

// askConsent sends one ConsentRequest and records the grant it returns.
func (s *session) askConsent(ctx context.Context, toolName string, r authz.Resource) (*authz.Refusal, bool) {
	req := consentRequest(s.label, toolName, r)
	s.w.log.Info("asking for consent", "label", s.label, "tool", toolName, "resource", req.Resource, "operation", req.Operation)
	rep, err := s.w.requestConsent(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return authz.Refuse(ctxCode(ctx), "no consent decision before the call ended"), false
	case err != nil:
		return authz.Refuse(authz.CodeAuthorizationRequired, "%s on %s needs consent and none could be asked: %v", r.Op, r, err), true
	case rep.err != nil && rep.err.GetCode() == string(authz.CodeAuthorizationDeclined):
		return authz.Refuse(authz.CodeAuthorizationDeclined, "the host refused consent for %s on %s: %s", r.Op, r, rep.err.GetMessage()), true
	case rep.err != nil:
		return authz.Refuse(authz.CodeAuthorizationRequired, "%s on %s needs consent from the host: %s", r.Op, r, rep.err.GetMessage()), true
	case !rep.decision.GetGranted():
		return authz.Refuse(authz.CodeAuthorizationDeclined, "the host's consent provider declined %s on %s", r.Op, r), true
	}
	if ttl := time.Duration(rep.decision.GetTtlSeconds()) * time.Second; ttl > 0 {
		now := s.w.cfg.Now()
		s.grants.Add(r.Key(), now, now.Add(ttl))
	}
	s.w.log.Info("consent granted", "label", s.label, "resource", req.Resource, "operation", req.Operation, "ttl_seconds", rep.decision.GetTtlSeconds())
	return nil, false
}

// consentRequest is the ConsentRequest for a call of toolName in session label on r: the
// resource's kind and operation as the wire's enums (what the host decides on), its text
// and its parts for a consent UI to lay out.
func consentRequest(label, toolName string, r authz.Resource) *cuav1.ConsentRequest {
	req := &cuav1.ConsentRequest{
		Label: label, Tool: toolName, Resource: r.String(), Operation: r.Op.String(),
		Description: describeConsent(label, toolName, r),
		Title:       r.Title, Executable: r.Executable, Pid: int32(r.PID),
		Kind: authz.ConsentKindToProto(r.Kind), Op: authz.ConsentOpToProto(r.Op),
	}
	if len(r.Argv) > 0 {
		req.Command = authz.QuoteCommand(r.Argv)
	}
	if r.Kind == authz.ResourceFile {
		req.Path = r.Path
	}
	return req
}

// describeConsent says in plain words what a grant would allow.
func describeConsent(label, toolName string, r authz.Resource) string {
	what := r.String()
	switch r.Kind {
	case authz.ResourceWindow:
		what = fmt.Sprintf("window 0x%x %q of process %d (%s)", r.Window, r.Title, r.PID, orUnknownExe(r.Executable))
		if r.Window == 0 {
			what = fmt.Sprintf("every window of process %d (%s)", r.PID, orUnknownExe(r.Executable))
		}
	case authz.ResourceProcess:
		what = fmt.Sprintf("process %d (%s)", r.PID, orUnknownExe(r.Executable))
	case authz.ResourceDisplay:
		what = "the whole display"
	case authz.ResourceClipboard:
		what = "the clipboard"
	case authz.ResourceFile:
		verb := "read the file"
		if r.Op == authz.OpWrite {
			verb = "create or replace the file"
		}
		return fmt.Sprintf("session %q wants to %s %s (tool %s)", label, verb, r.Path, toolName)
	case authz.ResourceApplication:
		why := "a program that is no desktop application the system declares, or with other arguments than its entry takes"
		if r.DesktopID != "" {
			why = "desktop entry " + r.DesktopID + " run differently than declared (in a terminal, or with free arguments)"
		}
		return fmt.Sprintf("session %q wants to run the command line: %s (tool %s; %s)", label, authz.QuoteCommand(r.Argv), toolName, why)
	}
	verb := map[authz.Operation]string{authz.OpObserve: "observe", authz.OpInput: "send input to", authz.OpTerminate: "terminate"}[r.Op]
	if verb == "" {
		verb = r.Op.String()
	}
	return fmt.Sprintf("session %q wants to %s %s (tool %s)", label, verb, what, toolName)
}

func orUnknownExe(s string) string {
	if s == "" {
		return "unknown executable"
	}
	return s
}
