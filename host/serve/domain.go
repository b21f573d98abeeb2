package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/display"
)

// domain is one trust domain: one worker and the display it drives. Its sessions share
// both; no other domain ever does.
type domain struct {
	s    *Server
	name string

	// startMu serialises starting the domain (its first session) and adding sessions.
	startMu sync.Mutex

	// mu guards the fields below.
	mu          sync.Mutex
	h           *host.Host
	disp        *display.Display // nil on a shared display
	displayName string           // "private" until started, then ":N"
	wantDisplay string           // what create_session asked for: "private", "nested" or ":N"
	pids        []int            // the private display's processes
	sessions    map[string]*session
	stopped     bool
	// stopDone is closed once stop has finished.
	stopDone chan struct{}
}

// start starts the display and the worker; d.startMu is held.
// Preconditions: the domain has not started.
func (d *domain) startLocked(ctx context.Context, want string) (err error) {
	s := d.s
	envs := []string{"DISPLAY=" + want}
	// On a shared display the host's own connection (it removes the input devices of a
	// worker that was killed) uses the cookie every X client of this user uses.
	facts := host.DisplayFacts{Name: want, XAuthority: userXAuthority()}
	var disp *display.Display
	var pids []int
	var person host.PersonWatcher
	if want == "private" || want == "nested" {
		// The window manager finishes starting while the worker starts; no session exists
		// before it has (below).
		opts := display.Options{Logger: s.log, Width: s.opts.Width, Height: s.opts.Height, WindowManager: true, SessionBus: true,
			LateWindowManager: true}
		if want == "nested" {
			// The domain's own desktop in a window on the person's display (this process's
			// $DISPLAY), which only Xephyr and the host's watch connect to.
			parent := os.Getenv("DISPLAY")
			if parent == "" {
				return errors.New("nested display: $DISPLAY names no display of the person's to show the window on")
			}
			opts.Nested = &display.NestedOptions{Parent: parent, ParentXAuthority: userXAuthority(), Title: "cua-host: " + d.name}
		}
		disp, err = display.Start(ctx, opts)
		if err != nil {
			return fmt.Errorf("%s display: %w", want, err)
		}
		defer func() {
			if err != nil {
				disp.Close()
			}
		}()
		envs = disp.Env()
		facts = host.DisplayFacts{Name: disp.Name(), Private: true, Nested: disp.Nested(), ServerPID: disp.ServerPID(), XAuthority: disp.XAuthority()}
		pids = disp.PIDs()
		if disp.Nested() {
			person = disp
		}
	}
	domain := d.name
	h, err := host.Start(ctx, host.Options{
		Logger:           s.log.With("trust_domain", d.name),
		WorkerLogLevel:   s.opts.WorkerLogLevel,
		WorkerPath:       s.opts.WorkerPath,
		WorkerArgs:       s.opts.WorkerArgs,
		Env:              envs,
		Display:          facts,
		ProtectedPIDs:    pids,
		ProtectAncestors: s.opts.ProtectAncestors,
		Ceiling:          s.opts.Ceiling,
		Policy:           s.opts.Policy,
		Consent: func(ctx context.Context, r host.ConsentRequest) host.ConsentDecision {
			return s.consent.ask(ctx, domain, r)
		},
		Person: person,
	})
	if err != nil {
		return err
	}
	if disp != nil {
		if err := disp.WindowManagerReady(ctx); err != nil {
			h.Close()
			return fmt.Errorf("%s display: %w", want, err)
		}
	}
	d.mu.Lock()
	if d.stopped { // the host began shutting down meanwhile
		d.mu.Unlock()
		h.Close()
		return errDomainStopped
	}
	d.h, d.disp, d.displayName, d.wantDisplay, d.pids = h, disp, facts.Name, want, pids
	d.mu.Unlock()
	s.log.Info("trust domain started", "trust_domain", d.name, "worker_pid", h.PID(), "display", facts.Name, "private", facts.Private)
	s.wg.Add(1)
	go d.watch(h)
	return nil
}

