package x11

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/shape"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// Pixels of a CursorImage.
const (
	CursorClear   byte = 0 // transparent
	CursorFill    byte = 1 // CursorImage.Fill
	CursorOutline byte = 2 // CursorImage.Outline
)

// MaxCursorSide bounds both sides of a CursorImage.
const MaxCursorSide = 64

// CursorImage is the artwork of an agent cursor: two colours on a transparent ground, the
// most every X cursor can show (core cursors have a foreground and a background colour).
type CursorImage struct {
	// Width and Height are the image's size in pixels, 1–MaxCursorSide each.
	Width, Height int
	// HotX and HotY are the hotspot: the pixel that sits on the pointer's position.
	HotX, HotY int
	// Pixels holds Width×Height values, row by row: CursorClear, CursorFill or CursorOutline.
	Pixels []byte
	// Fill and Outline are the two colours, 0xRRGGBB.
	Fill, Outline uint32
}

// check reports what is wrong with img, or nil.
func (img CursorImage) check() error {
	switch {
	case img.Width < 1 || img.Height < 1 || img.Width > MaxCursorSide || img.Height > MaxCursorSide:
		return fmt.Errorf("%w: cursor image %dx%d (sides 1–%d)", ErrInvalidArgument, img.Width, img.Height, MaxCursorSide)
	case len(img.Pixels) != img.Width*img.Height:
		return fmt.Errorf("%w: cursor image has %d pixels, want %d", ErrInvalidArgument, len(img.Pixels), img.Width*img.Height)
	case img.HotX < 0 || img.HotY < 0 || img.HotX >= img.Width || img.HotY >= img.Height:
		return fmt.Errorf("%w: cursor hotspot (%d,%d) outside %dx%d", ErrInvalidArgument, img.HotX, img.HotY, img.Width, img.Height)
	}
	for i, p := range img.Pixels {
		if p > CursorOutline {
			return fmt.Errorf("%w: cursor pixel %d is %d", ErrInvalidArgument, i, p)
		}
	}
	return nil
}

// runs returns, for the pixels equal to v, one rectangle per horizontal run.
func (img CursorImage) runs(v byte) []xproto.Rectangle {
	var out []xproto.Rectangle
	for y := range img.Height {
		row := img.Pixels[y*img.Width : (y+1)*img.Width]
		for x := 0; x < img.Width; {
			if row[x] != v {
				x++
				continue
			}
			start := x
			for x < img.Width && row[x] == v {
				x++
			}
			out = append(out, xproto.Rectangle{X: int16(start), Y: int16(y), Width: uint16(x - start), Height: 1})
		}
	}
	return out
}

// AgentCursor draws an agent's cursor, distinct from the person's, in two ways:
//
//   - an overlay: a small override-redirect window shaped like the image, whose input
//     shape is empty so that every click passes through it to the window below (the
//     server's pointer-event delivery, TranslateCoordinates and so TopLevelAt ignore it).
//     MoveTo shows it with its hotspot at a point, Hide unmaps it;
//   - the cursor of a master pointer: ShowOnPointer makes a session's own pointer (a
//     Seat's) show the image over the desktop (XIChangeCursor), RestorePointer undoes it.
//     The core pointer is never changed.
//
// It lives on a connection of its own, so its window belongs to this process, as the X
// server observes it: the worker's own windows are protected from every tool. Its methods
// are safe for concurrent use. Close removes everything; closing the backend closes it.
type AgentCursor struct {
	b    *Backend
	conn *xgb.Conn
	win  xproto.Window
	// xi2 is nil when XInput 2.2 is usable on conn, else why not.
	xi2 error

	// mu guards the fields below and orders the requests that change them.
	mu      sync.Mutex
	img     CursorImage
	art     xproto.Pixmap // the window's background: the image in colour
	mask    xproto.Pixmap // depth 1: the image's opaque pixels
	cursor  xproto.Cursor
	mapped  bool
	at      Point           // the hotspot's position while mapped
	devices map[uint16]bool // master pointers showing cursor over the root
	gone    bool

	closeOnce sync.Once
	stop      chan struct{} // closed by Close
	drained   chan struct{} // closed when the connection's event drain ends
	watched   chan struct{} // closed when the backend watch ends
}

