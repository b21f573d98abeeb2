package atspi

import "errors"

// Sentinel errors. Adapters match them with errors.Is and map them to refusal codes;
// errors returned by this package wrap them with context.
var (
	// ErrNoBus means there is no usable accessibility bus: no session bus, GetAddress
	// failed, or the bus refused the connection.
	ErrNoBus = errors.New("atspi: no accessibility bus")
	// ErrClosed means the Client was closed.
	ErrClosed = errors.New("atspi: client closed")
	// ErrNotAccessible means the process is not registered on the accessibility bus
	// (a plain X client, or a toolkit with accessibility off).
	ErrNotAccessible = errors.New("atspi: application not accessible")
	// ErrWindowNotMatched means the application is accessible but none of its top-level
	// accessibles matches the X window.
	ErrWindowNotMatched = errors.New("atspi: window not matched")
	// ErrNotResponding means the application (or the registry) did not answer a call
	// within the per-call timeout.
	ErrNotResponding = errors.New("atspi: application not responding")
	// ErrInvalidToken means an element token or snapshot id is malformed.
	ErrInvalidToken = errors.New("atspi: invalid element token")
	// ErrUnknownSnapshot means a snapshot id is not one of this set's snapshots: never
	// taken in this session, or evicted.
	ErrUnknownSnapshot = errors.New("atspi: unknown snapshot")
	// ErrStale means an element reference is out of date: a newer snapshot of the window
	// exists, or the element no longer exists or changed role.
	ErrStale = errors.New("atspi: stale element")
	// ErrNoSuchElement means an element index is outside its snapshot.
	ErrNoSuchElement = errors.New("atspi: no such element")
	// ErrUnsupported means the element offers no accessibility route for the operation
	// (no matching action, no EditableText, no Value, not a Component).
	ErrUnsupported = errors.New("atspi: unsupported")
	// ErrOutOfRange means a value lies outside the element's minimum and maximum.
	ErrOutOfRange = errors.New("atspi: value out of range")
)

// Menu errors.
var (
	// ErrMenuPath means a segment of a menu path could not be resolved (*MenuError says
	// which and why).
	ErrMenuPath = errors.New("atspi: menu path not resolved")
	// ErrNoMenuBar means the window's accessible tree has no menu bar.
	ErrNoMenuBar = errors.New("atspi: no menu bar")
	// ErrInvalidMenuPath means a menu path is empty, too long or has an empty segment.
	ErrInvalidMenuPath = errors.New("atspi: invalid menu path")
)
