package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/host/personui"
	"github.com/cua-host/cua-host/mcpproxy"
	"github.com/cua-host/cua-host/proto/contract"
)

// runLabel is the label of the one session `cua-host run` mints.
const runLabel = "mcp"

// Teardown budgets of `cua-host run`.
const (
	shutdownBudget = 3 * time.Second
	orphanBudget   = 2 * time.Second
)

// runConfig is `cua-host run` after its flags were checked.
type runConfig struct {
	display     string
	width       int
	height      int
	httpBind    string // "" for stdio
	httpToken   string
	level       slog.Level
	callTimeout time.Duration
	// indicator shows the active-session bar with its Stop button on a shared display.
	indicator bool
	setup     *sessionSetup
	logOut    *os.File // logs of the host, the worker and the proxy
	log       *slog.Logger
}

// runRun is `cua-host run`: it checks everything first (exit 2 on any error), then starts
// the display when asked, the MCP proxy, the worker and one session, and serves one agent
// until the agent closes stdin (stdio), a signal arrives, or a child dies. Exit 0 after a
// normal end, 1 when something failed at run time.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	disp := fs.String("display", "auto", "X display: auto (nested when $DISPLAY is set and Xephyr is installed, else private), private, nested (a desktop of the session's own in a window on $DISPLAY), shared (the display in $DISPLAY itself) or :N")
	screen := fs.String("screen", "", "size of a private or nested display, WxH (default 1280x800)")
	httpAddr := fs.String("http", "", "serve streamable HTTP on 127.0.0.1:PORT instead of stdio (bearer token from $"+mcpproxy.EnvHTTPToken+")")
	lf := addLogFlags(fs)
	callTimeout := fs.Duration("call-timeout", mcpproxy.DefaultCallTimeout, "deadline of each tool call")
	indicator := fs.Bool("indicator", true, "on a shared or nested display, show on the person's display an always-on-top bar naming the session, with a Stop button that revokes it (off on a private display)")
	sf := addSessionFlags(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "cua-host run: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() != 0 {
		return fail("unexpected arguments %q (see cua-host run -h)", fs.Args())
	}
	cfg := runConfig{callTimeout: *callTimeout, indicator: *indicator}
	displayWhy := ""
	var err error
	if cfg.display, displayWhy, err = resolveDisplay(*disp, os.Getenv); err != nil {
		return fail("%v", err)
	}
	if cfg.level, err = lf.parseLevel(); err != nil {
		return fail("%v", err)
	}
	if *callTimeout <= 0 {
		return fail("--call-timeout %v must be positive", *callTimeout)
	}
	switch {
	case cfg.display == "auto", cfg.display == "private", strings.HasPrefix(cfg.display, ":") && len(cfg.display) > 1:
	case cfg.display == "nested":
		if err := checkNested(os.Getenv); err != nil {
			return fail("%v", err)
		}
	default:
		return fail("--display %q: want auto, private, nested, shared or :N", cfg.display)
	}
	if *screen != "" {
		w, h, err := parseScreen(*screen)
		if err != nil {
			return fail("%v", err)
		}
		if cfg.display != "private" && cfg.display != "nested" {
			return fail("--screen applies to a private or nested display (--display private, --display nested)")
		}
		cfg.width, cfg.height = w, h
	}
	setup, err := sf.resolve(runLabel, os.Getenv)
	if err != nil {
		return fail("%v", err)
	}
	cfg.setup = setup
	if *httpAddr != "" {
		if cfg.httpBind, err = mcpproxy.ParseListenAddr(*httpAddr); err != nil {
			return fail("%v", err)
		}
		// The reference driver's token variable is read when cua-host's is unset.
		if cfg.httpToken, _, err = (envPair{own: mcpproxy.EnvHTTPToken, driver: envDriverHTTPToken}).value(os.Getenv, func(a, b string) bool { return a == b }); err != nil {
			return fail("%v", err)
		}
		if err := mcpproxy.CheckToken(cfg.httpToken); err != nil {
			return fail("%v", err)
		}
	} else if isTerminal(0) {
		return fail("stdin is a terminal; `cua-host run` speaks MCP on stdio to an MCP client (Claude Code, Codex, the MCP Inspector): see docs/mcp.md, or use --http")
	}
	var closeLog func()
	if cfg.logOut, cfg.log, closeLog, err = lf.open(stderr, cfg.level, "host"); err != nil {
		return fail("%v", err)
	}
	defer closeLog()
	if displayWhy != "" {
		cfg.log.Warn("no nested display", "why", displayWhy)
	}
	if err := serveMCP(ctx, cfg); err != nil {
		cfg.log.Error("cua-host run stopped", "err", err)
		return 1
	}
	return 0
}