// NewAgentCursor creates an agent cursor showing img, with its overlay window unmapped.
// name is the window's WM_NAME, for people reading the server's window tree (xwininfo).
// It fails with ErrUnsupported when the server cannot make a window that clicks pass
// through (no SHAPE 1.1).
func (b *Backend) NewAgentCursor(ctx context.Context, name string, img CursorImage) (_ *AgentCursor, err error) {
	if b.closed() {
		return nil, ErrClosed
	}
	if err := img.check(); err != nil {
		return nil, err
	}
	if !b.caps.Shape {
		return nil, fmt.Errorf("%w: the X server has no SHAPE extension, so an overlay cannot let clicks through", ErrUnsupported)
	}
	conn, err := dial(ctx, b.display)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	if err := initExtension(conn, "SHAPE"); err != nil {
		return nil, err
	}
	v, err := shape.QueryVersion(conn).Reply()
	if err != nil {
		return nil, xerr("ShapeQueryVersion", err)
	}
	if v.MajorVersion < 1 || (v.MajorVersion == 1 && v.MinorVersion < 1) {
		return nil, fmt.Errorf("%w: SHAPE %d.%d has no input shapes (1.1 needed), so an overlay cannot let clicks through", ErrUnsupported, v.MajorVersion, v.MinorVersion)
	}
	c := &AgentCursor{b: b, conn: conn, devices: map[uint16]bool{},
		stop: make(chan struct{}), drained: make(chan struct{}), watched: make(chan struct{})}
	if err := xinput2.Init(conn); err != nil {
		c.xi2 = err
	}
	if c.win, err = xproto.NewWindowId(conn); err != nil {
		return nil, xerr("NewWindowId", err)
	}
	err = xproto.CreateWindowChecked(conn, 0, c.win, b.root, 0, 0, uint16(img.Width), uint16(img.Height), 0,
		xproto.WindowClassInputOutput, 0, xproto.CwOverrideRedirect, []uint32{1}).Check()
	if err != nil {
		return nil, xerr("CreateWindow", err)
	}
	xproto.ChangeProperty(conn, xproto.PropModeReplace, c.win, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(name)), []byte(name))
	class := "cua-host-agent-cursor\x00cua-host\x00"
	xproto.ChangeProperty(conn, xproto.PropModeReplace, c.win, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class))
	// No input shape at all: the window never receives pointer events, nor hides the
	// window below from them.
	if err := shape.RectanglesChecked(conn, shape.SoSet, shape.SkInput, xproto.ClipOrderingUnsorted, c.win, 0, 0, nil).Check(); err != nil {
		return nil, xerr("ShapeRectangles(input)", err)
	}
	c.mu.Lock()
	err = c.drawLocked(img)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	go c.drain()
	go c.watch()
	b.log.Debug("x11 agent cursor created", "window", uint32(c.win), "name", name)
	return c, nil
}

// drain reads the connection's events and asynchronous errors, so xgb never blocks.
func (c *AgentCursor) drain() {
	defer close(c.drained)
	for {
		ev, xe := c.conn.WaitForEvent()
		if ev == nil && xe == nil {
			return
		}
		if xe != nil {
			c.b.log.Debug("x11 agent cursor async error", "err", xe.Error())
		}
	}
}

// watch closes the cursor when the backend closes first.
func (c *AgentCursor) watch() {
	defer close(c.watched)
	select {
	case <-c.b.done:
		c.closeOnce.Do(c.shutdown)
	case <-c.stop:
	}
}

// Window is the overlay window's id.
func (c *AgentCursor) Window() uint32 { return uint32(c.win) }

