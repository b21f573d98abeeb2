package tool

import (
	"fmt"
	"reflect"

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
	// Pastes, when set, reports whether a call pastes the selection into a window (the
	// paste keys, the middle button), from the call's arguments decoded into the tool's
	// declared struct (Tool.Args): such a call is decided as a read of the clipboard too.
	// Set it with PastesWhen. Arguments that do not decode are no paste: the handler
	// refuses them before it sends anything.
	Pastes func(args any) bool
	// Files are the arguments that name a file the call reads or writes: each is resolved
	// to one canonical file and decided as a further resource (Call.Files).
	Files []FileArg
	// Launch, when set, plans the program a call runs from its arguments decoded into
	// the tool's declared struct (Tool.Args): the exact command line is the resource
	// decided on (Call.Launch). Set it with LaunchFrom. Arguments that do not decode are
	// refused with the decode's refusal before anything is decided.
	Launch func(args any) (*LaunchPlan, error)
}

// PastesWhen declares Touches.Pastes from f, which reads the tool's declared argument
// struct T. The returned function panics when it is given anything but a *T: Register
// checks that T is the struct the tool declares.
func PastesWhen[T any](f func(args *T) bool) func(any) bool {
	return func(v any) bool {
		a := argsAs[T](v, "Touches.Pastes")
		return a != nil && f(a)
	}
}

// LaunchFrom declares Touches.Launch from plan, which reads the tool's declared argument
// struct T. The returned function panics when it is given anything but a *T: Register
// checks that T is the struct the tool declares.
func LaunchFrom[T any](plan func(args *T) (*LaunchPlan, error)) func(any) (*LaunchPlan, error) {
	return func(v any) (*LaunchPlan, error) {
		a := argsAs[T](v, "Touches.Launch")
		if a == nil {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "no arguments to plan a launch from")
		}
		return plan(a)
	}
}

// argsAs returns v as a *T (nil for a nil *T), and panics for any other type: a tool's
// declared facts and its declared struct disagree.
func argsAs[T any](v any, what string) *T {
	a, ok := v.(*T)
	if !ok {
		panic(fmt.Sprintf("tool: %s reads %T, the call was decoded into %T", what, (*T)(nil), v))
	}
	return a
}

// checkDeclared panics unless what t declares it touches reads t's declared struct: a
// Pastes or Launch needs Args, and each is called once with a nil pointer of the struct's
// type, which only the right type accepts without a panic.
func checkDeclared(t *Tool) {
	if t.Touches.Pastes == nil && t.Touches.Launch == nil {
		return
	}
	if t.Args == nil {
		panic(fmt.Sprintf("tool: %q declares Touches.Pastes or Touches.Launch without an argument struct (Args)", t.Name))
	}
	nilArgs := reflect.Zero(reflect.TypeOf(t.Args())).Interface()
	if t.Touches.Pastes != nil {
		t.Touches.Pastes(nilArgs)
	}
	if t.Touches.Launch != nil {
		_, _ = t.Touches.Launch(nilArgs)
	}
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