// serveMCP runs the display, the proxy, the worker and the session until the end, then
// tears everything down (proxy, worker and its launched applications, display, and any
// orphaned descendant). It returns nil after a normal end: the agent closed the stream, or
// a signal asked us to stop.
func serveMCP(ctx context.Context, cfg runConfig) (err error) {
	log := cfg.log
	// Applications the worker launched are re-parented here if the worker dies, so the
	// teardown can reach them; a client that goes away must not kill the host with SIGPIPE.
	ctx, stop := supervise(ctx, log)
	defer stop()

	// Teardown runs in this order whatever happened: the proxy (no more agent calls), the
	// worker (its sessions end, its launched applications are stopped), the display, and
	// then anything left of our process tree.
	var st *host.Stack
	var d *displaySetup
	defer func() {
		if st != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownBudget)
			st.Shutdown(sctx)
			cancel()
		}
		if d != nil {
			d.Close()
		}
		if n := host.KillOrphans(orphanBudget, log); n > 0 {
			log.Info("killed orphaned descendants", "count", n)
		}
	}()

	if d, err = openRunDisplay(ctx, cfg, log); err != nil {
		return err
	}
	if d.person != nil {
		// A program of a nested display's session reaches the person's display through its
		// abstract socket too: what the sandbox cannot hold back there holds for both.
		warnSharedDisplay(ctx, d.person.facts.Name, d.person.xauthority(), log)
	}

	stdio := cfg.httpBind == ""
	opts := host.StackOptions{
		Host: host.Options{
			Logger:           log,
			WorkerLogLevel:   cfg.level,
			Env:              d.env,
			Display:          d.facts,
			ProtectedPIDs:    d.pids,
			ProtectAncestors: true,
			Ceiling:          cfg.setup.ceiling,
			Policy:           cfg.setup.policy,
			Consent:          cfg.setup.consentFor(d, log),
			Journal:          cfg.setup.journal,
			Sandbox:          cfg.setup.sandbox,
			SecretsDir:       cfg.setup.secretsDir,
			SecretService:    cfg.setup.secretService,
			Person:           d.watch,
		},
		Proxy: host.ProxyOptions{
			Logger: log,
			Stderr: cfg.logOut,
			Flags:  contract.ProxyFlags{LogLevel: cfg.level, CallTimeout: cfg.callTimeout},
		},
		Session:   mcpSpec(cfg.setup.spec, cfg.httpBind != ""),
		HTTPToken: cfg.httpToken,
		// The proxy holds the agent's stream; the host keeps no copy of it, so the agent
		// sees end-of-file as soon as the proxy is gone.
		DetachStdio: stdio,
	}
	// The window manager finishes starting while the proxy and the worker start; the
	// person sees the indicator before the session exists.
	var ind *personui.Indicator
	bar := newSessionBar(opts.Session.Label, cfg.setup.spec.Mode.String())
	if d.facts.Nested {
		// The bar says when the person has taken over the nested display.
		opts.Host.OnPerson = bar.person
	}
	defer func() {
		if ind != nil {
			ind.Close()
		}
	}()
	opts.BeforeSession = func(ctx context.Context, h *host.Host) error {
		if cfg.indicator && d.person != nil {
			// On the person's display: a nested display's own is the agent's.
			var err error
			if ind, err = showIndicator(ctx, h, d.person, bar, log); err != nil {
				return err
			}
		}
		if d.ready != nil {
			return d.ready(ctx)
		}
		return nil
	}
	if stdio {
		opts.Proxy.Stdin, opts.Proxy.Stdout = os.Stdin, os.Stdout
	} else {
		opts.Proxy.Flags.HTTP = cfg.httpBind
	}
	if st, err = host.StartStack(ctx, opts); err != nil {
		return err
	}
	px, h, info := st.Proxy(), st.Host(), st.Session()
	if d.facts.Nested {
		// The nested window and everything in it go with the session.
		stopWatch := closeWithSession(h, info.Label, d, log)
		defer stopWatch()
	}
	if d.onClose != nil {
		// Closing the nested display's window is the person's Stop.
		d.onClose(func() {
			log.Info("the person closed the nested display's window: revoking every session")
			go func() {
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if _, err := h.RevokeAll(sctx); err != nil {
					log.Warn("revoke every session", "why", "nested window closed", "err", err)
				}
			}()
		})
	}
	transport := "stdio"
	if !stdio {
		transport = "http://" + cfg.httpBind + "/mcp"
	}
	log.Info("serving MCP", "transport", transport, "session", info.Label, "mode", cfg.setup.spec.Mode.String(),
		"expires", info.ExpiresAt.UTC().Format(time.RFC3339), "display", d.facts.Name, "private_display", d.facts.Private,
		"worker_pid", h.PID(), "proxy_pid", px.PID())

	select {
	case <-px.Exited():
		if code := px.ExitCode(); code != 0 {
			return fmt.Errorf("the MCP proxy exited with code %d", code)
		}
		log.Info("the agent closed the MCP stream; shutting down")
		return nil
	case <-h.Exited():
		return fmt.Errorf("the worker exited: %v", h.Err())
	case <-ctx.Done():
		log.Info("stopping on signal")
		return nil
	}
}