// watch reports a worker that exited while the domain was in use and ends the domain.
func (d *domain) watch(h *host.Host) {
	defer d.s.wg.Done()
	select {
	case <-h.Exited():
	case <-d.stopDone:
		return
	}
	d.mu.Lock()
	stopped := d.stopped
	d.mu.Unlock()
	if stopped {
		return
	}
	reason := "exited"
	if err := h.Err(); err != nil {
		reason = err.Error()
	}
	d.s.log.Warn("worker exited", "trust_domain", d.name, "pid", h.PID(), "reason", reason)
	d.s.notify("worker_exited", map[string]any{"trust_domain": d.name, "pid": h.PID(), "reason": reason})
	d.stop(context.WithoutCancel(d.s.baseCtx), reasonWorkerExited)
}

// stop ends every session of the domain with reason, then the worker and the display. It
// is idempotent; later callers wait for the first.
func (d *domain) stop(ctx context.Context, reason string) {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		<-d.stopDone
		return
	}
	d.stopped = true
	sessions := make([]*session, 0, len(d.sessions))
	for _, sess := range d.sessions {
		sessions = append(sessions, sess)
	}
	h, disp := d.h, d.disp
	d.mu.Unlock()
	defer close(d.stopDone)

	d.s.mu.Lock()
	if d.s.domains[d.name] == d {
		delete(d.s.domains, d.name)
	}
	d.s.mu.Unlock()

	// The worker revokes everything on Shutdown; the proxies see their channels end.
	var wg sync.WaitGroup
	for _, sess := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess.finish(reason)
		}()
	}
	if h != nil {
		if err := h.Shutdown(ctx); err != nil {
			d.s.log.Warn("stop worker", "trust_domain", d.name, "err", err)
		}
	}
	wg.Wait()
	if disp != nil {
		disp.Close()
	}
	d.s.log.Info("trust domain stopped", "trust_domain", d.name, "reason", reason)
}

// sessionEnded forgets sess and stops the domain when it was the last session.
func (d *domain) sessionEnded(sess *session) {
	d.mu.Lock()
	delete(d.sessions, sess.label)
	last := len(d.sessions) == 0 && !d.stopped
	d.mu.Unlock()
	if last {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.s.baseCtx), shutdownBudget)
		defer cancel()
		d.stop(ctx, reasonRevoked)
	}
}

// drives reports whether the domain drives the display named name (":N").
func (d *domain) drives(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.stopped && (d.wantDisplay == name || d.displayName == name)
}

// info describes the domain's worker and display; ok is false before it started.
func (d *domain) info() (WorkerInfo, DisplayInfo, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil || d.stopped {
		return WorkerInfo{}, DisplayInfo{}, false
	}
	w := WorkerInfo{TrustDomain: d.name, PID: d.h.PID(), Generation: d.h.Generation(), Display: d.displayName, Sessions: []string{}}
	for label := range d.sessions {
		w.Sessions = append(w.Sessions, label)
	}
	disp := DisplayInfo{Name: d.displayName, Private: d.disp != nil, Nested: d.disp != nil && d.disp.Nested(), TrustDomain: d.name}
	if d.disp != nil {
		disp.ServerPID, disp.PIDs = d.disp.ServerPID(), d.disp.PIDs()
	}
	return w, disp, true
}

// workerReport is one domain's part of status: its worker and display, and what the
// worker reports running.
type workerReport struct {
	worker  WorkerInfo
	display DisplayInfo
	// ok is false when the domain has not started or has stopped.
	ok     bool
	status host.WorkerStatus
	err    error
}

// report describes the domain and asks its worker what it runs, waiting at most timeout.
func (d *domain) report(ctx context.Context, timeout time.Duration) workerReport {
	w, disp, ok := d.info()
	if !ok {
		return workerReport{}
	}
	d.mu.Lock()
	h := d.h
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := h.Status(ctx)
	if err != nil {
		d.s.log.Warn("worker status", "trust_domain", d.name, "err", err)
	}
	return workerReport{worker: w, display: disp, ok: true, status: st, err: err}
}

// errDomainStopped is returned by a domain start that the host's shutdown overtook.
var errDomainStopped = errors.New("the trust domain stopped")

// userXAuthority is the Xauthority file X clients of this user read: $XAUTHORITY, else
// ~/.Xauthority; "" when neither can be named.
func userXAuthority() string {
	if v := os.Getenv("XAUTHORITY"); v != "" {
		return v
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".Xauthority")
	}
	return ""
}