// drawLocked makes img the cursor's artwork: the overlay's background, shape and size,
// and the cursor master pointers show. The previous artwork is freed.
func (c *AgentCursor) drawLocked(img CursorImage) error {
	conn, root := c.conn, c.b.root
	w, h := uint16(img.Width), uint16(img.Height)
	fill, err := c.pixel(img.Fill)
	if err != nil {
		return err
	}
	outline, err := c.pixel(img.Outline)
	if err != nil {
		return err
	}
	art, err := xproto.NewPixmapId(conn)
	if err != nil {
		return xerr("NewPixmapId", err)
	}
	mask, err := xproto.NewPixmapId(conn)
	if err != nil {
		return xerr("NewPixmapId", err)
	}
	source, err := xproto.NewPixmapId(conn)
	if err != nil {
		return xerr("NewPixmapId", err)
	}
	gc, err := xproto.NewGcontextId(conn)
	if err != nil {
		return xerr("NewGcontextId", err)
	}
	bitGC, err := xproto.NewGcontextId(conn)
	if err != nil {
		return xerr("NewGcontextId", err)
	}
	xproto.CreatePixmap(conn, c.b.depth, art, xproto.Drawable(root), w, h)
	xproto.CreatePixmap(conn, 1, mask, xproto.Drawable(root), w, h)
	xproto.CreatePixmap(conn, 1, source, xproto.Drawable(root), w, h)
	xproto.CreateGC(conn, gc, xproto.Drawable(art), xproto.GcForeground, []uint32{outline})
	xproto.CreateGC(conn, bitGC, xproto.Drawable(mask), xproto.GcForeground, []uint32{0})
	all := []xproto.Rectangle{{Width: w, Height: h}}
	fills, outlines := img.runs(CursorFill), img.runs(CursorOutline)
	// The colour image: outline everywhere, fill where it goes (clear pixels are cut away
	// by the bounding shape).
	xproto.PolyFillRectangle(conn, xproto.Drawable(art), gc, all)
	if len(fills) > 0 {
		xproto.ChangeGC(conn, gc, xproto.GcForeground, []uint32{fill})
		xproto.PolyFillRectangle(conn, xproto.Drawable(art), gc, fills)
	}
	// The mask: every opaque pixel. The cursor's source: 1 for fill, 0 for outline.
	xproto.PolyFillRectangle(conn, xproto.Drawable(mask), bitGC, all)
	xproto.PolyFillRectangle(conn, xproto.Drawable(source), bitGC, all)
	xproto.ChangeGC(conn, bitGC, xproto.GcForeground, []uint32{1})
	if len(fills) > 0 {
		xproto.PolyFillRectangle(conn, xproto.Drawable(mask), bitGC, fills)
		xproto.PolyFillRectangle(conn, xproto.Drawable(source), bitGC, fills)
	}
	if len(outlines) > 0 {
		xproto.PolyFillRectangle(conn, xproto.Drawable(mask), bitGC, outlines)
	}
	cursor, err := xproto.NewCursorId(conn)
	if err != nil {
		return xerr("NewCursorId", err)
	}
	fr, fg, fb := rgb16(img.Fill)
	or, og, ob := rgb16(img.Outline)
	err = xproto.CreateCursorChecked(conn, cursor, source, mask, fr, fg, fb, or, og, ob, uint16(img.HotX), uint16(img.HotY)).Check()
	xproto.FreeGC(conn, gc)
	xproto.FreeGC(conn, bitGC)
	xproto.FreePixmap(conn, source)
	if err != nil {
		xproto.FreePixmap(conn, art)
		xproto.FreePixmap(conn, mask)
		return xerr("CreateCursor", err)
	}
	xproto.ChangeWindowAttributes(conn, c.win, xproto.CwBackPixmap, []uint32{uint32(art)})
	x, y := c.at.X-img.HotX, c.at.Y-img.HotY
	xproto.ConfigureWindow(conn, c.win, xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
		[]uint32{uint32(int32(x)), uint32(int32(y)), uint32(w), uint32(h)})
	shape.Mask(conn, shape.SoSet, shape.SkBounding, c.win, 0, 0, mask)
	xproto.ClearArea(conn, false, c.win, 0, 0, 0, 0)
	if c.art != 0 {
		xproto.FreePixmap(conn, c.art)
		xproto.FreePixmap(conn, c.mask)
	}
	old := c.cursor
	c.img, c.art, c.mask, c.cursor = img, art, mask, cursor
	var first error
	for id := range c.devices {
		if err := xinput2.ChangeCursor(conn, c.b.root, cursor, id); err != nil {
			first = cmp.Or(first, xerr("XIChangeCursor", err))
		}
	}
	if old != 0 {
		xproto.FreeCursor(conn, old)
	}
	if err := syncConn(conn); err != nil {
		return err
	}
	return first
}

