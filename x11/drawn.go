package x11

import (
	"bytes"
	"context"
	"time"

	"github.com/jezek/xgb/xproto"
)

// drawnPoll is how often AwaitDrawn looks at a window's pixels.
const drawnPoll = 20 * time.Millisecond

// drawnSample bounds how many pixels of a window one look reads: a larger window is read
// every few rows.
const drawnSample = 512 * 1024

// AwaitDrawn waits until window id shows something other than one uniform colour — until
// its client has drawn its first frame — or until bound passes, and reports whether it did
// and how long it waited. A toolkit maps its window before it draws into it, and may still
// be setting up what it shows (GTK4's editors load the file they were given) until it
// draws: keys typed into a window that was never drawn can land before that setup ends
// and be moved or lost by it (a GTK4 editor puts the cursor back at the start of the text
// it loaded). A window that stays one colour (an empty canvas) costs the whole bound.
//
// Only the part of the window on the screen is read, with GetImage on the window itself
// (the pixels of a window stacked above it may be read too: a freshly mapped window is on
// top). It returns false at once when the window is not viewable.
func (b *Backend) AwaitDrawn(ctx context.Context, id uint32, bound time.Duration) (drawn bool, waited time.Duration, err error) {
	if b.closed() {
		return false, 0, ErrClosed
	}
	start := time.Now()
	deadline := start.Add(bound)
	for {
		blank, err := b.blank(xproto.Window(id))
		if err != nil {
			return false, time.Since(start), err
		}
		if !blank {
			return true, time.Since(start), nil
		}
		if !time.Now().Add(drawnPoll).Before(deadline) {
			return false, time.Since(start), nil
		}
		if err := sleepCtx(ctx, drawnPoll); err != nil {
			return false, time.Since(start), err
		}
	}
}

// AwaitStill waits until window id has shown the same pixels for quiet, or until bound
// passes, and reports whether it did and how long it waited. A program keeps changing its
// window while it sets itself up after the first frame: Chromium spins its tab's loading
// indicator until the page has loaded, then lays the window out again for the bars it
// adds above the page, and keys sent meanwhile never reached the page (no keydown
// event), although the page already had the focus. A window that animates without pause
// (a spinner, a video) costs the whole bound. Like AwaitDrawn it reads the window's
// on-screen part, every few rows for a large window, every drawnPoll: a change that
// comes and goes between two looks, or lies between the rows read, is not seen.
func (b *Backend) AwaitStill(ctx context.Context, id uint32, quiet, bound time.Duration) (still bool, waited time.Duration, err error) {
	if b.closed() {
		return false, 0, ErrClosed
	}
	start := time.Now()
	deadline := start.Add(bound)
	var last []byte
	since := start
	for {
		pix, _, err := b.sample(xproto.Window(id))
		if err != nil {
			return false, time.Since(start), err
		}
		now := time.Now()
		if last == nil || !bytes.Equal(pix, last) {
			last, since = pix, now
		} else if now.Sub(since) >= quiet {
			return true, now.Sub(start), nil
		}
		if !now.Add(drawnPoll).Before(deadline) {
			return false, now.Sub(start), nil
		}
		if err := sleepCtx(ctx, drawnPoll); err != nil {
			return false, time.Since(start), err
		}
	}
}

// blank reports whether the on-screen part of window w is one uniform colour, reading at
// most about drawnSample pixels of it. A window that is not viewable, or has no part on
// the screen, is blank.
func (b *Backend) blank(w xproto.Window) (bool, error) {
	pix, n, err := b.sample(w)
	if err != nil || n == 0 {
		return n == 0, err
	}
	return uniform(pix, n), nil
}

