package tool

import (
	"fmt"
	"math"
	"reflect"

	"github.com/cua-host/cua-host/x11"
)

// NewArgs returns the constructor a tool declares as its argument struct (Tool.Args):
// Args: tool.NewArgs[pointArgs].
func NewArgs[T any]() any { return new(T) }

// ArgsOf returns a handler's arguments as the worker decoded them once for this call
// (Call.Args), or the refusal that decode gave (Call.ArgsErr). A call made without the
// worker's authorizer (a test calling the handler directly) is decoded here, once, from
// Arguments or JSON. It panics when the worker decoded the call into another type: the
// tool's declaration and its handler disagree.
func ArgsOf[T any](c *Call) (*T, error) {
	if c.ArgsErr != nil {
		return nil, c.ArgsErr
	}
	if c.Args != nil {
		a, ok := c.Args.(*T)
		if !ok {
			panic(fmt.Sprintf("tool: %s's arguments were decoded into %T, its handler reads %T", c.Name, c.Args, (*T)(nil)))
		}
		return a, nil
	}
	a := new(T)
	if err := c.decodeInto(a); err != nil {
		return nil, err
	}
	return a, nil
}

// DecodeArguments decodes a call's sanitized arguments object once into a new value of
// the tool's declared struct (Tool.Args), as Call.Decode would: the same fields, the same
// refusal. The value is returned with its refusal too, every field that fits filled, so
// that the worker can read the call's target from it while the refusal waits for the
// handler (Call.ArgsErr). It returns nil, nil when the tool declares no struct.
func (t *Tool) DecodeArguments(args map[string]any) (any, error) {
	if t.Args == nil {
		return nil, nil
	}
	v := t.Args()
	c := Call{Name: t.Name, Arguments: args}
	if args == nil {
		c.Arguments = map[string]any{}
	}
	return v, c.decodeInto(v)
}

// Target is the window or the desktop a call's arguments name. Zero PID and WindowID
// mean the argument is absent: the worker refused a pid or window id outside its range
// before anything was decoded.
type Target struct {
	// PID is the process whose window the call targets.
	PID int
	// WindowID is the window, one of PID's.
	WindowID uint32
	// Scope is the scope argument: "", "window" or "desktop" (anything else is the
	// handler's to refuse).
	Scope string
}

// Targeted is implemented by an argument struct that names a target (pid, window_id,
// scope): the worker resolves and decides the call on it.
type Targeted interface {
	Target() Target
}

// Pointed is implemented by an argument struct that names points (x,y, drag ends, drag
// paths): each is checked for a protected window under it before the call runs.
type Pointed interface {
	// AppendPoints appends the usable points the arguments name, in the coordinates
	// they are given in (window-relative with a window, else the desktop's): both
	// numbers present, finite and within ±1e6, rounded to pixels. Others are left to
	// the handler to refuse.
	AppendPoints(out []x11.Point) []x11.Point
}

// Open is implemented by the argument struct of a tool whose input schema admits
// properties the struct does not name (the reference's session tools, which ignore
// them): a call's other arguments are dropped before the strict decode, so they are
// neither refused nor read.
type Open interface {
	OpenArguments()
}

// Pinned is implemented by the argument struct of a tool that declares Touches.Window:
// the worker writes the window the decision was made for into it, so the handler acts on
// exactly that window.
type Pinned interface {
	Pin(pid int, window uint32)
}

// AppendPoint appends (x, y) to out when both are usable coordinates (see Pointed).
func AppendPoint(out []x11.Point, x, y *float64) []x11.Point {
	if x == nil || y == nil {
		return out
	}
	return AppendXY(out, *x, *y)
}

// AppendXY appends (x, y) to out when both are usable coordinates (see Pointed).
func AppendXY(out []x11.Point, x, y float64) []x11.Point {
	if !math.IsNaN(x) && !math.IsNaN(y) && math.Abs(x) <= 1e6 && math.Abs(y) <= 1e6 {
		out = append(out, x11.Point{X: int(math.Round(x)), Y: int(math.Round(y))})
	}
	return out
}

// Drag limits of AppendDragPoints: the items and the path points of each that are checked.
const (
	maxDrags     = 8
	maxDragPoint = 400
)

// AppendDragPoints appends the points of parallel_mouse_drag's drags (decoded JSON
// objects): each item's from/to pairs and its path's [x, y] waypoints, at most 8 items of
// 400 points. Malformed items are left to the handler to refuse.
func AppendDragPoints(out []x11.Point, drags []any) []x11.Point {
	for _, d := range drags[:min(len(drags), maxDrags)] {
		item, ok := d.(map[string]any)
		if !ok {
			continue
		}
		for _, pair := range [...][2]string{{"x", "y"}, {"from_x", "from_y"}, {"to_x", "to_y"}} {
			x, okx := item[pair[0]].(float64)
			y, oky := item[pair[1]].(float64)
			if okx && oky {
				out = AppendXY(out, x, y)
			}
		}
		path, _ := item["path"].([]any)
		for _, p := range path[:min(len(path), maxDragPoint)] {
			if xy, ok := p.([]any); ok && len(xy) == 2 {
				x, okx := xy[0].(float64)
				y, oky := xy[1].(float64)
				if okx && oky {
					out = AppendXY(out, x, y)
				}
			}
		}
	}
	return out
}

// SetArgument sets the field of v, a value Tool.Args returned, that argument name
// reaches, to value as the decode would: the worker writes a decided value (a file's
// canonical path) into the struct the handler gets. It does nothing when no field takes
// name.
func SetArgument(v any, name string, value any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return
	}
	p := planFor(rv.Elem().Type())
	if p == nil || p.fields[name] == nil {
		return
	}
	store(rv.Elem().FieldByIndex(p.fields[name].index), value)
}
