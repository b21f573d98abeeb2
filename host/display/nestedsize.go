package display

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// A nested window is never larger than what the person can see of it. The asked size is
// compared with the person's work area less the window manager's frame before Xephyr
// starts (fitFrame); where it does not fit, the window is made as large as fits and shows
// part of the screen, which keeps the asked size (viewport.go). A window manager that
// tells its frame only by drawing it (weston's, under XWayland) is measured once it has
// framed the window, which then shrinks by as much, and its screen with it (refit).

// frameExtentsWait bounds the wait for the window manager's answer to
// _NET_REQUEST_FRAME_EXTENTS.
const frameExtentsWait = 500 * time.Millisecond

// area is a rectangle of the person's root window.
type area struct{ x, y, width, height int }

// fit is what fitFrame decided: the size of the nested window, where to put it when it
// had to be smaller than the screen asked for (clamped), and what it was fitted to.
type fit struct {
	width, height int
	clamped       bool
	// x, y are the root position of the window's inside when clamped.
	x, y int
	// work is the person's work area; left, right, top, bottom the frame's extents, which
	// the window manager told (extentsKnown) or which are taken to be zero.
	work                     area
	left, right, top, bottom int
	extentsKnown             bool
}

// fitFrame returns width×height, or the largest size not above it whose window, with the
// window manager's frame, fits the person's work area (_NET_WORKAREA of the current
// desktop, else the whole root window). The frame's extents are asked of the window
// manager (_NET_REQUEST_FRAME_EXTENTS) for the unmapped window top; a window manager that
// does not offer it is taken to draw no frame. Preconditions: top is unmapped.
func fitFrame(ctx context.Context, x *xgb.Conn, root, top xproto.Window, width, height int) fit {
	f := fit{width: width, height: height, work: workArea(x, root)}
	f.left, f.right, f.top, f.bottom, f.extentsKnown = frameExtents(ctx, x, root, top)
	maxW := max(f.work.width-f.left-f.right, minNestedSide)
	maxH := max(f.work.height-f.top-f.bottom, minNestedSide)
	if width > maxW || height > maxH {
		f.clamped = true
		f.width, f.height = min(width, maxW), min(height, maxH)
		f.x, f.y = f.work.x+f.left, f.work.y+f.top
	}
	return f
}

// minNestedSide is the smallest side of a nested screen (as --screen's).
const minNestedSide = 64

// workArea returns the current desktop's _NET_WORKAREA, or the root window's size where
// the window manager publishes none.
func workArea(x *xgb.Conn, root xproto.Window) area {
	a := area{}
	if g, err := xproto.GetGeometry(x, xproto.Drawable(root)).Reply(); err == nil {
		a.width, a.height = int(g.Width), int(g.Height)
	}
	desk := 0
	if v := cardinals(x, root, "_NET_CURRENT_DESKTOP"); len(v) == 1 {
		desk = int(v[0])
	}
	v := cardinals(x, root, "_NET_WORKAREA")
	if len(v) < 4*(desk+1) {
		desk = 0
	}
	if len(v) >= 4*(desk+1) {
		w := area{int(int32(v[4*desk])), int(int32(v[4*desk+1])), int(v[4*desk+2]), int(v[4*desk+3])}
		if w.width > 0 && w.height > 0 {
			return w
		}
	}
	return a
}

