package x11

import (
	"bytes"
	"image/png"
	"math/rand/v2"
	"testing"
)

func TestFitScale(t *testing.T) {
	tests := []struct {
		name      string
		w, h, max int
		ow, oh    int
		scale     float64
	}{
		{"no bound", 1920, 1080, -1, 1920, 1080, 1},
		{"fits", 1280, 800, 1280, 1280, 800, 1},
		{"landscape", 1920, 1080, 1280, 1280, 720, 2.0 / 3},
		{"portrait", 600, 1200, 300, 150, 300, 0.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ow, oh, s := fitScale(tc.w, tc.h, tc.max)
			if ow != tc.ow || oh != tc.oh || s != tc.scale {
				t.Errorf("fitScale(%d,%d,%d) = %d,%d,%v, want %d,%d,%v", tc.w, tc.h, tc.max, ow, oh, s, tc.ow, tc.oh, tc.scale)
			}
		})
	}
}

func TestEncodePNGRoundTrip(t *testing.T) {
	const w, h = 37, 23
	src := make([]byte, w*h*4)
	for i := range src {
		src[i] = byte(rand.IntN(256))
	}
	var e encoders
	var out bytes.Buffer
	if err := e.encodePNG(&out, src, w, h); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&out)
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	for y := range h {
		for x := range w {
			r, g, b, _ := img.At(x, y).RGBA()
			i := (y*w + x) * 4
			if byte(r>>8) != src[i+2] || byte(g>>8) != src[i+1] || byte(b>>8) != src[i] {
				t.Fatalf("pixel (%d,%d) = %d,%d,%d, want %d,%d,%d", x, y, r>>8, g>>8, b>>8, src[i+2], src[i+1], src[i])
			}
		}
	}
}

func TestDownscaleAverages(t *testing.T) {
	// 4x2 → 2x1: each output pixel averages a 2x2 block.
	src := []byte{
		0, 0, 0, 0, 100, 100, 100, 0, 10, 20, 30, 0, 10, 20, 30, 0,
		0, 0, 0, 0, 100, 100, 100, 0, 10, 20, 30, 0, 10, 20, 30, 0,
	}
	dst := make([]byte, 2*4)
	downscaleBGRX(dst, 2, 1, src, 4, 2)
	want := []byte{50, 50, 50, 255, 10, 20, 30, 255}
	if !bytes.Equal(dst, want) {
		t.Errorf("downscaleBGRX = %v, want %v", dst, want)
	}
}

func BenchmarkEncode1280x800(b *testing.B) {
	src := synthetic(1280, 800)
	var e encoders
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		_ = e.encodePNG(&out, src, 1280, 800)
	}
	b.ReportMetric(float64(out.Len()), "bytes")
}

func BenchmarkDownscale1920to1280(b *testing.B) {
	src := synthetic(1920, 1080)
	dst := make([]byte, 1280*720*4)
	for b.Loop() {
		downscaleBGRX(dst, 1280, 720, src, 1920, 1080)
	}
}

// synthetic is a screen-like image: flat areas, gradients and some text-like noise.
func synthetic(w, h int) []byte {
	p := make([]byte, w*h*4)
	for y := range h {
		for x := range w {
			i := (y*w + x) * 4
			switch {
			case y < 30:
				p[i], p[i+1], p[i+2] = 60, 60, 60
			case x%97 < 3 || (y%17 < 10 && x%7 < 4 && x > 200 && x < 900):
				p[i], p[i+1], p[i+2] = 20, 20, 20
			default:
				p[i], p[i+1], p[i+2] = byte(200+x%50), 230, 240
			}
		}
	}
	return p
}

func TestDownscaleParallelMatchesSerial(t *testing.T) {
	src := synthetic(1920, 1080)
	par := make([]byte, 1280*720*4)
	ser := make([]byte, 1280*720*4)
	downscaleBGRX(par, 1280, 720, src, 1920, 1080)
	downscaleRows(ser, 1280, 720, src, 1920, 1080, 0, 720)
	if !bytes.Equal(par, ser) {
		t.Error("parallel and serial downscale differ")
	}
}
