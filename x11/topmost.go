package x11

import (
	"context"
	"fmt"

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
// per level of the window tree (three for a framed client). A window that vanishes while
// it is read makes the walk start over, at most three times.
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
}

func (b *Backend) topLevelsAt(pts []Point) ([]TopLevel, error) {
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
			return nil, xerr("TranslateCoordinates", err)
		}
		if r.Child == 0 {
			w.done = true
			continue
		}
		w.cur = r.Child
		w.top.Frame = uint32(r.Child)
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
			}
		}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	out := make([]TopLevel, len(pts))
	for i, p := range pts {
		out[i] = walks[index[p]].top
	}
	return out, nil
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
