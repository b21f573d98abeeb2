package worker

import (
	"fmt"
	"math"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// callArgs is a call's arguments as resolution reads them: the struct its tool declares
// (tool.Tool.Args), decoded once, and the target and points read from it.
type callArgs struct {
	// typed is the tool's argument struct, nil for a tool that declares none; err is the
	// refusal its decode gave, which the handler reports (tool.Call.ArgsErr).
	typed any
	err   error
	// target is what the call names; points reads the points it names.
	target tool.Target
	points tool.Pointed
}

// validTarget is the one check of the pid and window_id arguments: absent, or an
// integral JSON number in range (a pid in [1, 2^31-1], a window id in [1, 2^32-1]).
func validTarget(args map[string]any) (pid int, wid uint32, r *authz.Refusal) {
	p, _, err := intArg(args, "pid", 1, math.MaxInt32)
	if err != nil {
		return 0, 0, authz.Refuse(authz.CodeInvalidArguments, "%v", err)
	}
	w, _, err := intArg(args, "window_id", 1, math.MaxUint32)
	if err != nil {
		return 0, 0, authz.Refuse(authz.CodeInvalidArguments, "%v", err)
	}
	return p, uint32(w), nil
}

// decodeCall decodes args, whose pid and window_id passed validTarget, once into the
// struct tool t declares, and reads the call's target from it. A struct names its target
// through tool.Targeted and tool.Pointed; one that implements neither names none but the
// pid and window_id validTarget read (a tool of no window refuses them itself). When the
// arguments do not decode (an argument the struct does not know, a value that does not
// fit), the target is read from the object by the generic names, as for a tool that
// declares no struct: the call is refused when its handler would have run, and the
// decision before that is the one it always was.
func decodeCall(t *tool.Tool, args map[string]any, pid int, wid uint32) callArgs {
	var c callArgs
	if t != nil {
		c.typed, c.err = t.DecodeArguments(args)
	}
	if c.typed == nil || c.err != nil {
		generic := genericArgs(args)
		c.target, c.points = generic.Target(), generic
		return c
	}
	if tg, ok := c.typed.(tool.Targeted); ok {
		c.target = tg.Target()
	} else {
		c.target = tool.Target{PID: pid, WindowID: wid}
	}
	c.points, _ = c.typed.(tool.Pointed)
	return c
}

// appendPoints appends the points the call names.
func (c *callArgs) appendPoints(out []x11.Point) []x11.Point {
	if c.points == nil {
		return out
	}
	return c.points.AppendPoints(out)
}

// pin writes the decided window into the struct the handler gets. The object the policy
// saw stays as it was; the call's RunArguments, which the journal records, name the window
// too (tool.Call.Pinned).
func (c *callArgs) pin(pid int, wid uint32) {
	if p, ok := c.typed.(tool.Pinned); ok && c.err == nil {
		p.Pin(pid, wid)
	}
}

// genericArgs reads a target from an arguments object by the names every tool uses: pid,
// window_id and scope; x,y, from_x,from_y and to_x,to_y; parallel_mouse_drag's drags.
type genericArgs map[string]any

// Target implements tool.Targeted. pid and window_id passed validTarget.
func (g genericArgs) Target() tool.Target {
	pid, _ := g["pid"].(float64)
	wid, _ := g["window_id"].(float64)
	scope, _ := g["scope"].(string)
	return tool.Target{PID: int(pid), WindowID: uint32(wid), Scope: scope}
}

// AppendPoints implements tool.Pointed.
func (g genericArgs) AppendPoints(out []x11.Point) []x11.Point {
	for _, pair := range [...][2]string{{"x", "y"}, {"from_x", "from_y"}, {"to_x", "to_y"}} {
		x, okx := g[pair[0]].(float64)
		y, oky := g[pair[1]].(float64)
		if okx && oky {
			out = tool.AppendXY(out, x, y)
		}
	}
	drags, _ := g["drags"].([]any)
	return tool.AppendDragPoints(out, drags)
}

// intArg reads an integer argument: absent is fine, anything but an integral JSON number
// in [lo, hi] is an error.
func intArg(args map[string]any, key string, lo, hi int64) (int, bool, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, false, fmt.Errorf("%s must be an integer in [%d, %d]", key, lo, hi)
	}
	return int(f), true, nil
}
