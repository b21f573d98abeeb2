package x11

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/jpeg"
	"io"
)

// Format is an image encoding.
type Format int

// Image formats.
const (
	// PNG is lossless, compressed with flate's fastest level.
	PNG Format = iota + 1
	// JPEG is lossy, with CaptureOptions.Quality.
	JPEG
)

// String returns "png" or "jpeg".
func (f Format) String() string {
	switch f {
	case PNG:
		return "png"
	case JPEG:
		return "jpeg"
	}
	return "invalid"
}

// MIMEType returns the format's media type.
func (f Format) MIMEType() string {
	if f == JPEG {
		return "image/jpeg"
	}
	return "image/png"
}

// encoders keeps reusable encoder state. Guarded by captureState.mu.
type encoders struct {
	fw   *flate.Writer
	row  []byte
	rgba []byte
}

// encodePNG writes the w×h BGRX image src as an 8-bit RGB PNG. Rows use the Sub filter
// (cheap and good on screen content) and flate's BestSpeed.
func (e *encoders) encodePNG(out *bytes.Buffer, src []byte, w, h int) error {
	out.Write([]byte("\x89PNG\r\n\x1a\n"))
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // bit depth 8, colour type truecolour
	writeChunk(out, "IHDR", ihdr[:])

	cw := &chunkWriter{out: out}
	bw := bufio.NewWriterSize(cw, 1<<16)
	// zlib header: CMF 0x78 (deflate, 32K window), FLG for fastest compression.
	if _, err := bw.Write([]byte{0x78, 0x01}); err != nil {
		return err
	}
	if e.fw == nil {
		var err error
		if e.fw, err = flate.NewWriter(bw, flate.BestSpeed); err != nil {
			return err
		}
	} else {
		e.fw.Reset(bw)
	}
	adler := adler32.New()
	stride := 1 + w*3
	if cap(e.row) < stride {
		e.row = make([]byte, stride)
	}
	row := e.row[:stride]
	for y := range h {
		line := src[y*w*4 : (y+1)*w*4]
		row[0] = 1 // Sub
		var pr, pg, pb byte
		for x := range w {
			s := line[x*4 : x*4+4 : x*4+4]
			r, g, b := s[2], s[1], s[0]
			d := row[1+x*3 : 4+x*3 : 4+x*3]
			d[0], d[1], d[2] = r-pr, g-pg, b-pb
			pr, pg, pb = r, g, b
		}
		adler.Write(row)
		if _, err := e.fw.Write(row); err != nil {
			return err
		}
	}
	if err := e.fw.Close(); err != nil {
		return err
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler.Sum32())
	if _, err := bw.Write(sum[:]); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	writeChunk(out, "IEND", nil)
	return nil
}

// encodeJPEG writes the w×h BGRX image src as JPEG.
func (e *encoders) encodeJPEG(out io.Writer, src []byte, w, h, quality int) error {
	n := w * h * 4
	if cap(e.rgba) < n {
		e.rgba = make([]byte, n)
	}
	buf := e.rgba[:n]
	bgrxToRGBA(buf, src[:n])
	img := &image.RGBA{Pix: buf, Stride: w * 4, Rect: image.Rect(0, 0, w, h)}
	return jpeg.Encode(out, img, &jpeg.Options{Quality: quality})
}

func writeChunk(out *bytes.Buffer, typ string, data []byte) {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], typ)
	out.Write(hdr[:])
	out.Write(data)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(data)
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], crc.Sum32())
	out.Write(c[:])
}

// chunkWriter turns each Write into one IDAT chunk.
type chunkWriter struct{ out *bytes.Buffer }

func (c *chunkWriter) Write(p []byte) (int, error) {
	writeChunk(c.out, "IDAT", p)
	return len(p), nil
}
