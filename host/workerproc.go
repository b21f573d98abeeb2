package host

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// WorkerProcess is a worker started through the host's spawn path with no handshake: the
// caller holds the other end of its control channel, and nothing in this package reads,
// writes or interprets it. It is the seam for harnesses that must drive that channel by
// hand (host/hosttest builds its RawWorker on it); programs that want a working worker use
// Start.
//
// Its methods are safe for concurrent use.
type WorkerProcess struct {
	proc  *process
	log   *slog.Logger
	grace time.Duration
	// stderrDone is closed once the worker's stderr reached end-of-file.
	stderrDone chan struct{}
	stopOnce   sync.Once
}

// SpawnWorker starts a worker exactly as Start does (the same binary resolution and SHA-256
// pin, environment allowlist, inherited-descriptor allowlist, own process group, Pdeathsig
// SIGKILL from a thread held for the child's life, stderr capture) with control as its
// control channel (contract.WorkerControlFD), and returns without a handshake: the worker
// waits for Hello (Options.StartTimeout does not apply; the worker's own Hello timeout
// does). SpawnWorker takes ownership of control: this process's copy is closed before it
// returns, whatever happens.
//
// The worker's stderr is forwarded to opts.Logger as Start does and, when stderr is not
// nil, copied to it as it is read. ctx bounds the spawn only. On error nothing is left
// running.
func SpawnWorker(ctx context.Context, opts Options, control *os.File, stderr io.Writer) (*WorkerProcess, error) {
	if err := ctx.Err(); err != nil {
		control.Close()
		return nil, fmt.Errorf("spawn worker process: %w", err)
	}
	opts.setDefaults()
	c, err := workerChild(opts, "raw worker", control)
	if err != nil {
		return nil, fmt.Errorf("spawn worker process: %w", err)
	}
	proc, stderrR, err := spawn(opts.Logger, c)
	if err != nil {
		return nil, fmt.Errorf("spawn worker process: %w", err)
	}
	p := &WorkerProcess{proc: proc, log: opts.Logger, grace: opts.CloseGrace, stderrDone: make(chan struct{})}
	var logs io.Reader = stderrR
	if stderr != nil {
		logs = io.TeeReader(stderrR, stderr)
	}
	go func() {
		defer close(p.stderrDone)
		defer stderrR.Close()
		forwardLogs(opts.Logger, proc.pid, logs)
	}()
	return p, nil
}

// PID returns the worker's process id (also its process group id).
func (p *WorkerProcess) PID() int { return p.proc.pid }

// Exited is closed once the worker has exited and been reaped.
func (p *WorkerProcess) Exited() <-chan struct{} { return p.proc.exited }

// State returns how the worker ended once Exited is closed, and nil before.
func (p *WorkerProcess) State() *os.ProcessState {
	select {
	case <-p.proc.exited:
		return p.proc.state
	default:
		return nil
	}
}

// StderrDone is closed once the worker's stderr reached end-of-file. A grandchild that
// inherited the worker's stderr keeps it open.
func (p *WorkerProcess) StderrDone() <-chan struct{} { return p.stderrDone }

// Kill sends SIGKILL to the worker's process group and returns without waiting; Exited is
// closed once it has been reaped. Safe to repeat.
func (p *WorkerProcess) Kill() { p.proc.killGroup() }

// Stop ends the worker as Host.Close does once the control channel is closed (the caller
// closes its end first, so the worker sees end-of-file): it waits up to
// Options.CloseGrace for the exit, then kills the worker's process group, reaps it and
// waits up to a second for its stderr to drain. It is idempotent.
func (p *WorkerProcess) Stop() {
	p.stopOnce.Do(func() {
		t := time.NewTimer(p.grace)
		select {
		case <-p.proc.exited:
		case <-t.C:
		}
		t.Stop()
		p.proc.killGroup()
		<-p.proc.exited
		drain := time.NewTimer(time.Second)
		select {
		case <-p.stderrDone:
		case <-drain.C:
		}
		drain.Stop()
		p.log.Debug("raw worker reaped", "pid", p.proc.pid, "state", stateString(p.proc.state))
	})
}
