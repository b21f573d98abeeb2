package host

import (
	"context"
	"testing"
	"time"
)

// TestStatus: Host.Status reports a call while it runs in the worker, and none after it
// returned.
func TestStatus(t *testing.T) {
	h := startHost(t, Options{})
	s := newSession(t, h, "s")
	other := newSession(t, h, "other")
	ctx := context.Background()
	done := make(chan Result, 1)
	go func() {
		res, _ := s.Call(ctx, "sleep", mustJSON(map[string]int{"ms": 400}))
		done <- res
	}()
	deadline := time.Now().Add(5 * time.Second)
	var st WorkerStatus
	for {
		var err error
		st, err = h.Status(ctx)
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		if st.InFlightCalls > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if st.InFlightCalls != 1 || len(st.Sessions) != 2 || st.Sessions[0].Label != "other" || st.Sessions[1].Label != "s" {
		t.Fatalf("status while sleep runs = %+v, want sessions other and s, one call in flight", st)
	}
	if c := st.Sessions[1].Calls; st.Sessions[1].InFlightCalls != 1 || len(c) != 1 || c[0].Tool != "sleep" || time.Since(c[0].Received) > 5*time.Second {
		t.Errorf("session s = %+v, want its sleep call in flight", st.Sessions[1])
	}
	if res := <-done; res.Outcome != Completed {
		t.Fatalf("sleep = %+v", res)
	}
	st, err := h.Status(ctx)
	if err != nil || st.InFlightCalls != 0 || st.Sessions[1].InFlightCalls != 0 {
		t.Errorf("status after sleep returned = %+v, %v; want nothing in flight", st, err)
	}
	if err := other.Revoke(ctx); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if _, err := h.Status(ctx); err == nil {
		t.Error("Status after Close succeeded")
	}
}
