// Package atspi is the AT-SPI2 accessibility backend: it connects to the accessibility bus
// (org.a11y.Bus.GetAddress on the D-Bus session bus, on first use), finds the accessible
// window that matches an X window, walks its tree within bounds on elements, depth and
// time, and acts on elements through the toolkit (Action.DoAction, EditableText,
// Value, Component.ScrollTo) without moving the pointer or changing the focus. InvokeMenu
// walks a window's menu bar one level at a time, opening each submenu and looking for the
// next segment among the entries that appear.
//
// A walk yields an immutable Snapshot whose elements carry tokens ("s1a2b3c4d:3"); a
// Snapshots set keeps one session's snapshots, so that a token from an older snapshot of
// a window fails with ErrStale instead of hitting the wrong element.
//
// It is not for tools, sessions or authorization: like package x11 it must not import
// authz or worker. Callers (worker/desktop) decide what a session may do, key Snapshots by
// session, and map this package's errors (errors.go) to refusal codes. It knows nothing
// of X either: callers describe the window (Window) as the X server sees it.
//
// Every D-Bus call has a deadline. A walk sends its calls pipelined (many in flight), and
// stops with a reason when the application stops answering, when the walk's own deadline
// passes, or when a bound is hit; a missing bus or an application without accessibility
// is reported as a degraded snapshot, never as a crash or an empty success.
package atspi
