package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/host/personui"
)

// sharedDisplay checks a display `run` would share with a person: the server with the
// cookie an X client of this environment sends, its extensions and window manager, how it
// admits clients without a cookie, which input devices answer the person's windows, and
// the accessibility bus of the environment's session bus.
func (c *checker) sharedDisplay(ctx context.Context, name string) {
	xauth := c.xauthority()
	pctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	facts, err := display.ProbeServer(pctx, name, xauth)
	cancel()
	x := Check{ID: "x_server", Title: "X server", Required: true}
	switch {
	case errors.Is(err, display.ErrAuthRefused):
		x.Status, x.Found = Missing, fmt.Sprintf("%s: %v", name, err)
		x.Meaning = "no session can run on this display: set XAUTHORITY to the Xauthority file holding its cookie (the one the person's session uses), or use --display private"
	case err != nil:
		x.Status, x.Found = Missing, fmt.Sprintf("%s cannot be opened: %v", name, err)
		x.Meaning = "no session can run on this display: check DISPLAY (is the X server running? `cua-host doctor --display private` checks a private display instead)"
	default:
		x.Status = OK
		if facts.Cookie != "" {
			x.Found = fmt.Sprintf("%s answers with the cookie from %s", name, facts.Cookie)
		} else {
			x.Found = fmt.Sprintf("%s answers without a cookie (%s has none for it)", name, orNone(xauth))
		}
	}
	c.add(x)

	c.access(ctx, name)
	if err != nil {
		return
	}
	c.extensions(facts, true)
	c.windowManager(facts, true)
	c.input(ctx, name, xauth)
	c.accessibilityBus(ctx, c.opts.Getenv("DBUS_SESSION_BUS_ADDRESS"), "$DBUS_SESSION_BUS_ADDRESS")
}

// privateDisplay starts the private display `run` would start (Xvfb, openbox, a session
// bus), checks it like a shared one, and stops it.
func (c *checker) privateDisplay(ctx context.Context) {
	p := Check{ID: "private_display", Title: "private display", Required: true}
	var absent, pkgs []string
	for _, prog := range []struct{ bin, pkg string }{{"Xvfb", "xvfb"}, {"openbox", "openbox"}, {"dbus-daemon", "dbus"}} {
		if _, ok := c.lookPath(prog.bin); !ok {
			absent, pkgs = append(absent, prog.bin), append(pkgs, prog.pkg)
		}
	}
	if len(absent) > 0 {
		p.Status, p.Found = Missing, "not started: "+strings.Join(absent, ", ")+" not found on PATH"
		p.Meaning = "with no $DISPLAY, `run` starts a private display and cannot; set DISPLAY to share a display instead"
		p.Install = pkgs
		c.add(p)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 3*c.opts.Timeout)
	defer cancel()
	d, err := display.Start(sctx, display.Options{Logger: c.opts.Logger, WindowManager: true, SessionBus: true, Path: c.opts.Getenv("PATH")})
	if err != nil {
		p.Status, p.Found = Missing, "did not start: "+err.Error()
		p.Meaning = "with no $DISPLAY, `run` starts a private display and would fail the same way"
		c.add(p)
		return
	}
	defer d.Close()
	p.Status, p.Found = OK, fmt.Sprintf("started %s with openbox and a session bus, then stopped it", d.Name())
	p.Meaning = "the session's own display: standard mode needs no consent for what is on it, and nobody is asked (--consent deny)"
	c.add(p)
	pctx, pcancel := context.WithTimeout(ctx, c.opts.Timeout)
	facts, err := display.ProbeServer(pctx, d.Name(), d.XAuthority())
	pcancel()
	if err != nil {
		c.add(Check{ID: "x_server", Title: "X server", Required: true, Status: Missing, Found: "the private display cannot be opened: " + err.Error()})
		return
	}
	c.extensions(facts, false)
	c.windowManager(facts, false)
	bus := ""
	for _, kv := range d.Env() {
		if v, ok := strings.CutPrefix(kv, "DBUS_SESSION_BUS_ADDRESS="); ok {
			bus = v
		}
	}
	c.accessibilityBus(ctx, bus, "the private display's session bus")
}

// extension describes one X extension: when the default run needs it and what its absence
// means.
type extension struct {
	id, name string
	// required says whether the default run on a shared or private display needs it;
	// degrades whether its absence costs a run something all the same (Warn, not
	// Missing).
	required    func(shared bool) bool
	degrades    bool
	minVersion  [2]int // zero: any version
	version     func(display.ServerFacts) string
	ok, without string
}

