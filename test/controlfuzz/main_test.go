package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/test/fuzzkit"
)

func TestMain(m *testing.M) { os.Exit(fuzzkit.RunTests(m)) }

func enc(t *testing.T, f *cuav1.ControlFrame) []byte {
	t.Helper()
	return fuzzkit.Marshal(t, f)
}

// TestModel checks the reference model's predictions against docs/protocol.md's table.
func TestModel(t *testing.T) {
	hello := &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: &cuav1.Hello{
		MinVersion: 1, MaxVersion: 1, Generation: make([]byte, 16),
		Ceiling: &cuav1.Ceiling{AllowedModes: []cuav1.Mode{cuav1.Mode_MODE_STANDARD}, MaxSessionTtlSeconds: 60, MaxIdleTtlSeconds: 60}}}}
	create := func(label string) *cuav1.ControlFrame {
		return &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 1, Body: &cuav1.ControlFrame_CreateSession{CreateSession: &cuav1.CreateSession{
			Label: label, Mode: cuav1.Mode_MODE_STANDARD, TtlSeconds: 60, IdleTtlSeconds: 60}}}
	}
	revoke := func(label string) *cuav1.ControlFrame {
		return &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 2, Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{Label: label}}}
	}
	status := &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 3, Body: &cuav1.ControlFrame_StatusRequest{StatusRequest: &cuav1.StatusRequest{}}}
	person := &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_PersonActivity{PersonActivity: &cuav1.PersonActivity{Active: true}}}
	workerStatus := &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 3, Body: &cuav1.ControlFrame_WorkerStatus{WorkerStatus: &cuav1.WorkerStatus{}}}
	type in struct {
		b      []byte
		nfds   int
		stream bool
	}
	tests := []struct {
		name string
		in   []in
		want string // describe() of the last expectation
	}{
		{name: "hello", in: []in{{b: enc(t, hello)}}, want: "Ready"},
		{name: "frame before hello", in: []in{{b: enc(t, revoke("a"))}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "eof before hello", in: []in{{b: nil}}, want: "no reply, teardown, exit 0 (known deviation " + knownEOFBeforeHello + ": no reply, teardown, exit 1)"},
		{name: "create", in: []in{{b: enc(t, hello)}, {b: enc(t, create("a")), nfds: 1, stream: true}}, want: "SessionCreated a"},
		{name: "duplicate label", in: []in{{b: enc(t, hello)}, {b: enc(t, create("a")), nfds: 1, stream: true}, {b: enc(t, create("a")), nfds: 1, stream: true}}, want: "Error invalid_request"},
		{name: "create without fd", in: []in{{b: enc(t, hello)}, {b: enc(t, create("a"))}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "create with a pipe", in: []in{{b: enc(t, hello)}, {b: enc(t, create("a")), nfds: 1}}, want: "Error invalid_request"},
		{name: "revoke unknown", in: []in{{b: enc(t, hello)}, {b: enc(t, revoke("zz"))}}, want: "Error invalid_request"},
		{name: "revoke", in: []in{{b: enc(t, hello)}, {b: enc(t, create("a")), nfds: 1, stream: true}, {b: enc(t, revoke("a"))}}, want: `Revoked ["a"]`},
		{name: "revoke with fd", in: []in{{b: enc(t, hello)}, {b: enc(t, revoke("a")), nfds: 1}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "second hello", in: []in{{b: enc(t, hello)}, {b: enc(t, hello)}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "garbage", in: []in{{b: enc(t, hello)}, {b: []byte{0xff, 0xff}}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "status", in: []in{{b: enc(t, hello)}, {b: enc(t, status)}}, want: `WorkerStatus [] (maybe []), nothing in flight`},
		{name: "status lists live sessions", in: []in{{b: enc(t, hello)}, {b: enc(t, create("a")), nfds: 1, stream: true}, {b: enc(t, create("b")), nfds: 1, stream: true}, {b: enc(t, revoke("a"))}, {b: enc(t, status)}}, want: `WorkerStatus ["b"] (maybe []), nothing in flight`},
		{name: "status with fd", in: []in{{b: enc(t, hello)}, {b: enc(t, status), nfds: 1}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "status before hello", in: []in{{b: enc(t, status)}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "person activity", in: []in{{b: enc(t, hello)}, {b: enc(t, person)}}, want: "no reply"},
		{name: "person activity with fd", in: []in{{b: enc(t, hello)}, {b: enc(t, person), nfds: 1}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "person activity before hello", in: []in{{b: enc(t, person)}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "WorkerStatus from the host", in: []in{{b: enc(t, hello)}, {b: enc(t, workerStatus)}}, want: "Error invalid_request, teardown, exit 2"},
		{name: "shutdown", in: []in{{b: enc(t, hello)}, {b: enc(t, &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Shutdown{Shutdown: &cuav1.Shutdown{}}})}}, want: "no reply, teardown, exit 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel()
			var e expect
			for _, x := range tt.in {
				e = m.frame(x.b, x.nfds, x.stream, time.Now())
				if e.reply == replyCreated {
					now := time.Now()
					m.sessions[e.label] = &msess{label: e.label, expiresAt: now.Add(time.Minute), idle: time.Minute, activeLo: now, activeHi: now}
				}
				for _, l := range e.labels {
					if e.reply == replyRevoked {
						m.sessions[l].revoked = true
					}
				}
			}
			if got := describe(e); got != tt.want {
				t.Errorf("model = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHarnessSmoke runs the harness briefly against real workers (CI budget); long runs
// use the program (scripts/fuzz.sh).
func TestHarnessSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	c := config{duration: 1500 * time.Millisecond, seed: 42, only: -1, out: t.TempDir(), parallel: 1, maxSeqs: 60}
	s := fuzz(context.Background(), c, io.Discard)
	if s.seqs == 0 || s.frames == 0 {
		t.Fatalf("harness ran %d sequences, %d frames", s.seqs, s.frames)
	}
	for _, v := range s.violations {
		t.Errorf("%s", v)
	}
}
