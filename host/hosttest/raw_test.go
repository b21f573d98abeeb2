package hosttest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/hosttest"
	"github.com/cua-host/cua-host/internal/procfs"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/test/testkit"
	"github.com/cua-host/cua-host/test/testworker"
)

func TestMain(m *testing.M) {
	testworker.MaybeRun() // the re-executed test binary becomes a worker here
	if os.Getenv("GORACE") == "" {
		// Race-built workers otherwise sleep a second at exit (see host/env_race.go).
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// fdTargets maps each open descriptor of pid to what it points at.
func fdTargets(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	out := map[int]string{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		out[n] = target
	}
	return out
}

// processGone reports whether pid no longer runs (absent, or a zombie).
func processGone(pid int) bool { return !procfs.Alive(pid) }

func rawHello() *cuav1.ControlFrame {
	return &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: &cuav1.Hello{
		MinVersion: 1, MaxVersion: 1, Generation: make([]byte, 16),
		Ceiling: authz.CeilingToProto(authz.DefaultCeiling()),
	}}}
}

func spawnRaw(t *testing.T, opts host.Options) *hosttest.RawWorker {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testkit.Logger(t)
	}
	w, err := hosttest.SpawnRaw(t.Context(), opts)
	if err != nil {
		t.Fatalf("SpawnRaw: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestSpawnRawLifecycle: a raw worker answers a hand-sent Hello, reports its exit status
// after end-of-file, and leaves no descriptor behind in the host.
func TestSpawnRawLifecycle(t *testing.T) {
	before := len(fdTargets(t, os.Getpid()))
	w := spawnRaw(t, host.Options{WorkerLogLevel: -4})
	if _, exited := w.ExitCode(); exited {
		t.Fatal("ExitCode reports an exit before the worker was told anything")
	}
	if err := w.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := w.Control.Send(rawHello(), nil); err != nil {
		t.Fatal(err)
	}
	f, fd, err := w.Control.Recv()
	if err != nil || fd != nil || f.GetReady() == nil {
		t.Fatalf("Recv = %v, %v, %v; want Ready", f, fd, err)
	}
	if got := int(f.GetReady().GetPid()); got != w.PID() {
		t.Errorf("Ready pid = %d, want %d", got, w.PID())
	}
	w.Control.Close()
	select {
	case <-w.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("worker still running 5s after end-of-file")
	}
	if code, exited := w.ExitCode(); !exited || code != 0 {
		t.Errorf("ExitCode() = %d, %t; want 0, true", code, exited)
	}
	if sig, ok := w.Signal(); ok {
		t.Errorf("Signal() = %v, want none", sig)
	}
	if s := w.WaitStderr(time.Second); !strings.Contains(s, `"msg":"ready"`) {
		t.Errorf("Stderr() = %q, want the worker's debug log", s)
	}
	w.Close()
	if after := len(fdTargets(t, os.Getpid())); after != before {
		t.Errorf("host descriptors: %d before, %d after", before, after)
	}
}

// TestSpawnRawDeadline: a Recv blocked past the deadline times out and leaves the channel
// usable.
func TestSpawnRawDeadline(t *testing.T) {
	w := spawnRaw(t, host.Options{})
	w.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, _, err := w.Control.Recv(); !wire.IsTimeout(err) {
		t.Fatalf("Recv before Hello = %v, want a timeout", err)
	}
	w.SetDeadline(time.Now().Add(5 * time.Second))
	if err := w.Control.Send(rawHello(), nil); err != nil {
		t.Fatal(err)
	}
	if f, _, err := w.Control.Recv(); err != nil || f.GetReady() == nil {
		t.Fatalf("Recv after a timeout = %v, %v; want Ready", f, err)
	}
}

// TestSpawnRawKill: Kill ends the worker with SIGKILL; Close afterwards is harmless and
// repeatable.
func TestSpawnRawKill(t *testing.T) {
	w := spawnRaw(t, host.Options{})
	w.Kill()
	<-w.Exited()
	if sig, ok := w.Signal(); !ok || sig != syscall.SIGKILL {
		t.Errorf("Signal() = %v, %t; want SIGKILL", sig, ok)
	}
	if code, exited := w.ExitCode(); !exited || code != -1 {
		t.Errorf("ExitCode() = %d, %t; want -1, true", code, exited)
	}
	if err := w.SendSignal(syscall.SIGCONT); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("SendSignal after exit = %v, want os.ErrProcessDone", err)
	}
	w.Close()
	w.Close()
	if !processGone(w.PID()) {
		t.Errorf("worker %d still present after Close", w.PID())
	}
}

// TestSpawnRawOversized: with the send buffer forced up, a datagram over the limit
// reaches the worker, which refuses it as a violation (exit status 2).
func TestSpawnRawOversized(t *testing.T) {
	w := spawnRaw(t, host.Options{})
	granted, err := w.ForceSendBuffer(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if granted < wire.MaxControlFrame+64<<10 {
		t.Skipf("send buffer %d bytes: cannot send an oversized datagram here", granted)
	}
	w.SetDeadline(time.Now().Add(5 * time.Second))
	if err := w.Control.SendRaw(make([]byte, wire.MaxControlFrame+1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("worker still running after an oversized frame")
	}
	if code, _ := w.ExitCode(); code != 2 {
		t.Errorf("exit status %d, want 2; stderr:\n%s", code, w.Stderr())
	}
}

// ExampleSpawnRaw drives a worker's control channel by hand, as a fuzzing harness does.
func ExampleSpawnRaw() {
	w, err := hosttest.SpawnRaw(context.Background(), host.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()
	w.SetDeadline(time.Now().Add(5 * time.Second))
	// Anything but Hello first is a protocol violation: the worker tears down, exit 2.
	w.Control.Send(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Shutdown{Shutdown: &cuav1.Shutdown{}}}, nil)
	f, _, _ := w.Control.Recv()
	fmt.Println(wire.KindOf(f), f.GetError().GetCode())
	<-w.Exited()
	code, _ := w.ExitCode()
	fmt.Println("exit status", code)
	// Output:
	// Error invalid_request
	// exit status 2
}
