package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
)

// ErrShutdown is returned by Run when the host asked the worker to shut down.
var ErrShutdown = errors.New("worker: shutdown requested")

// worker is one running worker. Lock order: w.mu before session.mu.
type worker struct {
	cfg  Config
	log  *slog.Logger
	ctrl *wire.ControlConn

	// Set by the handshake and immutable afterwards.
	version    uint32
	generation []byte
	ceiling    authz.Ceiling
	hello      *cuav1.Hello
	reg        *tool.Registry
	closer     io.Closer
	authorizer *authorizer
	deadlines  *deadlines
	// journal reports calls to the host's journal; nil when the host keeps none.
	journal *journalReporter

	// personActive is the host's latest PersonActivity: the person is using the nested
	// display, and acting calls are refused (takeover.go).
	personActive atomic.Bool

	// baseCtx is the parent of every call's context; stopping cancels it.
	baseCtx    context.Context
	baseCancel context.CancelFunc

	// mu guards the fields below.
	mu             sync.Mutex
	sessions       map[string]*session
	stopping       bool
	nextCallID     uint64
	consentWaiters map[uint64]chan consentReply

	// wg counts session readers and call goroutines.
	wg sync.WaitGroup
}

// Run serves the control channel ctrl until it reaches end-of-file, the host sends
// Shutdown, a protocol violation occurs, or ctx is done. It takes ownership of ctrl and
// closes it. Run returns nil on end-of-file, ErrShutdown on Shutdown, a *wire.ViolationError
// (wrapped) on a protocol violation, and another error when the handshake fails.
func Run(ctx context.Context, ctrl *wire.ControlConn, cfg Config) error {
	cfg.setDefaults()
	w := &worker{
		cfg:            cfg,
		log:            cfg.Logger,
		ctrl:           ctrl,
		sessions:       map[string]*session{},
		consentWaiters: map[uint64]chan consentReply{},
	}
	w.baseCtx, w.baseCancel = context.WithCancel(context.WithoutCancel(ctx))
	defer w.baseCancel()
	w.deadlines = newDeadlines(cfg.Now)
	defer w.deadlines.stop()

	// ctx cancellation unblocks the reader.
	stopWatch := context.AfterFunc(ctx, func() { ctrl.CloseRead() })
	defer stopWatch()

	if err := w.handshake(ctx); err != nil {
		w.teardown(err)
		if errors.Is(err, wire.ErrClosed) && ctx.Err() == nil {
			return nil // the host went away before Hello: end-of-file, like any other time
		}
		return err
	}
	err := w.serveControl()
	w.teardown(err)
	if errors.Is(err, wire.ErrClosed) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil
	}
	return err
}

// serveControl reads control frames until an error ends the channel.
func (w *worker) serveControl() error {
	for {
		frame, fd, err := w.ctrl.Recv()
		if err != nil {
			return err
		}
		if frame.GetProtocolVersion() != w.version {
			if fd != nil {
				fd.Close()
			}
			return &wire.ViolationError{Reason: "wrong_version", Detail: fmt.Sprintf("%s carries protocol version %d, negotiated %d", wire.KindOf(frame), frame.GetProtocolVersion(), w.version)}
		}
		switch body := frame.GetBody().(type) {
		case *cuav1.ControlFrame_CreateSession:
			w.createSession(frame.GetCallId(), body.CreateSession, fd)
		case *cuav1.ControlFrame_RevokeSession:
			w.revokeSession(frame.GetCallId(), body.RevokeSession)
		case *cuav1.ControlFrame_ConsentDecision:
			w.deliverConsent(frame.GetCallId(), consentReply{decision: body.ConsentDecision})
		case *cuav1.ControlFrame_Error:
			// The host answers a ConsentRequest it could put to no one, or a journal entry
			// it could not record, with an error.
			if !w.journal.deliver(frame.GetCallId(), body.Error) {
				w.deliverConsent(frame.GetCallId(), consentReply{err: body.Error})
			}
		case *cuav1.ControlFrame_JournalAck:
			w.journal.deliver(frame.GetCallId(), nil) // one for no entry of ours is dropped
		case *cuav1.ControlFrame_StatusRequest:
			w.status(frame.GetCallId())
		case *cuav1.ControlFrame_PersonActivity:
			w.setPersonActive(body.PersonActivity.GetActive())
		case *cuav1.ControlFrame_Shutdown:
			return ErrShutdown
		default:
			// Hello again, or a frame only the worker sends.
			return &wire.ViolationError{Reason: "unexpected_kind", Detail: fmt.Sprintf("%s is not valid from the host after Ready", wire.KindOf(frame))}
		}
	}
}

// teardown revokes every session, cancels in-flight calls, releases held input, waits a
// bounded time for handlers and closes every channel. It is called once, by Run.
func (w *worker) teardown(cause error) {
	if v, ok := wire.IsViolation(cause); ok {
		w.log.Warn("control channel protocol violation; tearing down", "reason", v.Reason, "detail", v.Detail)
		w.sendControl(0, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_Error{Error: &cuav1.ControlError{
			Code: string(authz.CodeInvalidRequest), Message: truncateMessage(v.Error()),
		}}}, nil)
	}
	w.mu.Lock()
	w.stopping = true
	sessions := make([]*session, 0, len(w.sessions))
	for _, s := range w.sessions {
		sessions = append(sessions, s)
	}
	for id, ch := range w.consentWaiters {
		close(ch)
		delete(w.consentWaiters, id)
	}
	w.mu.Unlock()
	w.journal.abort()

	code := authz.CodeAuthorizationRevoked
	for _, s := range sessions {
		s.revoke(code, "the host ended the worker")
		s.conn.Close()
	}
	w.baseCancel()
	if w.reg != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		w.reg.Release(rctx)
		cancel()
	}
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.cfg.DrainTimeout):
		w.log.Warn("in-flight handlers did not stop in time; exiting anyway", "timeout", w.cfg.DrainTimeout)
	}
	if w.closer != nil {
		if err := w.closer.Close(); err != nil {
			w.log.Debug("close backends", "err", err)
		}
	}
	if w.authorizer != nil {
		w.authorizer.res.procs.close()
	}
	w.ctrl.Close()
}

// sendControl sends a control frame stamped with the negotiated version (or 1 before the
// handshake). Errors are logged; the reader notices a dead channel on its own.
func (w *worker) sendControl(callID uint64, frame *cuav1.ControlFrame, fd *os.File) bool {
	frame.ProtocolVersion = w.version
	if frame.ProtocolVersion == 0 {
		frame.ProtocolVersion = contract.MinProtocolVersion
	}
	frame.CallId = callID
	if err := w.ctrl.Send(frame, fd); err != nil {
		w.log.Debug("send control frame", "kind", wire.KindOf(frame), "err", err)
		return false
	}
	return true
}

func (w *worker) controlError(callID uint64, code authz.Code, format string, args ...any) {
	msg := truncateMessage(fmt.Sprintf(format, args...))
	w.log.Info("control request refused", "code", code, "message", msg)
	w.sendControl(callID, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_Error{Error: &cuav1.ControlError{Code: string(code), Message: msg}}}, nil)
}

// maxErrorMessage bounds the message of an Error frame, so an error that quotes its input
// never makes the reply itself too big to send.
const maxErrorMessage = 1024

func truncateMessage(msg string) string {
	if len(msg) <= maxErrorMessage {
		return msg
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}
