package mcpproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
)

// Exit codes of a proxy process.
const (
	ExitOK    = 0
	ExitError = 1
	// ExitIdle says that the proxy exited because no call came within --idle-exit.
	ExitIdle  = contract.ProxyExitIdle
	ExitUsage = 64
)

// maxBootstrapLine bounds the bootstrap line (a 4096-character token fits many times).
const maxBootstrapLine = 64 << 10

// bootstrapTimeout bounds the wait for the host's bootstrap line.
const bootstrapTimeout = 2 * time.Minute

// gcPercent is the proxy's GOGC. The go-sdk (v1.8.0) decodes every JSON message with a
// fresh 32 KiB buffer (segmentio/encoding), several times per message: a tools/call round
// trip leaves ~0.4 MB of garbage on a live heap of a few MB, so the default GOGC of 100
// collects every few calls. Collecting less often costs a few tens of MB at most and takes
// the collector out of most round trips (scripts/bench-mcp.sh on a busy two-core machine:
// mean and p99 round trip about a third lower).
const gcPercent = 800

// exitGrace bounds how long Main waits for the MCP server to wind down once its
// lifetime is over.
const exitGrace = time.Second

// Main is a proxy process's entry point (the hidden contract.ProxySubcommand). It inherits
// its session channel at contract.ProxySessionFD and the bootstrap pipe at
// contract.ProxyBootstrapFD, waits for the bootstrap line, then serves MCP on stdio (or on a
// loopback HTTP listener with --http) until the agent closes stdin, the host releases it
// (end-of-file on the bootstrap pipe), the session channel ends, or SIGTERM. It returns
// the exit code. Logs go to stderr, never to stdout.
func Main(args []string, version string) int {
	flags, err := contract.ParseProxyFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cua-host mcp-proxy: %v\n", err)
		return ExitUsage
	}
	if flags.CallTimeout == 0 {
		flags.CallTimeout = DefaultCallTimeout
	}
	debug.SetGCPercent(gcPercent)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: flags.LogLevel})).With("component", "mcp-proxy", "pid", os.Getpid())
	bind := ""
	if flags.HTTP != "" {
		if bind, err = ParseListenAddr(flags.HTTP); err != nil {
			log.Error("bad --http", "err", err)
			return ExitUsage
		}
	}
	for _, d := range flags.Descriptors() {
		if err := d.Check(); err != nil {
			log.Error("missing inherited descriptor; a proxy is started by its host", "fd", d.FD, "want", d.Name, "err", err)
			return ExitUsage
		}
	}
	boot, err := wire.FileFromFD(contract.ProxyBootstrap.FD, contract.ProxyBootstrap.Name) // pollable, close-on-exec
	if err != nil {
		log.Error("open bootstrap pipe", "err", err)
		return ExitError
	}
	sessFile, err := wire.FileFromFD(contract.ProxySession.FD, contract.ProxySession.Name)
	if err != nil {
		log.Error("open session channel", "err", err)
		return ExitError
	}
	br := bufio.NewReaderSize(boot, 4096)
	b, err := readBootstrap(boot, br, bootstrapTimeout)
	if err != nil {
		log.Error("no bootstrap from the host", "err", err)
		return ExitError
	}
	if (bind != "" || flags.EndpointHTTP) && b.HTTPToken == "" {
		log.Error("--http or --endpoint-http without a token in the bootstrap")
		return ExitUsage
	}
	conn, err := client.New(sessFile, client.Options{Generation: b.Generation, Version: b.Version, Logger: log})
	if err != nil {
		log.Error("open session channel", "err", err)
		return ExitError
	}
	defer conn.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The host releases us by closing the bootstrap pipe (or by dying).
	go func() {
		_, _ = io.Copy(io.Discard, br)
		cancel(errReleased)
	}()
	// A session channel that ended will not come back.
	go func() {
		select {
		case <-conn.Done():
			cancel(errSessionGone)
		case <-ctx.Done():
		}
	}()

	var caller Caller = conn
	if flags.IdleExit > 0 {
		ic := newIdleCaller(conn, time.Now)
		caller = ic
		go func() {
			if ic.wait(ctx, flags.IdleExit) {
				cancel(errIdle)
			}
		}()
	}
	p := New(caller, Options{Logger: log, Version: version, CallTimeout: flags.CallTimeout})
	done := make(chan error, 2)
	if flags.Endpoint {
		ln, err := inheritedListener(contract.ProxyEndpoint.FD, contract.ProxyEndpoint.Name)
		if err != nil {
			log.Error("endpoint listener", "err", err)
			return ExitError
		}
		ul, ok := ln.(*net.UnixListener)
		if !ok {
			ln.Close()
			log.Error("endpoint listener is not a unix socket", "addr", ln.Addr())
			return ExitUsage
		}
		n := 1
		if flags.EndpointHTTP {
			n = 2
			hl, err := inheritedListener(contract.ProxyHTTPListener.FD, contract.ProxyHTTPListener.Name)
			if err != nil {
				ul.Close()
				log.Error("HTTP listener", "err", err)
				return ExitError
			}
			log.Info("serving MCP over streamable HTTP", "addr", "http://"+hl.Addr().String()+"/mcp")
			go func() { done <- p.ServeHTTP(ctx, hl, b.HTTPToken) }()
		}
		log.Debug("serving MCP on the session endpoint", "addr", ul.Addr())
		go func() { done <- p.ServeUnix(ctx, ul, os.Getuid()) }()
		done = firstOf(ctx, done, n)
	} else if bind != "" {
		ln, err := net.Listen("tcp", bind)
		if err != nil {
			log.Error("listen", "addr", bind, "err", err)
			return ExitError
		}
		log.Info("serving MCP over streamable HTTP", "addr", "http://"+ln.Addr().String()+"/mcp")
		go func() { done <- p.ServeHTTP(ctx, ln, b.HTTPToken) }()
	} else {
		log.Debug("serving MCP over stdio")
		go func() { done <- p.Server().Run(ctx, &mcp.StdioTransport{}) }()
	}
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(exitGrace):
			err = nil
		}
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errReleased):
		log.Debug("released by the host")
		return ExitOK
	case errors.Is(cause, errIdle):
		log.Info("no call within --idle-exit; exiting", "idle_exit", flags.IdleExit)
		return ExitIdle
	case errors.Is(cause, errSessionGone):
		log.Info("session channel ended", "err", conn.Err())
		return ExitOK
	case cause != nil && ctx.Err() != nil:
		log.Info("stopped", "cause", cause)
		return ExitOK
	case err == nil || errors.Is(err, io.EOF):
		log.Debug("agent closed the stream")
		return ExitOK
	}
	log.Error("MCP server stopped", "err", err)
	return ExitError
}

