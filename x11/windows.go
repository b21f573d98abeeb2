package x11

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jezek/xgb/res"
	"github.com/jezek/xgb/xproto"
)

// PIDSource says where a window's pid came from.
type PIDSource string

// PID sources, most trustworthy first.
const (
	// PIDFromXRes is the pid the X server observed on the client's socket (X-Resource).
	PIDFromXRes PIDSource = "xres"
	// PIDFromNetWMPID is the client-set, spoofable _NET_WM_PID property.
	PIDFromNetWMPID PIDSource = "net_wm_pid"
	// PIDUnknown means neither source gave a pid.
	PIDUnknown PIDSource = "unknown"
)

// Rect is a rectangle in pixels.
type Rect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Contains reports whether the point (x, y) lies inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.Width && y < r.Y+r.Height
}

// Window describes one top-level client window.
type Window struct {
	ID        uint32    `json:"window_id"`
	PID       int       `json:"pid"`
	PIDSource PIDSource `json:"pid_source"`
	Title     string    `json:"title"`
	// Class and Instance are WM_CLASS's class and instance names.
	Class    string `json:"class"`
	Instance string `json:"instance"`
	// Frame is the client area in root coordinates (without WM decorations).
	Frame     Rect `json:"frame"`
	Mapped    bool `json:"mapped"`
	Minimized bool `json:"minimized"`
	Focused   bool `json:"focused"`
	// Stack is the stacking position, 0 for the top-most window.
	Stack int `json:"stack"`
}

