package x11_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cua-host/cua-host/x11"
)

// BenchmarkCaptureWindow measures a masked window capture (800×600, PNG, full resolution)
// under a managed and an override-redirect window of another process, with five more
// windows elsewhere on the screen, against the same area read from the root without the
// stacking walk (what a window capture cost before it was masked). It reports medians: of
// the whole capture, and of the stacking walk alone (Image.StackTime).
func BenchmarkCaptureWindow(b *testing.B) {
	x := dialX(b)
	be := open(b)
	frame := x11.Rect{X: 100, Y: 80, Width: 800, Height: 600}
	target := placed(b, be, targetRGB, frame)
	for i := range 5 {
		placed(b, be, 0x336699, x11.Rect{X: 950 + 10*i, Y: 100 + 100*i, Width: 200, Height: 80})
	}
	placed(b, be, coverRGB, x11.Rect{X: 600, Y: 400, Width: 200, Height: 150})
	x.override(b, x11.Rect{X: 150, Y: 150, Width: 100, Height: 80}, overrideRGB, nil)
	bench := []struct {
		name string
		opts x11.CaptureOptions
	}{
		{"masked window", x11.CaptureOptions{Window: target.Window, MaxDimension: -1}},
		{"root area, unmasked", x11.CaptureOptions{Region: &frame, MaxDimension: -1}},
	}
	for _, bc := range bench {
		b.Run(bc.name, func(b *testing.B) {
			var total, stack []time.Duration
			for b.Loop() {
				t0 := time.Now()
				img, err := be.Capture(b.Context(), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				total = append(total, time.Since(t0))
				stack = append(stack, img.StackTime)
				if bc.opts.Window != 0 && img.Masked.Windows != 2 {
					b.Fatalf("masked %d windows, want 2", img.Masked.Windows)
				}
			}
			b.ReportMetric(median(total), "median-µs")
			if bc.opts.Window != 0 {
				b.ReportMetric(median(stack), "stack-median-µs")
			}
		})
	}
	b.Run("stacking walk alone", func(b *testing.B) {
		var total []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if _, err := be.Overlap(b.Context(), target.Window); err != nil {
				b.Fatal(err)
			}
			total = append(total, time.Since(t0))
		}
		b.ReportMetric(median(total), "median-µs")
	})
}

func median(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1000
}
