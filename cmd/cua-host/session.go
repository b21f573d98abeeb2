package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/host/serve"
)

// envSession names the environment variable holding a session endpoint for `call` and
// `session stop`.
const envSession = "CUA_HOST_SESSION"

// runSession is `cua-host session start|stop`.
func runSession(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: cua-host session start [flags] | cua-host session stop [ENDPOINT]")
		return 2
	}
	switch args[0] {
	case "start":
		return runSessionStart(ctx, args[1:], stdout, stderr)
	case "stop":
		return runSessionStop(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "cua-host session: unknown subcommand %q (start, stop)\n", args[0])
	return 2
}

// runSessionStart starts a detached `cua-host serve --keep-after-eof` owning one session,
// prints `export CUA_HOST_SESSION=ENDPOINT` (or the session as JSON with --json) and exits;
// the session lives until `session stop`, its TTL, its idle TTL or end_session.
func runSessionStart(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("session start", flag.ContinueOnError)
	fs.SetOutput(stderr)
	label := fs.String("label", "cli", "session label (names the endpoint)")
	disp := fs.String("display", "auto", "auto (nested when $DISPLAY names a person's display, else private), private, nested (a display of the session's own in a window on $DISPLAY), shared ($DISPLAY itself) or :N")
	mode := fs.String("mode", "standard", "permission mode: standard, bounded or unrestricted")
	manifest := fs.String("manifest", "", "bounded manifest (YAML); required with --mode bounded")
	bypass := fs.Bool("dangerously-bypass-approvals", false, "required with --mode unrestricted")
	ttl := fs.Duration("session-ttl", 8*time.Hour, "session lifetime (≤ 24h)")
	idle := fs.Duration("idle-ttl", 30*time.Minute, "idle timeout (≤ session TTL)")
	httpOn := fs.Bool("http", false, "also serve loopback HTTP (URL and token in --json output)")
	asJSON := fs.Bool("json", false, "print the session (endpoint, pids, expiry) as JSON instead of an export line")
	logFile := fs.String("log-file", "", "where the detached host logs (default: nowhere)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	policyPath := fs.String("policy", "", "user policy file or Rego directory")
	managedPolicy := fs.String("managed-policy", "", "managed policy file or Rego directory")
	runtimeDir := fs.String("runtime-dir", "", "where the 0700 endpoint directory is created")
	screen := fs.String("screen", "", "size of a private display, WxH")
	if code, ok := parseFlagsOnly(fs, "session start", args, stdout, stderr); !ok {
		return code
	}
	display, why, err := resolveDisplay(*disp, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host session start: %v\n", err)
		return 2
	}
	if why != "" {
		fmt.Fprintf(stderr, "cua-host session start: %s\n", why)
	}
	serveArgs := []string{"serve", "--keep-after-eof", "--allow-modes", *mode, "--max-session-ttl", ttl.String(),
		"--max-idle-ttl", idle.String(), "--log-level", *logLevel}
	if *bypass {
		serveArgs = append(serveArgs, "--dangerously-bypass-approvals")
	}
	for flagName, v := range map[string]string{"--log-file": *logFile, "--policy": *policyPath, "--managed-policy": *managedPolicy, "--runtime-dir": *runtimeDir, "--screen": *screen} {
		if v != "" {
			serveArgs = append(serveArgs, flagName, v)
		}
	}
	params := serve.CreateSessionParams{Label: *label, Mode: *mode, Display: display, TTL: *ttl, IdleTTL: *idle,
		HTTP: *httpOn, DangerouslyBypassApprovals: *bypass}
	if *manifest != "" {
		abs, err := filepath.Abs(*manifest)
		if err != nil {
			fmt.Fprintf(stderr, "cua-host session start: --manifest: %v\n", err)
			return 2
		}
		params.Manifest = abs
	}

	cmd := exec.Command("/proc/self/exe", serveArgs...)
	cmd.Args[0] = "cua-host"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no terminal, no job control: it outlives us
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(stderr, "cua-host session start: %v\n", err)
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "cua-host session start: %v\n", err)
		return 1
	}
	var errBuf strings.Builder
	cmd.Stderr = &limitedWriter{w: &errBuf, n: 64 << 10}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "cua-host session start: %v\n", err)
		return 1
	}
	sc := serve.NewClient(out, in, serve.ClientOptions{})
	info, err := sc.CreateSession(ctx, params)
	sc.Close() // the host keeps running after end-of-file (--keep-after-eof) while the session lives
	if err != nil {
		cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		fmt.Fprintf(stderr, "cua-host session start: %v\n%s", err, errBuf.String())
		return 1
	}
	hostPID := cmd.Process.Pid
	_ = cmd.Process.Release()
	if *asJSON {
		json.NewEncoder(stdout).Encode(info)
	} else {
		fmt.Fprintf(stdout, "export %s=%s\n", envSession, shellQuote(info.Endpoint.Unix))
	}
	fmt.Fprintf(stderr, "cua-host: session %q (%s) on display %s, endpoint %s, host pid %d; `cua-host session stop` ends it\n",
		info.Label, info.Mode, info.Display, info.Endpoint.Unix, hostPID)
	return 0
}

