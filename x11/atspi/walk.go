package atspi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// Walk bounds.
const (
	// DefaultMaxElements bounds the elements of a snapshot when WalkOptions leave it 0.
	DefaultMaxElements = 300
	// MaxElements is the largest MaxElements accepted.
	MaxElements = 5000
	// DefaultMaxDepth bounds the depth walked below the window.
	DefaultMaxDepth = 40
	// MaxDepth is the largest MaxDepth accepted.
	MaxDepth = 200
	// DefaultWalkTimeout bounds a whole walk, window match included.
	DefaultWalkTimeout = 2 * time.Second
	// MaxWalkTimeout is the largest Timeout accepted.
	MaxWalkTimeout = 30 * time.Second
	// childLimit is the most children read of one object (LibreOffice Calc reports 2^30).
	childLimit = 2048
	// visitLimit is the most objects one walk reads.
	visitLimit = 20000
	// maxValueChars bounds the text read as an element's value.
	maxValueChars = 200
	// maxNameBytes bounds names and values in a snapshot.
	maxNameBytes = 200
)

// Truncation reasons, in the order Snapshot.Reasons lists them.
const (
	ReasonMaxElements   = "max_elements"
	ReasonMaxDepth      = "max_depth"
	ReasonChildLimit    = "child_limit"
	ReasonDeadline      = "deadline"
	ReasonNotResponding = "not_responding"
)

var reasonOrder = []string{ReasonMaxElements, ReasonMaxDepth, ReasonChildLimit, ReasonDeadline, ReasonNotResponding}

// Degradation reasons: the prefix of Snapshot.DegradedReason.
const (
	DegradedUnavailable   = "atspi_unavailable"
	DegradedNoApplication = "atspi_no_application"
	DegradedNotMatched    = "atspi_window_not_matched"
	DegradedNotResponding = "atspi_not_responding"
	DegradedTreeEmpty     = "atspi_tree_empty"
)

// WalkOptions bound a walk. Zero values mean the defaults.
type WalkOptions struct {
	// MaxElements bounds the elements returned (1–MaxElements; default DefaultMaxElements).
	// The walk reads up to four times as many objects, then keeps the shallowest
	// on-screen ones.
	MaxElements int
	// MaxDepth bounds the depth below the window (default DefaultMaxDepth).
	MaxDepth int
	// Timeout bounds the whole walk (default DefaultWalkTimeout). When it passes, the
	// walk returns what it has, truncated with ReasonDeadline.
	Timeout time.Duration
	// Query, when set, keeps only elements whose role, name or value contains it
	// (case-insensitive).
	Query string
}

func (o WalkOptions) normalized() WalkOptions {
	if o.MaxElements <= 0 {
		o.MaxElements = DefaultMaxElements
	}
	o.MaxElements = min(o.MaxElements, MaxElements)
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	o.MaxDepth = min(o.MaxDepth, MaxDepth)
	if o.Timeout <= 0 {
		o.Timeout = DefaultWalkTimeout
	}
	o.Timeout = min(o.Timeout, MaxWalkTimeout)
	return o
}

// node is one accessible object during a walk.
type node struct {
	ref      ref
	parent   *node
	children []*node
	depth    int
	seq      int // discovery order

	pending    int  // info calls not answered yet
	roleKnown  bool // GetRoleName answered
	role       string
	name       string
	childCount int
	state      StateSet
	// shown: the element is on screen as far as its state says (StateShowing; or
	// StateVisible, from a toolkit that reports showing on windows only: visibleShows).
	shown   bool
	ifaces  ifaceSet
	ext     *Rect
	actions []string
	value   *string
	rng     *ValueRange
}

// walker is one walk's state; only the pipeline's goroutine touches it.
type walker struct {
	p        *pipeline
	win      Window
	o        WalkOptions
	visitCap int
	nodes    []*node
	seen     map[ref]bool
	reasons  map[string]bool
	foreign  int // children of other applications, skipped
	// visibleShows: the application reports StateShowing on its windows only (GTK 4.8
	// and earlier 4.x), so StateVisible stands for it below them.
	visibleShows bool
}

