package x11

import (
	"context"
	"errors"
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
	// Pings is true when the client lists _NET_WM_PING in WM_PROTOCOLS: it answers a
	// ping once it has handled every event sent to it before.
	Pings bool `json:"-"`
}

// Windows lists the top-level client windows, top-most first. With an EWMH window manager
// the list is _NET_CLIENT_LIST_STACKING (or _NET_CLIENT_LIST); without one it is the
// root's children that carry WM_CLASS or a name. Windows that vanish while being read are
// left out.
//
// The list and the active window are read on every call; each window's description is
// read again only when an event said it may have changed since the last read
// (windowCache): one round trip when none did.
func (b *Backend) Windows(ctx context.Context) ([]Window, error) {
	ids, active, descs, err := b.listed(ctx, 0)
	if err != nil {
		return nil, err
	}
	out := make([]Window, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- { // stacking order is bottom to top
		if !descs[i].have {
			continue
		}
		w := descs[i].desc
		w.Focused = active == ids[i]
		w.Stack = len(out)
		out = append(out, w)
	}
	return out, nil
}

// KnownFrame returns window id's client area (Window.Frame) as the backend last read it,
// without asking the server: a guess, which may be out of date, for a caller that will
// read the window anyway and wants to send questions that depend on it before that read.
func (b *Backend) KnownFrame(id uint32) (Rect, bool) {
	c := &b.windows
	c.mu.Lock()
	defer c.mu.Unlock()
	if en := c.entries[xproto.Window(id)]; en != nil && en.have {
		return en.desc.Frame, true
	}
	return Rect{}, false
}

// Window describes one top-level window by id. It returns ErrWindowNotFound when id is
// not a current top-level client window.
func (b *Backend) Window(ctx context.Context, id uint32) (Window, error) {
	ids, active, descs, err := b.listed(ctx, xproto.Window(id))
	if err != nil {
		return Window{}, err
	}
	pos := slices.Index(ids, xproto.Window(id))
	if pos < 0 {
		return Window{}, fmt.Errorf("%w: 0x%x", ErrWindowNotFound, id)
	}
	if !descs[pos].have {
		return Window{}, fmt.Errorf("%w: 0x%x: it could not be described", ErrWindowNotFound, id)
	}
	w := descs[pos].desc
	w.Focused = active == xproto.Window(id)
	w.Stack = len(ids) - 1 - pos
	return w, nil
}

// listed reads the client list (bottom to top) and the active window, and describes the
// listed windows — only window only when it is not 0 — from the cache where it can. descs
// is parallel to ids.
func (b *Backend) listed(ctx context.Context, only xproto.Window) (ids []xproto.Window, active xproto.Window, descs []cachedWindow, err error) {
	if b.closed() {
		return nil, 0, nil, ErrClosed
	}
	c := &b.windows
	c.readMu.Lock()
	defer c.readMu.Unlock()
	// One round trip: the barrier, the client list and the active window.
	mark := b.barrier.send(b)
	listC := b.sendClientList()
	activeC := b.sendActive()
	ids, err = listC.ids(b)
	if err != nil {
		return nil, 0, nil, err
	}
	active = activeC.window()
	fresh := true
	if err := b.barrier.wait(ctx, b, mark); err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return nil, 0, nil, err
		}
		fresh = false
	}
	if only == 0 {
		descs, err = c.describe(ctx, b, ids, fresh, true)
		return ids, active, descs, err
	}
	pos := slices.Index(ids, only)
	descs = make([]cachedWindow, len(ids))
	if pos < 0 {
		return ids, active, descs, nil
	}
	one, err := c.describe(ctx, b, ids[pos:pos+1], fresh, false)
	if err != nil {
		return nil, 0, nil, err
	}
	descs[pos] = one[0]
	return ids, active, descs, nil
}

// clientIDs returns the client windows bottom to top (clientListCookies.ids).
func (b *Backend) clientIDs() ([]xproto.Window, error) {
	return b.sendClientList().ids(b)
}

// clientListCookies are the requests of the client list in flight.
type clientListCookies struct {
	stacking, plain xproto.GetPropertyCookie
}