// showIndicator shows the person, on the shared display, that an agent session is active,
// with a Stop button and a stop key (personui.StopKey) that revoke it at once (the worker
// then ends the session's calls and the proxy, and `run` shuts down). The bar keeps itself
// above every other window; one that another window keeps covered revokes the sessions too,
// since the person may no longer see it or reach Stop. A display where the bar cannot be
// shown stops `run`: the person would not know an agent is at work. On a nested display
// the bar also says when the person has taken over (bar.person). --indicator=false turns
// it off.
func showIndicator(ctx context.Context, h *host.Host, d *displaySetup, bar *sessionBar, log *slog.Logger) (*personui.Indicator, error) {
	revoke := func(why string) {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := h.RevokeAll(sctx); err != nil {
			log.Warn("revoke every session", "why", why, "err", err)
		}
		bar.end() // no session is active any more
	}
	ind, err := personui.NewIndicator(ctx, personui.Options{Display: d.facts.Name, XAuthority: d.xauthority(), Logger: log},
		func() {
			log.Info("the person pressed Stop: revoking every session")
			revoke("Stop")
		},
		func(reason string) {
			log.Warn("the session indicator stays covered by another window: revoking every session", "reason", reason)
			revoke("indicator covered")
		})
	if err != nil {
		return nil, fmt.Errorf("show the session indicator on %s (--indicator=false turns it off): %w", d.facts.Name, err)
	}
	if ind.StopKey() == "" {
		log.Warn("the stop key is not available on this display: Stop is click-only", "key", personui.StopKey)
	}
	bar.show(ind)
	return ind, nil
}

// openRunDisplay resolves --display, starting a private display (of --screen size) when
// asked or when auto finds no $DISPLAY, and a nested one (of --screen size) when asked.
func openRunDisplay(ctx context.Context, cfg runConfig, log *slog.Logger) (*displaySetup, error) {
	if cfg.display == "nested" {
		return startNestedDisplay(ctx, cfg.width, cfg.height, runLabel, true, log)
	}
	if cfg.display == "private" || (cfg.display == "auto" && os.Getenv("DISPLAY") == "") {
		d, err := display.Start(ctx, display.Options{Logger: log, Width: cfg.width, Height: cfg.height, WindowManager: true, SessionBus: true,
			LateWindowManager: true})
		if err != nil {
			return nil, fmt.Errorf("private display: %w", err)
		}
		log.Info("private display started", "display", d.Name(), "server_pid", d.ServerPID())
		return &displaySetup{
			env:   d.Env(),
			facts: host.DisplayFacts{Name: d.Name(), Private: true, ServerPID: d.ServerPID(), XAuthority: d.XAuthority()},
			pids:  d.PIDs(),
			close: func() { d.Close() },
			ready: d.WindowManagerReady,
		}, nil
	}
	if cfg.width != 0 {
		log.Warn("--screen ignored: using the existing display", "display", os.Getenv("DISPLAY"))
	}
	return openDisplay(ctx, cfg.display, log)
}

// parseScreen parses WxH.
func parseScreen(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 64 || h < 64 || w > 8192 || h > 8192 {
		return 0, 0, fmt.Errorf("--screen %q: want WxH between 64x64 and 8192x8192", s)
	}
	return w, h, nil
}

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// mcpSpec is spec as `run` creates it: an MCP client over stdio, or over HTTP with --http.
func mcpSpec(spec host.SessionSpec, http bool) host.SessionSpec {
	spec.ClientKind, spec.Transport = contract.ClientMCP, contract.TransportMCPStdio
	if http {
		spec.Transport = contract.TransportMCPHTTP
	}
	return spec
}
