package x11

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMaskRects(t *testing.T) {
	r := func(x, y, w, h int) Rect { return Rect{X: x, Y: y, Width: w, Height: h} }
	own := func(rs ...Rect) layer { return layer{rects: rs, show: true} }
	hide := func(rs ...Rect) layer { return layer{rects: rs} }
	full := own(r(0, 0, 10, 10))
	tests := []struct {
		name    string
		layers  []layer // top first
		want    []Rect
		hid     []bool
		outside int
	}{
		{"nothing covers", []layer{full}, nil, []bool{false}, 0},
		{"a hidden window", []layer{hide(r(2, 2, 3, 3)), full}, []Rect{r(2, 2, 3, 3)}, []bool{true, false}, 0},
		{"clipped to the area", []layer{hide(r(-5, 8, 30, 30)), full}, []Rect{r(0, 8, 10, 2)}, []bool{true, false}, 0},
		{"a shown window above a hidden one", []layer{own(r(0, 0, 4, 10)), hide(r(2, 2, 6, 3)), full}, []Rect{r(4, 2, 4, 3)}, []bool{false, true, false}, 0},
		{"a hidden window under a shown one", []layer{own(r(0, 0, 10, 5)), hide(r(2, 2, 6, 3)), full}, nil, []bool{false, false, false}, 0},
		{"two hidden windows overlapping", []layer{hide(r(0, 0, 4, 4)), hide(r(2, 2, 4, 4)), full},
			[]Rect{r(0, 0, 4, 2), r(0, 2, 6, 2), r(2, 4, 4, 2)}, []bool{true, true, false}, 0},
		{"the window draws only its left half", []layer{own(r(0, 0, 5, 10))}, []Rect{r(5, 0, 5, 10)}, []bool{false}, 50},
		{"a hidden window outside the window's own part", []layer{hide(r(4, 0, 2, 10)), own(r(0, 0, 5, 10))}, []Rect{r(4, 0, 6, 10)}, []bool{true, false}, 40},
		{"nothing of its own", nil, []Rect{r(0, 0, 10, 10)}, []bool{}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, hid, outside := maskRects(10, 10, tc.layers)
			if !slices.Equal(got, tc.want) || !slices.Equal(hid, tc.hid) || outside != tc.outside {
				t.Errorf("maskRects = %v, %v, %d; want %v, %v, %d", got, hid, outside, tc.want, tc.hid, tc.outside)
			}
		})
	}
}

// TestMaskRectsMatchesPixels compares maskRects with a pixel-by-pixel reading of random
// stacks: every masked pixel exactly once, and only those.
func TestMaskRectsMatchesPixels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const w, h = 40, 30
	for i := range 500 {
		var layers []layer
		for range rng.IntN(6) {
			var l layer
			l.show = rng.IntN(2) == 0
			for range 1 + rng.IntN(3) {
				l.rects = append(l.rects, Rect{X: rng.IntN(w+10) - 5, Y: rng.IntN(h+10) - 5, Width: rng.IntN(w), Height: rng.IntN(h)})
			}
			layers = append(layers, l)
		}
		got, hid, outside := maskRects(w, h, layers)
		var count [w * h]int
		for _, r := range got {
			for y := r.Y; y < r.Y+r.Height; y++ {
				for x := r.X; x < r.X+r.Width; x++ {
					count[y*w+x]++
				}
			}
		}
		wantHid := make([]bool, len(layers))
		wantOutside := 0
		for y := range h {
			for x := range w {
				top := -1
				for li, l := range layers {
					if slices.ContainsFunc(l.rects, func(r Rect) bool { return r.Contains(x, y) }) {
						top = li
						break
					}
				}
				want := 0
				switch {
				case top < 0:
					want = 1
					wantOutside++
				case !layers[top].show:
					want = 1
					wantHid[top] = true
				}
				if count[y*w+x] != want {
					t.Fatalf("stack %d: pixel (%d,%d) masked %d times, want %d (layers %+v, rects %v)", i, x, y, count[y*w+x], want, layers, got)
				}
			}
		}
		if !slices.Equal(hid, wantHid) || outside != wantOutside {
			t.Fatalf("stack %d: hid %v outside %d, want %v %d", i, hid, outside, wantHid, wantOutside)
		}
	}
}

func TestFillBGRX(t *testing.T) {
	pix := make([]byte, 4*3*4)
	fillBGRX(pix, 4, []Rect{{X: 1, Y: 1, Width: 2, Height: 2}}, 0x123456)
	px := []byte{0x56, 0x34, 0x12, 0xff}
	for y := range 3 {
		for x := range 4 {
			got := pix[(y*4+x)*4 : (y*4+x)*4+4]
			in := x >= 1 && x < 3 && y >= 1
			if in != bytes.Equal(got, px) {
				t.Errorf("pixel (%d,%d) = %v, masked %v", x, y, got, in)
			}
		}
	}
}

func TestSubtract(t *testing.T) {
	tests := []struct {
		name string
		a, b []span
		want []span
	}{
		{"nothing removed", []span{{0, 10}}, nil, []span{{0, 10}}},
		{"middle", []span{{0, 10}}, []span{{3, 5}}, []span{{0, 3}, {5, 10}}},
		{"across intervals", []span{{0, 4}, {6, 10}}, []span{{2, 8}}, []span{{0, 2}, {8, 10}}},
		{"everything", []span{{2, 4}}, []span{{0, 10}}, nil},
		{"edges touch", []span{{0, 4}}, []span{{4, 6}}, []span{{0, 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := subtract(tc.a, tc.b); !slices.Equal(got, tc.want) {
				t.Errorf("subtract(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
