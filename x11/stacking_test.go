package x11_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/shape"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// Colours these tests choose. The expected images are made of them and of the documented
// mask colour, never of what the backend reports.
const (
	targetRGB   = 0x12a4f0
	coverRGB    = 0xff0000
	overrideRGB = 0x0000ff
	maskRGB     = 0x808080
)

// xclient is a connection of this test process to the display: the windows it maps belong
// to the test's own pid.
type xclient struct {
	c    *xgb.Conn
	root xproto.Window
}

// dialX connects to the display. Call it before open: xgb's extension Init writes
// package-level tables that the reader of every open connection reads when an event
// arrives, and this connection selects no events.
func dialX(t testing.TB) *xclient {
	t.Helper()
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(c.Close)
	// Not shape.Init: it writes xgb's process-wide decoder tables while the backends'
	// readers read them (see x11.initExtension); requests only need the opcode.
	r, err := xproto.QueryExtension(c, uint16(len("SHAPE")), "SHAPE").Reply()
	if err != nil || !r.Present {
		t.Fatalf("SHAPE: %v", err)
	}
	c.ExtLock.Lock()
	c.Extensions["SHAPE"] = r.MajorOpcode
	c.ExtLock.Unlock()
	return &xclient{c: c, root: xproto.Setup(c).DefaultScreen(c).Root}
}

// override maps an override-redirect window of colour rgb at r (root coordinates), shaped
// to the rectangle shapeTo (window-relative) when it is not nil, on top of everything. It
// is destroyed at cleanup.
func (x *xclient) override(t testing.TB, r x11.Rect, rgb uint32, shapeTo *x11.Rect) uint32 {
	t.Helper()
	wid, err := xproto.NewWindowId(x.c)
	if err != nil {
		t.Fatal(err)
	}
	scr := xproto.Setup(x.c).DefaultScreen(x.c)
	if err := xproto.CreateWindowChecked(x.c, scr.RootDepth, wid, x.root, int16(r.X), int16(r.Y), uint16(r.Width), uint16(r.Height), 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{rgb, 1}).Check(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xproto.DestroyWindow(x.c, wid); x.sync(t) })
	if shapeTo != nil {
		x.shape(t, uint32(wid), shapeTo)
	}
	xproto.MapWindow(x.c, wid)
	x.sync(t)
	return uint32(wid)
}

// shape sets window w's bounding shape to one rectangle, or removes it (nil).
func (x *xclient) shape(t testing.TB, w uint32, r *x11.Rect) {
	t.Helper()
	if r == nil {
		shape.Mask(x.c, shape.SoSet, shape.SkBounding, xproto.Window(w), 0, 0, xproto.PixmapNone)
	} else {
		shape.Rectangles(x.c, shape.SoSet, shape.SkBounding, xproto.ClipOrderingUnsorted, xproto.Window(w), 0, 0,
			[]xproto.Rectangle{{X: int16(r.X), Y: int16(r.Y), Width: uint16(r.Width), Height: uint16(r.Height)}})
	}
	x.sync(t)
}

// sync waits until the server has processed every request sent so far (and painted the
// backgrounds of windows mapped by them).
func (x *xclient) sync(t testing.TB) {
	t.Helper()
	if _, err := xproto.GetInputFocus(x.c).Reply(); err != nil {
		t.Fatal(err)
	}
}

// placed starts an xevlog window of colour rgb and gives it the client area r, on top.
func placed(t testing.TB, b *x11.Backend, rgb uint32, r x11.Rect) *harness.Xevlog {
	t.Helper()
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: r.Width, Height: r.Height, Color: fmt.Sprintf("%06x", rgb)})
	w := windowOf(t, b, xl)
	if got, _, err := b.SetFrame(t.Context(), w.ID, r); err != nil || got != r {
		t.Fatalf("SetFrame(%v) = %v, %v", r, got, err)
	}
	activate(t, b, w.ID)
	return xl
}

