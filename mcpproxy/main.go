package mcpproxy

import (
	"bufio"
	"context"
	"errors"
	"flag"
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
	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
)

// Exit codes of a proxy process.
const (
	ExitOK    = 0
	ExitError = 1
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

// Main is a proxy process's entry point (the hidden `__mcp-proxy` command). It inherits
// its session channel at contract.ProxySessionFD and the bootstrap pipe at
// contract.ProxyBootstrapFD, waits for the bootstrap line, then serves MCP on stdio (or on a
// loopback HTTP listener with --http) until the agent closes stdin, the host releases it
// (end-of-file on the bootstrap pipe), the session channel ends, or SIGTERM. It returns
// the exit code. Logs go to stderr, never to stdout.
func Main(args []string, version string) int {
	fs := flag.NewFlagSet("__mcp-proxy", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "serve streamable HTTP on this loopback address instead of stdio")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	timeout := fs.Duration("call-timeout", DefaultCallTimeout, "deadline of each forwarded tool call")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "cua-host mcp-proxy: bad --log-level: %v\n", err)
		return ExitUsage
	}
	debug.SetGCPercent(gcPercent)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})).With("component", "mcp-proxy", "pid", os.Getpid())
	bind := ""
	if *httpAddr != "" {
		var err error
		if bind, err = ParseListenAddr(*httpAddr); err != nil {
			log.Error("bad --http", "err", err)
			return ExitUsage
		}
	}
	for _, c := range []struct {
		fd  int
		typ uint32
		det string
	}{{contract.ProxySessionFD, unix.S_IFSOCK, "session channel"}, {contract.ProxyBootstrapFD, unix.S_IFIFO, "bootstrap pipe"}} {
		var st unix.Stat_t
		if err := unix.Fstat(c.fd, &st); err != nil || st.Mode&unix.S_IFMT != c.typ {
			log.Error("missing inherited descriptor; a proxy is started by its host", "fd", c.fd, "want", c.det)
			return ExitUsage
		}
	}
	boot, err := wire.FileFromFD(contract.ProxyBootstrapFD, "bootstrap") // pollable, close-on-exec
	if err != nil {
		log.Error("open bootstrap pipe", "err", err)
		return ExitError
	}
	sessFile, err := wire.FileFromFD(contract.ProxySessionFD, "session")
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
	if bind != "" && b.HTTPToken == "" {
		log.Error("--http without a token in the bootstrap")
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

	p := New(conn, Options{Logger: log, Version: version, CallTimeout: *timeout})
	done := make(chan error, 1)
	if bind != "" {
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
)

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