// sample reads the on-screen part of window w, every row or every few rows so that at
// most about drawnSample pixels are read, and returns the pixels read and their number (0
// when the window is not viewable or has no part on the screen).
func (b *Backend) sample(w xproto.Window) (pix []byte, n int, err error) {
	attrs, err := xproto.GetWindowAttributes(b.conn, w).Reply()
	if err != nil {
		return nil, 0, xerr("GetWindowAttributes", err)
	}
	if attrs.MapState != xproto.MapStateViewable {
		return nil, 0, nil
	}
	geo, err := xproto.GetGeometry(b.conn, xproto.Drawable(w)).Reply()
	if err != nil {
		return nil, 0, xerr("GetGeometry", err)
	}
	pos, err := xproto.TranslateCoordinates(b.conn, w, b.root, 0, 0).Reply()
	if err != nil {
		return nil, 0, xerr("TranslateCoordinates", err)
	}
	sw, sh := b.ScreenSize()
	on := clip(Rect{X: int(pos.DstX), Y: int(pos.DstY), Width: int(geo.Width), Height: int(geo.Height)}, Rect{Width: sw, Height: sh})
	if on.Width <= 0 || on.Height <= 0 {
		return nil, 0, nil
	}
	x0, y0 := on.X-int(pos.DstX), on.Y-int(pos.DstY) // window-relative
	step := max(1, (on.Width*on.Height+drawnSample-1)/drawnSample)
	if step == 1 {
		img, err := xproto.GetImage(b.conn, xproto.ImageFormatZPixmap, xproto.Drawable(w),
			int16(x0), int16(y0), uint16(on.Width), uint16(on.Height), 0xffffffff).Reply()
		if err != nil {
			return nil, 0, xerr("GetImage", err)
		}
		return img.Data, on.Width * on.Height, nil
	}
	// Every step-th row, the requests sent before the first reply is read.
	var rows []xproto.GetImageCookie
	for y := 0; y < on.Height; y += step {
		rows = append(rows, xproto.GetImage(b.conn, xproto.ImageFormatZPixmap, xproto.Drawable(w),
			int16(x0), int16(y0+y), uint16(on.Width), 1, 0xffffffff))
	}
	var failed error
	for _, c := range rows {
		img, err := c.Reply()
		if err != nil {
			failed = xerr("GetImage", err)
			continue // read every reply
		}
		pix = append(pix, img.Data...)
		n += on.Width
	}
	if failed != nil {
		return nil, 0, failed
	}
	return pix, n, nil
}

// uniform reports whether the n pixels of data are all the same.
func uniform(data []byte, n int) bool {
	if n <= 0 || len(data) < n {
		return true
	}
	bpp := len(data) / n
	if bpp == 0 {
		return true
	}
	first := data[:bpp]
	for i := bpp; i+bpp <= n*bpp; i += bpp {
		if !bytes.Equal(data[i:i+bpp], first) {
			return false
		}
	}
	return true
}

// Input into a program this backend launched, on its first keys (settleFocusLocked).
const (
	// freshFor is how long after its launch a program's first keys wait for its window to
	// be still: later, it has had its time to set up.
	freshFor = 30 * time.Second
	// firstKeysQuiet is how long the window must show the same pixels.
	firstKeysQuiet = 150 * time.Millisecond
	// firstKeysWait bounds the wait: a window that animates without pause costs this.
	firstKeysWait = 2 * time.Second
)

// settleFocusLocked waits, before the first keys d sends to a program this backend
// launched less than freshFor ago, until the top-level window that has d's keyboard focus
// shows the same pixels for firstKeysQuiet (AwaitStill), at most firstKeysWait, and
// returns how long it waited (0 when it did not). A program that reports itself ready
// may still be setting up: Chromium whose page already had the focus dropped every key
// sent in the next few hundred milliseconds (no keydown reached the page) while it
// finished loading and laid its window out again for the bar it adds above the page.
// Only the first keys of each launched program wait. Preconditions: input semaphore held.
func (d *Devices) settleFocusLocked(ctx context.Context) time.Duration {
	b := d.b
	f, err := d.InputFocus(ctx)
	if err != nil || f.TopLevel == 0 || f.PID <= 1 {
		return 0
	}
	root := f.PID
	if b.procs.get(root) == nil {
		root = b.sandboxOf(f.PID)
	}
	p := b.procs.get(root)
	if p == nil {
		return 0
	}
	b.procs.mu.Lock()
	first := !p.settled && time.Since(p.started) < freshFor
	p.settled = true
	b.procs.mu.Unlock()
	if !first {
		return 0
	}
	still, waited, err := b.AwaitStill(ctx, f.TopLevel, firstKeysQuiet, firstKeysWait)
	b.log.Debug("x11 first keys into a launched program", "pid", f.PID, "window", f.TopLevel, "still", still, "waited", waited, "err", err)
	return waited
}
