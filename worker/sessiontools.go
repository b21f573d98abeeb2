package worker

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
)

// The reference driver's session tools, over the labels of the one session a channel is
// bound to (labels.go). None of them creates, selects or widens authority.

// Input schemas of the session tools.
const (
	labelSchema = `{"type":"object","properties":{"session":{"type":"string","description":"A public label inside this session (informational; carries no authority). Omitted: the session itself."}},"additionalProperties":false}`
	// openLabelSchema is labelSchema for the session tools, which ignore other properties.
	openLabelSchema    = `{"type":"object","properties":{"session":{"type":"string","description":"A public label inside this session (informational; carries no authority). Omitted: the session itself."}}}`
	startSessionSchema = `{"type":"object","properties":{` +
		`"session":{"type":"string","description":"A public label for this run of calls (informational; carries no authority). Omitted: the session itself."},` +
		`"capture_scope":{"type":"string","enum":["auto","window","desktop"],"description":"Deprecated; recorded and reported. Capture is decided on each call by the session's authority."},` +
		`"cursor_theme":{"type":["object","null"],"properties":{"theme_id":{"type":"string"},"reduced_motion":{"type":"string","enum":["auto","on","off"]}},"required":["theme_id"],"description":"Accepted; the agent cursor is set with set_agent_cursor_theme."}},` +
		`"additionalProperties":true}`
	listSessionsSchema = `{"type":"object","properties":{"cursor":{"type":"string","description":"Continuation cursor from a previous call."},"limit":{"type":["integer","null"],"minimum":0,"maximum":100,"description":"At most this many (default 50)."}},"additionalProperties":true}`
	escalateSchema     = `{"type":"object","properties":{"session":{"type":"string"},"reason":{"type":"string","enum":["ax_tree_pixel_mismatch","background_delivery_failed","foreground_ineffective","no_window_target","other"]},"detail":{"type":"string","maxLength":200}},"required":["session","reason"],"additionalProperties":true}`
)

// escalationReasons are escalate_session's reasons.
var escalationReasons = map[string]bool{"ax_tree_pixel_mismatch": true, "background_delivery_failed": true, "foreground_ineffective": true, "no_window_target": true, "other": true}

func (w *worker) registerSessionTools(reg *tool.Registry) {
	for _, t := range []tool.Tool{
		{Name: "start_session", Description: "Start (or revive) a public label for a run of calls inside this session. Labels carry no authority: what the session may do was fixed when the host created it.",
			InputSchema: []byte(startSessionSchema), Args: tool.NewArgs[startSessionArgs], Handler: w.startSession},
		{Name: "list_sessions", Description: "List this session and its labels (other sessions are never visible).",
			InputSchema: []byte(listSessionsSchema), Args: tool.NewArgs[listSessionsArgs], Handler: w.listSessions, Quick: true},
		{Name: "escalate_session", Description: "Deprecated: the capture scope is fixed by the host; the request is recorded and the unchanged scope reported.",
			InputSchema: []byte(escalateSchema), Args: tool.NewArgs[escalateArgs], Handler: w.escalateSession, Quick: true},
		{Name: "get_session_state", Description: "Deprecated: the capture scope of this session or label (fixed by the host).",
			InputSchema: []byte(openLabelSchema), Args: tool.NewArgs[openLabelArgs], Handler: w.sessionState, Quick: true},
	} {
		t.Annotations, t.OutputSchema = tool.InventoryAnnotations(t.Name), tool.OutputSchema(t.Name)
		reg.Register(t)
	}
}

// labelArgs are the arguments of the tools that take only a label.
type labelArgs struct {
	Session *string `json:"session"`
}

// openLabelArgs are labelArgs of a tool whose schema, like the reference's, admits
// properties it does not define: they are ignored (tool.Open). These tools touch no
// resource and read only the label.
type openLabelArgs struct {
	Session *string `json:"session"`
}

// OpenArguments implements tool.Open.
func (openLabelArgs) OpenArguments() {}

// startSessionArgs are start_session's arguments (an open schema: tool.Open).
type startSessionArgs struct {
	Session      *string `json:"session"`
	CaptureScope string  `json:"capture_scope"`
	CursorTheme  *struct {
		ThemeID       string `json:"theme_id"`
		ReducedMotion string `json:"reduced_motion"`
	} `json:"cursor_theme"`
}

// OpenArguments implements tool.Open.
func (startSessionArgs) OpenArguments() {}

// listSessionsArgs are list_sessions' arguments (an open schema: tool.Open).
type listSessionsArgs struct {
	Cursor string `json:"cursor"`
	Limit  *int   `json:"limit"`
}

// OpenArguments implements tool.Open.
func (listSessionsArgs) OpenArguments() {}

// escalateArgs are escalate_session's arguments (an open schema: tool.Open).
type escalateArgs struct {
	Session *string `json:"session"`
	Reason  string  `json:"reason"`
	Detail  *string `json:"detail"`
}

// OpenArguments implements tool.Open.
func (escalateArgs) OpenArguments() {}

// named returns the label a call names, or "" for the session itself (no label, or the
// host's label for the session).
func (s *session) named(l *string) string {
	if l == nil || *l == s.label {
		return ""
	}
	return *l
}

