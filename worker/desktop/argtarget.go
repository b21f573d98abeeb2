package desktop

import (
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// The argument structs name their target to the worker here (tool.Targeted, tool.Pointed)
// and take the window the decision was made for (tool.Pinned): the worker decodes a call
// once into its tool's struct, resolves and decides on these, and the handler reads the
// same value.

// Target implements tool.Targeted.
func (t targetArgs) Target() tool.Target {
	return tool.Target{PID: derefInt(t.PID), WindowID: derefWindow(t.WindowID), Scope: t.Scope}
}

// Pin implements tool.Pinned.
func (t *targetArgs) Pin(pid int, window uint32) { t.PID, t.WindowID = &pid, &window }

// AppendPoints implements tool.Pointed: x,y.
func (a pointArgs) AppendPoints(out []x11.Point) []x11.Point { return tool.AppendPoint(out, a.X, a.Y) }

// AppendPoints implements tool.Pointed: x,y.
func (a scrollArgs) AppendPoints(out []x11.Point) []x11.Point {
	return tool.AppendPoint(out, a.X, a.Y)
}

// AppendPoints implements tool.Pointed: x,y.
func (a mouseDragArgs) AppendPoints(out []x11.Point) []x11.Point {
	return tool.AppendPoint(out, a.X, a.Y)
}

// AppendPoints implements tool.Pointed: from_x,from_y and to_x,to_y.
func (a dragArgs) AppendPoints(out []x11.Point) []x11.Point {
	return tool.AppendPoint(tool.AppendPoint(out, a.FromX, a.FromY), a.ToX, a.ToY)
}

// AppendPoints implements tool.Pointed: every drag's ends and waypoints.
func (a parallelDragArgs) AppendPoints(out []x11.Point) []x11.Point {
	return tool.AppendDragPoints(out, a.Drags)
}

// Target implements tool.Targeted.
func (a walkArgs) Target() tool.Target {
	return tool.Target{PID: derefInt(a.PID), WindowID: derefWindow(a.WindowID)}
}

// Pin implements tool.Pinned.
func (a *walkArgs) Pin(pid int, window uint32) { a.PID, a.WindowID = &pid, &window }

// Target implements tool.Targeted.
func (a setValueArgs) Target() tool.Target {
	return tool.Target{PID: derefInt(a.PID), WindowID: derefWindow(a.WindowID)}
}

// Pin implements tool.Pinned.
func (a *setValueArgs) Pin(pid int, window uint32) { a.PID, a.WindowID = &pid, &window }

// Target implements tool.Targeted.
func (a menuArgs) Target() tool.Target {
	return tool.Target{PID: derefInt(a.PID), WindowID: derefWindow(a.WindowID)}
}

// Pin implements tool.Pinned.
func (a *menuArgs) Pin(pid int, window uint32) { a.PID, a.WindowID = &pid, &window }

// Target implements tool.Targeted.
func (a verifyArgs) Target() tool.Target {
	return tool.Target{PID: derefInt(a.PID), WindowID: derefWindow(a.WindowID)}
}

// Pin implements tool.Pinned.
func (a *verifyArgs) Pin(pid int, window uint32) { a.PID, a.WindowID = &pid, &window }

// Target implements tool.Targeted.
func (w winArgs) Target() tool.Target { return tool.Target{PID: w.PID, WindowID: w.WindowID} }

// Pin implements tool.Pinned.
func (w *winArgs) Pin(pid int, window uint32) { w.PID, w.WindowID = pid, window }

// Target implements tool.Targeted.
func (a zoomArgs) Target() tool.Target { return tool.Target{PID: a.PID, WindowID: a.WindowID} }

// Pin implements tool.Pinned.
func (a *zoomArgs) Pin(pid int, window uint32) { a.PID, a.WindowID = pid, window }

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func derefWindow(p *uint32) uint32 {
	if p == nil {
		return 0
	}
	return *p
}
