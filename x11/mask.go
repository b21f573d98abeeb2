package x11

import (
	"slices"
)

// MaskRGB is the colour (0xRRGGBB) a window capture paints over pixels it may not show:
// mid grey, #808080.
const MaskRGB = 0x808080

// Masking says what a window capture hid.
type Masking struct {
	// Windows counts the windows above the captured one whose pixels were masked.
	Windows int `json:"windows"`
	// Rects are disjoint rectangles, relative to the captured area at full resolution,
	// that were painted MaskRGB.
	Rects []Rect `json:"rects"`
	// Pixels is the masked area at full resolution (the sum of Rects' areas).
	Pixels int `json:"pixels"`
	// Outside is the part of Pixels that the captured window itself does not draw: outside
	// its parent, outside its shape, or where it no longer was when the capture was taken.
	Outside int `json:"outside"`
}

// layer is one window's pixels in capture coordinates, and whether they may be shown.
type layer struct {
	rects []Rect
	show  bool
}

// span is the half-open pixel interval [a, b) of one row.
type span struct{ a, b int }

// maskRects returns the pixels of a w×h area to mask, as disjoint rectangles: each pixel
// whose top-most layer (layers are top first) may not be shown, and each pixel no layer
// covers. hid[i] reports whether layer i hid a pixel; outside counts the uncovered pixels.
// The area is cut into horizontal bands at every rectangle edge; inside a band every layer
// is a fixed set of intervals, resolved top to bottom. Bands with the same masked
// intervals merge into taller rectangles.
func maskRects(w, h int, layers []layer) (rects []Rect, hid []bool, outside int) {
	hid = make([]bool, len(layers))
	if w <= 0 || h <= 0 {
		return nil, hid, 0
	}
	area := Rect{Width: w, Height: h}
	clipped := make([][]Rect, len(layers))
	ys := []int{0, h}
	for i, l := range layers {
		for _, r := range l.rects {
			if r = clip(r, area); r.Width > 0 && r.Height > 0 {
				clipped[i] = append(clipped[i], r)
				ys = append(ys, r.Y, r.Y+r.Height)
			}
		}
	}
	slices.Sort(ys)
	ys = slices.Compact(ys)
	var (
		prev     []span // the previous band's masked intervals
		prevRect []int  // their rectangles' indices in rects
		prevEnd  = -1
	)
	for bi := 0; bi+1 < len(ys); bi++ {
		y0, y1 := ys[bi], ys[bi+1]
		var claimed, masked []span
		for i, rs := range clipped {
			var cur []span
			for _, r := range rs {
				if r.Y <= y0 && r.Y+r.Height >= y1 {
					cur = append(cur, span{r.X, r.X + r.Width})
				}
			}
			if len(cur) == 0 {
				continue
			}
			cur = normalize(cur)
			if !layers[i].show {
				if vis := subtract(cur, claimed); len(vis) > 0 {
					hid[i] = true
					masked = append(masked, vis...)
				}
			}
			claimed = normalize(append(claimed, cur...))
		}
		rest := subtract([]span{{0, w}}, claimed)
		for _, s := range rest {
			outside += (s.b - s.a) * (y1 - y0)
		}
		masked = normalize(append(masked, rest...))
		if prevEnd == y0 && slices.Equal(masked, prev) {
			for _, ri := range prevRect {
				rects[ri].Height += y1 - y0
			}
			prevEnd = y1
			continue
		}
		prev, prevRect, prevEnd = masked, prevRect[:0:0], y1
		for _, s := range masked {
			prevRect = append(prevRect, len(rects))
			rects = append(rects, Rect{X: s.a, Y: y0, Width: s.b - s.a, Height: y1 - y0})
		}
	}
	return rects, hid, outside
}

// normalize sorts intervals and merges those that overlap or touch.
func normalize(s []span) []span {
	if len(s) < 2 {
		return s
	}
	slices.SortFunc(s, func(x, y span) int { return x.a - y.a })
	out := s[:1]
	for _, v := range s[1:] {
		last := &out[len(out)-1]
		if v.a <= last.b {
			last.b = max(last.b, v.b)
			continue
		}
		out = append(out, v)
	}
	return out
}

// subtract returns the parts of a not in b. Both are normalized; so is the result.
func subtract(a, b []span) []span {
	var out []span
	j := 0
	for _, v := range a {
		start := v.a
		for j < len(b) && b[j].b <= start {
			j++
		}
		for k := j; k < len(b) && b[k].a < v.b; k++ {
			if b[k].a > start {
				out = append(out, span{start, b[k].a})
			}
			start = max(start, b[k].b)
		}
		if start < v.b {
			out = append(out, span{start, v.b})
		}
	}
	return out
}

// fillBGRX paints the rectangles rects of the BGRX image pix (stride w*4) with rgb.
func fillBGRX(pix []byte, w int, rects []Rect, rgb uint32) {
	widest := 0
	for _, r := range rects {
		widest = max(widest, r.Width)
	}
	row := make([]byte, widest*4)
	for i := 0; i < len(row); i += 4 {
		row[i], row[i+1], row[i+2], row[i+3] = byte(rgb), byte(rgb>>8), byte(rgb>>16), 0xff
	}
	for _, r := range rects {
		for y := r.Y; y < r.Y+r.Height; y++ {
			off := (y*w + r.X) * 4
			copy(pix[off:off+r.Width*4], row)
		}
	}
}

// hide paints over the pixels of pix (the BGRX image of area, in root coordinates) where a
// window of covers (bottom to top) that hideWin selects is the top-most window, and says
// what it hid. Windows of unknown owners are shown.
func hide(pix []byte, area Rect, covers []Cover, hideWin func(pid int, window uint32) bool) *Masking {
	layers := make([]layer, 0, len(covers)+1)
	for i := len(covers) - 1; i >= 0; i-- { // top first
		c := covers[i]
		r := Rect{X: c.Bounds.X - area.X, Y: c.Bounds.Y - area.Y, Width: c.Bounds.Width, Height: c.Bounds.Height}
		layers = append(layers, layer{rects: []Rect{r}, show: c.PID <= 0 || !hideWin(c.PID, c.Client)})
	}
	layers = append(layers, layer{rects: []Rect{{Width: area.Width, Height: area.Height}}, show: true}) // the root
	rects, hid, _ := maskRects(area.Width, area.Height, layers)
	m := &Masking{Rects: rects}
	for _, h := range hid {
		if h {
			m.Windows++
		}
	}
	for _, r := range rects {
		m.Pixels += r.Width * r.Height
	}
	fillBGRX(pix, area.Width, rects, MaskRGB)
	return m
}
