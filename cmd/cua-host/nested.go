package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/display"
)

// checkNested says why --display nested cannot start here: no person's display in
// $DISPLAY to show the window on, or no Xephyr (with the package to install).
func checkNested(getenv func(string) string) error {
	if getenv("DISPLAY") == "" {
		return errors.New("--display nested shows the session's desktop in a window on your display, and $DISPLAY names none (use --display private for a headless one)")
	}
	if _, err := display.FindXephyr(getenv("PATH")); err != nil {
		return fmt.Errorf("--display nested: %w", err)
	}
	return nil
}

// personXAuthority is the Xauthority file of the person's display as every X client of
// theirs finds it: $XAUTHORITY, else ~/.Xauthority.
func personXAuthority(getenv func(string) string) string {
	if v := getenv("XAUTHORITY"); v != "" {
		return v
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".Xauthority")
	}
	return ""
}

// startNestedDisplay starts a nested display of width×height (0: the default size) titled
// "cua-host: LABEL", shown on the person's display in $DISPLAY. The worker gets the nested
// display's environment only; the person's display and cookie stay with the host, which
// shows its indicator and consent dialog there (person) and watches the person's use of
// the window (watch).
func startNestedDisplay(ctx context.Context, width, height int, label string, lateWM bool, log *slog.Logger) (*displaySetup, error) {
	if err := checkNested(os.Getenv); err != nil {
		return nil, err
	}
	parent, parentXA := os.Getenv("DISPLAY"), personXAuthority(os.Getenv)
	ds := &displaySetup{}
	onClose := &closeRelay{}
	d, err := display.Start(ctx, display.Options{Logger: log, Width: width, Height: height, WindowManager: true, SessionBus: true,
		LateWindowManager: lateWM,
		Nested: &display.NestedOptions{Parent: parent, ParentXAuthority: parentXA, Title: "cua-host: " + label,
			OnClose: onClose.request}})
	if err != nil {
		return nil, fmt.Errorf("nested display: %w", err)
	}
	w, h, askedW, askedH := d.NestedSize()
	log.Info("nested display started", "display", d.Name(), "parent", parent, "window", fmt.Sprintf("0x%x", d.Window()), "server_pid", d.ServerPID(),
		"screen", fmt.Sprintf("%dx%d", w, h))
	if d.NestedScrolled() {
		// Xephyr cannot scale its window: the window shows part of the screen.
		log.Info("the nested screen is larger than fits on your screen: its window shows part of it and scrolls to follow the pointer",
			"screen", fmt.Sprintf("%dx%d", w, h), "parent", parent)
	}
	if w != askedW || h != askedH {
		// The window manager drew a frame larger than it said: window and screen shrank.
		log.Warn("the nested screen is smaller than asked: it is as large as fits in a window on your screen",
			"asked", fmt.Sprintf("%dx%d", askedW, askedH), "screen", fmt.Sprintf("%dx%d", w, h), "parent", parent)
	}
	ds.env = d.Env()
	ds.facts = host.DisplayFacts{Name: d.Name(), Private: true, Nested: true, ServerPID: d.ServerPID(), XAuthority: d.XAuthority()}
	ds.pids = d.PIDs()
	ds.close = func() { d.Close() }
	ds.watch = d
	ds.ready = d.WindowManagerReady
	ds.person = &displaySetup{env: []string{"DISPLAY=" + parent, "XAUTHORITY=" + parentXA}, facts: host.DisplayFacts{Name: parent, XAuthority: parentXA}}
	ds.onClose = onClose.handle
	return ds, nil
}

// closeRelay passes the person's request to close the nested display's window to the
// handler set once the session is up. A request made before (the window is shown while
// the window manager and the worker still start) is kept and handed over when the handler
// is set: it is not lost.
type closeRelay struct {
	mu        sync.Mutex
	handler   func()
	requested bool
}

// request runs the handler, or keeps the request until there is one. It must not block
// (display.NestedOptions.OnClose): neither may the handler.
func (r *closeRelay) request() {
	r.mu.Lock()
	h := r.handler
	if h == nil {
		r.requested = true
	}
	r.mu.Unlock()
	if h != nil {
		h()
	}
}

// handle sets the handler, and runs it at once when the window was asked to close before.
func (r *closeRelay) handle(f func()) {
	r.mu.Lock()
	r.handler = f
	pending := r.requested
	r.requested = false
	r.mu.Unlock()
	if pending {
		f()
	}
}

// nestedStatus is whether `--display nested` can start here.
type nestedStatus struct {
	Available bool   `json:"available"`
	Xephyr    string `json:"xephyr,omitempty"`
	// Parent is the person's display the window would open on ($DISPLAY).
	Parent string `json:"parent,omitempty"`
	// LargestScreen is the largest nested screen (WxH) that fits, with the window
	// manager's frame, on the person's screen: a larger --screen is shown scrolled.
	LargestScreen string `json:"largest_screen,omitempty"`
	Error         string `json:"error,omitempty"`
}

// probeNested reports whether Xephyr and a person's display are there.
func probeNested(getenv func(string) string) nestedStatus {
	st := nestedStatus{Parent: getenv("DISPLAY")}
	bin, err := display.FindXephyr(getenv("PATH"))
	st.Xephyr = bin
	if err == nil {
		err = checkNested(getenv)
	}
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Available = true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if w, h, err := display.LargestNested(ctx, st.Parent, statusXAuthority(getenv)); err == nil {
		st.LargestScreen = fmt.Sprintf("%dx%d", w, h)
	}
	return st
}

// sessionEndPoll is how often `run` asks the worker whether a nested display's session is
// still live.
const sessionEndPoll = 250 * time.Millisecond

// closeWithSession closes the nested display d once the session label is no longer live on
// h — revoked (Stop, the person closing the window, a revocation) or ended — so that the
// window and every program in it go with the session; the agent's later calls are still
// answered (authorization_revoked, session_ended). It returns a function that stops
// watching and waits for it.
func closeWithSession(h *host.Host, label string, d *displaySetup, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(sessionEndPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			st, err := h.Status(ctx)
			if err != nil {
				return // the worker is gone: run's own teardown closes the display
			}
			if !slices.ContainsFunc(st.Sessions, func(s host.SessionStatus) bool { return s.Label == label }) {
				log.Info("the session ended: closing its nested display", "session", label, "display", d.facts.Name)
				d.Close()
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// resolveDisplay turns --display into what to start: auto is nested when $DISPLAY names a
// person's display and Xephyr can show one there, private otherwise (with why, for a
// warning, when a person's display is there but Xephyr is not); shared is the display in
// $DISPLAY itself. Acting on the person's own display is never chosen implicitly.
func resolveDisplay(mode string, getenv func(string) string) (resolved, why string, err error) {
	switch mode {
	case "auto":
		if getenv("DISPLAY") == "" {
			return "private", "", nil
		}
		if err := checkNested(getenv); err != nil {
			return "private", err.Error() + "; starting a private display instead (use --display shared to act on your own display)", nil
		}
		return "nested", "", nil
	case "shared":
		d := getenv("DISPLAY")
		if d == "" {
			return "", "", errors.New("--display shared acts on the display in $DISPLAY, and it is not set")
		}
		return d, "", nil
	}
	return mode, "", nil
}
