package atspi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/godbus/dbus/v5"
)

// ref names one accessible object: its application's unique bus name and object path.
type ref struct {
	bus  string
	path dbus.ObjectPath
}

func (r ref) String() string { return r.bus + string(r.path) }

// registryRoot is the desktop: its children are the registered applications.
var registryRoot = ref{bus: "org.a11y.atspi.Registry", path: "/org/a11y/atspi/accessible/root"}

// call makes one call with the per-call timeout and stores the reply into out.
// A reply that does not come in time is ErrNotResponding; an object or application that
// is gone is ErrStale.
func (c *Client) call(ctx context.Context, conn *dbus.Conn, r ref, method string, args []any, out ...any) error {
	cctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	call := conn.Object(r.bus, r.path).CallWithContext(cctx, method, 0, args...)
	if call.Err != nil {
		return classify(ctx, call.Err, r, method, c.callTimeout.String())
	}
	if err := call.Store(out...); err != nil {
		return fmt.Errorf("atspi: %s on %s: %w", short(method), r, err)
	}
	return nil
}

// classify turns a failed call's error into this package's errors. ctx is the caller's
// context (not the per-call one), so that the caller's own deadline stays a context error.
func classify(ctx context.Context, err error, r ref, method, timeout string) error {
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return fmt.Errorf("atspi: %s on %s: %w", short(method), r, cerr)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s did not answer %s within %s", ErrNotResponding, r.bus, short(method), timeout)
	}
	if errors.Is(err, dbus.ErrClosed) {
		return fmt.Errorf("%w: connection lost during %s", ErrNoBus, short(method))
	}
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.ServiceUnknown",
			"org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.NoReply",
			"org.freedesktop.DBus.Error.Disconnected":
			return fmt.Errorf("%w: %s: %s", ErrStale, r, de.Name)
		case "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
			"org.freedesktop.DBus.Error.InvalidArgs", "org.freedesktop.DBus.Error.NotSupported":
			return fmt.Errorf("%w: %s on %s: %s", ErrUnsupported, short(method), r, de.Name)
		}
		return fmt.Errorf("atspi: %s on %s: %s", short(method), r, de.Error())
	}
	return fmt.Errorf("atspi: %s on %s: %w", short(method), r, err)
}

// short drops the interface prefix of a method name for messages.
func short(method string) string {
	if i := strings.LastIndexByte(method, '.'); i >= 0 {
		return method[i+1:]
	}
	return method
}

// extents is Component.GetExtents' reply.
type extents struct{ X, Y, W, H int32 }

// rect converts extents to a Rect; ok is false for the "no position" values toolkits
// report for objects that are not on screen (INT_MIN coordinates, empty sizes).
func (e extents) rect() (Rect, bool) {
	const bogus = -(1 << 30)
	if e.W <= 0 || e.H <= 0 || e.X < bogus || e.Y < bogus {
		return Rect{}, false
	}
	return Rect{X: int(e.X), Y: int(e.Y), Width: int(e.W), Height: int(e.H)}, true
}

// actionInfo is one Action.GetActions entry: localized name, description, key binding.
type actionInfo struct{ Name, Description, KeyBinding string }
