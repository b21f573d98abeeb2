package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cua-host/cua-host/internal/sandbox"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/x11/atspi"
)

// launchWrapper returns the x11 backend's LaunchWrapper for the sandbox Hello asks for: nil
// when the operator disabled it, else a function that runs every launched program inside
// a bubblewrap sandbox (internal/sandbox) or, when none can be built here, refuses every
// launch with the reason. It never falls back to an unconfined launch.
//
// The sandbox hides the person's cookie files and runtime directory, every cua-host
// directory but the display's own, and the places Hello names (the journal, the host's
// runtime directories); it keeps what the program was given: the cookie in its
// XAUTHORITY, the X resources beside it in its XENVIRONMENT, and the display's own
// directory when the display is private.
func launchWrapper(cfg *cuav1.Sandbox, private bool, log *slog.Logger) func(argv, env []string) ([]string, error) {
	if cfg.GetDisabled() {
		log.Warn("launched programs are not sandboxed: they can read every file the user can, the person's X cookie included")
		return nil
	}
	bwrap, err := sandbox.Find()
	if err == nil {
		err = sandbox.Probe(bwrap)
	}
	if err != nil {
		log.Warn("launched programs cannot be sandboxed; launch_app is refused", "err", err)
		return func([]string, []string) ([]string, error) {
			return nil, fmt.Errorf("%w; cua-host launches programs only inside a sandbox", err)
		}
	}
	// The worker's own cookie is the person's on a display shared with them; on a private
	// display it is the display's, which its programs are given too.
	ownCookie := os.Getenv("XAUTHORITY")
	home := os.Getenv("HOME")
	uid := os.Getuid()
	extra := cfg.GetHidePaths()
	return func(argv, env []string) ([]string, error) {
		vars := envMap(env)
		var keep, except []string
		if c := vars["XAUTHORITY"]; c != "" {
			keep = append(keep, c)
			// The X resources an untrusted launch is given sit beside its cookie
			// (x11.Launch); nothing else XENVIRONMENT names is kept.
			if x := vars["XENVIRONMENT"]; x != "" && filepath.Dir(x) == filepath.Dir(c) {
				keep = append(keep, x)
			}
		}
		// A private display's directory (its cookie, its session bus) is the session's own;
		// only a directory the host made for one is spared, never one the cookie merely
		// sits in (a home directory would spare ~/.Xauthority with it).
		for _, p := range []string{filepath.Dir(vars["XAUTHORITY"]), vars["XDG_RUNTIME_DIR"]} {
			if private && strings.HasPrefix(filepath.Base(p), privateDisplayDirPrefix) {
				except = append(except, p)
			}
		}
		hide := sandbox.PersonSecrets(home, uid, except)
		if ownCookie != "" && ownCookie != vars["XAUTHORITY"] {
			hide = append(hide, ownCookie)
		}
		hide = append(hide, extra...)
		spec := sandbox.Spec{Hide: hide, Keep: keep, Display: displayNumber(vars["DISPLAY"])}
		if !private {
			// The person's session bus is hidden (through it, systemd's user manager or D-Bus
			// activation would start programs outside the sandbox); the accessibility bus
			// stays reachable, so the program's windows still have an accessibility tree.
			if addr, path := a11yBus(vars["DBUS_SESSION_BUS_ADDRESS"]); addr != "" {
				spec.SetEnv = append(spec.SetEnv, "AT_SPI_BUS_ADDRESS="+addr)
				if path != "" {
					spec.Keep = append(spec.Keep, path)
				}
			}
		}
		return append([]string{bwrap}, spec.Args(argv)...), nil
	}
}

// privateDisplayDirPrefix begins the name of the directory host/display makes for a
// private or nested display (its cookie, its session bus, its runtime files).
const privateDisplayDirPrefix = "cua-display-"

// envMap turns NAME=VALUE entries into a map; the last entry of a name wins, as for exec.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// displayNumber returns N of a local display name ":N", ":N.S" or "unix:N", else -1.
func displayNumber(name string) int {
	_, rest, ok := strings.Cut(name, ":")
	if !ok {
		return -1
	}
	rest, _, _ = strings.Cut(rest, ".")
	n := 0
	if rest == "" || len(rest) > 6 {
		return -1
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// a11yBusTimeout bounds asking the session bus for the accessibility bus at a launch.
const a11yBusTimeout = 500 * time.Millisecond

// a11yBus returns the address of the accessibility bus the session bus at sessionAddr
// names, and the socket file it listens on when that is a path ("" for an abstract
// socket); "" when there is none.
func a11yBus(sessionAddr string) (addr, path string) {
	if sessionAddr == "" {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), a11yBusTimeout)
	defer cancel()
	addr, err := atspi.BusAddress(ctx, sessionAddr)
	if err != nil {
		return "", ""
	}
	for _, part := range strings.Split(strings.TrimPrefix(addr, "unix:"), ",") {
		if p, ok := strings.CutPrefix(part, "path="); ok && strings.HasPrefix(addr, "unix:") {
			return addr, p
		}
	}
	return addr, ""
}
