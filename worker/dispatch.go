package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
)

// startCall accepts one CallTool and returns the function that runs it (nil when the call
// was refused here, NOT_STARTED, and already answered) and whether the tool is quick.
func (s *session) startCall(id uint64, deadlineMS int64, req *cuav1.CallTool) (func(), bool) {
	// Session state first (docs/protocol.md): a revoked session says so whatever else is
	// wrong. This is the call's one check (stage 3).
	if r := s.check(); r != nil {
		s.w.journal.refused(s, nil, req.GetName(), req.GetArguments(), time.Now(), 0, r.Code, r.Message)
		s.refuse(id, r.Code, "%s", r.Message)
		return nil, false
	}
	now := s.w.cfg.Now()
	deadline := now.Add(s.w.cfg.DefaultDeadline)
	if deadlineMS != 0 {
		deadline = time.UnixMilli(deadlineMS)
		if !now.Before(deadline) {
			s.w.journal.refused(s, nil, req.GetName(), req.GetArguments(), time.Now(), 0, authz.CodeDeadlineExceeded, "the request's deadline passed before dispatch")
			s.refuse(id, authz.CodeDeadlineExceeded, "the request's deadline passed before dispatch")
			return nil, false
		}
	}
	// Stages 1 and 2, once: the arguments decoded and sanitized, the name canonical.
	call := newRequest(req.GetName(), req.GetArguments())
	quick := false
	toolName := ""
	if t, ok := s.w.reg.Lookup(call.name); ok {
		quick = t.Quick && quickOnReader
		toolName = t.Name
	}
	if quick {
		// Runs on the reader (serve): nothing reads the channel meanwhile, so no Cancel can
		// reach it and it is not in inflight (nor counted against MaxInFlight); its deadline
		// and the session's end still cancel it (quickCtx).
		ctx := newQuickCtx(s.ctx, deadline, s.w.cfg.Now)
		c := &inflightCall{tool: toolName, received: now}
		return func() {
			defer ctx.release()
			s.mu.Lock()
			s.quick = c
			s.mu.Unlock()
			res := s.dispatch(ctx, c, call)
			s.mu.Lock()
			s.quick = nil
			s.mu.Unlock()
			s.reply(id, &cuav1.Envelope{Body: &cuav1.Envelope_ToolResult{ToolResult: res}})
		}, true
	}
	s.mu.Lock()
	if len(s.inflight) >= s.w.cfg.MaxInFlight {
		s.mu.Unlock()
		s.w.journal.refused(s, &call, call.name, req.GetArguments(), time.Now(), 0, authz.CodeTooManyRequests, fmt.Sprintf("%d calls are already in flight on this session", s.w.cfg.MaxInFlight))
		s.refuse(id, authz.CodeTooManyRequests, "%d calls are already in flight on this session", s.w.cfg.MaxInFlight)
		return nil, false
	}
	cctx, cancel := context.WithCancelCause(s.ctx)
	ctx := deadlineCtx{Context: cctx, at: deadline}
	c := &inflightCall{cancel: cancel, tool: toolName, received: now}
	s.inflight[id] = c
	s.mu.Unlock()
	s.w.deadlines.add(c, deadline)

	return func() {
		defer cancel(context.Canceled)
		res := s.dispatch(ctx, c, call)
		s.w.deadlines.remove(c)
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
		s.reply(id, &cuav1.Envelope{Body: &cuav1.Envelope_ToolResult{ToolResult: res}})
	}, false
}

// dispatch is the one place every tool call passes: authorization first, then the handler,
// then the outcome.
//
// Preconditions: startCall checked the session state for this call (the only check: a
// revocation after it cancels ctx, which refuses the call below before the handler runs).
func (s *session) dispatch(ctx context.Context, c *inflightCall, req request) *cuav1.ToolResult {
	var received time.Time
	if s.w.journal != nil {
		received = time.Now()
	}
	call, t, refusal := s.w.authorizer.authorize(ctx, s, req)
	if refusal != nil {
		s.w.log.Info("call refused", "label", s.label, "tool", req.name, "code", refusal.Code, "message", refusal.Message)
		s.w.journal.refused(s, &req, req.name, nil, received, time.Since(received), refusal.Code, refusal.Message)
		return refusalResult(refusal.Code, refusal.Message)
	}
	// The journal records the call before it runs, or it does not run.
	jc, refusal := s.w.journal.begin(ctx, s, req, t, call, received, time.Since(received))
	if refusal != nil {
		s.w.log.Info("call refused", "label", s.label, "tool", req.name, "code", refusal.Code, "message", refusal.Message)
		s.w.journal.refused(s, &req, req.name, nil, received, time.Since(received), refusal.Code, refusal.Message)
		return refusalResult(refusal.Code, refusal.Message)
	}
	// A cancel or deadline that arrived before the handler starts leaves nothing done.
	s.mu.Lock()
	if err := ctx.Err(); err != nil {
		s.mu.Unlock()
		out := refusalResult(ctxCode(ctx), "the call was cancelled before dispatch")
		s.w.journal.end(ctx, jc, out)
		return out
	}
	if c != nil {
		c.started = true
	}
	s.mu.Unlock()

	res, err := invoke(ctx, t, call)
	out := s.w.outcome(ctx, t.Name, res, err)
	s.w.journal.end(ctx, jc, out)
	return out
}

