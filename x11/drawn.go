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

// blank reports whether the on-screen part of window w is one uniform colour, reading at
// most about drawnSample pixels of it. A window that is not viewable, or has no part on
// the screen, is blank.
func (b *Backend) blank(w xproto.Window) (bool, error) {
	attrs, err := xproto.GetWindowAttributes(b.conn, w).Reply()
	if err != nil {
		return false, xerr("GetWindowAttributes", err)
	}
	if attrs.MapState != xproto.MapStateViewable {
		return true, nil
	}
	geo, err := xproto.GetGeometry(b.conn, xproto.Drawable(w)).Reply()
	if err != nil {
		return false, xerr("GetGeometry", err)
	}
	pos, err := xproto.TranslateCoordinates(b.conn, w, b.root, 0, 0).Reply()
	if err != nil {
		return false, xerr("TranslateCoordinates", err)
	}
	sw, sh := b.ScreenSize()
	on := clip(Rect{X: int(pos.DstX), Y: int(pos.DstY), Width: int(geo.Width), Height: int(geo.Height)}, Rect{Width: sw, Height: sh})
	if on.Width <= 0 || on.Height <= 0 {
		return true, nil
	}
	x0, y0 := on.X-int(pos.DstX), on.Y-int(pos.DstY) // window-relative
	step := max(1, (on.Width*on.Height+drawnSample-1)/drawnSample)
	var first []byte
	if step == 1 {
		img, err := xproto.GetImage(b.conn, xproto.ImageFormatZPixmap, xproto.Drawable(w),
			int16(x0), int16(y0), uint16(on.Width), uint16(on.Height), 0xffffffff).Reply()
		if err != nil {
			return false, xerr("GetImage", err)
		}
		return uniform(img.Data, on.Width*on.Height, &first), nil
	}
	// Every step-th row, the requests sent before the first reply is read.
	var rows []xproto.GetImageCookie
	for y := 0; y < on.Height; y += step {
		rows = append(rows, xproto.GetImage(b.conn, xproto.ImageFormatZPixmap, xproto.Drawable(w),
			int16(x0), int16(y0+y), uint16(on.Width), 1, 0xffffffff))
	}
	blank := true
	for _, c := range rows {
		img, err := c.Reply()
		if err != nil {
			return false, xerr("GetImage", err)
		}
		if blank && !uniform(img.Data, on.Width, &first) {
			blank = false
		}
	}
	return blank, nil
}

// uniform reports whether every pixel of data (n pixels) equals *first, the first pixel
// seen so far, which it sets when nil.
func uniform(data []byte, n int, first *[]byte) bool {
	if n <= 0 || len(data) < n {
		return true
	}
	bpp := len(data) / n
	if bpp == 0 {
		return true
	}
	if *first == nil {
		*first = data[:bpp]
	}
	for i := 0; i+bpp <= n*bpp; i += bpp {
		if !bytes.Equal(data[i:i+bpp], *first) {
			return false
		}
	}
	return true
}