// Windows lists the top-level client windows, top-most first. With an EWMH window manager
// the list is _NET_CLIENT_LIST_STACKING (or _NET_CLIENT_LIST); without one it is the
// root's children that carry WM_CLASS or a name. Windows that vanish while being read are
// left out.
func (b *Backend) Windows(ctx context.Context) ([]Window, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	ids, err := b.clientIDs()
	if err != nil {
		return nil, err
	}
	active, _ := b.activeWindow()
	out := make([]Window, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- { // stacking order is bottom to top
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, err := b.describe(ids[i], active)
		if err != nil {
			continue
		}
		w.Stack = len(out)
		out = append(out, w)
	}
	return out, nil
}

// Window describes one top-level window by id. It returns ErrWindowNotFound when id is
// not a current top-level client window.
func (b *Backend) Window(ctx context.Context, id uint32) (Window, error) {
	if b.closed() {
		return Window{}, ErrClosed
	}
	ids, err := b.clientIDs()
	if err != nil {
		return Window{}, err
	}
	pos := slices.Index(ids, xproto.Window(id))
	if pos < 0 {
		return Window{}, fmt.Errorf("%w: 0x%x", ErrWindowNotFound, id)
	}
	active, _ := b.activeWindow()
	w, err := b.describe(xproto.Window(id), active)
	if err != nil {
		return Window{}, fmt.Errorf("%w: 0x%x: %v", ErrWindowNotFound, id, err)
	}
	w.Stack = len(ids) - 1 - pos
	return w, nil
}

// clientIDs returns the client windows bottom to top.
func (b *Backend) clientIDs() ([]xproto.Window, error) {
	for _, name := range []string{"_NET_CLIENT_LIST_STACKING", "_NET_CLIENT_LIST"} {
		r, err := getProperty(b.conn, b.root, b.atoms.get(name))
		if err != nil {
			return nil, err
		}
		if r != nil {
			vals := propUint32s(r)
			ids := make([]xproto.Window, len(vals))
			for i, v := range vals {
				ids[i] = xproto.Window(v)
			}
			return ids, nil
		}
	}
	// No EWMH window manager: the root's named children.
	tree, err := xproto.QueryTree(b.conn, b.root).Reply()
	if err != nil {
		return nil, xerr("QueryTree", err)
	}
	var ids []xproto.Window
	for _, c := range tree.Children {
		if b.isClient(c) {
			ids = append(ids, c)
		}
	}
	return ids, nil
}

func (b *Backend) isClient(w xproto.Window) bool {
	attr, err := xproto.GetWindowAttributes(b.conn, w).Reply()
	if err != nil || attr.Class != xproto.WindowClassInputOutput || attr.OverrideRedirect {
		return false
	}
	for _, p := range []string{"WM_CLASS", "WM_NAME", "_NET_WM_NAME"} {
		if r, err := getProperty(b.conn, w, b.atoms.get(p)); err == nil && r != nil {
			return true
		}
	}
	return false
}

func (b *Backend) activeWindow() (xproto.Window, bool) {
	if v, ok := b.propUint32(b.root, "_NET_ACTIVE_WINDOW"); ok && v != 0 {
		return xproto.Window(v), true
	}
	f, err := xproto.GetInputFocus(b.conn).Reply()
	if err != nil || f.Focus <= 1 { // None or PointerRoot
		return 0, false
	}
	return f.Focus, true
}

// iconicState is WM_STATE's state of an iconified window (ICCCM §4.1.3.1).
const iconicState = 3

// describe reads one window's properties, geometry and pid.
func (b *Backend) describe(id, active xproto.Window) (Window, error) {
	c := b.conn
	// Pipeline the requests, then collect the replies.
	attrC := xproto.GetWindowAttributes(c, id)
	geoC := xproto.GetGeometry(c, xproto.Drawable(id))
	trC := xproto.TranslateCoordinates(c, id, b.root, 0, 0)
	netNameC := xproto.GetProperty(c, false, id, b.atoms.get("_NET_WM_NAME"), xproto.GetPropertyTypeAny, 0, 1<<16)
	nameC := xproto.GetProperty(c, false, id, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 1<<16)
	classC := xproto.GetProperty(c, false, id, xproto.AtomWmClass, xproto.GetPropertyTypeAny, 0, 1<<16)
	stateC := xproto.GetProperty(c, false, id, b.atoms.get("_NET_WM_STATE"), xproto.AtomAtom, 0, 1<<10)
	pidC := xproto.GetProperty(c, false, id, b.atoms.get("_NET_WM_PID"), xproto.AtomCardinal, 0, 1)
	wmStateC := xproto.GetProperty(c, false, id, b.atoms.get("WM_STATE"), xproto.GetPropertyTypeAny, 0, 2)

	attr, err := attrC.Reply()
	if err != nil {
		return Window{}, xerr("GetWindowAttributes", err)
	}
	geo, err := geoC.Reply()
	if err != nil {
		return Window{}, xerr("GetGeometry", err)
	}
	tr, err := trC.Reply()
	if err != nil {
		return Window{}, xerr("TranslateCoordinates", err)
	}
	w := Window{
		ID:     uint32(id),
		Frame:  Rect{X: int(tr.DstX), Y: int(tr.DstY), Width: int(geo.Width), Height: int(geo.Height)},
		Mapped: attr.MapState == xproto.MapStateViewable,
	}
	if r, err := netNameC.Reply(); err == nil && len(r.Value) > 0 {
		w.Title = string(r.Value)
	} else if r, err := nameC.Reply(); err == nil {
		w.Title = latin1(r.Value)
	}
	if r, err := classC.Reply(); err == nil && len(r.Value) > 0 {
		parts := strings.Split(strings.TrimRight(string(r.Value), "\x00"), "\x00")
		w.Instance = parts[0]
		if len(parts) > 1 {
			w.Class = parts[1]
		}
	}
	hidden := b.atoms.get("_NET_WM_STATE_HIDDEN")
	if r, err := stateC.Reply(); err == nil {
		for _, a := range propUint32s(r) {
			if xproto.Atom(a) == hidden {
				w.Minimized = true
			}
		}
	}
	// ICCCM §4.1.3.1: the window manager sets WM_STATE to IconicState (3) on a window it
	// has iconified; some set it without _NET_WM_STATE_HIDDEN.
	if r, err := wmStateC.Reply(); err == nil {
		if v := propUint32s(r); len(v) > 0 && v[0] == iconicState {
			w.Minimized = true
		}
	}
	w.Focused = active == id
	netPID := 0
	if r, err := pidC.Reply(); err == nil {
		if v := propUint32s(r); len(v) > 0 {
			netPID = int(v[0])
		}
	}
	w.PID, w.PIDSource = netPID, PIDFromNetWMPID
	if xpid := b.xresPID(id); xpid > 0 {
		w.PID, w.PIDSource = xpid, PIDFromXRes
	}
	if w.PID == 0 {
		w.PIDSource = PIDUnknown
	}
	return w, nil
}

// xresPID asks the server which local process owns the client that created w; 0 if unknown.
func (b *Backend) xresPID(w xproto.Window) int {
	if !b.caps.XRes {
		return 0
	}
	r, err := res.QueryClientIds(b.conn, 1, []res.ClientIdSpec{{Client: uint32(w), Mask: res.ClientIdMaskLocalClientPID}}).Reply()
	if err != nil {
		return 0
	}
	for _, id := range r.Ids {
		if id.Spec.Mask&res.ClientIdMaskLocalClientPID != 0 && len(id.Value) > 0 {
			return int(id.Value[0])
		}
	}
	return 0
}

// latin1 converts ISO-8859-1 bytes (WM_NAME's STRING type) to UTF-8.
func latin1(p []byte) string {
	var sb strings.Builder
	for _, c := range p {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// OwnedWindow returns window id if process pid owns it, ErrWindowNotFound otherwise.
func (b *Backend) OwnedWindow(ctx context.Context, pid int, id uint32) (Window, error) {
	w, err := b.Window(ctx, id)
	if err != nil {
		return Window{}, err
	}
	if w.PID != pid || pid <= 0 {
		return Window{}, fmt.Errorf("%w: window 0x%x belongs to pid %d, not %d", ErrWindowNotFound, id, w.PID, pid)
	}
	return w, nil
}

// WindowAt returns the window that receives pointer events at p as the X server decides
// it (TopLevelAt's Window: override-redirect and always-on-top windows included), or 0
// when nothing but the root is there.
func (b *Backend) WindowAt(ctx context.Context, p Point) (uint32, error) {
	t, err := b.TopLevelAt(ctx, p)
	if err != nil {
		return 0, err
	}
	return t.Window, nil
}
