package x11

import (
	"context"
	"fmt"
	"slices"

	"github.com/jezek/xgb/res"
	"github.com/jezek/xgb/xproto"
)

// TopLevel is the top-level window that receives pointer events at a root point, as the X
// server decides it: the mapped child of the root that contains the point (override-redirect
// windows, always-on-top windows and docks included, input shapes respected), followed down
// to the client window inside the window manager's frame.
type TopLevel struct {
	// Window is the client window at the point: the first window with WM_STATE on the way
	// down from the root child, or the root child itself when there is none (an
	// override-redirect window, a window manager's decoration, a client on a display
	// without a window manager). 0 means the root window itself: nothing is at the point.
	Window uint32 `json:"window_id"`
	// Frame is the root child at the point: the window manager's frame around Window, or
	// Window itself.
	Frame uint32 `json:"frame"`
	// PID is the process of the client that created Window as the X server observed it on
	// the client's socket (X-Resource); 0 when unknown. It is never _NET_WM_PID, which a
	// client sets itself.
	PID int `json:"pid"`
	// OverrideRedirect is true when Frame bypasses the window manager: menus, tooltips,
	// other clients' popups, screen lockers.
	OverrideRedirect bool `json:"override_redirect,omitempty"`
}

// maxDescent bounds how deep TopLevelsAt follows a frame down to its client.
const maxDescent = 8

// TopLevelsAt returns, for each point of pts (root coordinates), the top-level window that
// receives pointer events there. The requests for all points are pipelined, one round trip
// per level of the window tree (three for a framed client). The frame and client the last
// walk found are asked about in the first round trip too: when the server's answers show
// they are still what lies at every point, that one round trip is the whole walk (see
// guessChain). A window that vanishes while it is read makes the walk start over, at most
// three times.
func (b *Backend) TopLevelsAt(ctx context.Context, pts []Point) ([]TopLevel, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	var err error
	for range 3 {
		if err = ctx.Err(); err != nil {
			return nil, err
		}
		var out []TopLevel
		if out, err = b.topLevelsAt(pts); err == nil {
			return out, nil
		}
	}
	return nil, err
}

// TopLevelAt is TopLevelsAt for one point.
func (b *Backend) TopLevelAt(ctx context.Context, p Point) (TopLevel, error) {
	out, err := b.TopLevelsAt(ctx, []Point{p})
	if err != nil {
		return TopLevel{}, err
	}
	return out[0], nil
}

// walk is one point's way down the window tree.
type walk struct {
	p    Point
	cur  xproto.Window // the window examined at this level
	done bool
	top  TopLevel
	// path is every window examined, from the root's child down: the frame, the
	// manager's wrappers and the client (guessChain asks about it next time).
	path []xproto.Window
}

func (b *Backend) topLevelsAt(pts []Point) ([]TopLevel, error) {
	if out, ok := b.guessChain(pts); ok {
		return out, nil
	}
	out, path, err := b.walkDown(pts)
	if err == nil && len(path) > 0 && len(path) <= maxDescent && out[0].Window == uint32(path[len(path)-1]) {
		b.lastChain.Store(&chain{path: path})
	}
	return out, err
}

// chain is the path a walk followed at a point: the root's child (the frame), the
// windows the walk went down through, and the top-level window it ended on.
type chain struct {
	path []xproto.Window
}

// guessChain answers TopLevelsAt in one round trip when the path the last walk followed
// is what lies at every point. It sends, for each point, what walkDown's levels would ask —
// the root's child at the point; about each window of the path, whether it is a client,
// who created it, which child lies at the point, and of the first whether it bypasses the
// window manager — all at once, the windows taken from the last walk, and accepts the
// answers only where they show exactly the path walkDown would have followed: the root's
// child is the path's first window, each window but the last is no client and has the next
// at the point, and the last is a client (or, alone, the frame the walk ended on because
// nothing lies below it). The answers are the server's, read in the order walkDown reads
// them; only the order in which the questions are sent differs. Anything else (another
// window at a point, an error) returns false, and walkDown asks again from the root.
func (b *Backend) guessChain(pts []Point) ([]TopLevel, bool) {
	q := b.askChain(pts)
	if q == nil {
		return nil, false
	}
	return q.answer()
}

