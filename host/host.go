package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/policy"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// ErrWorkerGone is returned (wrapped) by requests made after the worker exited or the
// control channel broke.
var ErrWorkerGone = errors.New("host: worker is gone")

// Host is a running worker and its control channel. Its methods are safe for concurrent use.
type Host struct {
	opts Options
	log  *slog.Logger
	ctrl *wire.ControlConn
	proc *process
	// journal records the calls; nil without Options.Journal.
	journal *hostJournal

	// Set before Start returns and immutable afterwards.
	generation   []byte
	version      uint32
	capabilities []string
	readyAt      time.Time

	// readerDone is closed when the control reader stops; readerStarted says whether it
	// was started (only after a successful handshake, before Start returns).
	readerDone chan struct{}
	// seatsDone is closed once the input devices the worker left on the display, if any,
	// were removed after it exited.
	seatsDone     chan struct{}
	readerStarted bool
	// logsDone is closed when the worker's stderr has been drained.
	logsDone chan struct{}

	// mu guards the fields below.
	mu       sync.Mutex
	nextCall uint64
	waiters  map[uint64]chan *cuav1.ControlFrame
	dead     error // why the control channel ended; set once
	closed   bool
	// ending is set once Shutdown or Close began; lost is set when the control channel
	// ended before that (the worker crashed or was killed).
	ending   bool
	lost     bool
	sessions map[string]*Session

	closeOnce sync.Once
	// person watches the person's use of a nested display (Options.Person); its zero
	// value watches nothing.
	person personWatch
	// consentWG counts consent callbacks in flight.
	consentWG sync.WaitGroup
	// consentCtx is cancelled by Close so callbacks stop.
	consentCtx    context.Context
	consentCancel context.CancelFunc
}

// Start spawns a worker, sends Hello and waits for Ready. On error nothing is left running.
func Start(ctx context.Context, opts Options) (h *Host, err error) {
	opts.setDefaults()
	if err := opts.Ceiling.Validate(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	generation := make([]byte, contract.GenerationLen)
	if _, err := rand.Read(generation); err != nil {
		return nil, fmt.Errorf("start worker: generation: %w", err)
	}

	var jr *hostJournal
	if opts.Journal != nil {
		if jr, err = openJournal(opts.Journal, opts.Logger); err != nil {
			return nil, fmt.Errorf("start worker: %w", err)
		}
		defer func() {
			if err != nil && h == nil {
				jr.close(false)
			}
		}()
	}
	if opts.secretService, err = secretService(opts); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	var secrets *os.File
	if opts.SecretsDir != "" {
		if secrets, err = openSecretsDir(opts.SecretsDir); err != nil {
			return nil, fmt.Errorf("start worker: %w", err)
		}
		defer func() {
			if secrets != nil {
				secrets.Close() // not handed to spawn
			}
		}()
	}
	hostEnd, childEnd, err := wire.ControlPair()
	if err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	ctrl, err := wire.NewControlConn(hostEnd)
	if err != nil {
		childEnd.Close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	defer func() {
		if err != nil {
			ctrl.Close()
		}
	}()
	c, err := workerChild(opts, "worker", childEnd)
	if err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	if secrets != nil {
		c.files = append(c.files, inherited{contract.WorkerCredentials, secrets}) // spawn takes ownership
		secrets = nil
	}
	// spawn closes our copy of the child's end at once: a worker that dies before Ready
	// must be seen to close the channel.
	proc, stderrR, err := spawn(opts.Logger, c)
	if err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}

	h = &Host{
		opts:       opts,
		log:        opts.Logger,
		ctrl:       ctrl,
		proc:       proc,
		journal:    jr,
		generation: generation,
		readerDone: make(chan struct{}),
		logsDone:   make(chan struct{}),
		seatsDone:  make(chan struct{}),
		waiters:    map[uint64]chan *cuav1.ControlFrame{},
		sessions:   map[string]*Session{},
	}
	h.consentCtx, h.consentCancel = context.WithCancel(context.Background())
	go func() {
		defer close(h.logsDone)
		defer stderrR.Close()
		forwardLogs(opts.Logger, proc.pid, stderrR)
	}()
	go h.removeSeatsAfterExit()
	if err := h.handshake(ctx); err != nil {
		h.stop() // kills and reaps the worker, drains its stderr, ends the journal
		return nil, err
	}
	if h.journal != nil {
		// Two batches: the next is granted once one is spent, so the worker does not run
		// out while the refill travels.
		h.grantJournalCredits(2)
	}
	h.readerStarted = true
	go h.read()
	if opts.Person != nil {
		if err := h.watchPerson(ctx); err != nil {
			h.Close()
			return nil, fmt.Errorf("start worker: %w", err)
		}
	}
	return h, nil
}

// workerChild describes a worker to spawn with its control channel's end control (at
// contract.WorkerControlFD), its stderr captured. It takes ownership of control: on error
// it is closed, otherwise spawn closes it.
func workerChild(opts Options, role string, control *os.File) (child, error) {
	c := child{
		role:          role,
		path:          opts.WorkerPath,
		args:          opts.WorkerArgs,
		envOverrides:  opts.Env,
		files:         []inherited{{contract.WorkerControl, control}},
		captureStderr: true,
	}
	if c.path == "" {
		c.path = "/proc/self/exe"
		if c.args == nil {
			c.args = []string{contract.WorkerSubcommand}
		}
	}
	c.args = append([]string{"cua-worker"}, c.args...)
	c.args = append(c.args, contract.WorkerFlags{LogLevel: opts.WorkerLogLevel}.Args()...)
	if opts.WorkerSHA256 != "" {
		f, err := openPinned(c.path, opts.WorkerSHA256)
		if err != nil {
			control.Close()
			return child{}, err
		}
		c.pinned = f
	}
	return c, nil
}

func envNames(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := cutEq(kv)
		out = append(out, k)
	}
	return out
}