// invoke runs the handler, turning a panic into an error.
func invoke(ctx context.Context, t *tool.Tool, call *tool.Call) (res *tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return t.Handler(ctx, call)
}

type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("tool panicked: %v", p.value) }

// outcome maps a handler's return to the wire result (see package tool).
func (w *worker) outcome(ctx context.Context, name string, res *tool.Result, err error) *cuav1.ToolResult {
	if err != nil {
		return w.errorOutcome(ctx, name, err)
	}
	if res == nil {
		res = &tool.Result{}
	}
	out := &cuav1.ToolResult{Outcome: cuav1.Outcome_OUTCOME_COMPLETED, IsError: res.IsError}
	for _, c := range res.Content {
		if c.IsImage() {
			out.Content = append(out.Content, &cuav1.Content{Kind: &cuav1.Content_Image{Image: &cuav1.Image{Data: c.Image, MimeType: c.MIMEType}}})
		} else {
			out.Content = append(out.Content, &cuav1.Content{Kind: &cuav1.Content_Text{Text: c.Text}})
		}
	}
	out.Structured = w.encodeResultObject(name, "structured", res.Structured, out)
	out.Details = w.encodeResultObject(name, "details", res.Details, out)
	return out
}

// errorOutcome is outcome for a handler that returned an error. It is apart from outcome
// so that a call that succeeded does not allocate the targets errors.As fills.
func (w *worker) errorOutcome(ctx context.Context, name string, err error) *cuav1.ToolResult {
	var refusal *authz.Refusal
	var pe *panicError
	switch {
	case errors.As(err, &refusal):
		return refusalResult(refusal.Code, refusal.Message)
	case errors.As(err, &pe):
		w.log.Error("tool panicked", "tool", name, "panic", fmt.Sprint(pe.value), "stack", string(pe.stack))
		return errorResult(cuav1.Outcome_OUTCOME_UNKNOWN, "internal_error", err.Error())
	case ctx.Err() != nil:
		return errorResult(cuav1.Outcome_OUTCOME_UNKNOWN, string(ctxCode(ctx)), fmt.Sprintf("interrupted after dispatch: %v", err))
	}
	return errorResult(cuav1.Outcome_OUTCOME_COMPLETED, "tool_error", err.Error())
}

// encodeResultObject marshals a result's structured value or details; one that cannot be
// encoded makes the result an error that says so (the action itself already ran).
func (w *worker) encodeResultObject(tool, what string, v any, out *cuav1.ToolResult) []byte {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.log.Error("marshal result", "tool", tool, "part", what, "err", err)
		out.IsError = true
		out.Content = append(out.Content, &cuav1.Content{Kind: &cuav1.Content_Text{Text: what + " result could not be encoded: " + err.Error()}})
		return nil
	}
	return b
}

func errorResult(outcome cuav1.Outcome, code, msg string) *cuav1.ToolResult {
	b, _ := json.Marshal(map[string]string{"error_code": code, "error": msg})
	return &cuav1.ToolResult{
		Outcome:    outcome,
		IsError:    true,
		Content:    []*cuav1.Content{{Kind: &cuav1.Content_Text{Text: msg}}},
		Structured: b,
	}
}

func ctxCode(ctx context.Context) authz.Code {
	cause := context.Cause(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(cause, context.DeadlineExceeded) {
		return authz.CodeDeadlineExceeded
	}
	if errors.Is(cause, errSessionEnded) {
		return authz.CodeAuthorizationRevoked
	}
	return authz.CodeCanceled
}