var extensions = []extension{
	{id: "ext_xtest", name: "XTEST", required: always,
		ok:      "input: every input tool sends XTEST input, through the core devices (foreground) or the session's own devices (background)",
		without: "click, type_text, press_key and every other input tool fail on this display, in every mode"},
	{id: "ext_xinput", name: "XInputExtension", required: onShared, degrades: true, minVersion: [2]int{2, 2},
		version: func(f display.ServerFacts) string { return f.XInput },
		ok:      "background delivery (a pointer and keyboard of the session's own, no focus taken) and the person's windows (consent dialog, session bar with Stop)",
		without: "no background delivery (background_unavailable on a shared display), and on a shared display `run` cannot show its session bar (it stops unless --indicator=false) nor the consent dialog"},
	{id: "ext_x_resource", name: "X-Resource", required: always, minVersion: [2]int{1, 2},
		version: func(f display.ServerFacts) string { return f.XRes },
		ok:      "window owners: the pid the server saw on each client's socket, which ownership, protected windows and list_windows rely on",
		without: "no window can be attributed to a process: standard mode cannot tell the session's windows from anyone else's, and acting on windows is refused"},
	{id: "ext_security", name: "SECURITY", required: onShared,
		ok:      "programs launched on a shared display run as untrusted X clients (no XTEST, no screen reading, no events to trusted windows)",
		without: "on a shared display launch_app fails closed (unsupported); a private display does not need it"},
	{id: "ext_mit_shm", name: "MIT-SHM", required: never, degrades: true,
		ok:      "fast captures through shared memory (when the worker shares the server's IPC namespace)",
		without: "captures fall back to GetImage: slower screenshots, same pixels"},
	{id: "ext_xkeyboard", name: "XKEYBOARD", required: never, degrades: true,
		ok:      "applications read the keymap cua-host remaps for characters outside it, and the session's modifier state",
		without: "applications see core keymaps only: typing characters the keymap lacks and modifiers from background delivery may not arrive"},
	{id: "ext_randr", name: "RANDR", required: never,
		ok:      "screen configuration; nested displays (Xephyr) follow their window's size through it",
		without: "cua-host reads the screen size from the root window and does not need it on the display it drives"},
}

func always(bool) bool          { return true }
func onShared(shared bool) bool { return shared }
func never(bool) bool           { return false }

// extensions adds one check per extension cua-host uses or reports.
func (c *checker) extensions(f display.ServerFacts, shared bool) {
	for _, e := range extensions {
		ch := Check{ID: e.id, Title: e.name, Required: e.required(shared)}
		v := ""
		if e.version != nil {
			v = e.version(f)
		}
		switch {
		case !f.Has(e.name):
			ch.Found, ch.Meaning = "not offered by the server", e.without
		case e.minVersion != [2]int{} && !display.AtLeast(v, e.minVersion[0], e.minVersion[1]):
			ch.Found, ch.Meaning = fmt.Sprintf("version %s, at least %d.%d needed", orNone(v), e.minVersion[0], e.minVersion[1]), e.without
		default:
			ch.Status, ch.Found, ch.Meaning = OK, "present", e.ok
			if v != "" {
				ch.Found = "version " + v
			}
		}
		if ch.Status == 0 {
			ch.Status = Missing
			if !ch.Required && e.degrades {
				ch.Status = Warn
			}
		}
		c.add(ch)
	}
}

// windowManager reports the EWMH window manager.
func (c *checker) windowManager(f display.ServerFacts, shared bool) {
	ch := Check{ID: "window_manager", Title: "window manager", Required: !shared}
	switch {
	case f.WindowManager != "":
		ch.Status, ch.Found = OK, f.WindowManager+" (_NET_SUPPORTING_WM_CHECK)"
		ch.Meaning = "list_windows, bring_to_front, set_window_frame and foreground delivery go through it"
	case f.WMCheck:
		ch.Status, ch.Found = OK, "an EWMH window manager without a name (_NET_SUPPORTING_WM_CHECK)"
	default:
		ch.Status, ch.Found = Warn, "none: the root window has no live _NET_SUPPORTING_WM_CHECK"
		ch.Meaning = "without an EWMH window manager list_windows finds no windows (_NET_CLIENT_LIST), and bring_to_front, set_window_frame and foreground delivery fail"
		if !shared {
			ch.Status = Missing
			ch.Install = []string{"openbox"}
		}
	}
	c.add(ch)
}

// access reports whether the display admits this user without a cookie.
func (c *checker) access(ctx context.Context, name string) {
	ch := Check{ID: "display_access", Title: "cookie needed to connect"}
	pctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	a, err := display.ProbeAccess(pctx, name)
	cancel()
	switch {
	case err != nil:
		ch.Status, ch.Found = Warn, "not checked: "+err.Error()
	case a.NoCookie:
		ch.Status, ch.Found = Warn, a.String()
		ch.Meaning = "a program the session launches can connect as a trusted client although the sandbox hides every cookie: on this display the sandbox does not keep launched programs from XTEST or screen reading; prefer --display private"
	default:
		ch.Status, ch.Found = OK, a.String()
		ch.Meaning = "launched programs, which the sandbox keeps from every cookie file, connect only with the untrusted cookie the worker gives them"
	}
	c.add(ch)
}

// input reports which input devices can answer the person's windows.
func (c *checker) input(ctx context.Context, name, xauth string) {
	ch := Check{ID: "input_devices", Title: "physical input devices"}
	pctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	in, err := personui.ProbeInput(pctx, personui.Options{Display: name, XAuthority: xauth})
	cancel()
	switch {
	case err != nil:
		ch.Status, ch.Found = Warn, "not checked: "+err.Error()
	case in.Kind == personui.InputPhysical:
		ch.Status, ch.Found = OK, fmt.Sprintf("%d pointer(s), %d keyboard(s)", len(in.Pointers), len(in.Keyboards))
		ch.Meaning = in.Summary() + "; XTEST clients (xdotool) cannot answer them"
	default:
		ch.Status, ch.Found = Warn, "none: only XTEST devices ("+in.Kind.String()+")"
		ch.Meaning = "standard mode's consent dialog and the Stop button cannot tell the person from a program with a trusted connection: " + in.Summary()
	}
	c.add(ch)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
