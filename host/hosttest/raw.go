// Package hosttest spawns workers for tests and harnesses that must drive a worker's
// control channel by hand — control-frame fuzzers, fault injectors, soak tests — in the
// way net/http/httptest serves net/http's tests. It starts workers through the host's real
// spawn path (host.SpawnWorker) and is never linked into a shipped binary (the module's
// import-rules test fails if a production package depends on it).
package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/proto/wire"
)

// MaxRawStderr bounds what a RawWorker keeps of its worker's stderr: the first
// rawStderrHead bytes and the last MaxRawStderr-rawStderrHead bytes (a Go panic trace
// ends the stream, so the tail is what matters).
const MaxRawStderr = 4 << 20

// rawStderrHead is how much of the beginning of the worker's stderr is kept.
const rawStderrHead = 64 << 10

// RawWorker is a worker process spawned through the host's real spawn path (the same
// binary resolution and SHA-256 pin, environment allowlist, inherited-descriptor
// allowlist, own process group, Pdeathsig SIGKILL from a thread held for the child's life,
// stderr capture) whose control channel the caller drives itself: no Hello is sent, no
// reader runs, nothing interprets what the worker says.
//
// It is for harnesses — control-frame fuzzers, fault injectors, soak tests — that must
// send what a well-behaved host never would and watch how the worker reacts. Programs
// that want a working worker use host.Start.
//
// Its methods are safe for concurrent use, except that Control follows the rules of
// wire.ControlConn (one reader at a time).
type RawWorker struct {
	// Control is the host's end of the control channel; the worker's end is its fd 3.
	// RawWorker owns it: Close closes it. The caller may Close it earlier to give the
	// worker end-of-file.
	Control *wire.ControlConn

	// ctrlFile is the descriptor Control was built on (wire keeps a pollable descriptor
	// as it is), used only for deadlines and socket options.
	ctrlFile *os.File
	proc     *host.WorkerProcess
	stderr   *boundedBuffer

	closeOnce sync.Once
}

// SpawnRaw starts a worker exactly as host.Start does and returns it without a handshake:
// the worker waits for Hello (Options.StartTimeout does not apply; the worker's own Hello
// timeout does). The worker's stderr is kept (see Stderr) and, like Start's, forwarded to
// opts.Logger. ctx bounds the spawn only. On error nothing is left running.
func SpawnRaw(ctx context.Context, opts host.Options) (w *RawWorker, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("spawn raw worker: %w", err)
	}
	hostEnd, childEnd, err := wire.ControlPair()
	if err != nil {
		return nil, fmt.Errorf("spawn raw worker: %w", err)
	}
	ctrl, err := wire.NewControlConn(hostEnd)
	if err != nil {
		childEnd.Close()
		return nil, fmt.Errorf("spawn raw worker: %w", err)
	}
	stderr := &boundedBuffer{}
	proc, err := host.SpawnWorker(ctx, opts, childEnd, stderr)
	if err != nil {
		ctrl.Close()
		return nil, fmt.Errorf("spawn raw worker: %w", err)
	}
	return &RawWorker{Control: ctrl, ctrlFile: hostEnd, proc: proc, stderr: stderr}, nil
}

// PID returns the worker's process id (also its process group id).
func (w *RawWorker) PID() int { return w.proc.PID() }

// Exited is closed once the worker has exited and been reaped.
func (w *RawWorker) Exited() <-chan struct{} { return w.proc.Exited() }

// ExitCode returns the worker's exit status once it has exited: its exit code, or -1 when
// a signal ended it (see Signal). Before the exit it returns -1 and false.
func (w *RawWorker) ExitCode() (code int, exited bool) {
	select {
	case <-w.proc.Exited():
	default:
		return -1, false
	}
	state := w.proc.State()
	if state == nil {
		return -1, true
	}
	return state.ExitCode(), true
}

