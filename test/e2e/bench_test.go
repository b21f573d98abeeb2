package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCP measures tools/call through the whole stack — go-sdk client → stdio →
// proxy → session channel → worker → X server and back — on a private 1920×1080 display,
// and the size of a full-screen screenshot capped at 1280 pixels (the default
// max_dimension). scripts/bench-mcp.sh runs it.
func BenchmarkMCP(b *testing.B) {
	needDesktop(b)
	rp := startRun(b, "--display", "private", "--screen", "1920x1080", "--mode", "unrestricted", "--dangerously-bypass-approvals", "--log-level", "warn")
	ctx := context.Background()
	b.Run("get_cursor_position", roundTripBench(rp, "get_cursor_position", map[string]any{}, 20))
	b.Run("click", roundTripBench(rp, "click", map[string]any{"x": 1900, "y": 1060, "scope": "desktop"}, 20))
	b.Run("get_desktop_state_1920x1080", func(b *testing.B) {
		// Something to look at: a terminal full of text over most of the screen.
		rp.mustCall(b, "launch_app", map[string]any{"name": "xterm", "additional_arguments": []string{
			"-geometry", "230x75+0+0", "-e", "sh", "-c", "ls -l /usr/bin /usr/lib | head -n 74; exec sleep 600"}})
		time.Sleep(500 * time.Millisecond) // let it draw
		params := &mcp.CallToolParams{Name: "get_desktop_state", Arguments: map[string]any{}}
		var lat []time.Duration
		var pngBytes, jsonBytes, width, height int
		for b.Loop() {
			start := time.Now()
			res, err := rp.cs.CallTool(ctx, params)
			lat = append(lat, time.Since(start))
			if err != nil || res.IsError {
				b.Fatalf("get_desktop_state: %v", err)
			}
			for _, c := range res.Content {
				if ic, ok := c.(*mcp.ImageContent); ok {
					pngBytes = len(ic.Data)
				}
			}
			wire, _ := json.Marshal(res)
			jsonBytes = len(wire)
			img := decodePNG(b, res)
			width, height = img.Bounds().Dx(), img.Bounds().Dy()
		}
		reportPercentiles(b, lat)
		b.ReportMetric(float64(pngBytes), "png-bytes")
		b.ReportMetric(float64(jsonBytes), "result-json-bytes")
		b.ReportMetric(float64(width), "width-px")
		b.ReportMetric(float64(height), "height-px")
	})
}

// roundTripBench measures tools/call name(args) through rp's whole stack, after warm
// calls that pay for lazy setup on every side, and reports p50 and p99.
func roundTripBench(rp *runProc, name string, args map[string]any, warm int) func(b *testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		params := &mcp.CallToolParams{Name: name, Arguments: args}
		for range warm {
			if res, err := rp.cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatalf("%s: %v %s", name, err, text(res))
			}
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for b.Loop() {
			start := time.Now()
			res, err := rp.cs.CallTool(ctx, params)
			lat = append(lat, time.Since(start))
			if err != nil || res.IsError {
				b.Fatalf("%s: %v %v", name, err, text(res))
			}
		}
		b.StopTimer()
		reportPercentiles(b, lat)
	}
}

// reportPercentiles reports p50 and p99 of lat in microseconds.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		i := int(q * float64(len(lat)-1))
		return float64(lat[i].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
