package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/proto/contract"
)

// callOutput is what `cua-host call` prints: one JSON object.
type callOutput struct {
	Outcome    string           `json:"outcome"`
	IsError    bool             `json:"is_error"`
	Refusal    *client.Refusal  `json:"refusal"`
	Content    []client.Content `json:"content"`
	Structured json.RawMessage  `json:"structured"`
}

// runCall starts a host, a worker and one session, calls one tool and prints the result.
// Exit 0 when the call completed without error, 1 otherwise, 2 on a usage error.
func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	display := fs.String("display", "auto", "X display: auto (nested when $DISPLAY is set and Xephyr is installed, else private), private, nested (a desktop of the session's own in a window on $DISPLAY), shared (the display in $DISPLAY itself) or :N")
	timeout := fs.Duration("timeout", 60*time.Second, "deadline for the call")
	logLevel := fs.String("log-level", "warn", "log level for stderr: debug, info, warn, error")
	session := fs.String("session", os.Getenv(envSession), "call into a running session: its endpoint (default $"+envSession+"); the apps it launched stay for the next call")
	sf := addSessionFlags(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *session != "" {
		return runEndpointCall(ctx, fs, *session, *timeout, stdout, stderr)
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "usage: cua-host call [flags] TOOL [ARGS_JSON]")
		return 2
	}
	toolName := fs.Arg(0)
	argsJSON, ok := argsObject(fs, 1, stderr)
	if !ok {
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "cua-host call: bad --log-level: %v\n", err)
		return 2
	}
	setup, err := sf.resolve("cli", os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host call: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))

	mode, why, err := resolveDisplay(*display, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host call: %v\n", err)
		return 1
	}
	if why != "" {
		log.Warn("no nested display", "why", why)
	}
	disp, err := openDisplay(ctx, mode, log)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host call: %v\n", err)
		return 1
	}
	defer disp.Close()

	h, err := host.Start(ctx, host.Options{
		Logger:           log,
		WorkerLogLevel:   lvl,
		Env:              disp.env,
		Display:          disp.facts,
		ProtectedPIDs:    disp.pids,
		ProtectAncestors: true,
		Ceiling:          setup.ceiling,
		Policy:           setup.policy,
		Consent:          setup.consentFor(disp, log),
		Journal:          setup.journal,
		Sandbox:          setup.sandbox,
		SecretsDir:       setup.secretsDir,
		SecretService:    setup.secretService,
		Person:           disp.watch,
		// The worker's exit puts back keycodes remapped for the call's text once the
		// program typed into has had the time to read it (x11's Close): let it.
		CloseGrace: 2 * time.Second,
	})
	if err != nil {
		fmt.Fprintf(stderr, "cua-host call: %v\n", err)
		return 1
	}
	defer h.Close()

	spec := setup.spec
	spec.ClientKind, spec.Transport = contract.ClientCLI, contract.TransportCLI
	sess, err := h.CreateSession(ctx, spec)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host call: %v\n", err)
		return 1
	}
	cctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res, callErr := sess.Call(cctx, toolName, argsJSON)
	if callErr != nil {
		log.Warn("call", "err", callErr)
	}
	out := callOutput{
		Outcome:    res.Outcome.String(),
		IsError:    res.IsError,
		Refusal:    res.Refusal,
		Content:    res.Content,
		Structured: res.Structured,
	}
	if out.Content == nil {
		out.Content = []client.Content{}
	}
	if len(out.Structured) == 0 {
		out.Structured = json.RawMessage("null")
	}
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "cua-host call: write result: %v\n", err)
		return 1
	}
	if res.Outcome == host.Completed && !res.IsError {
		return 0
	}
	return 1
}

// displaySetup is the display a command's worker will use.
type displaySetup struct {
	env   []string
	facts host.DisplayFacts
	pids  []int
	close func()
	// person is the person's display, where the host shows its indicator and consent
	// dialog: the display itself when shared, the one a nested display is shown on, nil
	// for a private display.
	person *displaySetup
	// watch watches the person's use of a nested display (host.Options.Person); nil
	// otherwise.
	watch host.PersonWatcher
	// onClose, on a nested display, sets what to do when the person asks to close its
	// window (revoke the sessions); nil otherwise.
	onClose func(func())
	// ready, when set, waits for what the display still has starting (its window manager,
	// display.Options.LateWindowManager); nothing may map a window before it returned.
	ready func(context.Context) error
}

// xauthority returns the Xauthority file for the display: the private display's own, else
// $XAUTHORITY or ~/.Xauthority as every X client finds it.
func (d *displaySetup) xauthority() string {
	for _, kv := range d.env {
		if v, ok := strings.CutPrefix(kv, "XAUTHORITY="); ok {
			return v
		}
	}
	if v := os.Getenv("XAUTHORITY"); v != "" {
		return v
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".Xauthority")
	}
	return ""
}

func (d *displaySetup) Close() {
	if d.close != nil {
		d.close()
	}
}

// openDisplay opens a display resolveDisplay chose: :N uses that display; private starts
// one; nested starts one shown in a window on $DISPLAY.
func openDisplay(ctx context.Context, mode string, log *slog.Logger) (*displaySetup, error) {
	shared := func(name string) *displaySetup {
		d := &displaySetup{env: []string{"DISPLAY=" + name}, facts: host.DisplayFacts{Name: name}}
		d.facts.XAuthority = d.xauthority()
		d.person = d
		return d
	}
	switch {
	case mode == "private":
		return startPrivateDisplay(ctx, log)
	case mode == "nested":
		return startNestedDisplay(ctx, 0, 0, "cli", false, log)
	case len(mode) > 1 && mode[0] == ':':
		return shared(mode), nil
	}
	return nil, fmt.Errorf("--display %q: want auto, private, nested, shared or :N", mode)
}

// runEndpointCall is `cua-host call --session ENDPOINT TOOL [ARGS_JSON]`: one tool call
// through a running session's endpoint. Flags that configure a fresh host are refused.
func runEndpointCall(ctx context.Context, fs *flag.FlagSet, endpoint string, timeout time.Duration, stdout, stderr io.Writer) int {
	var foreign []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "session", "timeout", "log-level":
		default:
			foreign = append(foreign, "--"+f.Name)
		}
	})
	if len(foreign) > 0 {
		fmt.Fprintf(stderr, "cua-host call: %s configure a fresh host; a session's settings were fixed when it started\n", strings.Join(foreign, ", "))
		return 2
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "usage: cua-host call --session ENDPOINT TOOL [ARGS_JSON]")
		return 2
	}
	argsJSON, ok := argsObject(fs, 1, stderr)
	if !ok {
		return 2
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := callEndpoint(cctx, endpoint, fs.Arg(0), argsJSON)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host call: %v\n", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintf(stderr, "cua-host call: write result: %v\n", err)
		return 1
	}
	if out.Outcome == "completed" && !out.IsError {
		return 0
	}
	return 1
}
