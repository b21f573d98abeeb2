package authze2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/test/testkit"
)

// Colours the test chooses; the captures are checked against them, not against anything
// the worker reports.
const (
	ownRGB      = 0xffffff // the session's target window
	mineRGB     = 0x00c000 // the session's other window, covering part of the target
	foreignRGB  = 0xff0000 // the user's managed window, stacked above the target
	overrideRGB = 0x0000ff // the user's override-redirect window (a menu, a popup, a dialog)
	maskRGB     = 0x808080 // the documented mask colour
)

// TestCaptureMasksForeignWindows covers a session's own window with the user's windows — a
// managed one kept above, and an override-redirect one — and with another window of the
// session's own, then captures the own window with zoom and with get_window_state, in every
// mode. No pixel of the user's windows may appear: where they cover the own window the
// image is the mask colour; the session's other window and the uncovered part show.
func TestCaptureMasksForeignWindows(t *testing.T) {
	requireDesktop(t)
	testkit.NeedPrograms(t, "wmctrl", "xwininfo")
	tools := []string{"launch_app", "zoom", "get_window_state"}
	modes := []struct {
		name string
		mode authz.Mode
		man  []byte
	}{
		{"standard", authz.Standard, nil},
		// Only the session's app is listed, and desktop.observe is false.
		{"bounded", authz.Bounded, boundedManifest(appA, tools, nil)},
		{"unrestricted", authz.Unrestricted, nil},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := startHost(t, host.Options{})
			s := session(t, h, host.SessionSpec{Label: "capture-" + m.name, Mode: m.mode, Manifest: m.man})

			own := launchColoured(t, s, "own-"+m.name, ownRGB, 900, 600)
			moveResize(t, own.Window, 40, 60, 900, 600)
			mine := launchColoured(t, s, "mine-"+m.name, mineRGB, 300, 160)
			moveResize(t, mine.Window, 100, 130, 300, 160)
			foreign := startColoured(t, "foreign-"+m.name, foreignRGB, 300, 200)
			moveResize(t, foreign.Window, 500, 300, 300, 200)
			keepAbove(t, foreign.Window)
			overrideRect := image.Rect(100, 450, 300, 570)
			overrideWindow(t, overrideRect, overrideRGB)

			target := geometry(t, own.Window)
			// The expectations, in the own window's coordinates.
			rel := func(r image.Rectangle) image.Rectangle {
				return r.Sub(target.Min).Intersect(image.Rect(0, 0, target.Dx(), target.Dy()))
			}
			fg := geometry(t, foreign.Window)
			wantMasked := []image.Rectangle{rel(fg), rel(overrideRect),
				// the user's window's title bar, drawn by the window manager
				rel(image.Rect(fg.Min.X, fg.Min.Y-6, fg.Max.X, fg.Min.Y-2))}
			wantShown := map[image.Rectangle]uint32{
				rel(geometry(t, mine.Window)):       mineRGB,
				rel(image.Rect(850, 580, 930, 650)): ownRGB,
				rel(image.Rect(50, 70, 90, 110)):    ownRGB,
			}

			zoom := call(t, s, "zoom", map[string]any{"pid": own.PID, "window_id": own.Window,
				"x1": 0, "y1": 0, "x2": target.Dx(), "y2": target.Dy()})
			state := call(t, s, "get_window_state", map[string]any{"pid": own.PID, "window_id": own.Window, "include_screenshot": true})
			for _, c := range []struct {
				name   string
				res    host.Result
				masked string
			}{{"zoom", zoom, "masked"}, {"get_window_state", state, "screenshot_masked"}} {
				t.Run(c.name, func(t *testing.T) {
					if !check(t, c.name, c.res, "") {
						return
					}
					img := decodeImage(t, c.res)
					if img.Bounds().Dx() != target.Dx() || img.Bounds().Dy() != target.Dy() {
						t.Fatalf("%s image is %v, want the %dx%d window at full resolution", c.name, img.Bounds(), target.Dx(), target.Dy())
					}
					for _, forbidden := range []uint32{foreignRGB, overrideRGB} {
						if p, ok := find(img, img.Bounds(), func(c uint32) bool { return c == forbidden }); ok {
							t.Errorf("%s shows the user's colour #%06x at %v", c.name, forbidden, p)
						}
					}
					for _, r := range wantMasked {
						if p, ok := find(img, r, func(c uint32) bool { return c != maskRGB }); ok {
							t.Errorf("%s: pixel %v = #%06x, want the mask #%06x over all of %v", c.name, p, rgbAt(img, p), maskRGB, r)
						}
					}
					for r, want := range wantShown {
						if p, ok := find(img, r, func(c uint32) bool { return c != want }); ok {
							t.Errorf("%s: pixel %v = #%06x, want the session's own #%06x over all of %v", c.name, p, rgbAt(img, p), want, r)
						}
					}
					var st map[string]json.RawMessage
					if err := json.Unmarshal(c.res.Structured, &st); err != nil {
						t.Fatal(err)
					}
					var masked struct {
						Windows int `json:"windows"`
						Rects   int `json:"rects"`
						Pixels  int `json:"pixels"`
					}
					if err := json.Unmarshal(st[c.masked], &masked); err != nil {
						t.Fatalf("%s: structured %s = %s: %v", c.name, c.masked, st[c.masked], err)
					}
					least := rel(fg).Dx()*rel(fg).Dy() + rel(overrideRect).Dx()*rel(overrideRect).Dy()
					if masked.Windows < 2 || masked.Rects < 2 || masked.Pixels < least {
						t.Errorf("%s: %s = %+v, want at least 2 windows and %d pixels", c.name, c.masked, masked, least)
					}
				})
			}
		})
	}
}

