package x11

import (
	"bytes"
	"context"
	"fmt"
	"time"
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
}

// Capture grabs the screen, a window or a region of either, downscales it so its longer
// side is at most MaxDimension and encodes it. A window is captured as the screen shows it
// (the part covered by other windows shows them), so it must be mapped; the part outside
// the screen is cut off.
func (b *Backend) Capture(ctx context.Context, opts CaptureOptions) (*Image, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sw, sh := b.ScreenSize()
	area := Rect{Width: sw, Height: sh}
	if opts.Window != 0 {
		w, err := b.Window(ctx, opts.Window)
		if err != nil {
			return nil, err
		}
		if !w.Mapped || w.Minimized {
			return nil, fmt.Errorf("%w: 0x%x", ErrWindowNotViewable, opts.Window)
		}
		area = w.Frame
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
	pix, route, err := s.grabLocked(b.conn, b.root, area, b.caps.SHM && !opts.NoSHM)
	if err != nil {
		return nil, err
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
		GrabTime: t1.Sub(t0), EncodeTime: time.Since(t1),
	}, nil
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