func cutEq(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// handshake sends Hello and waits for Ready within StartTimeout.
func (h *Host) handshake(ctx context.Context) error {
	hello := &cuav1.Hello{
		MinVersion:    contract.MinProtocolVersion,
		MaxVersion:    contract.MaxProtocolVersion,
		Generation:    h.generation,
		Ceiling:       authz.CeilingToProto(h.opts.Ceiling),
		Policy:        policyToProto(h.opts.Policy),
		Display:       &cuav1.DisplayFacts{Name: h.opts.Display.Name, Private: h.opts.Display.Private, Nested: h.opts.Display.Nested, ServerPid: int32(h.opts.Display.ServerPID)},
		ProtectedPids: []int32{int32(os.Getpid())},
		Journal:       journalConfig(h.opts.Journal),
		Sandbox:       sandboxConfig(h.opts),
	}
	if h.opts.SecretsDir != "" {
		hello.Credentials = &cuav1.Credentials{Directory: true}
	}
	if h.opts.secretService != nil {
		hello.Credentials = &cuav1.Credentials{SecretService: h.opts.secretService}
	}
	for _, pid := range h.opts.ProtectedPIDs {
		hello.ProtectedPids = append(hello.ProtectedPids, int32(pid))
	}
	if h.opts.ProtectAncestors {
		for _, pid := range AncestorPIDs() {
			hello.ProtectedPids = append(hello.ProtectedPids, int32(pid))
		}
	}
	if h.opts.Display.ServerPID > 0 {
		hello.ProtectedPids = append(hello.ProtectedPids, int32(h.opts.Display.ServerPID))
	}
	frame := &cuav1.ControlFrame{ProtocolVersion: contract.MaxProtocolVersion, Body: &cuav1.ControlFrame_Hello{Hello: hello}}
	if err := h.ctrl.Send(frame, nil); err != nil {
		return fmt.Errorf("start worker: send Hello: %w", err)
	}

	type recvd struct {
		frame *cuav1.ControlFrame
		err   error
	}
	ch := make(chan recvd, 1)
	go func() {
		f, fd, err := h.ctrl.Recv()
		if fd != nil {
			fd.Close()
		}
		ch <- recvd{f, err}
	}()
	timer := time.NewTimer(h.opts.StartTimeout)
	defer timer.Stop()
	var r recvd
	select {
	case r = <-ch:
	case <-timer.C:
		h.ctrl.CloseRead()
		<-ch
		return fmt.Errorf("start worker: no Ready within %v", h.opts.StartTimeout)
	case <-ctx.Done():
		h.ctrl.CloseRead()
		<-ch
		return fmt.Errorf("start worker: %w", ctx.Err())
	}
	if r.err != nil {
		return fmt.Errorf("start worker: await Ready: %w", r.err)
	}
	switch b := r.frame.GetBody().(type) {
	case *cuav1.ControlFrame_Ready:
		v := b.Ready.GetVersion()
		if v < contract.MinProtocolVersion || v > contract.MaxProtocolVersion || r.frame.GetProtocolVersion() != v {
			return fmt.Errorf("start worker: worker chose protocol version %d outside [%d, %d]", v, contract.MinProtocolVersion, contract.MaxProtocolVersion)
		}
		if int(b.Ready.GetPid()) != h.proc.pid {
			return fmt.Errorf("start worker: Ready names pid %d, spawned %d", b.Ready.GetPid(), h.proc.pid)
		}
		h.version = v
		h.capabilities = b.Ready.GetCapabilities()
		h.readyAt = time.Now()
		h.log.Debug("worker ready", "pid", h.proc.pid, "version", v, "capabilities", h.capabilities)
		return nil
	case *cuav1.ControlFrame_Error:
		return fmt.Errorf("start worker: worker refused Hello: %s: %s", b.Error.GetCode(), b.Error.GetMessage())
	default:
		return fmt.Errorf("start worker: expected Ready, got %s", wire.KindOf(r.frame))
	}
}

func policyToProto(set *policy.Set) *cuav1.PolicySnapshot {
	if set == nil || (set.Managed() == nil && set.User() == nil) {
		return nil
	}
	layer := func(l *policy.Layer) *cuav1.PolicyLayer {
		if l == nil {
			return nil
		}
		out := &cuav1.PolicyLayer{Kind: l.Kind().String(), Sha256: l.SHA256()}
		for _, f := range l.Files() {
			out.Files = append(out.Files, &cuav1.PolicyFile{Name: f.Name, Data: f.Data})
		}
		return out
	}
	return &cuav1.PolicySnapshot{Managed: layer(set.Managed()), User: layer(set.User())}
}

// PID returns the worker's process id.
func (h *Host) PID() int { return h.proc.pid }

// Generation returns the worker's generation in hex.
func (h *Host) Generation() string { return hex.EncodeToString(h.generation) }

// ProtocolVersion returns the negotiated protocol version.
func (h *Host) ProtocolVersion() uint32 { return h.version }

// Capabilities returns the backends the worker reported available in Ready.
func (h *Host) Capabilities() []string { return append([]string(nil), h.capabilities...) }

// Exited is closed once the worker process has exited and been reaped.
func (h *Host) Exited() <-chan struct{} { return h.proc.exited }

// Err reports why the control channel ended, or nil while the worker is serving.
func (h *Host) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dead
}