// chainQuestion is guessChain's questions in flight.
type chainQuestion struct {
	b         *Backend
	path      []xproto.Window
	states    []xproto.GetPropertyCookie
	pid       res.QueryClientIdsCookie
	frameAttr xproto.GetWindowAttributesCookie
	roots     []xproto.TranslateCoordinatesCookie
	downs     [][]xproto.TranslateCoordinatesCookie
}

// askChain sends guessChain's questions about pts, or nothing and returns nil when no
// walk has been made yet or there are too many points to guess.
func (b *Backend) askChain(pts []Point) *chainQuestion {
	ch := b.lastChain.Load()
	if ch == nil || len(pts) == 0 || len(pts) > maxGuessPoints {
		return nil
	}
	c := b.conn
	wmState := b.atoms.get("WM_STATE")
	path := ch.path
	last := len(path) - 1
	q := &chainQuestion{b: b, path: path, states: make([]xproto.GetPropertyCookie, len(path))}
	for i, w := range path {
		q.states[i] = xproto.GetProperty(c, false, w, wmState, xproto.GetPropertyTypeAny, 0, 0)
	}
	// Only the window the walk ends on is asked who created it, and only a path of the
	// frame alone is asked what lies below its last window: a walk that ends on a client
	// reads neither. Each request costs about as much as a round trip's wait (see
	// docs/performance.md).
	if b.caps.XRes {
		q.pid = res.QueryClientIds(c, 1, []res.ClientIdSpec{{Client: uint32(path[last]), Mask: res.ClientIdMaskLocalClientPID}})
	}
	downTo := last
	if last == 0 {
		downTo = 1
	}
	q.frameAttr = xproto.GetWindowAttributes(c, path[0])
	q.roots = make([]xproto.TranslateCoordinatesCookie, len(pts))
	q.downs = make([][]xproto.TranslateCoordinatesCookie, len(pts))
	for i, p := range pts {
		q.roots[i] = xproto.TranslateCoordinates(c, b.root, b.root, int16(p.X), int16(p.Y))
		q.downs[i] = make([]xproto.TranslateCoordinatesCookie, downTo)
		for j, w := range path[:downTo] {
			q.downs[i][j] = xproto.TranslateCoordinates(c, b.root, w, int16(p.X), int16(p.Y))
		}
	}
	return q
}

// answer reads the replies of askChain's questions and reports whether they show the
// path walkDown would have followed.
func (q *chainQuestion) answer() ([]TopLevel, bool) {
	b, path := q.b, q.path
	last := len(path) - 1
	// Every reply is read, whatever the answers, so none is left on the connection.
	ok := true
	client := make([]bool, len(path))
	for i := range path {
		st, err := q.states[i].Reply()
		ok = ok && err == nil
		client[i] = err == nil && st.Format != 0
	}
	got := 0
	if b.caps.XRes {
		got = pidOf(q.pid)
	}
	fa, err := q.frameAttr.Reply()
	ok = ok && err == nil
	for i, w := range path[:last] {
		ok = ok && !client[i] && w != 0
	}
	for i := range q.roots {
		r, err := q.roots[i].Reply()
		ok = ok && err == nil && r.Child == path[0]
		for j := range q.downs[i] {
			d, err := q.downs[i][j].Reply()
			switch {
			case err != nil:
				ok = false
			case j < last:
				ok = ok && d.Child == path[j+1]
			case !client[j]:
				// The walk ends on a window that is no client only when nothing lies
				// below it at the point, and only at the first level (the frame itself).
				ok = ok && d.Child == 0
			}
		}
	}
	// The last window of a longer path must be a client: the walk would have gone on
	// below a window that is none.
	ok = ok && (last == 0 || client[last])
	if !ok {
		return nil, false
	}
	top := TopLevel{Window: uint32(path[last]), Frame: uint32(path[0]), PID: got, OverrideRedirect: fa.OverrideRedirect}
	out := make([]TopLevel, len(q.roots))
	for i := range out {
		out[i] = top
	}
	return out, true
}

