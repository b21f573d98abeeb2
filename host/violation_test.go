package host

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// rawWorker is a worker process driven by hand over its control channel.
type rawWorker struct {
	ctrl   *wire.ControlConn
	proc   *process
	stderr *syncBuffer
	gen    []byte
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func spawnRawWorker(t *testing.T, flags contract.WorkerFlags) *rawWorker {
	t.Helper()
	hostEnd, childEnd, err := wire.ControlPair()
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := wire.NewControlConn(hostEnd)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := childEnv(os.Environ(), nil)
	stderr := &syncBuffer{}
	proc, err := startProcess(spec{
		path: "/proc/self/exe", args: append([]string{"cua-worker", contract.WorkerSubcommand}, flags.Args()...),
		env: env, extraFiles: []*os.File{childEnd}, stderr: stderr, // at contract.WorkerControlFD
	})
	childEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	w := &rawWorker{ctrl: ctrl, proc: proc, stderr: stderr, gen: bytes.Repeat([]byte{7}, 16)}
	t.Cleanup(func() {
		ctrl.Close()
		proc.killGroup()
		<-proc.exited
	})
	return w
}

func (w *rawWorker) hello() *cuav1.ControlFrame {
	return &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: &cuav1.Hello{
		MinVersion: 1, MaxVersion: 1, Generation: w.gen,
		Ceiling: authz.CeilingToProto(authz.DefaultCeiling()),
	}}}
}

func (w *rawWorker) handshake(t *testing.T) {
	t.Helper()
	if err := w.ctrl.Send(w.hello(), nil); err != nil {
		t.Fatal(err)
	}
	f, fd, err := w.ctrl.Recv()
	if err != nil || f.GetReady() == nil || fd != nil {
		t.Fatalf("await Ready: %v %v", f, err)
	}
}

// exitCode waits for the worker to exit and returns its status.
func (w *rawWorker) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-w.proc.exited:
	case <-time.After(10 * time.Second): // generous: the first worker of a run starts cold on a loaded machine
		t.Fatalf("worker still running 10s after the violation; stderr:\n%s", w.stderr.String())
	}
	if strings.Contains(w.stderr.String(), "panic") || strings.Contains(w.stderr.String(), "goroutine ") {
		t.Errorf("worker panicked:\n%s", w.stderr.String())
	}
	return w.proc.state.ExitCode()
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestControlViolations: each malformed or out-of-order control frame tears the channel
// down (exit status 2, no panic), and a version mismatch is refused (exit status 1).
func TestControlViolations(t *testing.T) {
	pipeFD := func(t *testing.T) int {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		n, _ := rawFDOf(w)
		return n
	}
	revoke := &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 1, Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{All: true}}}
	create := &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 1, Body: &cuav1.ControlFrame_CreateSession{CreateSession: &cuav1.CreateSession{Label: "x", Mode: cuav1.Mode_MODE_STANDARD, TtlSeconds: 60, IdleTtlSeconds: 60}}}

	tests := []struct {
		name      string
		handshake bool
		send      func(t *testing.T, w *rawWorker) error
		wantExit  int
	}{
		{name: "garbage before hello", send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw([]byte("\xff\xff\xff\xffgarbage"))
		}, wantExit: 2},
		{name: "garbage after ready", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw([]byte{0x0a, 0xff, 0x01})
		}, wantExit: 2},
		{name: "oversized frame", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(bytes.Repeat([]byte{0}, wire.MaxControlFrame+1))
		}, wantExit: 2},
		{name: "frame before hello", send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(marshal(t, revoke))
		}, wantExit: 2},
		{name: "create session before hello", send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(marshal(t, create), pipeFD(t))
		}, wantExit: 2},
		{name: "second hello", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.Send(w.hello(), nil)
		}, wantExit: 2},
		{name: "fd on revoke", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(marshal(t, revoke), pipeFD(t))
		}, wantExit: 2},
		{name: "two fds on create", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(marshal(t, create), pipeFD(t), pipeFD(t))
		}, wantExit: 2},
		{name: "missing fd on create", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(marshal(t, create))
		}, wantExit: 2},
		{name: "worker-only kind from host", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(marshal(t, &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Ready{Ready: &cuav1.Ready{Version: 1}}}))
		}, wantExit: 2},
		{name: "wrong version after ready", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			f := proto.Clone(revoke).(*cuav1.ControlFrame)
			f.ProtocolVersion = 9
			return w.ctrl.SendRaw(marshal(t, f))
		}, wantExit: 2},
		{name: "unknown kind", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw([]byte{0x08, 0x01, 0xfa, 0x01, 0x00}) // version 1 + empty field 31
		}, wantExit: 2},
		{name: "unsupported version", send: func(t *testing.T, w *rawWorker) error {
			f := w.hello()
			f.ProtocolVersion = 2
			f.GetHello().MinVersion, f.GetHello().MaxVersion = 2, 3
			return w.ctrl.Send(f, nil)
		}, wantExit: 1},
		{name: "short generation", send: func(t *testing.T, w *rawWorker) error {
			f := w.hello()
			f.GetHello().Generation = []byte{1}
			return w.ctrl.Send(f, nil)
		}, wantExit: 2},
		{name: "empty datagram is end of file", handshake: true, send: func(t *testing.T, w *rawWorker) error {
			return w.ctrl.SendRaw(nil)
		}, wantExit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := spawnRawWorker(t, contract.WorkerFlags{LogLevel: slog.LevelDebug})
			if tt.handshake {
				w.handshake(t)
			}
			if err := tt.send(t, w); err != nil {
				t.Fatalf("send: %v", err)
			}
			if got := w.exitCode(t); got != tt.wantExit {
				t.Errorf("worker exit status = %d, want %d; stderr:\n%s", got, tt.wantExit, w.stderr.String())
			}
			// The worker closed its end: the channel reads end-of-file (possibly after an
			// Error frame announcing the violation).
			for range 2 {
				f, _, err := w.ctrl.Recv()
				if err != nil {
					if !errors.Is(err, wire.ErrClosed) {
						t.Errorf("after violation Recv = %v, want ErrClosed", err)
					}
					break
				}
				if f.GetError() == nil {
					t.Errorf("after violation got %s, want Error or end-of-file", wire.KindOf(f))
				}
			}
		})
	}
}