// read is the control channel's one reader: it routes replies to waiters and serves
// consent requests.
func (h *Host) read() {
	defer close(h.readerDone)
	for {
		frame, fd, err := h.ctrl.Recv()
		if err != nil {
			h.fail(err)
			return
		}
		if fd != nil { // wire only lets descriptors through on CreateSession
			fd.Close()
		}
		if frame.GetProtocolVersion() != h.version {
			h.fail(&wire.ViolationError{Reason: "wrong_version", Detail: fmt.Sprintf("%s with version %d", wire.KindOf(frame), frame.GetProtocolVersion())})
			h.ctrl.Close()
			return
		}
		switch b := frame.GetBody().(type) {
		case *cuav1.ControlFrame_SessionCreated:
			h.journal.created(b.SessionCreated) // before any entry of the session is read
			h.deliver(frame)
		case *cuav1.ControlFrame_Revoked:
			h.journal.revoked(b.Revoked.GetLabels())
			h.deliver(frame)
		case *cuav1.ControlFrame_JournalEntry:
			if h.journal == nil {
				h.fail(&wire.ViolationError{Reason: "unexpected_kind", Detail: "JournalEntry from a worker that keeps no journal"})
				h.ctrl.Close()
				return
			}
			h.serveJournal(frame.GetCallId(), b.JournalEntry)
		case *cuav1.ControlFrame_Error:
			if frame.GetCallId() == 0 {
				h.log.Warn("worker reported an error", "code", b.Error.GetCode(), "message", b.Error.GetMessage())
				continue
			}
			h.deliver(frame)
		case *cuav1.ControlFrame_ConsentRequest:
			h.serveConsent(frame.GetCallId(), b.ConsentRequest)
		case *cuav1.ControlFrame_WorkerStatus:
			h.deliver(frame)
		default:
			h.fail(&wire.ViolationError{Reason: "unexpected_kind", Detail: wire.KindOf(frame) + " from the worker after Ready"})
			h.ctrl.Close()
			return
		}
	}
}

func (h *Host) deliver(frame *cuav1.ControlFrame) {
	h.mu.Lock()
	ch := h.waiters[frame.GetCallId()]
	delete(h.waiters, frame.GetCallId())
	h.mu.Unlock()
	if ch == nil {
		h.log.Debug("control reply for no pending request", "kind", wire.KindOf(frame), "call_id", frame.GetCallId())
		return
	}
	ch <- frame
}

func (h *Host) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dead == nil {
		h.dead = fmt.Errorf("%w: %v", ErrWorkerGone, err)
		h.lost = !h.closed && !h.ending
		if !errors.Is(err, wire.ErrClosed) || !h.closed {
			h.log.Debug("control channel ended", "err", err)
		}
	}
	for id, ch := range h.waiters {
		close(ch)
		delete(h.waiters, id)
	}
}