// launchColoured has the session launch a solid-coloured xevlog window of appA.
func launchColoured(t *testing.T, s *host.Session, title string, rgb uint32, w, h int) *app {
	t.Helper()
	a := &app{log: filepath.Join(t.TempDir(), title+".jsonl")}
	id := declareApp(t, title, []string{appA,
		"-title", title, "-width", fmt.Sprint(w), "-height", fmt.Sprint(h), "-color", fmt.Sprintf("%06x", rgb), "-out", a.log}, "")
	res := call(t, s, "launch_app", map[string]any{"name": id})
	if !check(t, "launch_app "+title, res, "") {
		t.FailNow()
	}
	var out struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatal(err)
	}
	a.PID = out.PID
	a.waitReady(t)
	return a
}

// startColoured runs a solid-coloured xevlog window of appB (an app no manifest lists) as
// the user would: a child of the test, not of any session.
func startColoured(t *testing.T, title string, rgb uint32, w, h int) *app {
	t.Helper()
	a := &app{log: filepath.Join(t.TempDir(), title+".jsonl")}
	cmd := exec.Command(appB, "-title", title, "-width", fmt.Sprint(w), "-height", fmt.Sprint(h),
		"-color", fmt.Sprintf("%06x", rgb), "-out", a.log)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	a.PID = cmd.Process.Pid
	a.waitReady(t)
	return a
}

// moveResize places a managed window's client area at (x, y) with size w×h, as the user
// would, and waits until the server has it there.
func moveResize(t *testing.T, id uint32, x, y, w, h int) {
	t.Helper()
	xdoMu.Lock()
	out, err := exec.Command("wmctrl", "-i", "-r", fmt.Sprint(id), "-e", fmt.Sprintf("0,%d,%d,%d,%d", x, y, w, h)).CombinedOutput()
	xdoMu.Unlock()
	if err != nil {
		t.Fatalf("wmctrl -e: %v: %s", err, out)
	}
	want := image.Rect(x, y, x+w, y+h)
	for deadline := time.Now().Add(5 * time.Second); ; {
		got := geometry(t, id)
		if got.Size() == want.Size() && got.Min.X >= x && got.Min.Y >= y && got.Min.X <= x+20 && got.Min.Y <= y+40 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("window 0x%x is at %v, want about %v", id, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keepAbove asks the window manager to keep a window above normal ones.
func keepAbove(t *testing.T, id uint32) {
	t.Helper()
	xdoMu.Lock()
	defer xdoMu.Unlock()
	if out, err := exec.Command("wmctrl", "-i", "-r", fmt.Sprint(id), "-b", "add,above").CombinedOutput(); err != nil {
		t.Fatalf("wmctrl -b add,above: %v: %s", err, out)
	}
	time.Sleep(100 * time.Millisecond) // the window manager restacks asynchronously
}

// geometry returns a window's client area in root coordinates, from xwininfo.
func geometry(t *testing.T, id uint32) image.Rectangle {
	t.Helper()
	out, err := exec.Command("xwininfo", "-id", fmt.Sprint(id)).Output()
	if err != nil {
		t.Fatalf("xwininfo: %v", err)
	}
	var x, y, w, h int
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		fmt.Sscanf(l, "Absolute upper-left X: %d", &x)
		fmt.Sscanf(l, "Absolute upper-left Y: %d", &y)
		fmt.Sscanf(l, "Width: %d", &w)
		fmt.Sscanf(l, "Height: %d", &h)
	}
	return image.Rect(x, y, x+w, y+h)
}

// overrideWindow maps an override-redirect window of solid colour rgb at r, on top of
// everything, from the test process itself (the user's, and a protected process: the host
// runs inside it). It is destroyed at cleanup.
func overrideWindow(t *testing.T, r image.Rectangle, rgb uint32) {
	t.Helper()
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatalf("connect to the display: %v", err)
	}
	t.Cleanup(c.Close)
	scr := xproto.Setup(c).DefaultScreen(c)
	wid, err := xproto.NewWindowId(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := xproto.CreateWindowChecked(c, scr.RootDepth, wid, scr.Root, int16(r.Min.X), int16(r.Min.Y),
		uint16(r.Dx()), uint16(r.Dy()), 0, xproto.WindowClassInputOutput, scr.RootVisual,
		xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{rgb, 1}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(c, wid).Check(); err != nil {
		t.Fatal(err)
	}
	// The server paints the background when the window becomes viewable; a round trip
	// makes sure that happened.
	if _, err := xproto.GetInputFocus(c).Reply(); err != nil {
		t.Fatal(err)
	}
}

func decodeImage(t *testing.T, res host.Result) image.Image {
	t.Helper()
	for _, c := range res.Content {
		if c.Type == "image" {
			if c.MIMEType != "image/png" {
				t.Fatalf("image is %s, want image/png", c.MIMEType)
			}
			img, err := png.Decode(bytes.NewReader(c.Data))
			if err != nil {
				t.Fatalf("decode PNG: %v", err)
			}
			return img
		}
	}
	t.Fatalf("no image in %s", res.Text())
	return nil
}

func rgbAt(img image.Image, p image.Point) uint32 {
	r, g, b, _ := img.At(p.X, p.Y).RGBA()
	return (r>>8)<<16 | (g>>8)<<8 | b>>8
}

// find returns the first pixel of r whose colour satisfies bad.
func find(img image.Image, r image.Rectangle, bad func(uint32) bool) (image.Point, bool) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if bad(rgbAt(img, image.Pt(x, y))) {
				return image.Pt(x, y), true
			}
		}
	}
	return image.Point{}, false
}
