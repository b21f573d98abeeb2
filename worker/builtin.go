package worker

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/cua-host/cua-host/worker/tool"
)

// registerBuiltins adds the tools every worker has, whatever its backends.
func (w *worker) registerBuiltins(reg *tool.Registry) {
	w.registerConfig(reg)
	reg.Register(tool.Tool{
		Name:        "health_report",
		Description: "Report the worker's pid, generation, protocol version and which backends are available.",
		InputSchema: []byte(`{"type":"object","properties":{},"additionalProperties":false}`),
		Annotations: tool.Annotations{ReadOnly: true, Idempotent: true},
		Quick:       true,
		Handler:     w.healthReport,
	})
	reg.Register(tool.Tool{
		Name:        "get_session",
		Description: "Describe the calling session: label, mode, expiry and manifest hash.",
		InputSchema: []byte(`{"type":"object","properties":{},"additionalProperties":false}`),
		Annotations: tool.Annotations{ReadOnly: true, Idempotent: true},
		Quick:       true,
		Handler:     w.getSession,
	})
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
	var none struct{}
	if err := call.Decode(&none); err != nil {
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
}

func (w *worker) getSession(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	var none struct{}
	if err := call.Decode(&none); err != nil {
		return nil, err
	}
	w.mu.Lock()
	s := w.sessions[call.Session.Label]
	w.mu.Unlock()
	if s == nil || s.state != call.Session {
		return nil, fmt.Errorf("session %q is gone", call.Session.Label)
	}
	info := sessionInfo{
		Label:          s.label,
		Mode:           s.mode.String(),
		ExpiresAt:      s.expires.UTC().Format(time.RFC3339),
		IdleTimeout:    s.idleTTL.String(),
		ManifestSHA256: s.manifestSHA256,
		LaunchedPIDs:   call.Session.LaunchedPIDs(),
	}
	return tool.TextResult(fmt.Sprintf("session %s: mode %s, expires %s", info.Label, info.Mode, info.ExpiresAt), info), nil
}
