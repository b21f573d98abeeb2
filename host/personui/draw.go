package personui

import (
	"errors"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Core fonts, tried in order. "fixed" is built into every X server; the larger misc-fixed
// faces come with the usual font packages. Only monospaced fonts are accepted, since the
// layout counts character cells.
var (
	regularFonts = []string{"-misc-fixed-medium-r-normal--15-140-75-75-c-90-iso8859-1", "9x15", "fixed"}
	boldFonts    = []string{"-misc-fixed-bold-r-normal--15-140-75-75-c-90-iso8859-1", "9x15bold",
		"-misc-fixed-bold-r-semicondensed--13-120-75-75-c-60-iso8859-1"}
)

// font is an open monospaced core font.
type font struct {
	id              xproto.Font
	w               int // cell width
	ascent, descent int
	// overstrike draws every glyph twice, one pixel apart: bold from a regular face, for
	// servers without a bold one.
	overstrike bool
}

func (f font) lineHeight() int { return f.ascent + f.descent + 4 }

var errNoFont = errors.New("no monospaced core font")

// openFont opens the first of names the server has that is monospaced.
func openFont(x *xgb.Conn, names []string) (font, error) {
	for _, name := range names {
		id, err := xproto.NewFontId(x)
		if err != nil {
			return font{}, err
		}
		if xproto.OpenFontChecked(x, id, uint16(len(name)), name).Check() != nil {
			continue
		}
		q, err := xproto.QueryFont(x, xproto.Fontable(id)).Reply()
		if err != nil {
			return font{}, err
		}
		if w := q.MaxBounds.CharacterWidth; w <= 0 || w != q.MinBounds.CharacterWidth {
			xproto.CloseFont(x, id)
			continue
		}
		return font{id: id, w: int(q.MaxBounds.CharacterWidth), ascent: int(q.FontAscent), descent: int(q.FontDescent)}, nil
	}
	return font{}, errNoFont
}

// palette holds the pixel values the windows are drawn with.
type palette struct {
	bg, fg, accent, accentFg, button, buttonFg, outline uint32
}

// allocPalette allocates the colours in the screen's default colormap with one pipelined
// batch of requests.
func allocPalette(x *xgb.Conn, scr *xproto.ScreenInfo) (palette, error) {
	rgb := [][3]uint16{
		{0xf7, 0xf5, 0xf0}, // bg: paper
		{0x1a, 0x1a, 0x1a}, // fg
		{0xe0, 0x8a, 0x00}, // accent: amber, the frame and heading band
		{0x00, 0x00, 0x00}, // text on the accent
		{0xe4, 0xe4, 0xe4}, // button face
		{0x10, 0x10, 0x10}, // button text
		{0x40, 0x40, 0x40}, // button outline
	}
	cookies := make([]xproto.AllocColorCookie, len(rgb))
	for i, c := range rgb {
		cookies[i] = xproto.AllocColor(x, scr.DefaultColormap, c[0]*0x101, c[1]*0x101, c[2]*0x101)
	}
	px := make([]uint32, len(rgb))
	for i, ck := range cookies {
		r, err := ck.Reply()
		if err != nil {
			return palette{}, err
		}
		px[i] = r.Pixel
	}
	return palette{bg: px[0], fg: px[1], accent: px[2], accentFg: px[3], button: px[4], buttonFg: px[5], outline: px[6]}, nil
}

// drawText draws Latin-1 text with its baseline at (x, y) in colours fg on bg. Text is at
// most a line long, well under ImageText8's 255 bytes.
func (s *surface) drawText(f font, x, y int, text string, fg, bg uint32) {
	if len(text) == 0 {
		return
	}
	if len(text) > 255 {
		text = text[:255]
	}
	xproto.ChangeGC(s.c.x, s.gc, xproto.GcForeground|xproto.GcBackground|xproto.GcFont,
		[]uint32{fg, bg, uint32(f.id)})
	xproto.ImageText8(s.c.x, byte(len(text)), xproto.Drawable(s.win), s.gc, int16(x), int16(y), text)
	if f.overstrike {
		// PolyText8 draws only the glyphs; one TEXTITEM8: length, delta 0, the string.
		item := append([]byte{byte(len(text)), 0}, text...)
		xproto.PolyText8(s.c.x, xproto.Drawable(s.win), s.gc, int16(x+1), int16(y), item)
	}
}

func (s *surface) fill(r Rect, px uint32) {
	xproto.ChangeGC(s.c.x, s.gc, xproto.GcForeground, []uint32{px})
	xproto.PolyFillRectangle(s.c.x, xproto.Drawable(s.win), s.gc,
		[]xproto.Rectangle{{X: int16(r.X), Y: int16(r.Y), Width: uint16(r.Width), Height: uint16(r.Height)}})
}

func (s *surface) outline(r Rect, px uint32, width int) {
	xproto.ChangeGC(s.c.x, s.gc, xproto.GcForeground|xproto.GcLineWidth, []uint32{px, uint32(width)})
	in := width / 2
	xproto.PolyRectangle(s.c.x, xproto.Drawable(s.win), s.gc, []xproto.Rectangle{{
		X: int16(r.X + in), Y: int16(r.Y + in), Width: uint16(r.Width - width), Height: uint16(r.Height - width)}})
}

// drawButtons draws every button: a filled face, an outline and the centred label.
func (s *surface) drawButtons() {
	f := s.font
	for _, b := range s.buttons {
		s.fill(b.rect, s.pix.button)
		s.outline(b.rect, s.pix.outline, 2)
		tx := b.rect.X + (b.rect.Width-len(b.spec.Label)*f.w)/2
		ty := b.rect.Y + (b.rect.Height-f.ascent-f.descent)/2 + f.ascent
		s.drawText(f, tx, ty, b.spec.Label, s.pix.buttonFg, s.pix.button)
	}
}

// redraw paints the whole window; content is what the owner set in s.paint.
func (s *surface) redraw() {
	if s.paint != nil {
		s.paint()
	}
}
