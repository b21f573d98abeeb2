package x11

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"
)

// DefaultMaxDimension is the default bound on a capture's longer side.
const DefaultMaxDimension = 1280

// CaptureOptions select what to capture and how to encode it.
type CaptureOptions struct {
	// Window is the window to capture; 0 captures the root (the whole screen).
	Window uint32
	// Region, when non-nil, is a rectangle relative to the window (or the root) to capture
	// instead of the whole window. It must lie inside the window.
	Region *Rect
	// MaxDimension bounds the output's longer side: 0 means DefaultMaxDimension, a negative
	// value means no bound (full resolution).
	MaxDimension int
	// Format is PNG (default) or JPEG.
	Format Format
	// Quality is the JPEG quality 1–100 (default 80).
	Quality int
	// NoSHM forces the core GetImage path.
	NoSHM bool
	// MayShow decides, for a window capture, whether the pixels of a window stacked above
	// the captured one may appear: pid is the process that created the covering client
	// window (never 0: windows of unknown owners are masked without asking), window that
	// client. Pixels it refuses are painted MaskRGB before the image is scaled and encoded.
	// Nil allows only the captured window's own process, as the X server observed it. It
	// is called after the server grab is released and may block briefly, but not on this
	// display's windows. It is ignored for whole-screen captures, which are not masked.
	MayShow func(pid int, window uint32) bool
	// Hide decides, for a whole-screen capture, which windows to paint MaskRGB: a window
	// (any of the root's children, override-redirect or managed, with its frame) whose
	// client's process Hide returns true for. Windows of unknown owners are shown. Nil
	// hides nothing. It is ignored for window captures, which MayShow governs.
	Hide func(pid int, window uint32) bool
}

// Image is an encoded capture.
type Image struct {
	Data     []byte
	MIMEType string
	// Width and Height are the encoded image's size.
	Width  int
	Height int
	// Source is the captured rectangle in root coordinates, at full resolution.
	Source Rect
	// Scale is Width / Source.Width (1 when not downscaled).
	Scale float64
	// Route is "mit-shm" or "getimage".
	Route string
	// GrabTime and EncodeTime measure the two halves of the capture.
	GrabTime   time.Duration
	EncodeTime time.Duration
	// StackTime is the part of GrabTime spent reading what covers the window.
	StackTime time.Duration
	// Masked says what a window capture hid; nil for whole-screen captures.
	Masked *Masking
}

// Capture grabs the screen, a window or a region of either, downscales it so its longer
// side is at most MaxDimension and encodes it. The part outside the screen is cut off.
//
// A window must be viewable. Its capture contains only pixels the window itself draws
// and pixels of the windows above it that MayShow allows; everything else is painted
// MaskRGB: windows above it that MayShow refuses or whose owner is unknown (their whole
// bounding rectangle, frame and border included, even when they are shaped), and the
// parts of the area the window does not draw (clipped by its parent, outside its shape).
// The stacking is read from the server under a server grab that lasts until the pixels
// are read, so what is masked is what the pixels show. Image.Masked says what was hidden.
//
// The whole screen (Window 0) is captured as it is, unmasked: it is whole-display
// observation, which the caller authorizes as such.
func (b *Backend) Capture(ctx context.Context, opts CaptureOptions) (*Image, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sw, sh := b.ScreenSize()
	area := Rect{Width: sw, Height: sh}
	var target Window
	if opts.Window != 0 {
		var err error
		target, err = b.Window(ctx, opts.Window)
		if err != nil {
			return nil, err
		}
		if !target.Mapped || target.Minimized {
			return nil, fmt.Errorf("%w: 0x%x", ErrWindowNotViewable, opts.Window)
		}
		area = target.Frame
	}
	if opts.Region != nil {
		r := *opts.Region
		if r.Width <= 0 || r.Height <= 0 || r.X < 0 || r.Y < 0 || r.X+r.Width > area.Width || r.Y+r.Height > area.Height {
			return nil, fmt.Errorf("%w: region %dx%d+%d+%d outside %dx%d", ErrOutOfBounds, r.Width, r.Height, r.X, r.Y, area.Width, area.Height)
		}
		area = Rect{X: area.X + r.X, Y: area.Y + r.Y, Width: r.Width, Height: r.Height}
	}
	area = clip(area, Rect{Width: sw, Height: sh})
	if area.Width <= 0 || area.Height <= 0 {
		return nil, fmt.Errorf("%w: the area is off screen", ErrOutOfBounds)
	}
	format := opts.Format
	if format == 0 {
		format = PNG
	}
	quality := opts.Quality
	if quality <= 0 {
		quality = 80
	}
	if quality > 100 {
		quality = 100
	}
	maxDim := opts.MaxDimension
	if maxDim == 0 {
		maxDim = DefaultMaxDimension
	}

	s := &b.cap
	s.mu.Lock()
	defer s.mu.Unlock()
	t0 := time.Now()
	var (
		pix   []byte
		route string
		err   error
		ov    Overlap
		stack time.Duration
	)
	var hidden []Cover
	switch {
	case opts.Window == 0 && opts.Hide != nil:
		release := b.grabServer()
		hidden, err = b.screenCoversGrabbed(area)
		stack = time.Since(t0)
		if err == nil {
			pix, route, err = s.grabLocked(b.conn, b.root, area, b.caps.SHM && !opts.NoSHM)
		}
		release()
	case opts.Window == 0:
		pix, route, err = s.grabLocked(b.conn, b.root, area, b.caps.SHM && !opts.NoSHM)
	default:
		release := b.grabServer()
		ov, err = b.overlapGrabbed(xproto.Window(opts.Window), &area)
		stack = time.Since(t0)
		if err == nil {
			pix, route, err = s.grabLocked(b.conn, b.root, area, b.caps.SHM && !opts.NoSHM)
		}
		release()
	}
	if err != nil {
		return nil, err
	}
	var masked *Masking
	if opts.Window != 0 {
		masked = mask(pix, area, ov, mayShow(opts.MayShow, target))
	} else if opts.Hide != nil {
		masked = hide(pix, area, hidden, opts.Hide)
	}
	t1 := time.Now()
	ow, oh, scale := fitScale(area.Width, area.Height, maxDim)
	if scale != 1 {
		n := ow * oh * 4
		if cap(s.scratch) < n {
			s.scratch = make([]byte, n)
		}
		downscaleBGRX(s.scratch[:n], ow, oh, pix, area.Width, area.Height)
		pix = s.scratch[:n]
	}
	var out bytes.Buffer
	out.Grow(ow * oh / 2)
	switch format {
	case JPEG:
		err = s.encoders.encodeJPEG(&out, pix, ow, oh, quality)
	default:
		err = s.encoders.encodePNG(&out, pix, ow, oh)
	}
	if err != nil {
		return nil, fmt.Errorf("x11: encode %s: %w", format, err)
	}
	return &Image{
		Data: out.Bytes(), MIMEType: format.MIMEType(), Width: ow, Height: oh,
		Source: area, Scale: scale, Route: route,
		GrabTime: t1.Sub(t0), EncodeTime: time.Since(t1), StackTime: stack, Masked: masked,
	}, nil
}

