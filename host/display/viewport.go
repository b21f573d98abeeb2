package display

import (
	"context"
	"fmt"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// A nested screen larger than what fits on the person's screen keeps its size: Xephyr
// cannot scale its window, so the frame on the person's display is as large as fits and
// shows part of Xephyr's window, which is as large as the screen — a viewport, scrolled
// by moving Xephyr's window inside the frame. The view follows the nested display's
// pointer (the agent's, or the person's while they have taken over), keeping it at least
// followMargin pixels from the frame's edges where the screen allows: whatever the agent
// points at is in view, and the person scrolls by moving towards an edge. No pixel is
// cut off for good, and the agent is told the screen's real size.

// followPoll is how often the view reads the nested display's pointer.
const followPoll = 50 * time.Millisecond

// followMargin is how close to the frame's edge the pointer may come before the view
// scrolls.
const followMargin = 48

// viewport is the state of a frame that shows part of a larger screen; frame.mu guards it.
type viewport struct {
	// screenW×screenH is the least size of Xephyr's window: the screen asked for.
	screenW, screenH int
	// viewW×viewH is the frame's inside, as last configured.
	viewW, viewH int
	// offX, offY is the position of Xephyr's window in the frame (≤ 0).
	offX, offY int
}

// scrollTo returns the offsets that keep point (px, py) of the screen in view, at least
// followMargin from the frame's edges where the screen allows, moving as little as
// possible; and the window's size, at least the view's.
func (v viewport) scrollTo(px, py int) (offX, offY, w, h int) {
	w, h = max(v.screenW, v.viewW), max(v.screenH, v.viewH)
	return follow(v.offX, px, v.viewW, w), follow(v.offY, py, v.viewH, h), w, h
}

// follow is scrollTo along one axis: off is the window's position in a view of size
// view, p the pointer on a screen of size size.
func follow(off, p, view, size int) int {
	margin := min(followMargin, view/4)
	if p+off < margin { // too close to (or beyond) the start of the view
		off = margin - p
	}
	if p+off > view-1-margin {
		off = view - 1 - margin - p
	}
	return min(0, max(off, view-size))
}

// setView records the frame's new inside and places Xephyr's window in it: at least the
// view's size, scrolled so that the pointer last seen stays in view. Called from run.
func (f *frame) setView(w, h int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.view == nil {
		// The child follows the frame; Xephyr resizes its screen to it (RandR).
		xproto.ConfigureWindow(f.x, f.child, xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
			[]uint32{uint32(w), uint32(h)})
		return
	}
	f.view.viewW, f.view.viewH = w, h
	f.placeLocked(f.lastX, f.lastY)
}

// placeLocked scrolls the view to keep (px, py) in it; f.mu is held.
func (f *frame) placeLocked(px, py int) {
	v := f.view
	offX, offY, cw, ch := v.scrollTo(px, py)
	v.offX, v.offY = offX, offY
	f.lastX, f.lastY = px, py
	xproto.ConfigureWindow(f.x, f.child, xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
		[]uint32{uint32(int32(offX)), uint32(int32(offY)), uint32(cw), uint32(ch)})
}

// follow reads the nested display's pointer through nx every followPoll and scrolls the
// view to it, until the frame stops. It closes nx.
func (f *frame) follow(nx *xgb.Conn) {
	defer nx.Close()
	root := xproto.Setup(nx).DefaultScreen(nx).Root
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		p, err := xproto.QueryPointer(nx, root).Reply()
		if err != nil {
			f.log.Debug("the nested display's pointer is no longer read", "err", err)
			return
		}
		f.mu.Lock()
		if int(p.RootX) != f.lastX || int(p.RootY) != f.lastY {
			f.placeLocked(int(p.RootX), int(p.RootY))
		}
		f.mu.Unlock()
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
	}
}

// NestedScrolled reports whether a nested display's window shows only part of its
// screen, which did not fit on the person's (viewport.go): the view then follows the
// pointer. False for a display that is not nested.
func (d *Display) NestedScrolled() bool {
	return d.nested != nil && d.nested.frame.view != nil
}

// startFollowing connects to the nested display num through the cookie in xauthority
// and starts follow, for a frame that shows part of its screen; it does nothing for one
// that shows all of it.
func (f *frame) startFollowing(ctx context.Context, num int, xauthority string) error {
	if f.view == nil {
		return nil
	}
	nx, err := dialParent(ctx, fmt.Sprintf(":%d", num), xauthority)
	if err != nil {
		return fmt.Errorf("display: nested: follow the pointer: %w", err)
	}
	f.following.Add(1)
	go func() {
		defer f.following.Done()
		f.follow(nx)
	}()
	return nil
}
