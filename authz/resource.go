package authz

import (
	"fmt"
	"strconv"
	"strings"
)

// Resource is the concrete resource one call touches, as the worker resolved it from the
// call's arguments and the desktop before deciding. Nothing in it comes from the caller
// unchecked: a window's pid is the server-observed owner, an executable is /proc/PID/exe.
type Resource struct {
	// Kind is the resource's kind; for a pointer tool with desktop coordinates it is
	// ResourceDisplay although the tool's entry says ResourceWindow.
	Kind ResourceKind
	// Op is the operation class the call performs on it.
	Op Operation
	// PID is the process owning the window, or the process itself (ResourceWindow,
	// ResourceProcess).
	PID int
	// Window is the X window id; 0 for every window of PID.
	Window uint32
	// StartTime is PID's start time (clock ticks after boot): it ties the resource to one
	// process, so a reused pid is a different resource.
	StartTime uint64
	// Executable is the canonical path of PID's executable, or the program a launch
	// starts (ResourceApplication).
	Executable string
	// Title is the window's title, for consent prompts only; it decides nothing.
	Title string
	// Owned is true when the calling session launched PID (and it is still that process).
	Owned bool
	// Argv is the exact command line a launch runs (ResourceApplication): Argv[0] is the
	// absolute path that is executed, the rest its arguments, field codes expanded.
	Argv []string
	// DesktopID is the desktop entry a launch runs ("debian-xterm.desktop"), or "".
	DesktopID string
	// Path is the canonical path of a file a call reads or writes (ResourceFile): absolute,
	// its directories' symbolic links resolved, the file itself no symbolic link.
	Path string
	// Declared is true when a launch runs a desktop entry the system declares, exactly
	// as its Exec line says, with only file or URL arguments its field codes take, and
	// outside a terminal. Standard sessions need consent for every other launch.
	Declared bool
}

// String names the resource exactly, the way a ConsentRequest does:
// "window:pid=123,id=0x400001", "process:pid=123", "display", "clipboard",
// "application:/usr/bin/xterm", "file:/data/out/shot.png".
func (r Resource) String() string {
	switch r.Kind {
	case ResourceWindow:
		if r.Window == 0 {
			return "window:pid=" + strconv.Itoa(r.PID) + ",id=*"
		}
		return fmt.Sprintf("window:pid=%d,id=0x%x", r.PID, r.Window)
	case ResourceProcess:
		return "process:pid=" + strconv.Itoa(r.PID)
	case ResourceApplication:
		return "application:" + r.Executable
	case ResourceFile:
		return "file:" + r.Path
	}
	return r.Kind.String()
}

// GrantKey is the exact scope of a consent grant: one resource and one operation class.
// Two calls share a grant only when their keys are equal.
type GrantKey struct {
	Kind      ResourceKind
	Op        Operation
	PID       int
	Window    uint32
	StartTime uint64
	// Command is a launch's exact argument vector, NUL-separated (arguments cannot hold
	// NUL): a grant to run one command line never covers another.
	Command string
	// Path is a file's canonical path: a grant to write one file never covers another.
	Path string
}

// Key returns the grant scope of a call on r.
func (r Resource) Key() GrantKey {
	k := GrantKey{Kind: r.Kind, Op: r.Op, PID: r.PID, Window: r.Window, StartTime: r.StartTime}
	switch r.Kind {
	case ResourceApplication:
		k.Command = strings.Join(r.Argv, "\x00")
	case ResourceFile:
		k.Path = r.Path
	}
	return k
}

// Target is everything the worker resolved about one call before deciding it.
type Target struct {
	// Resource is the resource the call touches (Kind ResourceNone when none).
	Resource Resource
	// SelfPID is a protected process the call names directly (its pid argument or the
	// owner of its window_id): the host, the worker, the proxy, the display server or a
	// consent UI. Zero when none.
	SelfPID int
	// ProtectedUIPID is a protected process owning a window that the call's input would
	// land on (the window under a coordinate, or the focused window for keyboard input).
	// Zero when none.
	ProtectedUIPID int
	// Also lists further resources the call touches besides Resource: a paste (ctrl+v,
	// shift+Insert, a middle click) reads the clipboard or the primary selection into the
	// window it targets, so it is also a clipboard observation. Each is decided like
	// Resource at stage 7.
	Also []Resource
	// Unresolved, when set, is why the resource could not be resolved (a window that does
	// not exist, a pid that is not a number). The call is refused with it once policy and
	// classification have had their say.
	Unresolved *Refusal
}
