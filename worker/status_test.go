package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
)

// status asks the worker for its WorkerStatus.
func (h *testHost) status() *cuav1.WorkerStatus {
	h.t.Helper()
	r := h.request(&cuav1.ControlFrame{Body: &cuav1.ControlFrame_StatusRequest{StatusRequest: &cuav1.StatusRequest{}}}, nil)
	st := r.GetWorkerStatus()
	if st == nil {
		h.t.Fatalf("StatusRequest answered %v, want WorkerStatus", r)
	}
	return st
}

// waitStatus polls the worker's status until ok accepts it, and fails after 5 s.
func (h *testHost) waitStatus(what string, ok func(*cuav1.WorkerStatus) bool) *cuav1.WorkerStatus {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := h.status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("status never showed %s; last: %v", what, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func sessionStatus(st *cuav1.WorkerStatus, label string) *cuav1.SessionStatus {
	for _, s := range st.GetSessions() {
		if s.GetLabel() == label {
			return s
		}
	}
	return nil
}

// TestStatusReportsCallsInFlight: a StatusRequest taken while calls run lists them per
// session (an ordinary call on its goroutine, a quick call on the session's reader), and
// one taken after they returned lists none; a revoked session is not listed.
func TestStatusReportsCallsInFlight(t *testing.T) {
	release := make(chan struct{})
	block := func(ctx context.Context, _ *tool.Call) (*tool.Result, error) {
		select {
		case <-release:
			return &tool.Result{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	h := startTestWorker(t, testWorkerOptions{
		register: func(reg *tool.Registry) {
			reg.Register(tool.Tool{Name: "slow", Handler: block})
			reg.Register(tool.Tool{Name: "noop", Quick: true, Handler: block})
		},
		extra: []authz.Entry{authz.MetadataOnly("slow", "Block until released (test only).", authz.R0, authz.ResourceNone, authz.Annotations{})},
	})
	a := h.mustSession("a", authz.Standard, "")
	b := h.mustSession("b", authz.Standard, "")

	st := h.status()
	if len(st.GetSessions()) != 2 || st.GetInFlightCalls() != 0 || st.GetTruncated() {
		t.Fatalf("idle status = %v, want sessions a and b, nothing in flight", st)
	}
	before := time.Now().Add(-time.Second).UnixMilli()
	var wg sync.WaitGroup
	results := make([]client.Result, 3)
	for i, c := range []*client.Conn{a, a, b} {
		name := "slow"
		if c == b {
			name = "noop"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = call(t, c, name, nil)
		}()
	}
	st = h.waitStatus("three calls in flight", func(st *cuav1.WorkerStatus) bool { return st.GetInFlightCalls() == 3 })
	sa, sb := sessionStatus(st, "a"), sessionStatus(st, "b")
	if sa.GetInFlightCalls() != 2 || len(sa.GetCalls()) != 2 || sa.GetCalls()[0].GetTool() != "slow" || sa.GetAwaitingConsent() != 0 {
		t.Errorf("session a = %v, want two slow calls in flight", sa)
	}
	if sb.GetInFlightCalls() != 1 || len(sb.GetCalls()) != 1 || sb.GetCalls()[0].GetTool() != "noop" {
		t.Errorf("session b = %v, want its quick noop in flight", sb)
	}
	for _, c := range append(sa.GetCalls(), sb.GetCalls()...) {
		if at := c.GetReceivedUnixMs(); at < before || at > time.Now().UnixMilli() {
			t.Errorf("call %v: received_unix_ms %d is not about now", c, at)
		}
	}
	close(release)
	wg.Wait()
	for _, res := range results {
		expect(t, res, "")
	}
	st = h.status()
	if st.GetInFlightCalls() != 0 || sessionStatus(st, "a").GetInFlightCalls() != 0 || sessionStatus(st, "b").GetInFlightCalls() != 0 {
		t.Errorf("status after the calls returned = %v, want nothing in flight", st)
	}
	h.revoke("b")
	if st := h.status(); len(st.GetSessions()) != 1 || st.GetSessions()[0].GetLabel() != "a" {
		t.Errorf("status after revoking b = %v, want only a", st)
	}
}

// TestStatusAwaitingConsent: a call waiting for the host's consent decision is in flight
// and counted as awaiting consent; once decided, neither.
func TestStatusAwaitingConsent(t *testing.T) {
	release := make(chan struct{})
	sc := newScene(t, sceneOptions{consent: func(req *cuav1.ConsentRequest) (bool, uint32, bool) {
		<-release
		return true, 60, false
	}})
	c := sc.h.mustSession("s", authz.Standard, "")
	done := make(chan client.Result, 1)
	go func() { done <- call(t, c, "click", win(sc.foreignPID, sc.foreignWin)) }()
	st := sc.h.waitStatus("a call awaiting consent", func(st *cuav1.WorkerStatus) bool {
		return sessionStatus(st, "s").GetAwaitingConsent() == 1
	})
	if s := sessionStatus(st, "s"); s.GetInFlightCalls() != 1 || s.GetCalls()[0].GetTool() != "click" {
		t.Errorf("session s = %v, want its click in flight", s)
	}
	close(release)
	expect(t, <-done, "")
	if s := sessionStatus(sc.h.status(), "s"); s.GetInFlightCalls() != 0 || s.GetAwaitingConsent() != 0 {
		t.Errorf("session s after the decision = %v, want nothing in flight", s)
	}
}

// TestStatusOmitsEndedSessions: a session over its idle TTL or lifetime is not listed,
// and asking for the status does not count as the session's activity.
func TestStatusOmitsEndedSessions(t *testing.T) {
	sc := newScene(t, sceneOptions{})
	idle, _ := sc.h.session("idle", authz.Standard, "", 3600, 60)
	if idle == nil {
		t.Fatal("CreateSession(idle) refused")
	}
	sc.h.mustSession("long", authz.Standard, "")
	for range 3 {
		sc.clock.advance(25 * time.Second)
		sc.h.status()
	}
	st := sc.h.status()
	if len(st.GetSessions()) != 1 || st.GetSessions()[0].GetLabel() != "long" {
		t.Errorf("status 75 s later = %v, want only long (idle's 60 s idle TTL is over)", st)
	}
	expect(t, call(t, idle, "get_screen_size", nil), authz.CodeAuthorizationExpired)
}

// TestFitStatus: a status that would not fit its budget loses the calls lists, then the
// sessions past the budget; the total stays exact and the frame fits.
func TestFitStatus(t *testing.T) {
	build := func(sessions, calls int) *cuav1.WorkerStatus {
		st := &cuav1.WorkerStatus{}
		for i := range sessions {
			ss := &cuav1.SessionStatus{Label: fmt.Sprintf("%s-%04d", strings.Repeat("l", 100), i), InFlightCalls: uint32(calls)}
			for range calls {
				ss.Calls = append(ss.Calls, &cuav1.InFlightCall{Tool: "get_desktop_state", ReceivedUnixMs: time.Now().UnixMilli()})
			}
			st.Sessions = append(st.Sessions, ss)
			st.InFlightCalls += uint32(calls)
		}
		return st
	}
	size := func(st *cuav1.WorkerStatus) int {
		return proto.Size(&cuav1.ControlFrame{ProtocolVersion: 1, CallId: ^uint64(0), Body: &cuav1.ControlFrame_WorkerStatus{WorkerStatus: st}})
	}
	small := build(3, 2)
	fitStatus(small, statusBudget)
	if small.GetTruncated() || len(small.GetSessions()) != 3 || len(small.GetSessions()[0].GetCalls()) != 2 {
		t.Errorf("a small status was cut: %v", small)
	}
	mid := build(100, 32) // calls lists over the budget, sessions alone under it
	fitStatus(mid, statusBudget)
	if !mid.GetTruncated() || len(mid.GetSessions()) != 100 || len(mid.GetSessions()[0].GetCalls()) != 0 || mid.GetInFlightCalls() != 3200 {
		t.Errorf("mid: truncated %v, %d sessions, %d calls listed, total %d; want the calls lists dropped, every session kept, total 3200",
			mid.GetTruncated(), len(mid.GetSessions()), len(mid.GetSessions()[0].GetCalls()), mid.GetInFlightCalls())
	}
	huge := build(5000, 1)
	fitStatus(huge, statusBudget)
	if n := size(huge); !huge.GetTruncated() || n > statusBudget || n < statusBudget-200 || huge.GetInFlightCalls() != 5000 {
		t.Errorf("huge: truncated %v, %d bytes (budget %d), %d sessions, total %d", huge.GetTruncated(), n, statusBudget, len(huge.GetSessions()), huge.GetInFlightCalls())
	}
}