// runSessionStop ends a session started by `session start`: it asks its host (the pid in
// the endpoint directory, checked to be a `cua-host serve`) to stop, and waits until the
// endpoint is gone.
func runSessionStop(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("session stop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wait := fs.Duration("timeout", 5*time.Second, "how long to wait for the session's host to exit")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	endpoint := os.Getenv(envSession)
	if fs.NArg() == 1 {
		endpoint = fs.Arg(0)
	}
	if endpoint == "" || fs.NArg() > 1 {
		fmt.Fprintln(stderr, "usage: cua-host session stop [ENDPOINT]   (default $"+envSession+")")
		return 2
	}
	pid, err := servePID(endpoint)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host session stop: %v\n", err)
		return 1
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		fmt.Fprintf(stderr, "cua-host session stop: signal host %d: %v\n", pid, err)
		return 1
	}
	deadline := time.Now().Add(*wait)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Dir(endpoint)); errors.Is(err, os.ErrNotExist) {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(stderr, "cua-host session stop: the host %d did not finish within %v\n", pid, *wait)
	return 1
}

// servePID reads the pid of the serve process that owns endpoint and checks that it is one.
func servePID(endpoint string) (int, error) {
	dir := filepath.Dir(endpoint)
	if !strings.HasPrefix(filepath.Base(dir), "cua-host-serve-") {
		return 0, fmt.Errorf("%s is not a session endpoint of `cua-host serve`", endpoint)
	}
	b, err := os.ReadFile(filepath.Join(dir, serve.PIDFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("no session at %s (ended already?)", endpoint)
	}
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: bad pid file", dir)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "\x00serve\x00") {
		return 0, fmt.Errorf("process %d is not the session's host (ended already?)", pid)
	}
	return pid, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// endpointCallOutput is what `cua-host call --session` prints: the shape of `call`'s
// output, from the MCP result.
type endpointCallOutput struct {
	Outcome    string          `json:"outcome"`
	IsError    bool            `json:"is_error"`
	Refusal    *client.Refusal `json:"refusal"`
	Content    json.RawMessage `json:"content"`
	Structured json.RawMessage `json:"structured"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// callEndpoint calls one tool through a session endpoint: MCP initialize, then
// tools/call, on one connection.
func callEndpoint(ctx context.Context, endpoint, tool string, args json.RawMessage) (endpointCallOutput, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", endpoint)
	if err != nil {
		return endpointCallOutput{}, fmt.Errorf("connect to the session: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	enc := json.NewEncoder(c)
	br := bufio.NewReaderSize(c, 64<<10)
	roundTrip := func(id int, method string, params any) (json.RawMessage, error) {
		if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
			return nil, err
		}
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("%s: the endpoint closed the connection (session ended or revoked?): %w", method, err)
			}
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *serve.Error    `json:"error"`
			}
			if json.Unmarshal(line, &resp) != nil || string(resp.ID) != strconv.Itoa(id) {
				continue // a notification
			}
			if resp.Error != nil {
				return nil, fmt.Errorf("%s: %w", method, resp.Error)
			}
			return resp.Result, nil
		}
	}
	if _, err := roundTrip(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "cua-host-call", "version": version}}); err != nil {
		return endpointCallOutput{}, err
	}
	if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return endpointCallOutput{}, err
	}
	raw, err := roundTrip(2, "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return endpointCallOutput{}, err
	}
	var res struct {
		Content    json.RawMessage `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
		Meta       struct {
			Outcome string          `json:"cua-host/outcome"`
			Details json.RawMessage `json:"cua-host/details"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return endpointCallOutput{}, fmt.Errorf("tools/call result: %w", err)
	}
	// The outcome and details travel in _meta; a refusal is the structured content
	// {"status":"refused","refusal":{…}} (docs/adr/0010).
	out := endpointCallOutput{IsError: res.IsError, Content: res.Content, Structured: res.Structured, Details: res.Meta.Details, Outcome: "unknown"}
	switch res.Meta.Outcome {
	case "completed", "not_started", "unknown":
		out.Outcome = res.Meta.Outcome
	}
	var refused struct {
		Status  string          `json:"status"`
		Refusal *client.Refusal `json:"refusal"`
	}
	if res.IsError && json.Unmarshal(res.Structured, &refused) == nil && refused.Status == "refused" {
		out.Refusal = refused.Refusal
	}
	if len(out.Content) == 0 {
		out.Content = json.RawMessage("[]")
	}
	if len(out.Structured) == 0 {
		out.Structured = json.RawMessage("null")
	}
	return out, nil
}
