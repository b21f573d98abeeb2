package x11_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// testCursor is a 12×14 block: a 2-pixel outline around a filled inside, hotspot (1,1).
func testCursor(fill, outline uint32) x11.CursorImage {
	img := x11.CursorImage{Width: 12, Height: 14, HotX: 1, HotY: 1, Fill: fill, Outline: outline}
	img.Pixels = make([]byte, img.Width*img.Height)
	for y := range img.Height {
		for x := range img.Width {
			v := x11.CursorFill
			if x < 2 || y < 2 || x >= img.Width-2 || y >= img.Height-2 {
				v = x11.CursorOutline
			}
			img.Pixels[y*img.Width+x] = v
		}
	}
	return img
}

// TestAgentCursorOverlay: the overlay is an override-redirect window, unmapped until
// MoveTo, then viewable with its hotspot on the point and drawn in the image's colours; a
// click by the core pointer at that point reaches the window below, and the server says
// that window, not the overlay, is what is there; Hide unmaps it, Close destroys it.
func TestAgentCursorOverlay(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	w := windowOf(t, b, xl)
	img := testCursor(0xff00ff, 0x00ff00)
	ac, err := b.NewAgentCursor(t.Context(), "agent cursor test", img)
	if err != nil {
		t.Fatalf("NewAgentCursor: %v", err)
	}
	defer ac.Close()
	wi := harness.XWinInfo(t, ac.Window())
	if !wi.Exists || wi.Viewable || !wi.OverrideRedirect || wi.W != img.Width || wi.H != img.Height {
		t.Fatalf("new overlay = %+v, want an unmapped override-redirect %dx%d window", wi, img.Width, img.Height)
	}

	p := x11.Point{X: w.Frame.X + 60, Y: w.Frame.Y + 50}
	if err := ac.MoveTo(t.Context(), p); err != nil {
		t.Fatalf("MoveTo: %v", err)
	}
	wi = harness.XWinInfo(t, ac.Window())
	if !wi.Viewable || wi.X != p.X-img.HotX || wi.Y != p.Y-img.HotY {
		t.Fatalf("overlay after MoveTo(%v) = %+v, want viewable at (%d,%d)", p, wi, p.X-img.HotX, p.Y-img.HotY)
	}
	shot, err := b.Capture(t.Context(), x11.CaptureOptions{Region: &x11.Rect{X: p.X - img.HotX, Y: p.Y - img.HotY, Width: img.Width, Height: img.Height}, MaxDimension: -1})
	if err != nil {
		t.Fatal(err)
	}
	pic, err := png.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatal(err)
	}
	for _, px := range []struct {
		x, y int
		rgb  uint32
	}{{6, 7, 0xff00ff}, {0, 0, 0x00ff00}, {11, 13, 0x00ff00}} {
		r, g, bl, _ := pic.At(px.x, px.y).RGBA()
		if got := (r>>8)<<16 | (g>>8)<<8 | bl>>8; got != px.rgb {
			t.Errorf("screen pixel (%d,%d) of the overlay = %06x, want %06x", px.x, px.y, got, px.rgb)
		}
	}

	// The server ignores the overlay for pointer events.
	if at, err := b.TopLevelAt(t.Context(), p); err != nil || at.Window != xl.Window {
		t.Errorf("TopLevelAt(%v) = %v, %v; want xevlog's window 0x%x", p, at, err, xl.Window)
	}
	xl.Reset()
	harness.Command(t, "xdotool", "mousemove", "--sync", fmt.Sprint(p.X), fmt.Sprint(p.Y), "click", "1")
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) > 0 })
	if press := harness.Filter(evs, "button_press"); len(press) != 1 || press[0].X != 60 || press[0].Y != 50 {
		t.Errorf("xevlog got presses %+v, want one at (60,50) through the overlay", press)
	}

	if err := ac.Hide(t.Context()); err != nil {
		t.Fatalf("Hide: %v", err)
	}
	if wi := harness.XWinInfo(t, ac.Window()); !wi.Exists || wi.Viewable {
		t.Errorf("overlay after Hide = %+v, want unmapped", wi)
	}
	ac.Close()
	ac.Close()
	if wi := harness.XWinInfo(t, ac.Window()); wi.Exists {
		t.Errorf("overlay after Close = %+v, want gone", wi)
	}
	if err := ac.MoveTo(t.Context(), p); !errorsIs(err, x11.ErrClosed) {
		t.Errorf("MoveTo after Close = %v, want ErrClosed", err)
	}
}