// sendClientList asks for both EWMH client lists at once (the stacking one is used when
// the window manager keeps it).
func (b *Backend) sendClientList() clientListCookies {
	return clientListCookies{
		stacking: xproto.GetProperty(b.conn, false, b.root, b.atoms.get("_NET_CLIENT_LIST_STACKING"), xproto.GetPropertyTypeAny, 0, 1<<24),
		plain:    xproto.GetProperty(b.conn, false, b.root, b.atoms.get("_NET_CLIENT_LIST"), xproto.GetPropertyTypeAny, 0, 1<<24),
	}
}

// ids returns the client windows bottom to top: _NET_CLIENT_LIST_STACKING, else
// _NET_CLIENT_LIST, else (no EWMH window manager) the root's named children.
func (c clientListCookies) ids(b *Backend) ([]xproto.Window, error) {
	stacking, errS := c.stacking.Reply()
	plain, errP := c.plain.Reply()
	for _, r := range [...]struct {
		reply *xproto.GetPropertyReply
		err   error
	}{{stacking, errS}, {plain, errP}} {
		if r.err != nil {
			return nil, xerr("GetProperty", r.err)
		}
		if r.reply.Format != 0 {
			vals := propUint32s(r.reply)
			ids := make([]xproto.Window, len(vals))
			for i, v := range vals {
				ids[i] = xproto.Window(v)
			}
			return ids, nil
		}
	}
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

// activeCookies are the requests of the active window in flight.
type activeCookies struct {
	b     *Backend
	net   xproto.GetPropertyCookie
	focus *xproto.GetInputFocusCookie // nil when not asked with net
}

// sendActive asks for _NET_ACTIVE_WINDOW and, when the last answer had none (a desktop
// without an EWMH window manager), the input focus, at once. Where the manager keeps the
// property, the focus is asked only if it is ever missing.
func (b *Backend) sendActive() activeCookies {
	c := activeCookies{b: b, net: xproto.GetProperty(b.conn, false, b.root, b.atoms.get("_NET_ACTIVE_WINDOW"), xproto.GetPropertyTypeAny, 0, 1<<24)}
	if b.activeFromFocus.Load() {
		f := xproto.GetInputFocus(b.conn)
		c.focus = &f
	}
	return c
}

// window returns the active window: _NET_ACTIVE_WINDOW, else the window with the input
// focus, else 0.
func (c activeCookies) window() xproto.Window {
	r, err := c.net.Reply()
	var (
		f    *xproto.GetInputFocusReply
		ferr error
	)
	if c.focus != nil {
		f, ferr = c.focus.Reply()
	}
	if err == nil && r.Format != 0 {
		if v := propUint32s(r); len(v) > 0 && v[0] != 0 {
			c.b.activeFromFocus.Store(false)
			return xproto.Window(v[0])
		}
	}
	c.b.activeFromFocus.Store(true)
	if c.focus == nil {
		f, ferr = xproto.GetInputFocus(c.b.conn).Reply()
	}
	if ferr != nil || f.Focus <= 1 { // None or PointerRoot
		return 0
	}
	return f.Focus
}

// iconicState is WM_STATE's state of an iconified window (ICCCM §4.1.3.1).
const iconicState = 3

// describeCookies are the requests describing one window in flight.
type describeCookies struct {
	b                                         *Backend
	id                                        xproto.Window
	attr                                      xproto.GetWindowAttributesCookie
	geo                                       xproto.GetGeometryCookie
	tr                                        xproto.TranslateCoordinatesCookie
	netName, name, class, state, pid, wmState xproto.GetPropertyCookie
	protocols                                 xproto.GetPropertyCookie
	xres                                      res.QueryClientIdsCookie
	hasXRes                                   bool
}

// sendDescribe sends the requests that describe window id, its owner included, without
// waiting for their replies.
func (b *Backend) sendDescribe(id xproto.Window) describeCookies {
	c := b.conn
	d := describeCookies{
		b: b, id: id,
		attr:      xproto.GetWindowAttributes(c, id),
		geo:       xproto.GetGeometry(c, xproto.Drawable(id)),
		tr:        xproto.TranslateCoordinates(c, id, b.root, 0, 0),
		netName:   xproto.GetProperty(c, false, id, b.atoms.get("_NET_WM_NAME"), xproto.GetPropertyTypeAny, 0, 1<<16),
		name:      xproto.GetProperty(c, false, id, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 1<<16),
		class:     xproto.GetProperty(c, false, id, xproto.AtomWmClass, xproto.GetPropertyTypeAny, 0, 1<<16),
		state:     xproto.GetProperty(c, false, id, b.atoms.get("_NET_WM_STATE"), xproto.AtomAtom, 0, 1<<10),
		pid:       xproto.GetProperty(c, false, id, b.atoms.get("_NET_WM_PID"), xproto.AtomCardinal, 0, 1),
		wmState:   xproto.GetProperty(c, false, id, b.atoms.get("WM_STATE"), xproto.GetPropertyTypeAny, 0, 2),
		protocols: b.askProtocols(id),
	}
	if b.caps.XRes {
		d.xres = res.QueryClientIds(c, 1, []res.ClientIdSpec{{Client: uint32(id), Mask: res.ClientIdMaskLocalClientPID}})
		d.hasXRes = true
	}
	return d
}

// collect waits for the replies of sendDescribe and builds the window, without Focused and
// Stack (the caller knows the active window and the order). Every reply is read, even after
// an error, so none is left behind.
func (d describeCookies) collect() (Window, error) {
	attr, attrErr := d.attr.Reply()
	geo, geoErr := d.geo.Reply()
	tr, trErr := d.tr.Reply()
	netName, netNameErr := d.netName.Reply()
	name, nameErr := d.name.Reply()
	class, classErr := d.class.Reply()
	state, stateErr := d.state.Reply()
	pid, pidErr := d.pid.Reply()
	wmState, wmStateErr := d.wmState.Reply()
	pings := d.b.takesPing(d.protocols)
	xpid := 0
	if d.hasXRes {
		if r, err := d.xres.Reply(); err == nil {
			for _, id := range r.Ids {
				if id.Spec.Mask&res.ClientIdMaskLocalClientPID != 0 && len(id.Value) > 0 {
					xpid = int(id.Value[0])
					break
				}
			}
		}
	}
	switch {
	case attrErr != nil:
		return Window{}, xerr("GetWindowAttributes", attrErr)
	case geoErr != nil:
		return Window{}, xerr("GetGeometry", geoErr)
	case trErr != nil:
		return Window{}, xerr("TranslateCoordinates", trErr)
	}
	w := Window{
		ID:     uint32(d.id),
		Frame:  Rect{X: int(tr.DstX), Y: int(tr.DstY), Width: int(geo.Width), Height: int(geo.Height)},
		Mapped: attr.MapState == xproto.MapStateViewable,
		Pings:  pings,
	}
	if netNameErr == nil && len(netName.Value) > 0 {
		w.Title = string(netName.Value)
	} else if nameErr == nil {
		w.Title = latin1(name.Value)
	}
	if classErr == nil && len(class.Value) > 0 {
		parts := strings.Split(strings.TrimRight(string(class.Value), "\x00"), "\x00")
		w.Instance = parts[0]
		if len(parts) > 1 {
			w.Class = parts[1]
		}
	}
	hidden := d.b.atoms.get("_NET_WM_STATE_HIDDEN")
	if stateErr == nil {
		for _, a := range propUint32s(state) {
			if xproto.Atom(a) == hidden {
				w.Minimized = true
			}
		}
	}
	// ICCCM §4.1.3.1: the window manager sets WM_STATE to IconicState (3) on a window it
	// has iconified; some set it without _NET_WM_STATE_HIDDEN.
	if wmStateErr == nil {
		if v := propUint32s(wmState); len(v) > 0 && v[0] == iconicState {
			w.Minimized = true
		}
	}
	netPID := 0
	if pidErr == nil {
		if v := propUint32s(pid); len(v) > 0 {
			netPID = int(v[0])
		}
	}
	w.PID, w.PIDSource = netPID, PIDFromNetWMPID
	if xpid > 0 {
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