// decode returns a PNG capture's pixels.
func decode(t testing.TB, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	return img
}

// allOf reports the first pixel of r (image coordinates) whose colour is not rgb.
func allOf(img image.Image, r x11.Rect, rgb uint32) (x, y int, got uint32, ok bool) {
	for y := r.Y; y < r.Y+r.Height; y++ {
		for x := r.X; x < r.X+r.Width; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if c := (cr>>8)<<16 | (cg>>8)<<8 | cb>>8; c != rgb {
				return x, y, c, false
			}
		}
	}
	return 0, 0, 0, true
}

// TestCaptureMasksCovers covers a window with other windows and checks each capture
// against the colours the test painted: what MayShow refuses (by default everything but
// the window's own process) is the mask colour, what it allows and the uncovered part
// show their own colours.
func TestCaptureMasksCovers(t *testing.T) {
	x := dialX(t)
	b := open(t)
	frame := x11.Rect{X: 100, Y: 100, Width: 400, Height: 300}
	target := placed(t, b, targetRGB, frame)
	self := os.Getpid()
	tests := []struct {
		name   string
		setup  func(t *testing.T) (coverPID int, coverWindow uint32)
		region *x11.Rect
		allow  bool // MayShow allows the cover's pid
		noSHM  bool
		// masked and shown are relative to the captured area.
		masked      []x11.Rect
		shown       map[x11.Rect]uint32
		windows     int
		wantOutside int
	}{
		{
			name: "the user's managed window above",
			setup: func(t *testing.T) (int, uint32) {
				c := placed(t, b, coverRGB, x11.Rect{X: 350, Y: 300, Width: 200, Height: 150})
				return c.PID, c.Window
			},
			// Its client area, and its title bar drawn by the window manager.
			masked:  []x11.Rect{{X: 250, Y: 200, Width: 150, Height: 100}, {X: 250, Y: 194, Width: 150, Height: 4}},
			shown:   map[x11.Rect]uint32{{X: 0, Y: 0, Width: 240, Height: 180}: targetRGB},
			windows: 1,
		},
		{
			name: "an allowed process's managed window above",
			setup: func(t *testing.T) (int, uint32) {
				c := placed(t, b, coverRGB, x11.Rect{X: 350, Y: 300, Width: 200, Height: 150})
				return c.PID, c.Window
			},
			allow: true,
			shown: map[x11.Rect]uint32{{X: 250, Y: 200, Width: 150, Height: 100}: coverRGB, {X: 0, Y: 0, Width: 240, Height: 180}: targetRGB},
		},
		{
			name: "an override-redirect window",
			setup: func(t *testing.T) (int, uint32) {
				return self, x.override(t, x11.Rect{X: 120, Y: 120, Width: 100, Height: 80}, overrideRGB, nil)
			},
			masked:  []x11.Rect{{X: 20, Y: 20, Width: 100, Height: 80}},
			shown:   map[x11.Rect]uint32{{X: 130, Y: 0, Width: 270, Height: 300}: targetRGB},
			windows: 1,
		},
		{
			name: "an allowed process's override-redirect window",
			setup: func(t *testing.T) (int, uint32) {
				return self, x.override(t, x11.Rect{X: 120, Y: 120, Width: 100, Height: 80}, overrideRGB, nil)
			},
			allow: true,
			shown: map[x11.Rect]uint32{{X: 20, Y: 20, Width: 100, Height: 80}: overrideRGB, {X: 130, Y: 0, Width: 270, Height: 300}: targetRGB},
		},
		{
			name: "a shaped window is masked to its bounding rectangle",
			setup: func(t *testing.T) (int, uint32) {
				return self, x.override(t, x11.Rect{X: 120, Y: 120, Width: 100, Height: 80}, overrideRGB, &x11.Rect{Width: 50, Height: 40})
			},
			masked:  []x11.Rect{{X: 20, Y: 20, Width: 100, Height: 80}},
			windows: 1,
		},
		{
			name: "a region",
			setup: func(t *testing.T) (int, uint32) {
				c := placed(t, b, coverRGB, x11.Rect{X: 350, Y: 300, Width: 200, Height: 150})
				return c.PID, c.Window
			},
			region:  &x11.Rect{X: 200, Y: 150, Width: 200, Height: 150},
			masked:  []x11.Rect{{X: 50, Y: 50, Width: 150, Height: 100}},
			shown:   map[x11.Rect]uint32{{X: 0, Y: 0, Width: 40, Height: 150}: targetRGB},
			windows: 1,
		},
		{
			name: "the GetImage path",
			setup: func(t *testing.T) (int, uint32) {
				c := placed(t, b, coverRGB, x11.Rect{X: 350, Y: 300, Width: 200, Height: 150})
				return c.PID, c.Window
			},
			noSHM:   true,
			masked:  []x11.Rect{{X: 250, Y: 200, Width: 150, Height: 100}},
			shown:   map[x11.Rect]uint32{{X: 0, Y: 0, Width: 240, Height: 180}: targetRGB},
			windows: 1,
		},
		{
			name: "the captured window's own shape",
			setup: func(t *testing.T) (int, uint32) {
				x.shape(t, target.Window, &x11.Rect{Width: 200, Height: 300})
				t.Cleanup(func() { x.shape(t, target.Window, nil) })
				return 0, 0
			},
			masked:      []x11.Rect{{X: 200, Y: 0, Width: 200, Height: 300}},
			shown:       map[x11.Rect]uint32{{X: 0, Y: 0, Width: 200, Height: 300}: targetRGB},
			wantOutside: 200 * 300,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			activate(t, b, target.Window)
			coverPID, coverWin := tc.setup(t)
			var (
				mu    sync.Mutex
				asked [][2]uint32
			)
			opts := x11.CaptureOptions{Window: target.Window, Region: tc.region, MaxDimension: -1, NoSHM: tc.noSHM}
			if tc.allow {
				opts.MayShow = func(pid int, w uint32) bool {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, [2]uint32{uint32(pid), w})
					return pid == coverPID || pid == target.PID
				}
			}
			img, err := b.Capture(t.Context(), opts)
			if err != nil {
				t.Fatalf("Capture: %v", err)
			}
			px := decode(t, img.Data)
			for _, r := range tc.masked {
				if x, y, got, ok := allOf(px, r, maskRGB); !ok {
					t.Errorf("pixel (%d,%d) = #%06x, want the mask over all of %+v", x, y, got, r)
				}
			}
			for r, rgb := range tc.shown {
				if x, y, got, ok := allOf(px, r, rgb); !ok {
					t.Errorf("pixel (%d,%d) = #%06x, want #%06x over all of %+v", x, y, got, rgb, r)
				}
			}
			m := img.Masked
			if m == nil {
				t.Fatal("a window capture has no Masked")
			}
			if m.Windows != tc.windows || m.Outside != tc.wantOutside {
				t.Errorf("Masked = %d windows, %d outside, want %d, %d", m.Windows, m.Outside, tc.windows, tc.wantOutside)
			}
			sum := 0
			for _, r := range m.Rects {
				sum += r.Width * r.Height
			}
			if sum != m.Pixels || (len(tc.masked) > 0) != (m.Pixels > 0) {
				t.Errorf("Masked = %d pixels in %v, want their sum, and none only when nothing is masked", m.Pixels, m.Rects)
			}
			if tc.allow && !slices.Contains(asked, [2]uint32{uint32(coverPID), coverWin}) {
				t.Errorf("MayShow was asked %v, want (%d, 0x%x) among them", asked, coverPID, coverWin)
			}
		})
	}
}