// TestAgentCursorOnSeatPointer: ShowOnPointer gives a session's own pointer the image (as
// XFixes reports the cursor of a client whose client pointer it is) and leaves the
// person's core pointer's cursor as it was; SetImage changes it; RestorePointer undoes it.
func TestAgentCursorOnSeatPointer(t *testing.T) {
	b := open(t)
	seat, err := b.OpenSeat(t.Context(), "cursor-seat")
	if err != nil {
		t.Fatalf("OpenSeat: %v", err)
	}
	defer seat.Close(context.Background())
	ptr, _ := seat.IDs()
	// Over the desktop background: no window there defines a cursor of its own.
	if err := seat.Devices().MoveTo(t.Context(), x11.Point{X: 1270, Y: 790}); err != nil {
		t.Fatal(err)
	}
	person := harness.CursorImage(t, 0)
	before := harness.CursorImage(t, ptr)

	img := testCursor(0x2060ff, 0xffffff)
	ac, err := b.NewAgentCursor(t.Context(), "agent cursor seat test", img)
	if err != nil {
		t.Fatalf("NewAgentCursor: %v", err)
	}
	defer ac.Close()
	if err := ac.ShowOnPointer(t.Context(), ptr); err != nil {
		t.Fatalf("ShowOnPointer: %v", err)
	}
	got := harness.CursorImage(t, ptr)
	if int(got.Width) != img.Width || int(got.Height) != img.Height || int(got.Xhot) != img.HotX || int(got.Yhot) != img.HotY {
		t.Fatalf("session pointer's cursor = %dx%d hot (%d,%d), want the image %dx%d hot (%d,%d)",
			got.Width, got.Height, got.Xhot, got.Yhot, img.Width, img.Height, img.HotX, img.HotY)
	}
	if c := got.CursorImage[7*img.Width+6] & 0xffffff; c != img.Fill {
		t.Errorf("cursor pixel (6,7) = %06x, want the fill %06x", c, img.Fill)
	}
	if c := got.CursorImage[0] & 0xffffff; c != img.Outline {
		t.Errorf("cursor pixel (0,0) = %06x, want the outline %06x", c, img.Outline)
	}
	if now := harness.CursorImage(t, 0); now.CursorSerial != person.CursorSerial {
		t.Errorf("the core pointer's cursor changed: serial %d, was %d", now.CursorSerial, person.CursorSerial)
	}

	img2 := testCursor(0xffa000, 0x000000)
	if err := ac.SetImage(t.Context(), img2); err != nil {
		t.Fatalf("SetImage: %v", err)
	}
	if got := harness.CursorImage(t, ptr); got.CursorImage[7*img.Width+6]&0xffffff != img2.Fill {
		t.Errorf("after SetImage the session pointer's fill = %06x, want %06x", got.CursorImage[7*img.Width+6]&0xffffff, img2.Fill)
	}

	if err := ac.RestorePointer(t.Context(), ptr); err != nil {
		t.Fatalf("RestorePointer: %v", err)
	}
	if got := harness.CursorImage(t, ptr); got.CursorSerial != before.CursorSerial {
		t.Errorf("after RestorePointer the session pointer shows cursor serial %d, want its default %d", got.CursorSerial, before.CursorSerial)
	}
	if now := harness.CursorImage(t, 0); now.CursorSerial != person.CursorSerial {
		t.Errorf("the core pointer's cursor changed: serial %d, was %d", now.CursorSerial, person.CursorSerial)
	}
}

// TestAgentCursorRejectsBadImages: images outside the limits are refused before anything
// is created.
func TestAgentCursorRejectsBadImages(t *testing.T) {
	b := open(t)
	good := testCursor(1, 2)
	tests := []struct {
		name string
		edit func(*x11.CursorImage)
	}{
		{"empty", func(i *x11.CursorImage) { i.Width = 0 }},
		{"too wide", func(i *x11.CursorImage) { i.Width = x11.MaxCursorSide + 1 }},
		{"short pixels", func(i *x11.CursorImage) { i.Pixels = i.Pixels[:3] }},
		{"hotspot outside", func(i *x11.CursorImage) { i.HotY = i.Height }},
		{"unknown pixel", func(i *x11.CursorImage) { i.Pixels = append([]byte{7}, i.Pixels[1:]...) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := good
			img.Pixels = append([]byte(nil), good.Pixels...)
			tt.edit(&img)
			if _, err := b.NewAgentCursor(t.Context(), "bad", img); !errorsIs(err, x11.ErrInvalidArgument) {
				t.Errorf("NewAgentCursor(%s) = %v, want ErrInvalidArgument", tt.name, err)
			}
		})
	}
}

// TestAgentCursorGoesWithTheBackend: closing the backend (the worker exiting) destroys the
// overlay without Close.
func TestAgentCursorGoesWithTheBackend(t *testing.T) {
	harness.Require(t)
	b, err := x11.Open(t.Context(), x11.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ac, err := b.NewAgentCursor(t.Context(), "agent cursor backend test", testCursor(0xff0000, 0xffffff))
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	if err := ac.MoveTo(t.Context(), x11.Point{X: 500, Y: 400}); err != nil {
		b.Close()
		t.Fatal(err)
	}
	if wi := harness.XWinInfo(t, ac.Window()); !wi.Viewable {
		t.Errorf("overlay = %+v, want viewable", wi)
	}
	b.Close()
	deadline := time.Now().Add(3 * time.Second)
	for harness.XWinInfo(t, ac.Window()).Exists {
		if time.Now().After(deadline) {
			t.Fatal("the overlay outlived its backend")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ac.Close() // after the backend: returns at once
}
