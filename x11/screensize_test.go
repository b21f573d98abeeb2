package x11_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// TestScreenSizeFollowsTheRoot: ScreenSize answers without a round trip, from the root
// window's ConfigureNotify. A nested display (Xephyr -resizeable) changes its screen when
// its window on the harness display is resized; after each resize ScreenSize must come to
// the size xdpyinfo reads from the nested server.
func TestScreenSizeFollowsTheRoot(t *testing.T) {
	harness.Require(t)
	if _, err := display.FindXephyr(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	parent := harness.Display()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{Width: 640, Height: 480,
		Nested: &display.NestedOptions{Parent: parent.Name(), ParentXAuthority: parent.XAuthority()}})
	if err != nil {
		t.Fatalf("start a nested display: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	t.Setenv("XAUTHORITY", d.XAuthority()) // read by Open as by any Xlib client
	b, err := x11.Open(ctx, x11.Options{Display: d.Name()})
	if err != nil {
		t.Fatalf("Open %s: %v", d.Name(), err)
	}
	t.Cleanup(func() { b.Close() })
	t.Setenv("XAUTHORITY", parent.XAuthority()) // the oracles' below, on the harness display
	if w, h := b.ScreenSize(); fmt.Sprintf("%dx%d", w, h) != nestedDimensions(t, d) {
		t.Fatalf("ScreenSize = %dx%d at open, xdpyinfo says %s", w, h, nestedDimensions(t, d))
	}
	win := strconv.FormatUint(uint64(d.Window()), 10)
	for _, size := range [][2]int{{500, 400}, {700, 520}} {
		harness.Command(t, "xdotool", "windowsize", "--sync", win, strconv.Itoa(size[0]), strconv.Itoa(size[1]))
		want := fmt.Sprintf("%dx%d", size[0], size[1])
		deadline := time.Now().Add(5 * time.Second)
		for nestedDimensions(t, d) != want {
			if time.Now().After(deadline) {
				t.Fatalf("the nested server's screen is %s, not %s, 5 s after its window was resized", nestedDimensions(t, d), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for {
			w, h := b.ScreenSize()
			if got := fmt.Sprintf("%dx%d", w, h); got == want {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("ScreenSize = %s, xdpyinfo says %s", got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

var dimensions = regexp.MustCompile(`dimensions:\s+(\d+x\d+) pixels`)

// nestedDimensions reads the nested server's screen size with xdpyinfo.
func nestedDimensions(t *testing.T, d *display.Display) string {
	t.Helper()
	cmd := exec.Command("xdpyinfo")
	cmd.Env = append(os.Environ(), "DISPLAY="+d.Name(), "XAUTHORITY="+d.XAuthority())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xdpyinfo on %s: %v", d.Name(), err)
	}
	m := dimensions.FindSubmatch(out)
	if m == nil {
		t.Fatalf("xdpyinfo on %s printed no dimensions:\n%s", d.Name(), out)
	}
	return string(m[1])
}