// Snapshot walks the accessible tree of window w. It fails only when ctx ends before the
// walk could start or the client is closed; everything else yields a snapshot: a degraded
// one (window geometry only, with the reason) when there is no accessible tree, a
// truncated one when a bound was hit.
func (c *Client) Snapshot(ctx context.Context, w Window, o WalkOptions) (*Snapshot, error) {
	start := time.Now()
	o = o.normalized()
	wctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	snap := &Snapshot{ID: newSnapshotID(), Window: w}
	finish := func() (*Snapshot, error) {
		snap.Duration = time.Since(start)
		snap.Taken = time.Now()
		return snap, nil
	}
	conn, err := c.bus(wctx)
	if err != nil {
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return nil, err
		}
		degrade(snap, DegradedUnavailable, err)
		return finish()
	}
	top, err := c.findWindow(wctx, conn, w, snap)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case errors.Is(err, ErrNotAccessible):
			degrade(snap, DegradedNoApplication, err)
		case errors.Is(err, ErrWindowNotMatched):
			degrade(snap, DegradedNotMatched, err)
		case errors.Is(err, ErrNotResponding), errors.Is(err, context.DeadlineExceeded):
			degrade(snap, DegradedNotResponding, err)
		default:
			degrade(snap, DegradedUnavailable, err)
		}
		return finish()
	}
	wk := &walker{p: newPipeline(conn, c.callTimeout), win: w, o: o, seen: map[ref]bool{}, reasons: map[string]bool{},
		visibleShows: showingOnWindowsOnly(snap.Toolkit)}
	wk.visitCap = min(max(4*o.MaxElements, o.MaxElements+256), visitLimit)
	wk.nodes = append(wk.nodes, top)
	wk.seen[top.ref] = true
	wk.expand(top)
	if err := wk.p.run(wctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrNotResponding) {
			wk.reasons[ReasonNotResponding] = true
		} else {
			wk.reasons[ReasonDeadline] = true
		}
	}
	snap.Calls += wk.p.calls
	snap.Visited = len(wk.nodes)
	snap.Foreign = wk.foreign
	wk.build(snap)
	for _, r := range reasonOrder {
		if wk.reasons[r] {
			snap.Reasons = append(snap.Reasons, r)
		}
	}
	snap.Truncated = len(snap.Reasons) > 0
	if len(snap.Elements) == 0 && o.Query == "" {
		degrade(snap, DegradedTreeEmpty, fmt.Errorf("the accessible window has no elements"))
	}
	return finish()
}

// degrade turns snap into a window-geometry snapshot.
func degrade(snap *Snapshot, reason string, err error) {
	snap.Degraded = true
	snap.DegradedReason = reason + ": " + strings.TrimPrefix(err.Error(), "atspi: ")
	w := snap.Window
	frame := Rect{Width: w.Frame.Width, Height: w.Frame.Height}
	screen := w.Frame
	snap.Elements = []Element{{Index: 0, Token: Target{snap.ID, 0}.Token(), Role: "window",
		Name: clip(w.Title, maxNameBytes), Frame: &frame, ScreenFrame: &screen}}
}

// info queues the four calls that describe n; then runs when all have answered.
func (wk *walker) info(n *node, then func(*node)) {
	n.pending = 4
	done := func() {
		n.pending--
		if n.pending == 0 && then != nil {
			then(n)
		}
	}
	wk.p.add(n.ref, ifaceProperties+".GetAll", func(c *dbus.Call) {
		var props map[string]dbus.Variant
		if c.Err == nil && c.Store(&props) == nil {
			if v, ok := props["Name"].Value().(string); ok {
				n.name = v
			}
			if v, ok := props["ChildCount"].Value().(int32); ok {
				n.childCount = int(v)
			}
		}
		done()
	}, ifaceAccessible)
	wk.p.add(n.ref, ifaceAccessible+".GetRoleName", func(c *dbus.Call) {
		if c.Err == nil && c.Store(&n.role) == nil {
			n.roleKnown = true
		}
		done()
	})
	wk.p.add(n.ref, ifaceAccessible+".GetState", func(c *dbus.Call) {
		var words []uint32
		if c.Err == nil && c.Store(&words) == nil {
			n.state = stateSet(words)
			n.shown = n.state.Has(StateShowing) || wk.visibleShows && n.state.Has(StateVisible)
		}
		done()
	})
	wk.p.add(n.ref, ifaceAccessible+".GetInterfaces", func(c *dbus.Call) {
		var names []string
		if c.Err == nil && c.Store(&names) == nil {
			n.ifaces = parseIfaces(names)
		}
		done()
	})
}

