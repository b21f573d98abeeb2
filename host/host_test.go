package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestStartCallClose(t *testing.T) {
	h := startHost(t, Options{})
	s := newSession(t, h, "t1")
	res, err := s.Call(context.Background(), "health_report", nil)
	if err != nil {
		t.Fatalf("Call(health_report): %v", err)
	}
	if res.Outcome != Completed || res.IsError {
		t.Fatalf("Call(health_report) = %+v, want completed without error", res)
	}
	var hr struct {
		PID             int    `json:"pid"`
		Generation      string `json:"generation"`
		ProtocolVersion int    `json:"protocol_version"`
	}
	if err := json.Unmarshal(res.Structured, &hr); err != nil {
		t.Fatalf("health_report structured %s: %v", res.Structured, err)
	}
	if hr.PID != h.PID() || hr.Generation != h.Generation() || hr.ProtocolVersion != 1 {
		t.Errorf("health_report = %+v, want pid %d generation %s version 1", hr, h.PID(), h.Generation())
	}
	tools, err := s.ListTools(context.Background())
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	names := map[string]bool{}
	for _, ti := range tools {
		names[ti.Name] = true
	}
	for _, want := range []string{"health_report", "marker", "noop"} {
		if !names[want] {
			t.Errorf("ListTools lacks %q: %v", want, names)
		}
	}
	start := time.Now()
	h.Close()
	if took, gone := waitGone(h.PID(), time.Second); !gone {
		t.Fatalf("worker %d still running after Close (+%v)", h.PID(), took)
	}
	t.Logf("Close → worker reaped in %v", time.Since(start))
}
