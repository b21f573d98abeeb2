package x11

import (
	"context"
	"fmt"
	"slices"

	"github.com/jezek/xgb/res"
	"github.com/jezek/xgb/shape"
	"github.com/jezek/xgb/xproto"
)

// Bounds of the stacking walk. A window deeper than maxAncestors below the root, or a
// bounding shape of more than maxShapeRects rectangles, is not described; a frame whose
// client lies deeper than maxClientDepth, or among more than maxClientSearch windows, has
// no known owner.
const (
	maxAncestors    = 32
	maxShapeRects   = 2048
	maxClientDepth  = 3
	maxClientSearch = 512
)

// Cover is a viewable window stacked above a captured window that overlaps the captured
// area: something the X server draws over the window.
type Cover struct {
	// Window is one of the root's children: a window manager's frame, an override-redirect
	// window (a menu, a tooltip, a popup, a dialog drawn by another program) or, without a
	// window manager, a client's own top-level window.
	Window uint32 `json:"window"`
	// Client is the client window inside Window (the one with WM_STATE, as the window
	// manager reparented it), or Window itself when it holds none or is override-redirect.
	Client uint32 `json:"client"`
	// PID is the process that created Client, as the X server observed it (X-Resource);
	// 0 when unknown: no X-Resource, a remote client, or a frame holding clients of
	// several processes.
	PID int `json:"pid"`
	// OverrideRedirect is true for windows no window manager manages.
	OverrideRedirect bool `json:"override_redirect"`
	// Bounds is the window's bounding rectangle, border included, in root coordinates. A
	// shaped window may draw less than this; Bounds is the conservative extent.
	Bounds Rect `json:"bounds"`
}

// Overlap is what the X server shows in a window's place besides the window itself, read
// from the server's own stacking (the root's children from QueryTree, bottom to top), not
// from the window manager's client list: frames, override-redirect windows and unmanaged
// windows all count.
type Overlap struct {
	// Window is the described window; Top is its ancestor among the root's children (the
	// window manager's frame around it, or the window itself).
	Window uint32 `json:"window"`
	Top    uint32 `json:"top"`
	// Frame is the window's client area in root coordinates.
	Frame Rect `json:"frame"`
	// Visible is the part of Frame the window itself can show, as rectangles in root
	// coordinates (they may overlap): Frame clipped by every ancestor and by the bounding
	// shapes of the window and its ancestors. The rest of Frame shows what lies below.
	Visible []Rect `json:"visible"`
	// Above lists the windows stacked above Top that overlap the described area, bottom
	// to top.
	Above []Cover `json:"above"`
}