// frameExtents asks the window manager which frame it would give top (left, right, top,
// bottom) and waits up to frameExtentsWait for _NET_FRAME_EXTENTS; zeros and false when it
// does not support the request or does not answer.
func frameExtents(ctx context.Context, x *xgb.Conn, root, top xproto.Window) (l, r, t, b int, ok bool) {
	req := atomOf(x, "_NET_REQUEST_FRAME_EXTENTS")
	if req == 0 || !slices.Contains(atoms(x, root, "_NET_SUPPORTED"), req) {
		return 0, 0, 0, 0, false
	}
	ev := xproto.ClientMessageEvent{Format: 32, Window: top, Type: req, Data: xproto.ClientMessageDataUnionData32New(make([]uint32, 5))}
	xproto.SendEvent(x, false, root, xproto.EventMaskSubstructureNotify|xproto.EventMaskSubstructureRedirect, string(ev.Bytes()))
	deadline := time.Now().Add(frameExtentsWait)
	for {
		if v := cardinals(x, top, "_NET_FRAME_EXTENTS"); len(v) == 4 {
			return int(v[0]), int(v[1]), int(v[2]), int(v[3]), true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, 0, 0, 0, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// atomOf returns the atom named name, 0 when the server has none by that name.
func atomOf(x *xgb.Conn, name string) xproto.Atom {
	r, err := xproto.InternAtom(x, true, uint16(len(name)), name).Reply()
	if err != nil {
		return 0
	}
	return r.Atom
}

// cardinals returns the 32-bit values of property name of window w (nil when absent).
func cardinals(x *xgb.Conn, w xproto.Window, name string) []uint32 {
	a := atomOf(x, name)
	if a == 0 {
		return nil
	}
	r, err := xproto.GetProperty(x, false, w, a, xproto.GetPropertyTypeAny, 0, 1024).Reply()
	if err != nil || r.Format != 32 {
		return nil
	}
	out := make([]uint32, r.ValueLen)
	for i := range out {
		out[i] = xgb.Get32(r.Value[4*i:])
	}
	return out
}

// atoms returns the atoms of property name of w.
func atoms(x *xgb.Conn, w xproto.Window, name string) []xproto.Atom {
	v := cardinals(x, w, name)
	out := make([]xproto.Atom, len(v))
	for i, a := range v {
		out[i] = xproto.Atom(a)
	}
	return out
}

// place gives the unmapped window top the fitted size and, when it had to shrink, puts it
// at the work area's corner with a program-specified position and size (WM_NORMAL_HINTS
// PPosition|PSize) so that the window manager keeps it whole on the screen.
func (f fit) place(x *xgb.Conn, top xproto.Window) {
	if !f.clamped {
		return
	}
	xproto.ConfigureWindow(x, top, xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
		[]uint32{uint32(f.x), uint32(f.y), uint32(f.width), uint32(f.height)})
	// WM_SIZE_HINTS: flags, x, y, width, height, then 13 fields left unset.
	const pPosition, pSize = 1 << 2, 1 << 3
	hints := make([]byte, 4*18)
	for i, v := range []uint32{pPosition | pSize, uint32(f.x), uint32(f.y), uint32(f.width), uint32(f.height)} {
		xgb.Put32(hints[4*i:], v)
	}
	xproto.ChangeProperty(x, xproto.PropModeReplace, top, xproto.AtomWmNormalHints, xproto.AtomWmSizeHints, 32, 18, hints)
}

// refit measures, once the window manager has reparented the window into its frame, the
// frame it actually drew where the window manager did not tell its extents beforehand
// (weston's XWayland window manager, for one): when the frame sticks out of the work
// area, the window shrinks by as much, at the work area's corner, and Xephyr's screen
// follows it (RandR) unless the window already showed part of a larger screen, which
// keeps its size. Called from run.
func (f *frame) refit() {
	if f.size.extentsKnown {
		return
	}
	outer := f.top
	for range maxDepth {
		t, err := xproto.QueryTree(f.x, outer).Reply()
		if err != nil {
			return
		}
		if t.Parent == f.root || t.Parent == 0 {
			break
		}
		outer = t.Parent
	}
	if outer == f.top {
		return
	}
	og, err := xproto.GetGeometry(f.x, xproto.Drawable(outer)).Reply()
	if err != nil {
		return
	}
	tg, err := xproto.GetGeometry(f.x, xproto.Drawable(f.top)).Reply()
	if err != nil {
		return
	}
	ow, oh := int(og.Width)+2*int(og.BorderWidth), int(og.Height)+2*int(og.BorderWidth)
	frameW, frameH := ow-int(tg.Width), oh-int(tg.Height)
	w := min(int(tg.Width), max(f.size.work.width-frameW, minNestedSide))
	h := min(int(tg.Height), max(f.size.work.height-frameH, minNestedSide))
	if w == int(tg.Width) && h == int(tg.Height) {
		return
	}
	f.log.Info("the nested window and its frame were larger than the person's work area: the window shrinks to fit",
		"parent", f.parent, "window", fmt.Sprintf("%dx%d", tg.Width, tg.Height), "frame", fmt.Sprintf("%dx%d", ow, oh),
		"screen", fmt.Sprintf("%dx%d", w, h))
	f.mu.Lock()
	if f.view == nil { // a scrolled screen keeps its size; only the window shrinks
		f.refitW, f.refitH = w, h
	}
	f.mu.Unlock()
	// A configure request's position is the frame's corner (ICCCM, NorthWest gravity).
	xproto.ConfigureWindow(f.x, f.top, xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
		[]uint32{uint32(f.size.work.x), uint32(f.size.work.y), uint32(w), uint32(h)})
}

// refitted returns the size refit gave the window, 0×0 when it kept its size.
func (f *frame) refitted() (width, height int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refitW, f.refitH
}

// LargestNested returns the largest nested screen that fits, with the window manager's
// frame, in the work area of the person's display parent (":N", its cookie in the
// Xauthority file xauthority; empty: none): what a nested display asked for more is
// given. It creates a window there for the question and never maps it. Where the window
// manager tells its frame only by drawing it, the frame is not counted (a nested display
// then shrinks once framed).
func LargestNested(ctx context.Context, parent, xauthority string) (width, height int, err error) {
	if _, err := localDisplayNumber(parent); err != nil {
		return 0, 0, fmt.Errorf("display: the person's display: %w", err)
	}
	x, err := dialParent(ctx, parent, xauthority)
	if err != nil {
		return 0, 0, fmt.Errorf("display: %w", err)
	}
	defer x.Close()
	scr := xproto.Setup(x).DefaultScreen(x)
	win, err := xproto.NewWindowId(x)
	if err != nil {
		return 0, 0, fmt.Errorf("display: window id: %w", err)
	}
	if err := xproto.CreateWindowChecked(x, scr.RootDepth, win, scr.Root, 0, 0, 1, 1, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, 0, nil).Check(); err != nil {
		return 0, 0, fmt.Errorf("display: create a window on %s: %w", parent, err)
	}
	defer xproto.DestroyWindow(x, win)
	f := fitFrame(ctx, x, scr.Root, win, 1<<15, 1<<15)
	return f.width, f.height, nil
}