// TopLevelsStillAt is TopLevelsAt for a check moments after an earlier read at the same
// points (before, read in the same call): it asks only which window lies at each point
// along the way that read went down, from the root to the client — what stacking, moves,
// maps and shapes change at any moment. When every answer is the same window as then,
// what that read said of those windows stands (which is the client, who created it,
// whether the frame bypasses the window manager): none of it changes while the same
// windows stay in the same places. Anything else reads everything again (TopLevelsAt).
func (b *Backend) TopLevelsStillAt(ctx context.Context, pts []Point, before []TopLevel) ([]TopLevel, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	ch := b.lastChain.Load()
	if ch == nil || len(pts) == 0 || len(pts) > maxGuessPoints || len(before) != len(pts) {
		return b.TopLevelsAt(ctx, pts)
	}
	path := ch.path
	last := len(path) - 1
	for _, t := range before {
		if t != before[0] || t.Frame != uint32(path[0]) || t.Window != uint32(path[last]) || last == 0 {
			return b.TopLevelsAt(ctx, pts)
		}
	}
	c := b.conn
	downs := make([][]xproto.TranslateCoordinatesCookie, len(pts))
	for i, p := range pts {
		downs[i] = make([]xproto.TranslateCoordinatesCookie, last+1)
		downs[i][0] = xproto.TranslateCoordinates(c, b.root, b.root, int16(p.X), int16(p.Y))
		for j, w := range path[:last] {
			downs[i][j+1] = xproto.TranslateCoordinates(c, b.root, w, int16(p.X), int16(p.Y))
		}
	}
	same := true
	for i := range pts {
		for j := range downs[i] {
			r, err := downs[i][j].Reply()
			same = same && err == nil && r.Child == path[j]
		}
	}
	if !same {
		return b.TopLevelsAt(ctx, pts)
	}
	return slices.Clone(before), nil
}

// TopLevelsQuestion is a read of what lies at points in flight (AskTopLevelsAt).
type TopLevelsQuestion struct {
	b     *Backend
	pts   []Point
	guess *chainQuestion
}

// AskTopLevelsAt sends the questions of TopLevelsAt's first round trip about pts (root
// coordinates) and returns without waiting for the answers: a caller about to wait for
// another round trip on the backend's connection (a read of the window list) gets both in
// one. Answer reads them. When that first round trip cannot answer, Answer walks.
func (b *Backend) AskTopLevelsAt(pts []Point) *TopLevelsQuestion {
	if b.closed() {
		return &TopLevelsQuestion{b: b, pts: slices.Clone(pts)}
	}
	return &TopLevelsQuestion{b: b, pts: slices.Clone(pts), guess: b.askChain(pts)}
}

// Answer returns what TopLevelsAt would have for the points asked about.
func (q *TopLevelsQuestion) Answer(ctx context.Context) ([]TopLevel, error) {
	if g := q.guess; g != nil {
		q.guess = nil
		if out, ok := g.answer(); ok {
			return out, nil
		}
	}
	return q.b.TopLevelsAt(ctx, q.pts)
}

// Discard drops the answers of a question no longer needed.
func (q *TopLevelsQuestion) Discard() {
	if q.guess != nil {
		q.guess.answer()
		q.guess = nil
	}
}

// maxGuessPoints bounds the points guessChain asks about: more (a long drag path) take
// walkDown, whose requests are shared between points.
const maxGuessPoints = 32