// request sends a control request (with fd attached when not nil) and waits for its reply.
func (h *Host) request(ctx context.Context, frame *cuav1.ControlFrame, fd *os.File) (*cuav1.ControlFrame, error) {
	h.mu.Lock()
	if h.dead != nil {
		err := h.dead
		h.mu.Unlock()
		return nil, err
	}
	if h.closed {
		h.mu.Unlock()
		return nil, fmt.Errorf("%w: host closed", ErrWorkerGone)
	}
	h.nextCall++
	id := h.nextCall
	ch := make(chan *cuav1.ControlFrame, 1)
	h.waiters[id] = ch
	h.mu.Unlock()

	frame.ProtocolVersion = h.version
	frame.CallId = id
	if err := h.ctrl.Send(frame, fd); err != nil {
		h.forget(id)
		return nil, fmt.Errorf("send %s: %w", wire.KindOf(frame), err)
	}
	select {
	case reply, ok := <-ch:
		if !ok {
			return nil, h.Err()
		}
		if e := reply.GetError(); e != nil {
			return nil, &RequestError{Code: e.GetCode(), Message: e.GetMessage()}
		}
		return reply, nil
	case <-ctx.Done():
		h.forget(id)
		return nil, ctx.Err()
	}
}

func (h *Host) forget(id uint64) {
	h.mu.Lock()
	delete(h.waiters, id)
	h.mu.Unlock()
}

// RequestError is the worker's refusal of a control request.
type RequestError struct {
	Code    string
	Message string
}

// Error implements error.
func (e *RequestError) Error() string { return e.Code + ": " + e.Message }

// Shutdown asks the worker to revoke every session and exit, and waits for it to exit or
// ctx to end; then it releases everything as Close does.
func (h *Host) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	live := h.dead == nil && !h.closed
	h.ending = true
	h.mu.Unlock()
	if live {
		frame := &cuav1.ControlFrame{ProtocolVersion: h.version, Body: &cuav1.ControlFrame_Shutdown{Shutdown: &cuav1.Shutdown{}}}
		if err := h.ctrl.Send(frame, nil); err == nil {
			select {
			case <-h.proc.exited:
			case <-ctx.Done():
			}
		}
	}
	return h.Close()
}

// Close ends the worker: it closes the control channel (the worker sees end-of-file,
// revokes every session and exits), waits up to CloseGrace, then kills the worker's process
// group and reaps it. Every Session of this host sees end-of-file or NOT_STARTED
// authorization_revoked afterwards. Close is idempotent and returns once the worker has been
// reaped.
func (h *Host) Close() error {
	h.closeOnce.Do(h.stop)
	return nil
}

// startFailGrace bounds the wait for the exit of a worker that failed to start.
const startFailGrace = 500 * time.Millisecond

func (h *Host) stop() {
	h.person.stop()
	h.mu.Lock()
	h.closed = true
	h.ending = true
	sessions := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()

	if h.journal != nil && h.readerStarted {
		// The worker sees end-of-file as before, and the reader keeps reading until the
		// worker is gone: the entries it sends while it tears down reach the journal.
		h.ctrl.CloseWrite()
	} else {
		h.ctrl.Close()
	}
	grace := h.opts.CloseGrace
	if !h.readerStarted {
		// The worker never said Ready: it sent no input, so it has no keyboard rows to
		// put back before it exits.
		grace = min(grace, startFailGrace)
	}
	t := time.NewTimer(grace)
	killed := false
	select {
	case <-h.proc.exited:
	case <-t.C:
		killed = true
		h.log.Warn("worker did not exit after end-of-file; killing its process group", "pid", h.proc.pid, "grace", grace)
	}
	t.Stop()
	h.proc.killGroup()
	<-h.proc.exited
	if h.readerStarted {
		<-h.readerDone
	}
	h.ctrl.Close()
	h.consentCancel()
	h.consentWG.Wait()
	<-h.logsDone
	<-h.seatsDone
	h.mu.Lock()
	// The worker was lost when its channel broke before the host let it go, or when it
	// ended by a signal or an error status that the host did not cause.
	lost := h.lost || (!killed && abnormalExit(h.proc.state))
	h.mu.Unlock()
	h.journal.close(lost)
	for _, s := range sessions {
		s.hostClosed()
	}
	h.log.Debug("worker reaped", "pid", h.proc.pid, "state", stateString(h.proc.state))
}

// abnormalExit reports whether a process ended by a signal or with a non-zero status.
func abnormalExit(s *os.ProcessState) bool {
	if s == nil {
		return false
	}
	if ws, ok := s.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return true
	}
	return s.ExitCode() != 0
}

func stateString(s *os.ProcessState) string {
	if s == nil {
		return "unknown"
	}
	return s.String()
}

var _ io.Closer = (*Host)(nil)
