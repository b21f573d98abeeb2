package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/internal/sandbox"
)

// accessibilityBus asks the session bus at addr for the accessibility bus
// (org.a11y.Bus.GetAddress), which activates at-spi2-core's bus launcher, as the worker
// does before it reads a tree.
func (c *checker) accessibilityBus(ctx context.Context, addr, from string) {
	ch := Check{ID: "atspi_bus", Title: "accessibility bus (AT-SPI)"}
	without := "no accessibility tree: get_window_state returns the screenshot and window properties only (degraded), and element tokens, set_value, invoke_menu and the accessibility routes of click and type_text are unavailable"
	if addr == "" {
		ch.Status, ch.Found, ch.Meaning = Warn, "no session bus in "+from, without+"; start the agent's host inside a desktop session, or use --display private (it has its own bus)"
		c.add(ch)
		return
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	a11y, err := a11yBusAddress(actx, addr)
	if err != nil {
		ch.Status, ch.Found, ch.Meaning = Warn, err.Error(), without
		ch.Install = []string{"at-spi2-core"}
		c.add(ch)
		return
	}
	ch.Status, ch.Found = OK, "org.a11y.Bus.GetAddress on "+from+" answered "+a11y
	ch.Meaning = "applications that join it (GTK, Qt with QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1, Chromium with --force-renderer-accessibility) expose their trees: element tokens, set_value, invoke_menu"
	c.add(ch)
}

// a11yBusAddress connects to the session bus at addr and calls org.a11y.Bus.GetAddress. A
// bus that does not finish the handshake or the call before ctx ends has its connection
// closed.
func a11yBusAddress(ctx context.Context, addr string) (string, error) {
	conn, err := dbus.Dial(addr, dbus.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("session bus %s: %w", addr, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := conn.Auth(nil); err != nil {
		return "", fmt.Errorf("session bus %s: %w", addr, ctxErr(ctx, err))
	}
	if err := conn.Hello(); err != nil {
		return "", fmt.Errorf("session bus %s: %w", addr, ctxErr(ctx, err))
	}
	var a11y string
	err = conn.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&a11y)
	if err != nil {
		return "", fmt.Errorf("org.a11y.Bus.GetAddress: %w", ctxErr(ctx, err))
	}
	if a11y == "" {
		return "", errors.New("org.a11y.Bus.GetAddress returned no address")
	}
	return a11y, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// sandbox checks bubblewrap as the worker will: found where the sandbox looks for it, and
// able to build the sandbox for this user (user namespaces).
func (c *checker) sandbox() {
	ch := Check{ID: "sandbox", Title: "sandbox (bubblewrap)", Required: true}
	bwrap, err := sandbox.Find()
	if err == nil {
		err = sandbox.Probe(bwrap)
	}
	switch {
	case bwrap == "":
		ch.Status, ch.Found, ch.Install = Missing, err.Error(), []string{"bubblewrap"}
	case err != nil:
		ch.Status, ch.Found = Missing, err.Error()
	default:
		ch.Status, ch.Found = OK, bwrap+" confines a test program"
	}
	if ch.Status == OK {
		ch.Meaning = "programs a session launches run confined: no cookie of the person's, no other process, no terminal"
	} else {
		ch.Meaning = "launch_app is refused in every mode unless `run --sandbox off`, which runs launched programs unconfined, as you"
	}
	c.add(ch)
}

// programs checks the programs other displays and features need, and /dev/uinput.
func (c *checker) programs() {
	private := !c.r.Shared
	for _, p := range []struct {
		id, bin, pkg    string
		use, without    string
		skipWhenPrivate bool
	}{
		{id: "xvfb", bin: "Xvfb", pkg: "xvfb", use: "private displays (--display private, the default without $DISPLAY)", without: "`run --display private` cannot start", skipWhenPrivate: true},
		{id: "openbox", bin: "openbox", pkg: "openbox", use: "the window manager of private displays", without: "`run --display private` cannot start", skipWhenPrivate: true},
		{id: "dbus_daemon", bin: "dbus-daemon", pkg: "dbus", use: "the session bus of private displays (the accessibility tree is reached through it)", without: "`run --display private` cannot start", skipWhenPrivate: true},
		{id: "xephyr", bin: "Xephyr", pkg: "xserver-xephyr", use: "nested displays: the session's own display shown as a window on the person's", without: "nested displays are unavailable; private and shared displays are not affected"},
	} {
		if p.skipWhenPrivate && private {
			continue // the private_display check found it, or said it is missing
		}
		ch := Check{ID: p.id, Title: p.bin}
		if path, ok := c.lookPath(p.bin); ok {
			ch.Status, ch.Found, ch.Meaning = OK, path, p.use
		} else {
			ch.Status, ch.Found, ch.Meaning, ch.Install = Missing, "not found on PATH", p.without, []string{p.pkg}
		}
		c.add(ch)
	}
	c.atspiCore()
	c.uinput()
}

// atSpiServiceDirs are where dbus-daemon finds session services (the ones of a stock
// Debian system; XDG_DATA_DIRS may add others).
var atSpiServiceDirs = []string{"/usr/share/dbus-1/services", "/usr/local/share/dbus-1/services"}

// atspiCore checks that a session bus can activate the accessibility bus: at-spi2-core's
// D-Bus service file.
func (c *checker) atspiCore() {
	ch := Check{ID: "at_spi2_core", Title: "at-spi2-core"}
	for _, dir := range atSpiServiceDirs {
		p := filepath.Join(dir, "org.a11y.Bus.service")
		if _, err := os.Stat(p); err == nil {
			ch.Status, ch.Found = OK, p
			ch.Meaning = "a session bus can start the accessibility bus (private displays' buses included)"
			c.add(ch)
			return
		}
	}
	ch.Status, ch.Found, ch.Install = Warn, "no org.a11y.Bus.service in "+atSpiServiceDirs[0], []string{"at-spi2-core"}
	ch.Meaning = "no accessibility bus on private displays (and none on a shared one unless the desktop starts it): get_window_state is degraded to screenshots and window properties"
	c.add(ch)
}

// uinput reports /dev/uinput. cua-host does not use it.
func (c *checker) uinput() {
	ch := Check{ID: "uinput", Title: "/dev/uinput"}
	const note = "cua-host does not use it: each session gets its own XInput2 pointer and keyboard on the X server instead (docs/adr/0007); the reference driver needs it for background clicks on surfaces without accessibility"
	switch _, err := os.Stat("/dev/uinput"); {
	case err != nil:
		ch.Status, ch.Found = Missing, "absent"
	case unix.Access("/dev/uinput", unix.W_OK) != nil:
		ch.Status, ch.Found = Missing, "present, not writable by this user"
	default:
		ch.Status, ch.Found = OK, "present and writable"
	}
	ch.Meaning = note
	c.add(ch)
}