// scopeState is the capture-scope part of the session results.
func (s *session) scopeState(label string, st labelState) map[string]any {
	name := label
	if name == "" {
		name = s.label
	}
	scope := st.captureScope
	if scope == "" {
		scope = "auto"
	}
	// Capture is per call: whole-display capture is allowed when the session's mode (or a
	// consent grant) allows it, window capture otherwise. Nothing a label asks changes it.
	desktopOK := s.authority.Mode == authz.Unrestricted
	effective := "window"
	if desktopOK {
		effective = "desktop"
	}
	out := map[string]any{"session": name, "capture_scope": scope, "effective_scope": effective, "desktop_unlocked": desktopOK,
		"escalation_reason": nil, "escalation_detail": nil}
	if st.escalationReason != "" {
		out["escalation_reason"] = st.escalationReason
	}
	if st.escalationDetail != "" {
		out["escalation_detail"] = st.escalationDetail
	}
	return out
}

// summary is a session or label in the contract's session-summary shape.
func (s *session) summary(label string, st labelState, now time.Time) map[string]any {
	name, implicit, state := s.label, true, "active"
	idle := time.Duration(0)
	if label != "" {
		name, implicit = label, st.implicit
		idle = now.Sub(st.lastUsed)
	}
	if s.ended != "" {
		state = "ending"
	}
	_, recording, _ := s.recording.snapshot(now)
	return map[string]any{
		"session": name, "implicit": implicit, "state": state, "client_kind": s.reach.clientKind, "transport": s.reach.transport,
		"cursor_visible": false, "recording_active": recording,
		"idle_seconds": uint64(max(idle, 0) / time.Second), "expires_in_seconds": uint64(max(s.authority.Expires.Sub(now), 0) / time.Second),
	}
}

func (w *worker) startSession(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[startSessionArgs](call)
	if err != nil {
		return nil, err
	}
	switch a.CaptureScope {
	case "", "auto", "window", "desktop":
	default:
		return nil, authz.Refuse(authz.CodeInvalidArguments, "capture_scope %q: want auto, window or desktop", a.CaptureScope)
	}
	s, err := w.callerSession(call)
	if err != nil {
		return nil, err
	}
	label := s.named(a.Session)
	st := labelState{captureScope: a.CaptureScope}
	revived := false
	if label != "" {
		var r *authz.Refusal
		if st, revived, r = s.labels.start(label, a.CaptureScope, w.authorizer.now()); r != nil {
			return nil, r
		}
	}
	out := s.scopeState(label, st)
	out["active"], out["revived"] = true, revived
	return tool.TextResult(fmt.Sprintf("Session %q is active.", out["session"]), out), nil
}

func (w *worker) listSessions(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[listSessionsArgs](call)
	if err != nil {
		return nil, err
	}
	limit := 50
	if a.Limit != nil {
		if *a.Limit < 0 || *a.Limit > 100 {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "limit %d: want 0–100", *a.Limit)
		}
		if *a.Limit > 0 {
			limit = *a.Limit
		}
	}
	from := 0
	if a.Cursor != "" {
		n, err := strconv.Atoi(a.Cursor)
		if err != nil || n < 0 {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "cursor %q is not one list_sessions returned", a.Cursor)
		}
		from = n
	}
	s, err := w.callerSession(call)
	if err != nil {
		return nil, err
	}
	now := w.authorizer.now()
	all := []map[string]any{s.summary("", labelState{}, now)}
	for _, l := range s.labels.active() {
		st, _ := s.labels.get(l)
		all = append(all, s.summary(l, st, now))
	}
	if from > len(all) {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "cursor %q is past the end of the list (%d sessions)", a.Cursor, len(all))
	}
	end := len(all)
	if limit < end-from {
		end = from + limit
	}
	page := all[from:end]
	var next any
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return tool.TextResult(fmt.Sprintf("%d of %d sessions", len(page), len(all)), map[string]any{"sessions": page, "next_cursor": next}), nil
}

func (w *worker) escalateSession(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[escalateArgs](call)
	if err != nil {
		return nil, err
	}
	switch {
	case a.Session == nil:
		return nil, authz.Refuse(authz.CodeInvalidArguments, "session is required")
	case !escalationReasons[a.Reason]:
		return nil, authz.Refuse(authz.CodeInvalidArguments, "reason %q: want ax_tree_pixel_mismatch, background_delivery_failed, foreground_ineffective, no_window_target or other", a.Reason)
	case a.Detail != nil && len([]rune(*a.Detail)) > 200:
		return nil, authz.Refuse(authz.CodeInvalidArguments, "detail is longer than 200 characters")
	}
	s, err := w.callerSession(call)
	if err != nil {
		return nil, err
	}
	label := s.named(a.Session)
	detail := ""
	if a.Detail != nil {
		detail = *a.Detail
	}
	var st labelState
	if label != "" {
		s.labels.escalate(label, a.Reason, detail)
		st, _ = s.labels.get(label)
	} else {
		st = labelState{escalationReason: a.Reason, escalationDetail: detail}
	}
	out := s.scopeState(label, st)
	return tool.TextResult(fmt.Sprintf("Capture scope is fixed by the host for session %q: %s (nothing was escalated).", out["session"], out["effective_scope"]), out), nil
}

// labelCall decodes the arguments of a tool that takes only a label and returns the
// calling session and the label named ("" for the session itself).
func (w *worker) labelCall(call *tool.Call) (*session, string, error) {
	a, err := tool.ArgsOf[openLabelArgs](call)
	if err != nil {
		return nil, "", err
	}
	s, err := w.callerSession(call)
	if err != nil {
		return nil, "", err
	}
	return s, s.named(a.Session), nil
}

func (w *worker) sessionState(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	s, label, err := w.labelCall(call)
	if err != nil {
		return nil, err
	}
	var st labelState
	if label != "" {
		st, _ = s.labels.get(label)
	}
	out := s.scopeState(label, st)
	return tool.TextResult(fmt.Sprintf("Session %q: capture scope %s, effective %s (fixed by the host).", out["session"], out["capture_scope"], out["effective_scope"]), out), nil
}
