package contract

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// The hidden subcommands through which a program embedding the host re-executes itself
// (/proc/self/exe) as one of its children. A program's main dispatches them; the host
// writes them when it starts a child of the same binary.
const (
	// WorkerSubcommand starts a worker; WorkerFlags follow it.
	WorkerSubcommand = "__worker"
	// ProxySubcommand starts an MCP proxy; ProxyFlags follow it.
	ProxySubcommand = "__mcp-proxy"
	// JanitorSubcommand starts the process that removes `cua-host serve`'s endpoint
	// directory once the serve host is gone.
	JanitorSubcommand = "__serve-janitor"
)

// WorkerFlags are a worker's command-line flags, after WorkerSubcommand: the host writes
// them with Args, the worker reads them with ParseWorkerFlags.
type WorkerFlags struct {
	// LogLevel is the worker's log level (written as debug, info, warn or error).
	LogLevel slog.Level
	// HelloTimeout is how long the worker waits for the host's Hello; zero means the
	// worker's default.
	HelloTimeout time.Duration
}

// Args returns the flags as command-line words.
func (f WorkerFlags) Args() []string {
	args := []string{"--log-level", LevelName(f.LogLevel)}
	if f.HelloTimeout > 0 {
		args = append(args, "--hello-timeout", f.HelloTimeout.String())
	}
	return args
}

// ParseWorkerFlags parses a worker's command-line words (those after WorkerSubcommand).
// It refuses unknown flags, positional arguments, a bad level and a negative timeout.
func ParseWorkerFlags(args []string) (WorkerFlags, error) {
	var f WorkerFlags
	fs := newFlagSet(WorkerSubcommand)
	fs.TextVar(&f.LogLevel, "log-level", slog.LevelInfo, "debug, info, warn or error")
	fs.DurationVar(&f.HelloTimeout, "hello-timeout", 0, "how long to wait for the host's Hello (0: the default)")
	if err := parseAll(fs, args); err != nil {
		return WorkerFlags{}, err
	}
	if f.HelloTimeout < 0 {
		return WorkerFlags{}, fmt.Errorf("%s: --hello-timeout %v is negative", WorkerSubcommand, f.HelloTimeout)
	}
	return f, nil
}

// ProxyFlags are an MCP proxy's command-line flags, after ProxySubcommand: the host writes
// them with Args, the proxy reads them with ParseProxyFlags. Which descriptors the proxy
// inherits follows from them (Descriptors).
type ProxyFlags struct {
	// HTTP, when set, is the loopback address to serve streamable HTTP on instead of
	// stdio (the proxy checks that it is loopback).
	HTTP string
	// LogLevel is the proxy's log level (written as debug, info, warn or error).
	LogLevel slog.Level
	// CallTimeout is the deadline of each forwarded tool call; zero means the proxy's
	// default.
	CallTimeout time.Duration
	// Endpoint serves MCP on the unix socket listener inherited at ProxyEndpointFD
	// instead of stdio; it excludes HTTP.
	Endpoint bool
	// EndpointHTTP also serves streamable HTTP on the loopback listener inherited at
	// ProxyHTTPListenerFD; it needs Endpoint.
	EndpointHTTP bool
	// IdleExit, when positive, makes the proxy exit with ProxyExitIdle once no tool call
	// came for that long.
	IdleExit time.Duration
}

// Check reports a combination the proxy refuses.
func (f ProxyFlags) Check() error {
	switch {
	case f.EndpointHTTP && !f.Endpoint:
		return errors.New("--endpoint-http needs --endpoint")
	case f.Endpoint && f.HTTP != "":
		return errors.New("--endpoint excludes --http")
	case f.CallTimeout < 0, f.IdleExit < 0:
		return errors.New("--call-timeout and --idle-exit cannot be negative")
	}
	return nil
}

// Args returns the flags as command-line words.
func (f ProxyFlags) Args() []string {
	args := []string{"--log-level", LevelName(f.LogLevel)}
	if f.HTTP != "" {
		args = append(args, "--http", f.HTTP)
	}
	if f.CallTimeout > 0 {
		args = append(args, "--call-timeout", f.CallTimeout.String())
	}
	if f.Endpoint {
		args = append(args, "--endpoint")
	}
	if f.EndpointHTTP {
		args = append(args, "--endpoint-http")
	}
	if f.IdleExit > 0 {
		args = append(args, "--idle-exit", f.IdleExit.String())
	}
	return args
}

// ParseProxyFlags parses a proxy's command-line words (those after ProxySubcommand). It
// refuses unknown flags, positional arguments, bad values and the combinations Check
// refuses.
func ParseProxyFlags(args []string) (ProxyFlags, error) {
	var f ProxyFlags
	fs := newFlagSet(ProxySubcommand)
	fs.StringVar(&f.HTTP, "http", "", "serve streamable HTTP on this loopback address instead of stdio")
	fs.TextVar(&f.LogLevel, "log-level", slog.LevelInfo, "debug, info, warn or error")
	fs.DurationVar(&f.CallTimeout, "call-timeout", 0, "deadline of each forwarded tool call (0: the default)")
	fs.BoolVar(&f.Endpoint, "endpoint", false, fmt.Sprintf("serve MCP on the unix socket listener inherited at fd %d instead of stdio", ProxyEndpointFD))
	fs.BoolVar(&f.EndpointHTTP, "endpoint-http", false, fmt.Sprintf("also serve streamable HTTP on the loopback listener inherited at fd %d (needs --endpoint)", ProxyHTTPListenerFD))
	fs.DurationVar(&f.IdleExit, "idle-exit", 0, fmt.Sprintf("exit with code %d when no tool call came for this long (0: never)", ProxyExitIdle))
	if err := parseAll(fs, args); err != nil {
		return ProxyFlags{}, err
	}
	if err := f.Check(); err != nil {
		return ProxyFlags{}, fmt.Errorf("%s: %w", ProxySubcommand, err)
	}
	return f, nil
}

// Descriptors lists the descriptors a proxy started with these flags inherits, in the
// order of their numbers: the session channel and the bootstrap pipe, then the endpoint
// listener and the HTTP listener when the flags ask for them.
func (f ProxyFlags) Descriptors() []Descriptor {
	ds := []Descriptor{ProxySession, ProxyBootstrap}
	if f.Endpoint {
		ds = append(ds, ProxyEndpoint)
	}
	if f.EndpointHTTP {
		ds = append(ds, ProxyHTTPListener)
	}
	return ds
}

// LevelName is the command-line name of the level a child logs at: debug, info, warn or
// error (a level between two names rounds down).
func LevelName(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}

// newFlagSet returns a flag set that reports errors instead of printing them.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseAll parses args into fs and refuses positional arguments.
func parseAll(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), strings.Join(fs.Args(), " "))
	}
	return nil
}