// expand queues n's details and children; n's info is known.
func (wk *walker) expand(n *node) {
	if !n.roleKnown || n.state.Has(StateDefunct) {
		return
	}
	hidden := n.depth > 0 && !n.shown && !n.parentManages()
	if !hidden && wk.rowCandidate(n) {
		wk.details(n)
	}
	if hidden && !n.state.Has(StateManagesDescendants) {
		return // hidden widgets have hidden children
	}
	if n.childCount <= 0 {
		return
	}
	if n.depth >= wk.o.MaxDepth {
		wk.reasons[ReasonMaxDepth] = true
		return
	}
	if len(wk.nodes) >= wk.visitCap {
		wk.reasons[ReasonMaxElements] = true
		return
	}
	// A container that manages its descendants (a table, a long list) can have thousands
	// of transient children; without a query, no more of them than could be shown are read.
	room := wk.visitCap - len(wk.nodes)
	take := min(n.childCount, childLimit, room)
	if n.state.Has(StateManagesDescendants) && wk.o.Query == "" {
		take = min(take, wk.o.MaxElements)
	}
	switch {
	case take == n.childCount:
	case take == childLimit:
		wk.reasons[ReasonChildLimit] = true
	default:
		wk.reasons[ReasonMaxElements] = true
	}
	if take == n.childCount {
		wk.p.add(n.ref, ifaceAccessible+".GetChildren", func(c *dbus.Call) {
			var kids []struct {
				Bus  string
				Path dbus.ObjectPath
			}
			if c.Err != nil || c.Store(&kids) != nil {
				// GTK 4 before 4.10 does not implement GetChildren: ask one by one.
				wk.childrenByIndex(n, take)
				return
			}
			for _, k := range kids {
				wk.child(n, ref{bus: k.Bus, path: k.Path})
			}
		})
		return
	}
	// Too many children: ask for the first ones one by one rather than make the
	// application build them all (GetChildren on a 3000-row table creates 3000 objects).
	wk.childrenByIndex(n, take)
}

// childrenByIndex queues n's first take children, asked for one by one.
func (wk *walker) childrenByIndex(n *node, take int) {
	n.children = make([]*node, take) // filled by index; nil where a call failed
	for i := range take {
		wk.p.add(n.ref, ifaceAccessible+".GetChildAtIndex", func(c *dbus.Call) {
			var k struct {
				Bus  string
				Path dbus.ObjectPath
			}
			if c.Err != nil || c.Store(&k) != nil {
				return
			}
			if kid := wk.newChild(n, ref{bus: k.Bus, path: k.Path}); kid != nil {
				n.children[i] = kid
				wk.info(kid, wk.expand)
			}
		}, int32(i))
	}
}

// child adds r as n's next child and queues its info.
func (wk *walker) child(n *node, r ref) {
	if kid := wk.newChild(n, r); kid != nil {
		n.children = append(n.children, kid)
		wk.info(kid, wk.expand)
	}
}

// newChild returns a node for r below n, or nil when r was seen (a cycle), belongs to
// another application, or the visit budget is spent. Children of another application
// (an embedded plug, or an application that lists someone else's objects) are never
// walked: an element of this window must be an object of the process that owns it.
func (wk *walker) newChild(n *node, r ref) *node {
	if r.bus == "" || r.path == "" || r.path == "/org/a11y/atspi/null" || wk.seen[r] {
		return nil
	}
	if r.bus != wk.nodes[0].ref.bus {
		wk.foreign++
		return nil
	}
	if len(wk.nodes) >= wk.visitCap {
		wk.reasons[ReasonMaxElements] = true
		return nil
	}
	wk.seen[r] = true
	kid := &node{ref: r, parent: n, depth: n.depth + 1, seq: len(wk.nodes)}
	wk.nodes = append(wk.nodes, kid)
	return kid
}

func (n *node) parentManages() bool {
	return n.parent != nil && n.parent.state.Has(StateManagesDescendants)
}

// rowCandidate reports whether n may become an element, judging by its info alone.
func (wk *walker) rowCandidate(n *node) bool {
	if n.ifaces&(hasAction|hasEditableText|hasValue) != 0 || structureRoles[n.role] {
		return true
	}
	return n.name != "" || textValueRoles[n.role]
}

// details queues the calls that read n's frame, actions and value.
func (wk *walker) details(n *node) {
	// GetExtents on a non-Component makes GTK log CRITICALs; on a hidden object it
	// returns no position.
	if n.ifaces&hasComponent != 0 && (n.depth == 0 || n.shown) {
		wk.p.add(n.ref, ifaceComponent+".GetExtents", func(c *dbus.Call) {
			var e extents
			if c.Err == nil && c.Store(&e) == nil {
				if r, ok := e.rect(); ok {
					n.ext = &r
				}
			}
		}, uint32(0))
	}
	if n.ifaces&hasAction != 0 {
		wk.p.add(n.ref, ifaceAction+".GetActions", func(c *dbus.Call) {
			var acts []actionInfo
			if c.Err == nil && c.Store(&acts) == nil {
				for _, a := range acts {
					if a.Name != "" {
						n.actions = append(n.actions, a.Name)
					}
				}
			}
		})
	}
	if n.ifaces&hasValue != 0 {
		wk.p.add(n.ref, ifaceProperties+".GetAll", func(c *dbus.Call) {
			var props map[string]dbus.Variant
			if c.Err != nil || c.Store(&props) != nil {
				return
			}
			cur, ok := props["CurrentValue"].Value().(float64)
			if !ok {
				return
			}
			s := strconv.FormatFloat(cur, 'g', -1, 64)
			if n.value == nil { // a spin button's text wins over its number
				n.value = &s
			}
			lo, _ := props["MinimumValue"].Value().(float64)
			hi, _ := props["MaximumValue"].Value().(float64)
			step, _ := props["MinimumIncrement"].Value().(float64)
			n.rng = &ValueRange{Min: lo, Max: hi, Step: step}
		}, ifaceValue)
	}
	if n.ifaces&hasText != 0 && n.role != passwordRole && (n.ifaces&hasEditableText != 0 || textValueRoles[n.role]) {
		wk.p.add(n.ref, ifaceText+".GetText", func(c *dbus.Call) {
			var s string
			if c.Err == nil && c.Store(&s) == nil {
				s = clip(s, maxNameBytes)
				n.value = &s
			}
		}, int32(0), int32(maxValueChars))
	}
}