// Signal returns the signal that ended the worker, if one did. It reports false while
// the worker runs and when it exited on its own.
func (w *RawWorker) Signal() (syscall.Signal, bool) {
	state := w.proc.State() // nil while the worker runs
	if state == nil {
		return 0, false
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}

// Stderr returns what the worker wrote to stderr so far (bounded by MaxRawStderr; a cut
// is marked). After Exited is closed, WaitStderr returns the complete stream.
func (w *RawWorker) Stderr() string { return w.stderr.String() }

// WaitStderr waits until the worker's stderr reached end-of-file or timeout passed, and
// returns Stderr. A grandchild that inherited the worker's stderr keeps it open.
func (w *RawWorker) WaitStderr(timeout time.Duration) string {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.proc.StderrDone():
	case <-t.C:
	}
	return w.Stderr()
}

// SetDeadline sets the read and write deadline of Control: a Recv or Send blocked past t
// returns an error for which wire.IsTimeout is true, and the channel stays usable. Zero
// clears it.
func (w *RawWorker) SetDeadline(t time.Time) error { return w.ctrlFile.SetDeadline(t) }

// SetReadDeadline sets the deadline for Control.Recv alone (see SetDeadline).
func (w *RawWorker) SetReadDeadline(t time.Time) error { return w.ctrlFile.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline for Control.Send and SendRaw alone (see SetDeadline).
func (w *RawWorker) SetWriteDeadline(t time.Time) error { return w.ctrlFile.SetWriteDeadline(t) }

// ForceSendBuffer sets the control socket's send buffer to n bytes, bypassing
// net.core.wmem_max when the process may (CAP_NET_ADMIN, SO_SNDBUFFORCE), so a harness
// can send datagrams larger than wire.MaxControlFrame; it returns the size the kernel
// granted. Frames sent with Control.Send are still checked against the buffer measured
// at spawn.
func (w *RawWorker) ForceSendBuffer(n int) (int, error) {
	rc, err := w.ctrlFile.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("control socket: %w", err)
	}
	var granted int
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		if e := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, n); e != nil {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, n)
		}
		granted, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	if cerr != nil {
		return 0, fmt.Errorf("control socket: %w", cerr)
	}
	if serr != nil {
		return 0, fmt.Errorf("control socket send buffer: %w", serr)
	}
	return granted, nil
}

// SendSignal sends sig to the worker process alone (for example SIGSTOP and SIGCONT).
func (w *RawWorker) SendSignal(sig syscall.Signal) error {
	select {
	case <-w.proc.Exited():
		return fmt.Errorf("signal worker %d: %w", w.proc.PID(), os.ErrProcessDone)
	default:
	}
	return unix.Kill(w.proc.PID(), sig)
}

// Kill sends SIGKILL to the worker's process group and returns without waiting; Exited
// is closed once it has been reaped. Safe to repeat.
func (w *RawWorker) Kill() { w.proc.Kill() }

// Close stops the worker as host.Host.Close does: it closes Control (the worker sees
// end-of-file), waits up to Options.CloseGrace for the exit, then kills the worker's
// process group, reaps it and waits (boundedly) for its stderr to drain. It is idempotent.
func (w *RawWorker) Close() error {
	w.closeOnce.Do(func() {
		w.Control.Close()
		w.proc.Stop()
	})
	return nil
}

var _ io.Closer = (*RawWorker)(nil)

// boundedBuffer keeps the head and the tail of what is written to it.
type boundedBuffer struct {
	// mu guards the fields below.
	mu   sync.Mutex
	head bytes.Buffer
	tail []byte // ring of the last bytes, in order
	cut  int64  // bytes dropped between head and tail
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := rawStderrHead - b.head.Len(); room > 0 {
		k := min(room, len(p))
		b.head.Write(p[:k])
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if limit := MaxRawStderr - rawStderrHead; len(b.tail) > limit {
		drop := len(b.tail) - limit
		b.cut += int64(drop)
		b.tail = append(b.tail[:0], b.tail[drop:]...)
	}
	return n, nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut == 0 {
		return b.head.String() + string(b.tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", b.head.String(), b.cut, b.tail)
}
