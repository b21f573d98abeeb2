package x11_test

import (
	"bytes"
	"fmt"
	"image/png"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

func TestWindowsAgreeWithWmctrlAndXprop(t *testing.T) {
	b := open(t)
	a := harness.StartXevlog(t, harness.XevlogOptions{Title: "alpha ☃"})
	z := harness.StartXevlog(t, harness.XevlogOptions{Title: "zulu"})
	windowOf(t, b, a)
	windowOf(t, b, z)
	wins, err := b.Windows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint32]x11.Window{}
	for _, w := range wins {
		got[w.ID] = w
	}
	// wmctrl -lp: id desktop pid host title
	line := regexp.MustCompile(`^0x([0-9a-f]+)\s+-?\d+\s+(\d+)\s+\S+\s+(.*)$`)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(harness.Command(t, "wmctrl", "-lp")), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unparsed wmctrl line %q", l)
		}
		id, _ := strconv.ParseUint(m[1], 16, 32)
		pid, _ := strconv.Atoi(m[2])
		w, ok := got[uint32(id)]
		if !ok {
			t.Errorf("wmctrl lists 0x%x, Windows() does not", id)
			continue
		}
		n++
		if w.Title != m[3] || w.PID != pid {
			t.Errorf("window 0x%x: title %q pid %d, wmctrl says %q pid %d", id, w.Title, w.PID, m[3], pid)
		}
		if w.PIDSource != x11.PIDFromXRes {
			t.Errorf("window 0x%x: pid source %s, want xres", id, w.PIDSource)
		}
		xp := harness.Command(t, "xprop", "-id", fmt.Sprint(id), "_NET_WM_PID", "WM_CLASS")
		if !strings.Contains(xp, fmt.Sprintf("_NET_WM_PID(CARDINAL) = %d", w.PID)) ||
			!strings.Contains(xp, fmt.Sprintf("%q, %q", w.Instance, w.Class)) {
			t.Errorf("xprop says %q, Windows() %+v", xp, w)
		}
	}
	if n != len(wins) {
		t.Errorf("wmctrl lists %d windows, Windows() %d", n, len(wins))
	}
	if got[a.Window].PID != a.PID || got[a.Window].Title != "alpha ☃" {
		t.Errorf("xevlog window = %+v, want pid %d", got[a.Window], a.PID)
	}
	apps, err := b.Apps(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, app := range apps {
		if app.PID == a.PID {
			found = app.Name == "xevlog" && len(app.Windows) == 1
		}
	}
	if !found {
		t.Errorf("Apps() = %+v, want xevlog pid %d with one window", apps, a.PID)
	}
}

func TestScreenSizeMatchesXdpyinfo(t *testing.T) {
	b := open(t)
	w, h := b.ScreenSize()
	out := harness.Command(t, "xdpyinfo")
	if want := fmt.Sprintf("dimensions:    %dx%d pixels", w, h); !strings.Contains(out, want) {
		t.Errorf("ScreenSize() = %dx%d; xdpyinfo says %q", w, h, regexp.MustCompile(`dimensions:.*`).FindString(out))
	}
}

func TestCaptureColourAndScale(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200, Color: "12a4f0"})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	for _, noSHM := range []bool{false, true} {
		t.Run(fmt.Sprintf("noSHM=%v", noSHM), func(t *testing.T) {
			img, err := b.Capture(t.Context(), x11.CaptureOptions{Window: w.ID, MaxDimension: -1, NoSHM: noSHM})
			if err != nil {
				t.Fatal(err)
			}
			if img.Width != 300 || img.Height != 200 || img.Scale != 1 {
				t.Fatalf("capture %dx%d scale %v, want 300x200 scale 1", img.Width, img.Height, img.Scale)
			}
			if noSHM && img.Route != "getimage" {
				t.Errorf("route %s, want getimage", img.Route)
			}
			checkColour(t, img.Data, 150, 100, 0x12, 0xa4, 0xf0)
			// Whole screen: the window's pixels are at its frame.
			root, err := b.Capture(t.Context(), x11.CaptureOptions{MaxDimension: -1, NoSHM: noSHM})
			if err != nil {
				t.Fatal(err)
			}
			checkColour(t, root.Data, w.Frame.X+5, w.Frame.Y+5, 0x12, 0xa4, 0xf0)
		})
	}
	// 1280x800 bounded to 640: factor 0.5.
	img, err := b.Capture(t.Context(), x11.CaptureOptions{MaxDimension: 640})
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 640 || img.Height != 400 || img.Scale != 0.5 {
		t.Errorf("downscaled capture %dx%d scale %v, want 640x400 scale 0.5", img.Width, img.Height, img.Scale)
	}
	checkColour(t, img.Data, (w.Frame.X+150)/2, (w.Frame.Y+100)/2, 0x12, 0xa4, 0xf0)
	jp, err := b.Capture(t.Context(), x11.CaptureOptions{Window: w.ID, Format: x11.JPEG, Quality: 90})
	if err != nil || jp.MIMEType != "image/jpeg" || !bytes.HasPrefix(jp.Data, []byte{0xff, 0xd8}) {
		t.Errorf("JPEG capture = %v, %v", jp, err)
	}
	if _, err := b.Capture(t.Context(), x11.CaptureOptions{Window: w.ID, Region: &x11.Rect{X: 250, Y: 0, Width: 100, Height: 10}}); !errorsIs(err, x11.ErrOutOfBounds) {
		t.Errorf("region outside the window: %v, want ErrOutOfBounds", err)
	}
	if _, err := b.Capture(t.Context(), x11.CaptureOptions{Window: 0x1234567}); !errorsIs(err, x11.ErrWindowNotFound) {
		t.Errorf("bad window: %v, want ErrWindowNotFound", err)
	}
}