// useful reports whether n becomes an element: it can be acted on, names something, or
// structures the window. Unnamed layout containers are skipped (their children are not).
func (wk *walker) useful(n *node) bool {
	if !n.roleKnown || n.state.Has(StateDefunct) {
		return false
	}
	if n.depth > 0 && !n.shown && !n.parentManages() {
		return false
	}
	if n.depth == 0 || n.ifaces&(hasAction|hasEditableText|hasValue) != 0 || structureRoles[n.role] {
		return true
	}
	if layoutRoles[n.role] {
		return n.name != ""
	}
	return n.name != "" || (n.value != nil && *n.value != "")
}

func (wk *walker) matches(n *node) bool {
	q := strings.ToLower(wk.o.Query)
	if q == "" {
		return true
	}
	if strings.Contains(strings.ToLower(n.role), q) || strings.Contains(strings.ToLower(n.name), q) {
		return true
	}
	return n.value != nil && strings.Contains(strings.ToLower(*n.value), q)
}

// build selects the elements (the shallowest on-screen ones when there are more than
// MaxElements), numbers them in pre-order and fills snap.Elements.
func (wk *walker) build(snap *Snapshot) {
	var cands []*node
	for _, n := range wk.nodes {
		if wk.useful(n) && wk.matches(n) {
			cands = append(cands, n)
		}
	}
	keep := make(map[*node]bool, len(cands))
	if len(cands) > wk.o.MaxElements {
		wk.reasons[ReasonMaxElements] = true
		slices.SortStableFunc(cands, func(a, b *node) int {
			if oa, ob := a.offscreen(), b.offscreen(); oa != ob {
				if oa {
					return 1
				}
				return -1
			}
			if a.depth != b.depth {
				return a.depth - b.depth
			}
			return a.seq - b.seq
		})
		cands = cands[:wk.o.MaxElements]
	}
	for _, n := range cands {
		keep[n] = true
	}
	snap.Elements = make([]Element, 0, len(cands))
	var visit func(n *node, parent int, depth int)
	visit = func(n *node, parent int, depth int) {
		if n == nil {
			return
		}
		if keep[n] {
			el := wk.element(n, snap.ID, len(snap.Elements), depth)
			if parent >= 0 {
				p := parent
				el.Parent = &p
			}
			snap.Elements = append(snap.Elements, el)
			parent, depth = el.Index, depth+1
		}
		for _, k := range n.children {
			visit(k, parent, depth)
		}
	}
	visit(wk.nodes[0], -1, 0)
}

// offscreen reports whether n is out of view: not showing, or a Component without a
// position on screen.
func (n *node) offscreen() bool {
	return n.ext == nil && n.ifaces&hasComponent != 0 || !n.shown
}

// element converts n to an Element.
func (wk *walker) element(n *node, snapID string, index, depth int) Element {
	interactive := n.ifaces&(hasAction|hasEditableText|hasValue) != 0
	el := Element{
		Index: index, Token: Target{snapID, index}.Token(), Role: n.role, Name: clip(n.name, maxNameBytes),
		Value: n.value, Range: n.rng, States: n.state.Reported(interactive), Editable: n.ifaces&hasEditableText != 0,
		Depth: depth, ref: n.ref, ifaces: n.ifaces, state: n.state, actions: n.actions,
	}
	if n.depth == 0 && n.role == "" {
		el.Role = "window"
	}
	if interactive && n.depth > 0 && n.offscreen() {
		// Toolkits keep "showing" on rows scrolled out of view; their extents tell.
		el.States = append(el.States, "offscreen")
	}
	for _, a := range n.actions {
		el.Actions = append(el.Actions, strings.ToLower(a))
	}
	if n.ext != nil {
		screen := *n.ext
		win := Rect{X: screen.X - wk.win.Frame.X, Y: screen.Y - wk.win.Frame.Y, Width: screen.Width, Height: screen.Height}
		el.ScreenFrame, el.Frame = &screen, &win
	}
	return el
}
