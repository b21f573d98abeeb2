package host

import (
	"context"
	"fmt"
	"time"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// WorkerStatus is what a worker reports it is doing: its live sessions and the tool calls
// in flight on each (StatusRequest, docs/protocol.md).
type WorkerStatus struct {
	// Sessions are the worker's live sessions, ordered by label.
	Sessions []SessionStatus
	// InFlightCalls counts the calls in flight on every live session.
	InFlightCalls int
	// Truncated says the worker cut its report to fit one control frame (the calls lists
	// first, then sessions); InFlightCalls stays exact.
	Truncated bool
}

// SessionStatus is one live session of a WorkerStatus.
type SessionStatus struct {
	Label string
	// InFlightCalls counts the calls accepted and not yet answered; AwaitingConsent those
	// of them waiting for a consent decision.
	InFlightCalls   int
	AwaitingConsent int
	// Calls describes each call in flight, oldest first.
	Calls []InFlightCall
}

// InFlightCall is one tool call in flight.
type InFlightCall struct {
	// Tool is the tool's name; "" when the agent named no tool of the worker.
	Tool string
	// Received is when the worker accepted the call.
	Received time.Time
}

// Status asks the worker what it is doing now. It changes nothing: no session's activity,
// lifetime or grants.
func (h *Host) Status(ctx context.Context) (WorkerStatus, error) {
	reply, err := h.request(ctx, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_StatusRequest{StatusRequest: &cuav1.StatusRequest{}}}, nil)
	if err != nil {
		return WorkerStatus{}, fmt.Errorf("worker status: %w", err)
	}
	st := reply.GetWorkerStatus()
	if st == nil {
		return WorkerStatus{}, fmt.Errorf("worker status: unexpected reply %s", wire.KindOf(reply))
	}
	out := WorkerStatus{Sessions: make([]SessionStatus, 0, len(st.GetSessions())), InFlightCalls: int(st.GetInFlightCalls()), Truncated: st.GetTruncated()}
	for _, s := range st.GetSessions() {
		ss := SessionStatus{Label: s.GetLabel(), InFlightCalls: int(s.GetInFlightCalls()), AwaitingConsent: int(s.GetAwaitingConsent())}
		for _, c := range s.GetCalls() {
			ss.Calls = append(ss.Calls, InFlightCall{Tool: c.GetTool(), Received: time.UnixMilli(c.GetReceivedUnixMs())})
		}
		out.Sessions = append(out.Sessions, ss)
	}
	return out, nil
}