// TestWholeScreenCaptureIsNotMasked: whole-display observation shows every window.
func TestWholeScreenCaptureIsNotMasked(t *testing.T) {
	x := dialX(t)
	b := open(t)
	x.override(t, x11.Rect{X: 10, Y: 10, Width: 50, Height: 40}, overrideRGB, nil)
	img, err := b.Capture(t.Context(), x11.CaptureOptions{MaxDimension: -1})
	if err != nil {
		t.Fatal(err)
	}
	if img.Masked != nil {
		t.Errorf("whole-screen capture Masked = %+v, want nil", img.Masked)
	}
	if x, y, got, ok := allOf(decode(t, img.Data), x11.Rect{X: 10, Y: 10, Width: 50, Height: 40}, overrideRGB); !ok {
		t.Errorf("pixel (%d,%d) = #%06x, want the window's #%06x", x, y, got, overrideRGB)
	}
}

// TestOverlapFindsOwners checks Overlap against xwininfo (the frame around the window) and
// the processes that mapped the covering windows.
func TestOverlapFindsOwners(t *testing.T) {
	x := dialX(t)
	b := open(t)
	target := placed(t, b, targetRGB, x11.Rect{X: 100, Y: 100, Width: 400, Height: 300})
	cover := placed(t, b, coverRGB, x11.Rect{X: 350, Y: 300, Width: 200, Height: 150})
	or := x.override(t, x11.Rect{X: 120, Y: 120, Width: 100, Height: 80}, overrideRGB, nil)
	x.override(t, x11.Rect{X: 900, Y: 600, Width: 10, Height: 10}, overrideRGB, nil) // elsewhere: not a cover
	ov, err := b.Overlap(t.Context(), target.Window)
	if err != nil {
		t.Fatal(err)
	}
	if ov.Window != target.Window || ov.Top != frameOf(t, target.Window) {
		t.Errorf("Overlap = window 0x%x top 0x%x, want 0x%x in its frame 0x%x", ov.Window, ov.Top, target.Window, frameOf(t, target.Window))
	}
	want := x11.Rect{X: 100, Y: 100, Width: 400, Height: 300}
	if ov.Frame != want || len(ov.Visible) != 1 || ov.Visible[0] != want {
		t.Errorf("Overlap frame %v visible %v, want %v", ov.Frame, ov.Visible, want)
	}
	type who struct {
		window, client uint32
		pid            int
		or             bool
	}
	var got []who
	for _, c := range ov.Above {
		got = append(got, who{c.Window, c.Client, c.PID, c.OverrideRedirect})
	}
	wantAbove := []who{{frameOf(t, cover.Window), cover.Window, cover.PID, false}, {or, or, os.Getpid(), true}}
	if !slices.Equal(got, wantAbove) {
		t.Errorf("Overlap.Above = %+v, want %+v (bottom to top)", got, wantAbove)
	}
	if _, err := b.Overlap(t.Context(), 0x7fffff0); !errorsIs(err, x11.ErrWindowNotFound) {
		t.Errorf("Overlap of a missing window: %v, want ErrWindowNotFound", err)
	}
}

// frameOf returns the root's child holding window w, from xwininfo's tree.
func frameOf(t *testing.T, w uint32) uint32 {
	t.Helper()
	for id := w; ; {
		out := harness.Command(t, "xwininfo", "-children", "-id", fmt.Sprint(id))
		var parent, root uint32
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			if v, ok := strings.CutPrefix(l, "Parent window id: "); ok {
				parent = hexID(t, v)
			}
			if v, ok := strings.CutPrefix(l, "Root window id: "); ok {
				root = hexID(t, v)
			}
		}
		if parent == root {
			return id
		}
		id = parent
	}
}

func hexID(t *testing.T, s string) uint32 {
	t.Helper()
	f, _, _ := strings.Cut(s, " ")
	v, err := strconv.ParseUint(strings.TrimPrefix(f, "0x"), 16, 32)
	if err != nil {
		t.Fatalf("xwininfo id %q: %v", s, err)
	}
	return uint32(v)
}
