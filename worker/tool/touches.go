package tool

import (
	"fmt"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/x11"
)

// Touches is what a call of a tool touches beyond what the inventory's shape says, declared
// with the tool (Tool.Touches) and nowhere else: the worker's resolver reads it from the
// registry to find the resources a call is decided on. The zero value touches nothing
// more than the shape.
type Touches struct {
	// Window is set when the tool takes pid and window_id: a call that names only a pid
	// (or nothing, for keyboard input) gets the window the decision was made for written
	// into its arguments, so the handler acts on exactly that window.
	Window bool
	// Pastes, when set, reports whether a call with these decoded arguments pastes the
	// selection into a window (the paste keys, the middle button): such a call is decided
	// as a read of the clipboard too. Arguments that do not parse are no paste: the handler
	// refuses them before it sends anything.
	Pastes func(args map[string]any) bool
	// Files are the arguments that name a file the call reads or writes: each is resolved
	// to one canonical file and decided as a further resource (Call.Files).
	Files []FileArg
	// Launch, when set, plans the program a call runs from its decoded arguments: the
	// exact command line is the resource decided on (Call.Launch).
	Launch func(args map[string]any) (*LaunchPlan, error)
}

// FileArg is an argument naming a file a call reads or writes.
type FileArg struct {
	// Arg is the argument's name.
	Arg string
	// Op is what the call does with the file: authz.OpRead or authz.OpWrite.
	Op authz.Operation
}

// LaunchPlan is exactly what a call that launches a program runs.
type LaunchPlan struct {
	// Argv is the command line: Argv[0] is the absolute path executed.
	Argv []string
	// Executable is Argv[0] with symbolic links resolved (what /proc/PID/exe will say).
	Executable string
	// DesktopID is the desktop entry the launch runs, or "".
	DesktopID string
	// Declared is true when the launch is a desktop entry's Exec line with only the file
	// or URL arguments its field codes take, outside a terminal: a desktop application the
	// system declares. Everything else needs consent in standard mode.
	Declared bool
	// Why says why a launch is not Declared ("" when it is).
	Why string
}

// Declared returns what the registered tools declare they touch, by tool name: the one
// source of the resolver's per-tool facts.
func (r *Registry) Declared() map[string]Touches {
	out := make(map[string]Touches, len(r.order))
	for _, n := range r.order {
		out[n] = r.tools[n].Touches
	}
	return out
}

// InventoryAnnotations returns the MCP annotations the shipped inventory gives the tool
// name, as a registry carries them: the inventory is their only source (tools/list reads
// it directly). It panics for a tool the inventory does not list, a programmer error at
// registration.
func InventoryAnnotations(name string) Annotations {
	e, ok := authz.DefaultInventory().Lookup(name)
	if !ok {
		panic(fmt.Sprintf("tool: %q is not in the inventory", name))
	}
	a := e.Annotations
	return Annotations{ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld}
}

// WindowToRoot converts p, relative to the client area frame of a window, to root
// (screen) coordinates: the one conversion the resolver decides on and the handler sends
// input to.
func WindowToRoot(frame x11.Rect, p x11.Point) x11.Point {
	return x11.Point{X: frame.X + p.X, Y: frame.Y + p.Y}
}
