package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/internal/sandbox"
)

// sandboxStatus says whether programs a session launches can be sandboxed here.
type sandboxStatus struct {
	// Available is true when bubblewrap confines a test program for this user.
	Available bool   `json:"available"`
	Bwrap     string `json:"bwrap,omitempty"`
	// Error says why not, and what to install or change; launch_app is then refused
	// unless `--sandbox off` is given.
	Error string `json:"error,omitempty"`
}

// probeSandbox checks bubblewrap as the worker will.
func probeSandbox() sandboxStatus {
	bwrap, err := sandbox.Find()
	if err == nil {
		err = sandbox.Probe(bwrap)
	}
	if err != nil {
		return sandboxStatus{Bwrap: bwrap, Error: err.Error()}
	}
	return sandboxStatus{Available: true, Bwrap: bwrap}
}

// displayAccessStatus is how the display in $DISPLAY admits local clients.
type displayAccessStatus struct {
	Name string `json:"name,omitempty"`
	// Checked is false when there is no display to check, or it could not be reached
	// (Error says why).
	Checked bool `json:"checked"`
	// NoCookie is true when the display admits this user without a cookie: hiding cookie
	// files then keeps no launched program from being a trusted client of it.
	NoCookie        bool     `json:"admits_user_without_cookie"`
	ControlDisabled bool     `json:"access_control_disabled"`
	Hosts           []string `json:"host_entries,omitempty"`
	Meaning         string   `json:"meaning,omitempty"`
	Error           string   `json:"error,omitempty"`
}

// probeDisplayAccess connects to name without a cookie to learn whether the server admits
// this user by other means (xhost).
func probeDisplayAccess(ctx context.Context, name string) displayAccessStatus {
	st := displayAccessStatus{Name: name}
	if name == "" {
		return st
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	a, err := display.ProbeAccess(ctx, name)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Checked, st.NoCookie, st.ControlDisabled, st.Hosts = true, a.NoCookie, a.ControlDisabled, a.Hosts
	st.Meaning = a.String()
	if a.NoCookie {
		st.Meaning += ": a program the session launches can connect to it as a trusted client although its cookie is hidden; prefer --display private"
	}
	return st
}

// warnSharedDisplay logs, before a session starts on a display shared with a person, what
// the sandbox cannot hold back there.
func warnSharedDisplay(ctx context.Context, name string, log *slog.Logger) {
	st := probeDisplayAccess(ctx, name)
	switch {
	case st.Error != "":
		log.Warn("could not check how the display admits clients", "display", name, "err", st.Error)
	case st.NoCookie:
		log.Warn("the display admits this user without a cookie: programs the session launches can become trusted clients of it, sandbox or not", "display", name, "hosts", st.Hosts, "access_control_disabled", st.ControlDisabled)
	}
}
