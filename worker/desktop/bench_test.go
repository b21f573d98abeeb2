package desktop_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// BenchmarkInputTools measures window-targeted click and type_text through their handlers
// on an xevlog window: resolution, activation of the already active window, the checks of
// where the input lands, XTEST and the read-back. It reports the median and the 90th
// percentile of the per-call latency. The _background cases are a session on a display
// shared with a person, whose input goes through the session's own devices.
func BenchmarkInputTools(b *testing.B) {
	harness.Require(b)
	be, err := x11.Open(b.Context(), x11.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	reg := tool.NewRegistry()
	desktop.Register(reg, be, desktop.Options{})
	xl := harness.StartXevlog(b, harness.XevlogOptions{Width: 300, Height: 200})
	own := ownSession("bench", "unrestricted")
	shared := sharedSession("bench-background")
	for _, bc := range []struct {
		name string
		args map[string]any
		sess *tool.Session
	}{
		{"click", map[string]any{"x": 50, "y": 50}, own},
		{"type_text", map[string]any{"text": "hello"}, own},
		// On a display shared with a person: the session's own pointer and keyboard.
		{"click_background", map[string]any{"x": 50, "y": 50}, shared},
		{"type_text_background", map[string]any{"text": "hello"}, shared},
	} {
		sess := bc.sess
		name, _, _ := strings.Cut(bc.name, "_background")
		bc.args["pid"], bc.args["window_id"] = xl.PID, xl.Window
		raw, err := json.Marshal(bc.args)
		if err != nil {
			b.Fatal(err)
		}
		tl, _ := reg.Lookup(name)
		b.Run(bc.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
				start := time.Now()
				_, err := tl.Handler(ctx, &tool.Call{Name: name, JSON: raw, Session: sess})
				lat = append(lat, time.Since(start))
				cancel()
				if err != nil {
					b.Fatalf("%s: %v", bc.name, err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-µs")
		})
	}
}
