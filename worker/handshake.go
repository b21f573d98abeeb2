package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
)

// errHelloTimeout reports that no Hello arrived in time.
var errHelloTimeout = errors.New("worker: no Hello from the host in time")

// handshake waits for Hello, checks it, builds the registry and answers Ready. Nothing runs
// before it returns nil.
func (w *worker) handshake(ctx context.Context) error {
	var timedOut atomic.Bool
	timer := time.AfterFunc(w.cfg.HelloTimeout, func() {
		timedOut.Store(true)
		w.ctrl.CloseRead()
	})
	frame, fd, err := w.ctrl.Recv()
	timer.Stop()
	if err != nil {
		if timedOut.Load() {
			return fmt.Errorf("%w (%v)", errHelloTimeout, w.cfg.HelloTimeout)
		}
		return fmt.Errorf("await Hello: %w", err)
	}
	if fd != nil {
		fd.Close()
		return &wire.ViolationError{Reason: "frame_before_hello", Detail: "CreateSession before Hello"}
	}
	body, ok := frame.GetBody().(*cuav1.ControlFrame_Hello)
	if !ok {
		return &wire.ViolationError{Reason: "frame_before_hello", Detail: fmt.Sprintf("%s before Hello", wire.KindOf(frame))}
	}
	hello := body.Hello
	version, err := negotiate(frame.GetProtocolVersion(), hello)
	if err != nil {
		w.controlError(0, authz.CodeUnsupportedProtocolVersion, "%v", err)
		return err
	}
	if len(hello.GetGeneration()) != contract.GenerationLen {
		return &wire.ViolationError{Reason: "bad_hello", Detail: fmt.Sprintf("generation is %d bytes, want %d", len(hello.GetGeneration()), contract.GenerationLen)}
	}
	ceiling, err := authz.CeilingFromProto(hello.GetCeiling())
	if err == nil {
		err = ceiling.Validate()
	}
	if err != nil {
		w.controlError(0, authz.CodeInvalidRequest, "invalid ceiling: %v", err)
		return fmt.Errorf("hello: invalid ceiling: %w", err)
	}
	authorizer, err := newAuthorizer(hello, &w.cfg)
	if err != nil {
		w.controlError(0, authz.CodeInvalidRequest, "%v", err)
		return fmt.Errorf("hello: %w", err)
	}

	w.version = version
	w.generation = append([]byte(nil), hello.GetGeneration()...)
	w.ceiling = ceiling
	w.hello = hello
	w.authorizer = authorizer

	reg := tool.NewRegistry()
	if w.cfg.NewRegistry != nil {
		r, closer, err := w.cfg.NewRegistry(ctx, hello, w.log)
		if err != nil {
			w.controlError(0, authz.CodeInvalidRequest, "start backends: %v", err)
			return fmt.Errorf("hello: start backends: %w", err)
		}
		if r != nil {
			reg = r
		}
		w.closer = closer
	}
	w.registerBuiltins(reg)
	w.reg = reg
	authorizer.bind(reg, w.closer)
	w.journal = newJournalReporter(w, hello.GetJournal())

	caps := []string{}
	for _, c := range reg.Capabilities() {
		if c.Available {
			caps = append(caps, c.Name)
		}
	}
	if !w.sendControl(0, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_Ready{Ready: &cuav1.Ready{
		Version: version, Pid: int32(os.Getpid()), Capabilities: caps,
	}}}, nil) {
		return fmt.Errorf("send Ready: %w", wire.ErrClosed)
	}
	w.log.Debug("ready", "version", version, "capabilities", caps)
	return nil
}

// negotiate picks the highest version both sides speak. The Hello frame itself must carry
// a version inside the range it announces.
func negotiate(frameVersion uint32, h *cuav1.Hello) (uint32, error) {
	lo, hi := h.GetMinVersion(), h.GetMaxVersion()
	if lo == 0 || lo > hi {
		return 0, fmt.Errorf("hello announces an invalid version range [%d, %d]", lo, hi)
	}
	if frameVersion < lo || frameVersion > hi {
		return 0, fmt.Errorf("hello frame version %d is outside its own range [%d, %d]", frameVersion, lo, hi)
	}
	best := min(hi, contract.MaxProtocolVersion)
	if best < max(lo, contract.MinProtocolVersion) {
		return 0, fmt.Errorf("no common protocol version: host speaks [%d, %d], worker speaks [%d, %d]", lo, hi, contract.MinProtocolVersion, contract.MaxProtocolVersion)
	}
	return best, nil
}