func rawFDOf(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	err = rc.Control(func(x uintptr) { fd = int(x) })
	return fd, err
}

// TestHelloTimeout: a worker that never gets Hello gives up and exits.
func TestHelloTimeout(t *testing.T) {
	w := spawnRawWorker(t, contract.WorkerFlags{LogLevel: slog.LevelDebug, HelloTimeout: 300 * time.Millisecond})
	start := time.Now()
	select {
	case <-w.proc.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("worker without Hello still running after 5s")
	}
	if code := w.proc.state.ExitCode(); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("worker exited after %v, before its Hello timeout", took)
	}
}

// TestSessionViolations: envelopes with a wrong generation, a repeated or backwards request
// id, or an unsupported version are refused NOT_STARTED with a stable code and run nothing;
// garbage closes that channel only.
func TestSessionViolations(t *testing.T) {
	h := startHost(t, Options{})
	ctx := context.Background()
	f, _, err := h.CreateSessionChannel(ctx, SessionSpec{Label: "raw"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := wire.NewSessionConn(f)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	path := t.TempDir() + "/m"
	call := func(id uint64, gen []byte, version uint32, marker string) *cuav1.ToolResult {
		t.Helper()
		args := mustJSON(map[string]string{"path": path, "marker": marker})
		env := &cuav1.Envelope{ProtocolVersion: version, RequestId: id, Generation: gen,
			Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: "marker", Arguments: args}}}
		if err := sc.Send(env); err != nil {
			t.Fatal(err)
		}
		reply, err := sc.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if reply.GetRequestId() != id {
			t.Fatalf("reply id %d, want %d", reply.GetRequestId(), id)
		}
		return reply.GetToolResult()
	}
	gen := h.generation
	tests := []struct {
		name     string
		id       uint64
		gen      []byte
		version  uint32
		wantCode string
	}{
		{name: "valid", id: 5, gen: gen, version: 1},
		{name: "replayed id", id: 5, gen: gen, version: 1, wantCode: "replayed_request"},
		{name: "backwards id", id: 3, gen: gen, version: 1, wantCode: "replayed_request"},
		{name: "wrong generation", id: 6, gen: bytes.Repeat([]byte{1}, 16), version: 1, wantCode: "generation_mismatch"},
		{name: "missing generation", id: 7, gen: nil, version: 1, wantCode: "generation_mismatch"},
		{name: "unsupported version", id: 8, gen: gen, version: 2, wantCode: "unsupported_protocol_version"},
		{name: "valid again", id: 9, gen: gen, version: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(tt.id, tt.gen, tt.version, tt.name)
			if tt.wantCode == "" {
				if res.GetOutcome() != cuav1.Outcome_OUTCOME_COMPLETED {
					t.Fatalf("result = %v, want completed", res)
				}
				return
			}
			if res.GetOutcome() != cuav1.Outcome_OUTCOME_NOT_STARTED || res.GetRefusal().GetCode() != tt.wantCode {
				t.Errorf("result = %v, want NOT_STARTED %s", res, tt.wantCode)
			}
		})
	}
	b, _ := os.ReadFile(path)
	if got := strings.Split(strings.TrimSpace(string(b)), "\n"); strings.Join(got, ",") != "valid,valid again" {
		t.Errorf("markers = %q, want only the two valid calls", got)
	}

	// Garbage on this channel closes it; another session is unaffected.
	other := newSession(t, h, "other")
	if err := sc.SendRaw([]byte{0, 0, 0, 3, 0xff, 0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Recv(); !errors.Is(err, wire.ErrClosed) {
		t.Errorf("after garbage Recv = %v, want ErrClosed", err)
	}
	if res, _ := other.Call(ctx, "noop", nil); res.Outcome != Completed {
		t.Errorf("other session after garbage = %+v", res)
	}
	// An oversized length prefix closes the channel too, without reading 4 GiB.
	f2, _, err := h.CreateSessionChannel(ctx, SessionSpec{Label: "raw2"})
	if err != nil {
		t.Fatal(err)
	}
	sc2, _ := wire.NewSessionConn(f2)
	defer sc2.Close()
	sc2.SendRaw([]byte{0xff, 0xff, 0xff, 0xff})
	if _, err := sc2.Recv(); !errors.Is(err, wire.ErrClosed) {
		t.Errorf("after oversized length Recv = %v, want ErrClosed", err)
	}
}

// TestCancelAndDeadline: a cancelled in-flight call is UNKNOWN or COMPLETED per its effect;
// a call whose deadline already passed is NOT_STARTED and runs nothing.
func TestCancelAndDeadline(t *testing.T) {
	h := startHost(t, Options{})
	s := newSession(t, h, "c")
	path := t.TempDir() + "/m"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	res, err := s.Call(ctx, "marker_after_sleep", mustJSON(map[string]any{"path": path, "marker": "late", "ms": 2000}))
	if res.Outcome != Unknown && res.Outcome != NotStarted {
		t.Errorf("cancelled call = %+v (%v), want UNKNOWN (interrupted) or NOT_STARTED", res, err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("cancelled call wrote %q", b)
	}
	// A deadline in the past, sent raw.
	f, _, err := h.CreateSessionChannel(context.Background(), SessionSpec{Label: "d"})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := wire.NewSessionConn(f)
	defer sc.Close()
	sc.Send(&cuav1.Envelope{ProtocolVersion: 1, RequestId: 1, Generation: h.generation, DeadlineUnixMs: time.Now().Add(-time.Second).UnixMilli(),
		Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: "marker", Arguments: mustJSON(map[string]string{"path": path, "marker": "past"})}}})
	reply, err := sc.Recv()
	if err != nil || reply.GetToolResult().GetRefusal().GetCode() != "deadline_exceeded" {
		t.Errorf("past deadline = %v, %v; want NOT_STARTED deadline_exceeded", reply, err)
	}
	// The worker survives a panicking tool and says UNKNOWN.
	res, _ = s.Call(context.Background(), "panic", nil)
	if res.Outcome != Unknown || !res.IsError {
		t.Errorf("panicking tool = %+v, want UNKNOWN error", res)
	}
	if res, _ := s.Call(context.Background(), "noop", nil); res.Outcome != Completed {
		t.Errorf("after panic = %+v", res)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("refused calls wrote %q", b)
	}
}
