// Command embed shows how a desktop application embeds cua-host: it supervises a private
// worker on a throwaway X display, mints a session, and drives a real task through the Go
// API — launch a terminal, type a command into it, check the file the command wrote, and
// save a screenshot of the display.
//
//	go run ./examples/embed [-out DIR]
//
// The program re-executes itself as its worker (the `__worker` argument), so the worker is
// exactly this binary; an application whose binary cannot do that points
// host.Options.WorkerPath at cmd/cua-worker instead.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/worker"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == contract.WorkerSubcommand {
		os.Exit(worker.Main(os.Args[2:], worker.Config{NewRegistry: worker.DesktopRegistry}))
	}
	if err := host.SealInheritedFDs(); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
	out := flag.String("out", "", "directory for the screenshot and the terminal's output (default: a new temporary directory)")
	flag.Parse()
	if err := run(context.Background(), *out); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if out == "" {
		dir, err := os.MkdirTemp("", "cua-embed-")
		if err != nil {
			return err
		}
		out = dir
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}

	// A throwaway desktop: Xvfb with a fresh cookie, openbox and a private session bus.
	disp, err := display.Start(ctx, display.Options{Logger: log, WindowManager: true, SessionBus: true})
	if err != nil {
		return err
	}
	defer disp.Close()
	step("private display %s is up (Xvfb pid %d)", disp.Name(), disp.ServerPID())

	h, err := host.Start(ctx, host.Options{
		Logger: log,
		// HOME is the demo's own directory, so the terminal's shell starts without the
		// machine's start-up files (pitfalls: a version manager waiting on a lock there
		// would hold the typed command back).
		Env:           append(disp.Env(), "HOME="+out),
		Display:       host.DisplayFacts{Name: disp.Name(), Private: true, ServerPID: disp.ServerPID()},
		ProtectedPIDs: disp.PIDs(),
		Ceiling:       authz.Ceiling{AllowedModes: []authz.Mode{authz.Standard}, MaxSessionTTL: time.Hour, MaxIdleTTL: 10 * time.Minute},
		// The embedding application is the consent UI; this one grants whole-display
		// observation (the screenshot below) and nothing else.
		Consent: func(ctx context.Context, r host.ConsentRequest) host.ConsentDecision {
			ok := r.Kind == authz.ResourceDisplay && r.Op == authz.OpObserve
			step("consent asked: %s %s for %s → granted=%v", r.Operation, r.Resource, r.Tool, ok)
			return host.ConsentDecision{Granted: ok, TTL: time.Minute}
		},
	})
	if err != nil {
		return err
	}
	defer h.Close()
	step("worker pid %d is ready (generation %s, capabilities %v)", h.PID(), h.Generation(), h.Capabilities())

	s, err := h.CreateSession(ctx, host.SessionSpec{Label: "embed-demo", Mode: authz.Standard})
	if err != nil {
		return err
	}

	target := filepath.Join(out, "terminal-output.txt")
	// "xterm" names the desktop application debian-xterm.desktop (Exec=xterm): a
	// standard session launches it without consent. Free arguments (-geometry …) would
	// need a consent grant for that exact command line; set_window_frame places it instead.
	launched, err := call(ctx, s, "launch_app", map[string]any{"name": "xterm"})
	if err != nil {
		return err
	}
	var app struct {
		PID       int      `json:"pid"`
		WindowIDs []uint32 `json:"window_ids"`
	}
	if err := json.Unmarshal(launched.Structured, &app); err != nil || app.PID == 0 || len(app.WindowIDs) == 0 {
		return fmt.Errorf("launch_app returned %s", launched.Structured)
	}
	step("launched xterm: pid %d, window %#x", app.PID, app.WindowIDs[0])
	if _, err := call(ctx, s, "set_window_frame", map[string]any{"pid": app.PID, "window_id": app.WindowIDs[0], "x": 40, "y": 40, "width": 640, "height": 320}); err != nil {
		return err
	}

	command := fmt.Sprintf("echo hello from cua-host > %s\n", target)
	if _, err := call(ctx, s, "type_text", map[string]any{"pid": app.PID, "window_id": app.WindowIDs[0], "text": command}); err != nil {
		return err
	}
	step("typed: %q", strings.TrimSpace(command))

	// The oracle is the file the terminal wrote, not anything the worker says.
	var got []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, err = os.ReadFile(target); err == nil && len(got) > 0 {
			break
		}
	}
	if strings.TrimSpace(string(got)) != "hello from cua-host" {
		return fmt.Errorf("the terminal wrote %q to %s", got, target)
	}
	step("the terminal wrote %s: %q", target, strings.TrimSpace(string(got)))

	shot, err := call(ctx, s, "get_desktop_state", map[string]any{"max_dimension": 1280})
	if err != nil {
		return err
	}
	for _, c := range shot.Content {
		if c.Type == "image" {
			png := filepath.Join(out, "desktop.png")
			if err := os.WriteFile(png, c.Data, 0o644); err != nil {
				return err
			}
			step("saved a %d-byte screenshot to %s", len(c.Data), png)
		}
	}
	if _, err := call(ctx, s, "kill_app", map[string]any{"pid": app.PID}); err != nil {
		return err
	}
	step("closed xterm; revoking the session and stopping the worker")
	if err := s.Revoke(ctx); err != nil {
		return err
	}
	if res, _ := s.Call(ctx, "list_windows", nil); res.Outcome != host.NotStarted {
		return fmt.Errorf("a call after revocation had outcome %s", res.Outcome)
	}
	step("a call after revocation is refused: not_started")
	return nil
}

// call runs a tool and turns anything but a completed, error-free result into an error.
func call(ctx context.Context, s *host.Session, name string, args map[string]any) (host.Result, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return host.Result{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := s.Call(cctx, name, b)
	if err != nil {
		return res, fmt.Errorf("%s: %w (outcome %s)", name, err, res.Outcome)
	}
	if res.Outcome != host.Completed || res.IsError {
		if res.Refusal != nil {
			return res, fmt.Errorf("%s refused: %s: %s", name, res.Refusal.Code, res.Refusal.Message)
		}
		return res, errors.New(name + " failed: " + res.Text())
	}
	return res, nil
}

func step(format string, args ...any) {
	fmt.Printf("• "+format+"\n", args...)
}