func checkColour(t *testing.T, data []byte, x, y int, r, g, b uint8) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	cr, cg, cb, _ := img.At(x, y).RGBA()
	if uint8(cr>>8) != r || uint8(cg>>8) != g || uint8(cb>>8) != b {
		t.Errorf("pixel (%d,%d) = #%02x%02x%02x, want #%02x%02x%02x", x, y, cr>>8, cg>>8, cb>>8, r, g, b)
	}
}

func TestSetFrameAndActivate(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	w := windowOf(t, b, xl)
	want := x11.Rect{X: 100, Y: 120, Width: 500, Height: 350}
	got, route, err := b.SetFrame(t.Context(), w.ID, want)
	if err != nil {
		t.Fatalf("SetFrame: %v", err)
	}
	if got != want || route != "ewmh_moveresize" {
		t.Errorf("SetFrame = %+v via %s, want %+v via ewmh_moveresize", got, route, want)
	}
	other := harness.StartXevlog(t, harness.XevlogOptions{Title: "other"})
	windowOf(t, b, other)
	activate(t, b, w.ID)
	if ww, _ := b.Window(t.Context(), w.ID); !ww.Focused || ww.Stack != 0 {
		t.Errorf("after Activate: %+v, want focused on top", ww)
	}
}

func TestLaunchAndKill(t *testing.T) {
	b := open(t)
	l, err := b.Launch(t.Context(), x11.LaunchOptions{Name: "xterm", Args: []string{"-title", "launched"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Windows) != 1 || l.Windows[0].PID != l.PID || l.Windows[0].Title != "launched" {
		t.Fatalf("Launch = %+v", l)
	}
	if _, err := b.OwnedWindow(t.Context(), l.PID+100000, l.Windows[0].ID); !errorsIs(err, x11.ErrWindowNotFound) {
		t.Errorf("OwnedWindow with a wrong pid: %v", err)
	}
	forced, err := b.Kill(t.Context(), l.PID, time.Second)
	if err != nil || forced {
		t.Errorf("Kill = %v, %v; want a clean TERM", forced, err)
	}
	if x11.ProcessAlive(l.PID) || b.Launched(l.PID) {
		t.Errorf("pid %d still alive or tracked after Kill", l.PID)
	}
	if _, err := b.Kill(t.Context(), l.PID, time.Second); !errorsIs(err, x11.ErrNoProcess) {
		t.Errorf("second Kill: %v, want ErrNoProcess", err)
	}
	if _, err := b.Launch(t.Context(), x11.LaunchOptions{Name: "no-such-program-xyz"}); !errorsIs(err, x11.ErrNotFound) {
		t.Errorf("Launch(missing): %v, want ErrNotFound", err)
	}
}

func TestClipboardRoundTripWithXclip(t *testing.T) {
	b := open(t)
	text := "clip ☃ Grüße\nline 2"
	if err := b.ClipboardWrite(t.Context(), text); err != nil {
		t.Fatal(err)
	}
	if got := harness.Command(t, "xclip", "-selection", "clipboard", "-o"); got != text {
		t.Errorf("xclip -o = %q, want %q", got, text)
	}
	if got, owner, err := b.ClipboardRead(t.Context()); err != nil || !owner || got != text {
		t.Errorf("ClipboardRead (own) = %q, %v, %v", got, owner, err)
	}
	// xclip takes the selection and serves it from a background process.
	in := "from xclip → ok"
	cmd := execCommand("xclip", "-selection", "clipboard", "-i")
	cmd.Stdin = strings.NewReader(in)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = execCommand("pkill", "-x", "-P", "1", "xclip").Run() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _, err := b.ClipboardRead(t.Context())
		if err == nil && got == in {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ClipboardRead = %q, %v, want %q", got, err, in)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Large: xclip uses INCR above its chunk size.
	big := strings.Repeat("0123456789abcdef", 40000)
	cmd = execCommand("xclip", "-selection", "clipboard", "-i")
	cmd.Stdin = strings.NewReader(big)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		got, _, err := b.ClipboardRead(t.Context())
		if err == nil && got == big {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ClipboardRead of %d bytes = %d bytes, %v", len(big), len(got), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
