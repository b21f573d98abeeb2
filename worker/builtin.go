package worker

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
)

// registerBuiltins adds the tools every worker has, whatever its backends.
func (w *worker) registerBuiltins(reg *tool.Registry) {
	w.registerConfig(reg)
	reg.Register(tool.Tool{
		Name:         "health_report",
		Description:  "Report the worker's pid, generation, protocol version and which backends are available.",
		InputSchema:  []byte(labelSchema),
		Annotations:  tool.InventoryAnnotations("health_report"),
		OutputSchema: tool.OutputSchema("health_report"),
		Quick:        true,
		Args:         tool.NewArgs[labelArgs],
		Handler:      w.healthReport,
	})
	reg.Register(tool.Tool{
		Name:         "get_session",
		Description:  "Describe the calling session (label, mode, expiry, manifest hash) or one of its labels.",
		InputSchema:  []byte(openLabelSchema),
		Annotations:  tool.InventoryAnnotations("get_session"),
		OutputSchema: tool.OutputSchema("get_session"),
		Quick:        true,
		Args:         tool.NewArgs[openLabelArgs],
		Handler:      w.getSession,
	})
	reg.Register(tool.Tool{
		Name:         "end_session",
		Description:  "End the calling session: held buttons and keys are released, consent grants are dropped, and every later call is refused with session_ended. With a label (other than the session's own), end only that label: calls carrying it are refused until start_session revives it.",
		InputSchema:  []byte(openLabelSchema),
		Annotations:  tool.InventoryAnnotations("end_session"),
		OutputSchema: tool.OutputSchema("end_session"),
		Args:         tool.NewArgs[openLabelArgs],
		Handler:      w.endSession,
	})
	w.registerSessionTools(reg)
	w.registerRecordingTools(reg)
}

type healthReport struct {
	PID             int               `json:"pid"`
	Generation      string            `json:"generation"`
	ProtocolVersion uint32            `json:"protocol_version"`
	Display         string            `json:"display"`
	PrivateDisplay  bool              `json:"private_display"`
	Backends        []tool.Capability `json:"backends"`
	Sessions        int               `json:"sessions"`
}

func (w *worker) healthReport(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	// Only the session label, which changes nothing here.
	if _, err := tool.ArgsOf[labelArgs](call); err != nil {
		return nil, err
	}
	w.mu.Lock()
	n := len(w.sessions)
	w.mu.Unlock()
	h := healthReport{
		PID:             os.Getpid(),
		Generation:      hex.EncodeToString(w.generation),
		ProtocolVersion: w.version,
		Display:         w.hello.GetDisplay().GetName(),
		PrivateDisplay:  w.hello.GetDisplay().GetPrivate(),
		Backends:        w.reg.Capabilities(),
		Sessions:        n,
	}
	if h.Backends == nil {
		h.Backends = []tool.Capability{}
	}
	text := fmt.Sprintf("worker pid %d, generation %s, protocol v%d", h.PID, h.Generation, h.ProtocolVersion)
	for _, c := range h.Backends {
		state := "unavailable"
		if c.Available {
			state = "available"
		}
		text += fmt.Sprintf("\n%s: %s", c.Name, state)
		if c.Detail != "" {
			text += " (" + c.Detail + ")"
		}
	}
	return tool.TextResult(text, h), nil
}

type sessionInfo struct {
	Label          string `json:"label"`
	Mode           string `json:"mode"`
	ExpiresAt      string `json:"expires_at"`
	IdleTimeout    string `json:"idle_timeout"`
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	LaunchedPIDs   []int  `json:"launched_pids"`
	// ConsentGrants counts the live consent grants (standard mode).
	ConsentGrants int `json:"consent_grants"`
}

// callerSession returns the session a call came from.
func (w *worker) callerSession(call *tool.Call) (*session, error) {
	w.mu.Lock()
	s := w.sessions[call.Session.Label]
	w.mu.Unlock()
	if s == nil || s.state != call.Session {
		return nil, fmt.Errorf("session %q is gone", call.Session.Label)
	}
	return s, nil
}

func (w *worker) getSession(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	s, label, err := w.labelCall(call)
	if err != nil {
		return nil, err
	}
	now := w.authorizer.now()
	if label != "" {
		st, ok := s.labels.get(label)
		if !ok {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "no session label %q in this session (list_sessions lists them)", label)
		}
		out := s.summary(label, st, now)
		if st.ended {
			out["state"] = "ending"
		}
		// A label runs with its session's authority, which it never changes: say which.
		out["within"], out["mode"] = s.label, s.authority.Mode.String()
		return tool.TextResult(fmt.Sprintf("label %s of session %s: %s", label, s.label, out["state"]), out), nil
	}
	info := sessionInfo{
		Label:          s.label,
		Mode:           s.authority.Mode.String(),
		ExpiresAt:      s.authority.Expires.UTC().Format(time.RFC3339),
		IdleTimeout:    s.authority.IdleTTL.String(),
		ManifestSHA256: s.authority.ManifestSHA256,
		LaunchedPIDs:   call.Session.LaunchedPIDs(),
		ConsentGrants:  s.grants.Len(),
	}
	text := fmt.Sprintf("session %s: mode %s, expires %s, idle timeout %s", info.Label, info.Mode, info.ExpiresAt, info.IdleTimeout)
	if info.ManifestSHA256 != "" {
		text += ", manifest sha256 " + info.ManifestSHA256
	}
	// The contract's summary fields, then cua-host's own (the summary's schema is open).
	out := s.summary("", labelState{}, now)
	out["label"], out["mode"], out["expires_at"], out["idle_timeout"] = info.Label, info.Mode, info.ExpiresAt, info.IdleTimeout
	out["launched_pids"], out["consent_grants"] = info.LaunchedPIDs, info.ConsentGrants
	if info.ManifestSHA256 != "" {
		out["manifest_sha256"] = info.ManifestSHA256
	}
	return tool.TextResult(text, out), nil
}

// endSession ends the calling session. The call itself completes; every later request on
// the channel is refused with session_ended.
func (w *worker) endSession(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	s, label, err := w.labelCall(call)
	if err != nil {
		return nil, err
	}
	if label != "" {
		if !s.labels.end(label) {
			return nil, authz.Refuse(authz.CodeSessionEnded, "session label %q is not active in this session", label)
		}
		return tool.TextResult(fmt.Sprintf("label %s ended; session %s goes on", label, s.label),
			map[string]any{"session": label, "active": false}), nil
	}
	s.revoke(authz.CodeSessionEnded, "the session was ended by end_session")
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 50*time.Millisecond)
	w.reg.Release(rctx)
	cancel()
	return tool.TextResult(fmt.Sprintf("session %s ended", s.label), map[string]any{"session": s.label, "active": false, "label": s.label, "ended": true}), nil
}
