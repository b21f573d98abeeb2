package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/host/personui"
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
	// Input is how the consent dialog and Stop tell the person from a program on this
	// display: "physical" (only physical input devices answer them) or "xtest_only" (the
	// display has none: any program with a trusted connection can answer them).
	Input        string `json:"input,omitempty"`
	InputMeaning string `json:"input_meaning,omitempty"`
	Error        string `json:"error,omitempty"`
}

// probeDisplayAccess connects to name without a cookie to learn whether the server admits
// this user by other means (xhost), and with the cookie in xauthority to learn which input
// devices can answer the person's windows there.
func probeDisplayAccess(ctx context.Context, name, xauthority string) displayAccessStatus {
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
	in, err := personui.ProbeInput(ctx, personui.Options{Display: name, XAuthority: xauthority})
	if err != nil {
		st.InputMeaning = "input devices not checked: " + err.Error()
		return st
	}
	st.Input, st.InputMeaning = in.Kind.String(), in.Summary()
	return st
}

// warnSharedDisplay logs, before a session starts on a display shared with a person, what
// the sandbox and the person's windows cannot hold back there.
func warnSharedDisplay(ctx context.Context, name, xauthority string, log *slog.Logger) {
	st := probeDisplayAccess(ctx, name, xauthority)
	switch {
	case st.Error != "":
		log.Warn("could not check how the display admits clients", "display", name, "err", st.Error)
	case st.NoCookie:
		log.Warn("the display admits this user without a cookie: programs the session launches can become trusted clients of it, sandbox or not", "display", name, "hosts", st.Hosts, "access_control_disabled", st.ControlDisabled)
	}
	if st.Input == "xtest_only" {
		log.Warn("the display has no physical input devices: the consent dialog and Stop cannot tell the person from a program with a trusted connection to it (launched programs have none: they are sandboxed and untrusted)", "display", name)
	}
}

// statusXAuthority is the Xauthority file an X client started with this environment uses.
func statusXAuthority(getenv func(string) string) string {
	if v := getenv("XAUTHORITY"); v != "" {
		return v
	}
	if home := getenv("HOME"); home != "" {
		return home + "/.Xauthority"
	}
	return ""
}