var (
	errReleased    = errors.New("released by the host")
	errSessionGone = errors.New("session channel ended")
	errIdle        = errors.New("idle")
)

// inheritedListener returns the listening socket inherited at fd.
func inheritedListener(fd int, name string) (net.Listener, error) {
	f, err := wire.FileFromFD(fd, name)
	if err != nil {
		return nil, err
	}
	defer f.Close() // FileListener holds its own duplicate
	return net.FileListener(f)
}

// firstOf returns a channel that yields the first error of n servers reporting on in
// that is not nil, or nil once all n reported nil; it stops waiting when ctx ends and a
// server reports. The servers themselves stop with ctx.
func firstOf(ctx context.Context, in <-chan error, n int) chan error {
	out := make(chan error, 1)
	go func() {
		var first error
		for i := 0; i < n; i++ {
			if err := <-in; err != nil && first == nil {
				first = err
				if ctx.Err() == nil {
					break
				}
			}
		}
		out <- first
	}()
	return out
}

// readBootstrap reads the bootstrap line from br (buffering f) within timeout.
func readBootstrap(f *os.File, br *bufio.Reader, timeout time.Duration) (contract.Bootstrap, error) {
	_ = f.SetReadDeadline(time.Now().Add(timeout)) // pipes from os.Pipe are pollable
	defer func() { _ = f.SetReadDeadline(time.Time{}) }()
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			return contract.Bootstrap{}, fmt.Errorf("read bootstrap: %w", err)
		}
		line = append(line, chunk...)
		if len(line) > maxBootstrapLine {
			return contract.Bootstrap{}, errors.New("bootstrap line too long")
		}
		if !isPrefix {
			break
		}
	}
	return parseBootstrap(string(line))
}

// parseBootstrap parses the bootstrap line (contract.ParseBootstrap) and holds its HTTP
// token, if any, to the proxy's rule for bearer tokens (CheckToken).
func parseBootstrap(line string) (contract.Bootstrap, error) {
	b, err := contract.ParseBootstrap(line)
	if err != nil {
		return contract.Bootstrap{}, err
	}
	if b.HTTPToken != "" {
		if err := CheckToken(b.HTTPToken); err != nil {
			return contract.Bootstrap{}, fmt.Errorf("bootstrap: %w", err)
		}
	}
	return b, nil
}
