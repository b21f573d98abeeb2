package worker

import (
	"cmp"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// statusBudget bounds a WorkerStatus frame, well under the control channel's practical
// datagram size (docs/protocol.md, "Control frame limits in practice").
const statusBudget = 64 << 10

// status answers StatusRequest with the live sessions and the calls in flight on each. It
// reads state only: no session's activity, lifetime or grants change.
func (w *worker) status(callID uint64) {
	now := w.cfg.Now()
	w.mu.Lock()
	sessions := make([]*session, 0, len(w.sessions))
	for _, s := range w.sessions {
		sessions = append(sessions, s)
	}
	w.mu.Unlock()
	slices.SortFunc(sessions, func(a, b *session) int { return cmp.Compare(a.label, b.label) })

	st := &cuav1.WorkerStatus{Sessions: []*cuav1.SessionStatus{}}
	for _, s := range sessions {
		ss, live := s.status(now)
		if !live {
			continue
		}
		st.Sessions = append(st.Sessions, ss)
		st.InFlightCalls += ss.GetInFlightCalls()
	}
	fitStatus(st, statusBudget)
	w.sendControl(callID, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_WorkerStatus{WorkerStatus: st}}, nil)
}

// status describes the session at now; live is false once it ended, or would end at its
// next request (lifetime over, idle too long).
func (s *session) status(now time.Time) (ss *cuav1.SessionStatus, live bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended != "" || !now.Before(s.authority.Expires) || now.Sub(s.lastActivity) > s.authority.IdleTTL {
		return nil, false
	}
	calls := make([]*inflightCall, 0, len(s.inflight)+1)
	for _, c := range s.inflight {
		calls = append(calls, c)
	}
	if s.quick != nil {
		calls = append(calls, s.quick)
	}
	slices.SortStableFunc(calls, func(a, b *inflightCall) int { return a.received.Compare(b.received) })
	ss = &cuav1.SessionStatus{
		Label:           s.label,
		InFlightCalls:   uint32(len(calls)),
		AwaitingConsent: uint32(s.awaitingConsent),
	}
	for _, c := range calls {
		ss.Calls = append(ss.Calls, &cuav1.InFlightCall{Tool: c.tool, ReceivedUnixMs: c.received.UnixMilli()})
	}
	return ss, true
}

// fitStatus cuts st to at most budget bytes on the wire: first every calls list, then the
// sessions past the budget. It sets truncated when it cut anything; in_flight_calls stays
// the full count.
func fitStatus(st *cuav1.WorkerStatus, budget int) {
	frame := func() int {
		return proto.Size(&cuav1.ControlFrame{ProtocolVersion: 1, CallId: ^uint64(0), Body: &cuav1.ControlFrame_WorkerStatus{WorkerStatus: st}})
	}
	if frame() <= budget {
		return
	}
	st.Truncated = true
	for _, ss := range st.Sessions {
		ss.Calls = nil
	}
	size := frame()
	for size > budget && len(st.Sessions) > 0 {
		last := st.Sessions[len(st.Sessions)-1]
		n := proto.Size(last)
		size -= 1 + protowire.SizeVarint(uint64(n)) + n
		st.Sessions = st.Sessions[:len(st.Sessions)-1]
	}
}
