package personui

import (
	"fmt"
	"log/slog"
	"time"
)

// ArmDelay is how long a window must have been fully visible, unmoved, before a press on
// one of its buttons counts.
const ArmDelay = 500 * time.Millisecond

// CoverBudget is how long a window may stay less than top-most over its whole area after a
// change of the display's stacking before it gives up: the dialog answers Deny, the
// indicator reports the cover (NewIndicator's onCovered).
const CoverBudget = 100 * time.Millisecond

// Options say where to draw. They are explicit: the package never reads DISPLAY or
// XAUTHORITY from the environment.
type Options struct {
	// Display is the X display name, ":N" or ":N.S" (also "unix:N"); only local displays
	// are supported.
	Display string
	// XAuthority is the Xauthority file holding the display's MIT-MAGIC-COOKIE-1. Empty, a
	// file that does not exist or cannot be read, or one without an entry for the display
	// connects without a cookie, as Xlib does (a server started without -auth, or one that
	// admits the user by other means, expects none); when the server then refuses, the
	// error says why no cookie was sent.
	XAuthority string
	// OnShown, when set, is called each time a window becomes fully visible in a new place
	// (first mapped, uncovered, moved or resized), with the window and its button
	// rectangles in root coordinates; its buttons count ArmDelay later. It runs on the
	// window's event goroutine and must return promptly. Tests and benchmarks use it to
	// find the windows.
	OnShown func(Shown)
	// Logger receives debug lines; nil discards.
	Logger *slog.Logger

	// physicalForTest, when set, makes the slave devices whose names it accepts count as
	// physical input devices whatever they are (an XTEST slave included): tests use it to
	// stand for a person's mouse on a server that has none. It is unexported so that nothing
	// outside this package's tests — no flag, no environment variable — can set it.
	physicalForTest func(name string) bool
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Shown describes a window that can now be answered.
type Shown struct {
	// Window is the X window id (the client window, not the window manager's frame).
	Window uint32
	// Bounds is the window's rectangle in root coordinates.
	Bounds Rect
	// Buttons are the window's buttons in root coordinates.
	Buttons []Button
}

// Button is one button of a shown window.
type Button struct {
	// Name is the Answer's String for dialog buttons, "stop" for the indicator's.
	Name string
	Rect Rect
}

// Rect is a rectangle in pixels.
type Rect struct {
	X, Y, Width, Height int
}

// Center returns the rectangle's centre point.
func (r Rect) Center() (x, y int) { return r.X + r.Width/2, r.Y + r.Height/2 }

func (r Rect) contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.Width && y < r.Y+r.Height
}

// Answer is the person's answer to a consent dialog.
type Answer int

// Answers. Every outcome other than a click on an allow button is Deny.
const (
	Deny Answer = iota + 1
	AllowOnce
	AllowForSession
)

// String returns deny, allow_once or allow_for_session.
func (a Answer) String() string {
	switch a {
	case Deny:
		return "deny"
	case AllowOnce:
		return "allow_once"
	case AllowForSession:
		return "allow_for_session"
	}
	return fmt.Sprintf("answer(%d)", int(a))
}

// Operation is what the agent wants to do with the resource.
type Operation int

// Operations.
const (
	Observe Operation = iota + 1
	Input
	Terminate
	Launch
	// Read and Write are a file's operations.
	Read
	Write
)

// String returns the operation as the dialog words it ("observe", "send input to", …).
func (o Operation) String() string {
	switch o {
	case Observe:
		return "observe"
	case Input:
		return "send input to"
	case Terminate:
		return "terminate"
	case Launch:
		return "launch"
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("operation(%d)", int(o))
}

// ResourceKind says what a Resource is.
type ResourceKind int

// Resource kinds.
const (
	ResourceWindow ResourceKind = iota + 1
	ResourceProcess
	ResourceDisplay
	ResourceClipboard
	ResourceCommand
	// ResourceFile is a file a call reads or writes (Path).
	ResourceFile
)

// String returns window, process, display, clipboard or command.
func (k ResourceKind) String() string {
	switch k {
	case ResourceWindow:
		return "window"
	case ResourceProcess:
		return "process"
	case ResourceDisplay:
		return "display"
	case ResourceClipboard:
		return "clipboard"
	case ResourceCommand:
		return "command"
	case ResourceFile:
		return "file"
	}
	return fmt.Sprintf("resource(%d)", int(k))
}

// Resource describes what the request is about. Every string may come from an agent or a
// program it controls (a window title certainly does); the dialog shows them as data only.
type Resource struct {
	Kind ResourceKind
	// Title is the window's title (ResourceWindow).
	Title string
	// App is the program's name and Executable its path (ResourceWindow, ResourceProcess).
	App, Executable string
	// PID is the process id (ResourceWindow, ResourceProcess); 0 is not shown.
	PID int
	// Command is the command line to launch (ResourceCommand).
	Command string
	// Path is the file's absolute path (ResourceFile).
	Path string
}

// Request is one consent question.
type Request struct {
	// Session is the session's public label and Mode its mode ("standard").
	Session, Mode string
	// Tool is the tool the agent called ("click").
	Tool      string
	Operation Operation
	Resource  Resource
	// SessionGrant is how long AllowForSession lasts, shown on its button ("for 15 min");
	// zero shows "for this session".
	SessionGrant time.Duration
}

// Session is one active session as the indicator lists it.
type Session struct {
	Label, Mode string
	// PersonInControl says the person has taken over the session's display (a nested
	// display whose window has their pointer or focus): the agent's acting calls are
	// refused meanwhile. The bar says "you have control" beside the session.
	PersonInControl bool
}