// walkDown is TopLevelsAt's walk from the root, one round trip per level. It also returns
// the path the walk followed at the first point.
func (b *Backend) walkDown(pts []Point) ([]TopLevel, []xproto.Window, error) {
	c := b.conn
	index := make(map[Point]int, len(pts))
	var walks []*walk
	for _, p := range pts {
		if _, ok := index[p]; !ok {
			index[p] = len(walks)
			walks = append(walks, &walk{p: p})
		}
	}
	// Level 0: the root's mapped child at each point.
	trs := make([]xproto.TranslateCoordinatesCookie, len(walks))
	for i, w := range walks {
		trs[i] = xproto.TranslateCoordinates(c, b.root, b.root, int16(w.p.X), int16(w.p.Y))
	}
	for i, w := range walks {
		r, err := trs[i].Reply()
		if err != nil {
			return nil, nil, xerr("TranslateCoordinates", err)
		}
		if r.Child == 0 {
			w.done = true
			continue
		}
		w.cur = r.Child
		w.top.Frame = uint32(r.Child)
		w.path = append(w.path, r.Child)
	}
	// Each level asks, for every window still being examined, whether it is a client
	// (WM_STATE), who created it and which child lies at the point; frames are also asked
	// whether they bypass the window manager. Windows shared by several points are asked once.
	wmState := b.atoms.get("WM_STATE")
	type info struct {
		state xproto.GetPropertyCookie
		pid   res.QueryClientIdsCookie
		attr  xproto.GetWindowAttributesCookie
		frame bool
	}
	for level := 0; level < maxDescent; level++ {
		infos := map[xproto.Window]*info{}
		downs := make([]xproto.TranslateCoordinatesCookie, len(walks))
		pending := false
		for i, w := range walks {
			if w.done {
				continue
			}
			pending = true
			if _, ok := infos[w.cur]; !ok {
				in := &info{state: xproto.GetProperty(c, false, w.cur, wmState, xproto.GetPropertyTypeAny, 0, 0)}
				if b.caps.XRes {
					in.pid = res.QueryClientIds(c, 1, []res.ClientIdSpec{{Client: uint32(w.cur), Mask: res.ClientIdMaskLocalClientPID}})
				}
				if level == 0 {
					in.frame = true
					in.attr = xproto.GetWindowAttributes(c, w.cur)
				}
				infos[w.cur] = in
			}
			downs[i] = xproto.TranslateCoordinates(c, b.root, w.cur, int16(w.p.X), int16(w.p.Y))
		}
		if !pending {
			break
		}
		type answer struct {
			client   bool
			pid      int
			override bool
		}
		answers := map[xproto.Window]answer{}
		var firstErr error
		for win, in := range infos {
			var a answer
			st, err := in.state.Reply()
			if err != nil && firstErr == nil {
				firstErr = xerr("GetProperty", err)
			}
			a.client = err == nil && st.Format != 0
			if b.caps.XRes {
				a.pid = pidOf(in.pid)
			}
			if in.frame {
				attr, err := in.attr.Reply()
				if err != nil && firstErr == nil {
					firstErr = xerr("GetWindowAttributes", err)
				}
				a.override = err == nil && attr.OverrideRedirect
			}
			answers[win] = a
		}
		for i, w := range walks {
			if w.done {
				continue
			}
			r, err := downs[i].Reply()
			if err != nil && firstErr == nil {
				firstErr = xerr("TranslateCoordinates", err)
			}
			if firstErr != nil {
				continue
			}
			a := answers[w.cur]
			if level == 0 {
				w.top.OverrideRedirect = a.override
				// Until a client turns up below, the frame itself is what is there.
				w.top.Window, w.top.PID = uint32(w.cur), a.pid
			}
			switch {
			case a.client:
				w.top.Window, w.top.PID = uint32(w.cur), a.pid
				w.done = true
			case r.Child == 0:
				w.done = true
			default:
				w.cur = r.Child
				w.path = append(w.path, r.Child)
			}
		}
		if firstErr != nil {
			return nil, nil, firstErr
		}
	}
	out := make([]TopLevel, len(pts))
	for i, p := range pts {
		out[i] = walks[index[p]].top
	}
	if len(pts) == 0 {
		return out, nil, nil
	}
	return out, walks[index[pts[0]]].path, nil
}

// pidOf reads the local client pid from an X-Resource reply; 0 when unknown.
func pidOf(c res.QueryClientIdsCookie) int {
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

// String describes t for messages: "window 0x… (pid N, override-redirect)".
func (t TopLevel) String() string {
	if t.Window == 0 {
		return "the root window"
	}
	pid := "pid unknown"
	if t.PID > 0 {
		pid = fmt.Sprintf("pid %d", t.PID)
	}
	if t.OverrideRedirect {
		return fmt.Sprintf("window 0x%x (%s, override-redirect)", t.Window, pid)
	}
	return fmt.Sprintf("window 0x%x (%s)", t.Window, pid)
}
