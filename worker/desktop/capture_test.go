package desktop_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// TestCaptureShowsOnlyTheSessionsWindows covers a window with another and zooms into the
// covered part: the cover is masked unless the session launched it, and a pid the session
// recorded that the backend did not start (a reused pid) does not count as launched.
func TestCaptureShowsOnlyTheSessionsWindows(t *testing.T) {
	reg, b := setup(t)
	target := harness.StartXevlog(t, harness.XevlogOptions{Width: 400, Height: 300, Color: "12a4f0"})
	frame := x11.Rect{X: 100, Y: 100, Width: 400, Height: 300}
	if _, _, err := b.SetFrame(t.Context(), target.Window, frame); err != nil {
		t.Fatal(err)
	}
	foreign := harness.StartXevlog(t, harness.XevlogOptions{Width: 200, Height: 150, Color: "ff0000"})
	if _, _, err := b.SetFrame(t.Context(), foreign.Window, x11.Rect{X: 150, Y: 150, Width: 200, Height: 150}); err != nil {
		t.Fatal(err)
	}
	sess := tool.NewSession("capture", "standard")
	sess.RecordLaunch(foreign.PID) // recorded, but not the backend's child
	zoomAt := func(t *testing.T) (uint32, map[string]any) {
		t.Helper()
		// The region (60,60)-(200,160) lies under the user's window, and later under the xterm.
		r, err := callAs(t, reg, sess, "zoom", map[string]any{"pid": target.PID, "window_id": target.Window, "x1": 60, "y1": 60, "x2": 200, "y2": 160})
		if err != nil {
			t.Fatalf("zoom: %v", err)
		}
		img, err := png.Decode(bytes.NewReader(r.Content[1].Image))
		if err != nil {
			t.Fatal(err)
		}
		cr, cg, cb, _ := img.At(70, 50).RGBA()
		var st map[string]any
		raw, _ := json.Marshal(r.Structured)
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		m, _ := st["masked"].(map[string]any)
		return (cr>>8)<<16 | (cg>>8)<<8 | cb>>8, m
	}
	if c, m := zoomAt(t); c != x11.MaskRGB || m["windows"] != 1.0 || m["pixels"].(float64) < 100*60 || m["color"] != "#808080" {
		t.Errorf("zoom under the user's window: pixel #%06x, masked %v; want #%06x, 1 window", c, m, x11.MaskRGB)
	}

	// An xterm the session launched, painted green, now on top.
	r, err := callAs(t, reg, sess, "launch_app", map[string]any{"name": "xterm", "additional_arguments": []string{
		"-bg", "#00ff00", "-fg", "#00ff00", "-cr", "#00ff00", "-b", "0", "-geometry", "30x10+150+150", "-e", "sleep 60"}})
	if err != nil {
		t.Fatalf("launch_app: %v", err)
	}
	var launched struct {
		WindowIDs []uint32 `json:"window_ids"`
	}
	raw, _ := json.Marshal(r.Structured)
	if err := json.Unmarshal(raw, &launched); err != nil || len(launched.WindowIDs) != 1 {
		t.Fatalf("launch_app = %s (%v)", raw, err)
	}
	if _, _, err := b.SetFrame(t.Context(), launched.WindowIDs[0], x11.Rect{X: 150, Y: 150, Width: 250, Height: 200}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, m := zoomAt(t)
		if c == 0x00ff00 && m["windows"] == 0.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("zoom under the session's own xterm: pixel #%06x, masked %v; want #00ff00, nothing masked", c, m)
		}
	}
}
