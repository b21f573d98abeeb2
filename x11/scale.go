package x11

import (
	"runtime"
	"sync"
)

// Pixel conversion and downscaling, hand-written for speed: a capture is BGRX (the X
// server's ZPixmap at depth 24/32, little-endian), and image/draw's generic paths cost
// several times more than these loops.

// fitScale returns the output size for a w×h source whose longer side must not exceed
// maxDim (maxDim <= 0: no limit), and the factor out/source.
func fitScale(w, h, maxDim int) (ow, oh int, scale float64) {
	long := max(w, h)
	if maxDim <= 0 || long <= maxDim {
		return w, h, 1
	}
	scale = float64(maxDim) / float64(long)
	ow = max(1, int(float64(w)*scale+0.5))
	oh = max(1, int(float64(h)*scale+0.5))
	if w >= h {
		ow = maxDim
	} else {
		oh = maxDim
	}
	return ow, oh, scale
}

// downscaleBGRX box-filters the sw×sh BGRX image src (stride sw*4) into dst (dw×dh BGRX,
// stride dw*4). Each output pixel averages the source pixels its footprint covers.
// Preconditions: dw <= sw, dh <= sh, len(dst) >= dw*dh*4.
func downscaleBGRX(dst []byte, dw, dh int, src []byte, sw, sh int) {
	// Two halves of the output rows in parallel: the work is memory-bound per row.
	if dh >= 64 && runtime.GOMAXPROCS(0) > 1 {
		mid := dh / 2
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			downscaleRows(dst, dw, dh, src, sw, sh, mid, dh)
		}()
		downscaleRows(dst, dw, dh, src, sw, sh, 0, mid)
		wg.Wait()
		return
	}
	downscaleRows(dst, dw, dh, src, sw, sh, 0, dh)
}

// downscaleRows computes output rows [from, to) of downscaleBGRX.
func downscaleRows(dst []byte, dw, dh int, src []byte, sw, sh int, from, to int) {
	// Column spans in bytes, and the reciprocal of each span's pixel count (16.16 fixed
	// point, combined with the row count below) to avoid divisions per pixel.
	span := make([][2]int, dw)
	for i := range dw {
		a, e := i*sw/dw, (i+1)*sw/dw
		if e <= a {
			e = a + 1
		}
		span[i] = [2]int{a * 4, e * 4}
	}
	acc := make([]uint32, dw*4)
	for oy := from; oy < to; oy++ {
		y0, y1 := oy*sh/dh, (oy+1)*sh/dh
		if y1 <= y0 {
			y1 = y0 + 1
		}
		clear(acc)
		for y := y0; y < y1; y++ {
			row := src[y*sw*4 : (y+1)*sw*4]
			for ox, sp := range span {
				var sb, sg, sr uint32
				for i := sp[0]; i < sp[1]; i += 4 {
					px := row[i : i+3 : i+3]
					sb += uint32(px[0])
					sg += uint32(px[1])
					sr += uint32(px[2])
				}
				a := acc[ox*4 : ox*4+3 : ox*4+3]
				a[0] += sb
				a[1] += sg
				a[2] += sr
			}
		}
		out := dst[oy*dw*4 : (oy+1)*dw*4]
		ny := uint32(y1 - y0)
		for ox, sp := range span {
			n := ny * uint32((sp[1]-sp[0])/4)
			a := acc[ox*4 : ox*4+3 : ox*4+3]
			o := out[ox*4 : ox*4+4 : ox*4+4]
			if n == 1 {
				o[0], o[1], o[2] = byte(a[0]), byte(a[1]), byte(a[2])
			} else {
				inv := (1<<16 + n/2) / n
				half := uint32(1 << 15)
				o[0] = byte((a[0]*inv + half) >> 16)
				o[1] = byte((a[1]*inv + half) >> 16)
				o[2] = byte((a[2]*inv + half) >> 16)
			}
			o[3] = 0xff
		}
	}
}

// bgrxToRGBA writes the BGRX pixels of src as RGBA with opaque alpha into dst.
// Preconditions: len(dst) >= len(src).
func bgrxToRGBA(dst, src []byte) {
	n := len(src) &^ 3
	dst = dst[:n]
	for i := 0; i < n; i += 4 {
		s := src[i : i+4 : i+4]
		d := dst[i : i+4 : i+4]
		d[0], d[1], d[2], d[3] = s[2], s[1], s[0], 0xff
	}
}
