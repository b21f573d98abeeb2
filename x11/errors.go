package x11

import (
	"errors"
	"fmt"
)

// Sentinel errors. Adapters match them with errors.Is and map them to refusal codes;
// errors returned by this package wrap them with context.
var (
	// ErrNoDisplay means no X display could be opened (DISPLAY unset, server gone, or
	// authorization refused).
	ErrNoDisplay = errors.New("x11: no display")
	// ErrClosed means the Backend was closed.
	ErrClosed = errors.New("x11: backend closed")
	// ErrWindowNotFound means a window id does not name a live top-level window.
	ErrWindowNotFound = errors.New("x11: window not found")
	// ErrWindowNotViewable means the window exists but is not mapped (minimized or hidden).
	ErrWindowNotViewable = errors.New("x11: window not viewable")
	// ErrUnknownKey means a key name is not in the keysym table.
	ErrUnknownKey = errors.New("x11: unknown key")
	// ErrOutOfBounds means a coordinate or region lies outside the screen or window.
	ErrOutOfBounds = errors.New("x11: out of bounds")
	// ErrInvalidArgument means an argument is out of its documented range.
	ErrInvalidArgument = errors.New("x11: invalid argument")
	// ErrUnsupported means the server lacks something the operation needs (XTEST,
	// an EWMH window manager).
	ErrUnsupported = errors.New("x11: unsupported")
	// ErrNoProcess means no process with the pid exists.
	ErrNoProcess = errors.New("x11: no such process")
	// ErrNotFound means an application name is not found on PATH.
	ErrNotFound = errors.New("x11: executable not found")
	// ErrTimeout means the X server or another client did not answer in time.
	ErrTimeout = errors.New("x11: timeout")
	// ErrNoKeycode means no keycode was left to map a symbol to.
	ErrNoKeycode = errors.New("x11: no spare keycode")
	// ErrSelectionNotOwned means the X server did not make this client the owner of a
	// selection it asked for, or another client took it back at once.
	ErrSelectionNotOwned = errors.New("x11: selection not owned")
)

// XError is an error the X server returned for a request.
type XError struct {
	// Request names the request that failed, e.g. "GetGeometry".
	Request string
	// Err is xgb's error value.
	Err error
}

// Error implements error.
func (e *XError) Error() string { return fmt.Sprintf("x11: %s: %v", e.Request, e.Err) }

// Unwrap returns the xgb error.
func (e *XError) Unwrap() error { return e.Err }

func xerr(request string, err error) error {
	if err == nil {
		return nil
	}
	return &XError{Request: request, Err: err}
}