// mayShow returns the decision a window capture uses: opts' MayShow, or by default only
// the captured window's own process when the server observed it.
func mayShow(f func(pid int, window uint32) bool, target Window) func(pid int, window uint32) bool {
	if f != nil {
		return f
	}
	own := 0
	if target.PIDSource == PIDFromXRes {
		own = target.PID
	}
	return func(pid int, _ uint32) bool { return own > 0 && pid == own }
}

// mask paints over the pixels of pix (the BGRX image of area, in root coordinates) that a
// capture of ov's window may not show, and says what it hid.
func mask(pix []byte, area Rect, ov Overlap, show func(pid int, window uint32) bool) *Masking {
	rel := func(r Rect) Rect { return Rect{X: r.X - area.X, Y: r.Y - area.Y, Width: r.Width, Height: r.Height} }
	layers := make([]layer, 0, len(ov.Above)+1)
	for i := len(ov.Above) - 1; i >= 0; i-- { // top first
		c := ov.Above[i]
		layers = append(layers, layer{rects: []Rect{rel(c.Bounds)}, show: c.PID > 0 && show(c.PID, c.Client)})
	}
	own := layer{rects: make([]Rect, len(ov.Visible)), show: true}
	for i, r := range ov.Visible {
		own.rects[i] = rel(r)
	}
	layers = append(layers, own)
	rects, hid, outside := maskRects(area.Width, area.Height, layers)
	m := &Masking{Rects: rects, Outside: outside}
	for i, h := range hid[:len(hid)-1] {
		if h && !layers[i].show {
			m.Windows++
		}
	}
	for _, r := range rects {
		m.Pixels += r.Width * r.Height
	}
	fillBGRX(pix, area.Width, rects, MaskRGB)
	return m
}

// SHMStatus attaches the MIT-SHM segment for a full-screen capture if that was not tried
// yet, and reports whether captures use it, and why not when they do not.
func (b *Backend) SHMStatus() (used bool, reason string) {
	b.cap.mu.Lock()
	defer b.cap.mu.Unlock()
	if !b.caps.SHM {
		return false, "the X server has no MIT-SHM extension"
	}
	if !b.closed() {
		w, h := b.ScreenSize()
		b.cap.ensureSHMLocked(b.conn, w*h*4)
	}
	return b.cap.usable, b.cap.failure
}

func clip(r, bounds Rect) Rect {
	x0, y0 := max(r.X, bounds.X), max(r.Y, bounds.Y)
	x1 := min(r.X+r.Width, bounds.X+bounds.Width)
	y1 := min(r.Y+r.Height, bounds.Y+bounds.Height)
	return Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}