// Overlap describes what else than window id the server shows in id's client area. It
// holds a server grab while it reads, so the description is one consistent state of the
// window tree. It returns ErrWindowNotFound when id does not exist and
// ErrWindowNotViewable when it is not viewable.
func (b *Backend) Overlap(ctx context.Context, id uint32) (Overlap, error) {
	if b.closed() {
		return Overlap{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Overlap{}, err
	}
	release := b.grabServer()
	defer release()
	return b.overlapGrabbed(xproto.Window(id), nil)
}

// grabServer grabs the server for this connection and returns the function that releases
// it. Grabs do not nest in X, so one goroutine at a time holds it (grabMu).
func (b *Backend) grabServer() (release func()) {
	b.grabMu.Lock()
	xproto.GrabServer(b.conn)
	done := false
	return func() {
		if done {
			return
		}
		done = true
		xproto.UngrabServer(b.conn)
		b.grabMu.Unlock()
	}
}

// level is one window of the walk from the described window up to the root's child
// holding it, as requests in flight.
type level struct {
	win     xproto.Window
	tree    xproto.QueryTreeCookie
	hasTree bool // false when the window is known to be a child of the root
	geo     xproto.GetGeometryCookie
	tr      xproto.TranslateCoordinatesCookie
	ext     shape.QueryExtentsCookie
	shape   bool
}

func (b *Backend) askLevel(w xproto.Window, tree bool) level {
	l := level{
		win: w,
		geo: xproto.GetGeometry(b.conn, xproto.Drawable(w)),
		tr:  xproto.TranslateCoordinates(b.conn, w, b.root, 0, 0),
	}
	if tree {
		l.tree, l.hasTree = xproto.QueryTree(b.conn, w), true
	}
	if b.caps.Shape {
		l.ext, l.shape = shape.QueryExtents(b.conn, w), true
	}
	return l
}

// overlapGrabbed describes window win. area bounds the covers to look up (root
// coordinates); nil means the window's client area. Requests are pipelined: with a
// reparenting window manager (window → frame → root) it takes two round trips, plus one
// when a window above is viewable and one more when one of them covers the area, plus the
// levels of unusual trees and the search for clients the window manager does not list.
// Only viewable windows cost more than one request. Preconditions: this connection holds
// a server grab.
func (b *Backend) overlapGrabbed(win xproto.Window, area *Rect) (Overlap, error) {
	c := b.conn
	rootTreeC := xproto.QueryTree(c, b.root)
	clientsC, hasClients := b.askClientList()
	attrC := xproto.GetWindowAttributes(c, win)
	lv := b.askLevel(win, true)
	rootTree, err := rootTreeC.Reply()
	if err != nil {
		return Overlap{}, xerr("QueryTree", err)
	}
	attr, err := attrC.Reply()
	if err != nil {
		return Overlap{}, fmt.Errorf("%w: 0x%x: %v", ErrWindowNotFound, win, err)
	}
	if attr.MapState != xproto.MapStateViewable {
		return Overlap{}, fmt.Errorf("%w: 0x%x", ErrWindowNotViewable, win)
	}
	// The windows above the top and their attributes, asked for as soon as the top is known.
	var (
		above     []xproto.Window
		aboveAttr []xproto.GetWindowAttributesCookie
	)
	askAbove := func(top xproto.Window) error {
		pos := slices.Index(rootTree.Children, top)
		if pos < 0 {
			return fmt.Errorf("%w: 0x%x is not below the root", ErrWindowNotFound, win)
		}
		above = rootTree.Children[pos+1:]
		aboveAttr = make([]xproto.GetWindowAttributesCookie, len(above))
		for i, w := range above {
			aboveAttr[i] = xproto.GetWindowAttributes(c, w)
		}
		return nil
	}
	ov := Overlap{Window: uint32(win)}
	for depth := 0; ; depth++ {
		if depth >= maxAncestors {
			return Overlap{}, fmt.Errorf("%w: window 0x%x is more than %d levels deep", ErrUnsupported, win, maxAncestors)
		}
		// Ask for the next level (and, once the top is known, for the windows above it)
		// before reading this one.
		var next *level
		if lv.hasTree {
			tree, err := lv.tree.Reply()
			if err != nil {
				return Overlap{}, xerr("QueryTree", err)
			}
			switch p := tree.Parent; {
			case p == b.root || p == 0:
				ov.Top = uint32(lv.win)
			case slices.Contains(rootTree.Children, p):
				ov.Top = uint32(p)
				n := b.askLevel(p, false)
				next = &n
			default:
				n := b.askLevel(p, true)
				next = &n
			}
			if ov.Top != 0 {
				if err := askAbove(xproto.Window(ov.Top)); err != nil {
					return Overlap{}, err
				}
			}
		}
		region, inside, err := b.regionOf(lv)
		if err != nil {
			return Overlap{}, err
		}
		if depth == 0 {
			ov.Frame, ov.Visible = inside, region
		} else {
			ov.Visible = intersectRegions(ov.Visible, region)
		}
		if len(ov.Visible) > maxShapeRects {
			// Too intricate to follow: nothing counts as the window's own.
			ov.Visible = nil
		}
		if next == nil {
			break
		}
		lv = *next
	}
	var clients map[xproto.Window]bool
	if hasClients {
		clients = clientSet(clientsC)
	}
	bounds := ov.Frame
	if area != nil {
		bounds = *area
	}
	ov.Above, err = b.coversAbove(above, aboveAttr, bounds, clients)
	if err != nil {
		return Overlap{}, err
	}
	return ov, nil
}

// askClientList asks for the window manager's _NET_CLIENT_LIST.
func (b *Backend) askClientList() (xproto.GetPropertyCookie, bool) {
	a := b.atoms.get("_NET_CLIENT_LIST")
	if a == 0 {
		return xproto.GetPropertyCookie{}, false
	}
	return xproto.GetProperty(b.conn, false, b.root, a, xproto.AtomWindow, 0, 1<<16), true
}

// clientSet collects the client list; nil when there is none.
func clientSet(c xproto.GetPropertyCookie) map[xproto.Window]bool {
	r, err := c.Reply()
	if err != nil {
		return nil
	}
	ids := propUint32s(r)
	if len(ids) == 0 {
		return nil
	}
	set := make(map[xproto.Window]bool, len(ids))
	for _, id := range ids {
		set[xproto.Window(id)] = true
	}
	return set
}

// regionOf returns what a window can show, in root coordinates: its inside rectangle, cut
// to its bounding shape when it has one.
func (b *Backend) regionOf(a level) (region []Rect, inside Rect, err error) {
	geo, err := a.geo.Reply()
	if err != nil {
		return nil, Rect{}, xerr("GetGeometry", err)
	}
	tr, err := a.tr.Reply()
	if err != nil {
		return nil, Rect{}, xerr("TranslateCoordinates", err)
	}
	inside = Rect{X: int(tr.DstX), Y: int(tr.DstY), Width: int(geo.Width), Height: int(geo.Height)}
	if !a.shape {
		return []Rect{inside}, inside, nil
	}
	ext, err := a.ext.Reply()
	if err != nil {
		return nil, Rect{}, xerr("ShapeQueryExtents", err)
	}
	if !ext.BoundingShaped {
		return []Rect{inside}, inside, nil
	}
	rects, err := shape.GetRectangles(b.conn, a.win, shape.SkBounding).Reply()
	if err != nil {
		return nil, Rect{}, xerr("ShapeGetRectangles", err)
	}
	if len(rects.Rectangles) > maxShapeRects {
		return nil, inside, nil
	}
	region = make([]Rect, 0, len(rects.Rectangles))
	for _, r := range rects.Rectangles {
		// Bounding rectangles are relative to the window's origin (inside its border).
		s := clip(Rect{X: inside.X + int(r.X), Y: inside.Y + int(r.Y), Width: int(r.Width), Height: int(r.Height)}, inside)
		if s.Width > 0 && s.Height > 0 {
			region = append(region, s)
		}
	}
	return region, inside, nil
}

// intersectRegions returns the intersection of two unions of rectangles, as rectangles.
func intersectRegions(a, b []Rect) []Rect {
	var out []Rect
	for _, r := range a {
		for _, s := range b {
			if i := clip(r, s); i.Width > 0 && i.Height > 0 {
				out = append(out, i)
			}
		}
	}
	return out
}

// coversAbove returns the viewable windows among above (root children, bottom to top,
// whose attributes are being asked for by attrs) that draw pixels inside area, with their
// owners. A managed window's client is the child the window manager lists in clients (or
// the window itself when it is listed); windows without a listed client are searched by
// WM_STATE (coverOwners). An override-redirect window is its own client.
func (b *Backend) coversAbove(above []xproto.Window, attrs []xproto.GetWindowAttributesCookie, area Rect, clients map[xproto.Window]bool) ([]Cover, error) {
	// First the attributes: only viewable windows draw, and only they cost more requests.
	type viewable struct {
		win  xproto.Window
		or   bool
		geo  xproto.GetGeometryCookie
		tree xproto.QueryTreeCookie   // managed windows
		pid  res.QueryClientIdsCookie // override-redirect windows
	}
	var vs []viewable
	for i, w := range above {
		attr, err := attrs[i].Reply()
		if err != nil {
			return nil, xerr("GetWindowAttributes", err)
		}
		if attr.Class == xproto.WindowClassInputOnly || attr.MapState != xproto.MapStateViewable {
			continue
		}
		v := viewable{win: w, or: attr.OverrideRedirect, geo: xproto.GetGeometry(b.conn, xproto.Drawable(w))}
		if v.or {
			v.pid = b.askPID(w)
		} else {
			v.tree = xproto.QueryTree(b.conn, w)
		}
		vs = append(vs, v)
	}
	var (
		covers []Cover
		pids   [][]res.QueryClientIdsCookie // per cover, one per client
		search []int                        // covers without a listed client
	)
	for _, v := range vs {
		geo, err := v.geo.Reply()
		if err != nil {
			return nil, xerr("GetGeometry", err)
		}
		var children []xproto.Window
		if !v.or {
			tree, err := v.tree.Reply()
			if err != nil {
				return nil, xerr("QueryTree", err)
			}
			children = tree.Children
		}
		bw := 2 * int(geo.BorderWidth)
		r := Rect{X: int(geo.X), Y: int(geo.Y), Width: int(geo.Width) + bw, Height: int(geo.Height) + bw}
		if o := clip(r, area); o.Width <= 0 || o.Height <= 0 {
			continue
		}
		cv := Cover{Window: uint32(v.win), Client: uint32(v.win), OverrideRedirect: v.or, Bounds: r}
		var ps []res.QueryClientIdsCookie
		switch {
		case v.or:
			ps = []res.QueryClientIdsCookie{v.pid}
		case clients[v.win]:
			ps = []res.QueryClientIdsCookie{b.askPID(v.win)}
		default:
			for _, ch := range children {
				if clients[ch] {
					if len(ps) == 0 {
						cv.Client = uint32(ch)
					}
					ps = append(ps, b.askPID(ch))
				}
			}
			if len(ps) == 0 {
				search = append(search, len(covers))
			}
		}
		covers = append(covers, cv)
		pids = append(pids, ps)
	}
	if len(search) > 0 {
		unlisted := make([]Cover, len(search))
		for j, i := range search {
			unlisted[j] = covers[i]
		}
		b.coverOwners(unlisted)
		for j, i := range search {
			covers[i] = unlisted[j]
		}
	}
	for i, ps := range pids {
		if len(ps) > 0 {
			covers[i].PID = b.singlePID(ps)
		}
	}
	return covers, nil
}

// singlePID collects pid answers and returns the one pid they agree on, 0 when they do
// not or one is unknown.
func (b *Backend) singlePID(cs []res.QueryClientIdsCookie) int {
	pid := -1
	for _, c := range cs {
		p := b.pidReply(c)
		if pid >= 0 && p != pid {
			p = 0 // clients of several processes in one frame: no single owner
		}
		pid = p
	}
	return max(pid, 0)
}

// coverOwners finds the client and its pid of covers the window manager does not list. A
// managed window's client is the first level of its subtree holding windows with WM_STATE
// (how the ICCCM tells a client from its window manager's frame); when that level holds
// clients of several processes the pid stays 0. A window with no client inside is its own
// client. Requests are pipelined across covers, one or two round trips per level.
func (b *Backend) coverOwners(covers []Cover) {
	c := b.conn
	wmState := b.atoms.get("WM_STATE")
	self := make([]res.QueryClientIdsCookie, len(covers))
	// frontier[i] is the level of cover i's subtree being searched; nil when done.
	frontier := make([][]xproto.Window, len(covers))
	clients := make([][]xproto.Window, len(covers))
	seen := make([]int, len(covers))
	for i, cv := range covers {
		self[i] = b.askPID(xproto.Window(cv.Window))
		if !cv.OverrideRedirect && wmState != 0 {
			frontier[i] = []xproto.Window{xproto.Window(cv.Window)}
		}
	}
	for depth := 0; depth <= maxClientDepth; depth++ {
		state := make([][]xproto.GetPropertyCookie, len(covers))
		tree := make([][]xproto.QueryTreeCookie, len(covers))
		active := false
		for i, ws := range frontier {
			for _, w := range ws {
				active = true
				state[i] = append(state[i], xproto.GetProperty(c, false, w, wmState, xproto.GetPropertyTypeAny, 0, 0))
				if depth == 0 {
					// A frame is rarely a client itself: ask for its children at once.
					tree[i] = append(tree[i], xproto.QueryTree(c, w))
				}
			}
		}
		if !active {
			break
		}
		for i, ws := range frontier {
			for j, w := range ws {
				if r, err := state[i][j].Reply(); err == nil && r.Type != xproto.AtomNone {
					clients[i] = append(clients[i], w)
				}
			}
			if len(clients[i]) > 0 || depth == maxClientDepth {
				frontier[i] = nil
				continue
			}
			if depth > 0 {
				for _, w := range ws {
					tree[i] = append(tree[i], xproto.QueryTree(c, w))
				}
			}
		}
		// Look deeper only below the levels that hold no client.
		for i := range frontier {
			var next []xproto.Window
			for _, tc := range tree[i] {
				t, err := tc.Reply()
				if err == nil && frontier[i] != nil {
					next = append(next, t.Children...)
				}
			}
			seen[i] += len(next)
			if seen[i] > maxClientSearch {
				next = nil
			}
			frontier[i] = next
		}
	}
	pids := make([][]res.QueryClientIdsCookie, len(covers))
	for i := range covers {
		for _, w := range clients[i] {
			pids[i] = append(pids[i], b.askPID(w))
		}
	}
	for i := range covers {
		own := b.pidReply(self[i])
		if len(clients[i]) == 0 {
			covers[i].PID = own
			continue
		}
		covers[i].Client = uint32(clients[i][0])
		covers[i].PID = b.singlePID(pids[i])
	}
}

// askPID sends an X-Resource query for the pid of the client that created w. Without
// X-Resource it sends nothing and pidReply answers 0.
func (b *Backend) askPID(w xproto.Window) res.QueryClientIdsCookie {
	if !b.caps.XRes {
		return res.QueryClientIdsCookie{}
	}
	return res.QueryClientIds(b.conn, 1, []res.ClientIdSpec{{Client: uint32(w), Mask: res.ClientIdMaskLocalClientPID}})
}

// pidReply collects askPID's answer; 0 when unknown.
func (b *Backend) pidReply(c res.QueryClientIdsCookie) int {
	if c.Cookie == nil {
		return 0
	}
	r, err := c.Reply()
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

// screenCoversGrabbed lists every viewable window the server draws inside area of the
// whole screen (the root's children, bottom to top) with its owner, as coversAbove
// describes them. Preconditions: this connection holds a server grab.
func (b *Backend) screenCoversGrabbed(area Rect) ([]Cover, error) {
	clientsC, hasClients := b.askClientList()
	tree, err := xproto.QueryTree(b.conn, b.root).Reply()
	if err != nil {
		return nil, xerr("QueryTree", err)
	}
	attrs := make([]xproto.GetWindowAttributesCookie, len(tree.Children))
	for i, w := range tree.Children {
		attrs[i] = xproto.GetWindowAttributes(b.conn, w)
	}
	var clients map[xproto.Window]bool
	if hasClients {
		clients = clientSet(clientsC)
	}
	return b.coversAbove(tree.Children, attrs, area, clients)
}
