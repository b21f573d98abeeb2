package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
)

// stackFailBudget bounds the graceful shutdown of a worker when StartStack fails after
// the worker is up.
const stackFailBudget = 3 * time.Second

// StackOptions configures StartStack.
type StackOptions struct {
	// Host configures the worker as for Start. StartStack adds the proxy's pid to
	// Host.ProtectedPIDs.
	Host Options
	// Proxy configures the MCP proxy as for StartProxy. Proxy.Session must be nil:
	// StartStack creates the session channel itself.
	Proxy ProxyOptions
	// Session is the one session bound to the proxy's channel.
	Session SessionSpec
	// HTTPToken is the loopback HTTP transport's bearer token, handed to the proxy in its
	// bootstrap line; empty for stdio.
	HTTPToken string
	// DetachStdio points this process's stdin and stdout at /dev/null once the proxy holds
	// the agent's stream (Proxy.Stdin and Proxy.Stdout), so that the host keeps no copy of
	// it and the agent sees end-of-file as soon as the proxy is gone.
	DetachStdio bool
	// BeforeSession, when set, runs once the worker is ready and before the session is
	// created, with the worker's host: it waits for what the display still had starting
	// while the proxy and the worker started (display.Display.WindowManagerReady) and
	// shows what the person must see before the agent acts. The proxy is activated before
	// it, so that the agent's handshake is answered meanwhile, but no call reaches the
	// worker before it has returned; an error ends StartStack.
	BeforeSession func(context.Context, *Host) error
}

// Stack is an MCP proxy serving one session of a worker: what `cua-host run` starts.
// Its methods are safe for concurrent use.
type Stack struct {
	proxy   *Proxy
	host    *Host
	session SessionInfo

	closeOnce sync.Once
}

// StartStack starts, in this order (docs/adr/0002-proxy-start-order-and-bootstrap.md): a
// session channel; the MCP proxy holding one end of it, so that its pid is protected from
// the worker's first frame on; the worker (Start); the session bound to the other end
// (CreateSessionOn); and the proxy's bootstrap line (Activate), after which the proxy
// serves the agent. With BeforeSession the bootstrap line comes first, then BeforeSession,
// then the session. On error nothing is left running.
func StartStack(ctx context.Context, opts StackOptions) (_ *Stack, err error) {
	if opts.Proxy.Session != nil {
		opts.Proxy.Session.Close()
		return nil, errors.New("start stack: ProxyOptions.Session is set; StartStack creates the session channel")
	}
	proxyEnd, workerEnd, err := wire.SessionPair()
	if err != nil {
		return nil, fmt.Errorf("start stack: %w", err)
	}
	defer workerEnd.Close() // CreateSessionOn hands it over; on an earlier error it goes here
	s := &Stack{}
	defer func() {
		if err != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stackFailBudget)
			s.Shutdown(sctx)
			cancel()
		}
	}()
	opts.Proxy.Session = proxyEnd
	if s.proxy, err = StartProxy(opts.Proxy); err != nil {
		return nil, err
	}
	if opts.DetachStdio && (opts.Proxy.Stdin != nil || opts.Proxy.Stdout != nil) {
		if err := detachStdio(); err != nil && opts.Proxy.Logger != nil {
			opts.Proxy.Logger.Warn("detach stdio", "err", err)
		}
	}
	opts.Host.ProtectedPIDs = append(append([]int(nil), opts.Host.ProtectedPIDs...), s.proxy.PID())
	if s.host, err = Start(ctx, opts.Host); err != nil {
		return nil, err
	}
	b := contract.Bootstrap{Generation: s.host.GenerationBytes(), Version: s.host.ProtocolVersion(), HTTPToken: opts.HTTPToken}
	if opts.BeforeSession != nil {
		// The proxy answers the agent's handshake while the display finishes starting;
		// what it sends the worker waits in the session channel until the session is bound.
		if err := s.proxy.Activate(b); err != nil {
			return nil, err
		}
		if err := opts.BeforeSession(ctx, s.host); err != nil {
			return nil, err
		}
	}
	if s.session, err = s.host.CreateSessionOn(ctx, opts.Session, workerEnd); err != nil {
		return nil, err
	}
	if opts.BeforeSession == nil {
		if err := s.proxy.Activate(b); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Proxy returns the MCP proxy.
func (s *Stack) Proxy() *Proxy { return s.proxy }

// Host returns the worker's host.
func (s *Stack) Host() *Host { return s.host }

// Session returns the session the proxy serves.
func (s *Stack) Session() SessionInfo { return s.session }

// Shutdown releases the proxy (no more agent calls), then asks the worker to revoke its
// sessions and exit, waiting for it up to ctx (Host.Shutdown). It is idempotent.
func (s *Stack) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.proxy != nil {
			s.proxy.Close()
		}
		if s.host != nil {
			s.host.Shutdown(ctx)
		}
	})
	return nil
}

// Close releases the proxy and closes the worker (Host.Close) at once. It is idempotent.
func (s *Stack) Close() error {
	s.closeOnce.Do(func() {
		if s.proxy != nil {
			s.proxy.Close()
		}
		if s.host != nil {
			s.host.Close()
		}
	})
	return nil
}

// detachStdio points this process's stdin and stdout at /dev/null.
func detachStdio() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	return errors.Join(unix.Dup3(int(null.Fd()), 0, 0), unix.Dup3(int(null.Fd()), 1, 0))
}