// pixel returns the pixel value of colour rgb (0xRRGGBB) in the default colormap.
func (c *AgentCursor) pixel(rgb uint32) (uint32, error) {
	r, g, b := rgb16(rgb)
	cmap := xproto.Setup(c.conn).DefaultScreen(c.conn).DefaultColormap
	reply, err := xproto.AllocColor(c.conn, cmap, r, g, b).Reply()
	if err != nil {
		return 0, xerr("AllocColor", err)
	}
	return reply.Pixel, nil
}

// rgb16 splits 0xRRGGBB into the 16-bit channels X colours use.
func rgb16(rgb uint32) (r, g, b uint16) {
	return uint16(rgb>>16&0xff) * 0x101, uint16(rgb>>8&0xff) * 0x101, uint16(rgb&0xff) * 0x101
}

// SetImage replaces the artwork, on the overlay and on every pointer showing it.
func (c *AgentCursor) SetImage(ctx context.Context, img CursorImage) error {
	if err := img.check(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usableLocked(ctx); err != nil {
		return err
	}
	return c.drawLocked(img)
}

func (c *AgentCursor) usableLocked(ctx context.Context) error {
	if c.gone {
		return ErrClosed
	}
	return ctx.Err()
}

// MoveTo shows the overlay with its hotspot at p, above every other window, and returns
// once the server has done it.
func (c *AgentCursor) MoveTo(ctx context.Context, p Point) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usableLocked(ctx); err != nil {
		return err
	}
	c.at = p
	x, y := p.X-c.img.HotX, p.Y-c.img.HotY
	xproto.ConfigureWindow(c.conn, c.win, xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowStackMode,
		[]uint32{uint32(int32(x)), uint32(int32(y)), xproto.StackModeAbove})
	if !c.mapped {
		xproto.MapWindow(c.conn, c.win)
		c.mapped = true
	}
	return syncConn(c.conn)
}

// Hide unmaps the overlay.
func (c *AgentCursor) Hide(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usableLocked(ctx); err != nil {
		return err
	}
	if !c.mapped {
		return nil
	}
	xproto.UnmapWindow(c.conn, c.win)
	c.mapped = false
	return syncConn(c.conn)
}

// Shown reports whether the overlay is mapped, and where its hotspot is.
func (c *AgentCursor) Shown() (Point, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at, c.mapped
}

// ShowOnPointer makes master pointer id (a Seat's pointer) show the image wherever no
// window defines a cursor of its own: the root window's cursor for that device. It fails
// with ErrUnsupported without XInput 2.2.
func (c *AgentCursor) ShowOnPointer(ctx context.Context, id uint16) error {
	return c.setPointer(ctx, id, true)
}

// RestorePointer gives master pointer id back the cursors the windows define for
// everyone. A device that is gone is not an error.
func (c *AgentCursor) RestorePointer(ctx context.Context, id uint16) error {
	return c.setPointer(ctx, id, false)
}

func (c *AgentCursor) setPointer(ctx context.Context, id uint16, on bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usableLocked(ctx); err != nil {
		return err
	}
	if c.xi2 != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, c.xi2)
	}
	if c.devices[id] == on {
		return nil
	}
	cursor := xproto.Cursor(0)
	if on {
		cursor = c.cursor
	}
	if err := xinput2.ChangeCursor(c.conn, c.b.root, cursor, id); err != nil {
		if !on {
			// With None on the root the only error left is BadDevice: the device (a
			// session's pair) was removed, and its cursor with it.
			delete(c.devices, id)
			return nil
		}
		return xerr("XIChangeCursor", err)
	}
	if on {
		c.devices[id] = true
	} else {
		delete(c.devices, id)
	}
	return nil
}

// Close gives every pointer it changed its cursors back, destroys the overlay and closes
// the connection. It is idempotent.
func (c *AgentCursor) Close() {
	c.closeOnce.Do(c.shutdown)
	<-c.watched
}

func (c *AgentCursor) shutdown() {
	close(c.stop)
	c.mu.Lock()
	c.gone = true
	for id := range c.devices {
		_ = xinput2.ChangeCursor(c.conn, c.b.root, 0, id) // a removed device: nothing to undo
	}
	c.devices = nil
	xproto.DestroyWindow(c.conn, c.win)
	_ = syncConn(c.conn)
	c.mu.Unlock()
	c.conn.Close()
	<-c.drained
	c.b.log.Debug("x11 agent cursor closed", "window", uint32(c.win))
}
