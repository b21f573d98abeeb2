package personui

import (
	"context"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"
)

// mapTimeout bounds the wait for the window manager to map a dialog: a display that
// cannot show the question must not hold the request until its deadline.
const mapTimeout = 5 * time.Second

// dialogTitle is the consent dialog's window title.
const dialogTitle = "cua-host: an agent asks for permission"

// askSem lets one dialog be on the display at a time.
var askSem = make(chan struct{}, 1)

// Ask shows one consent dialog for req on the display opts name and returns the person's
// answer. Only a click of the primary mouse button, pressed and released on the same
// button at least ArmDelay after the dialog was last fully visible and top-most, by a
// device the input rule accepts (see the package comment), answers; keys answer nothing.
//
// Every outcome that is not an allow click is Deny: the person's Deny click or closing the
// window through the window manager (nil error), ctx ending before an answer (ErrNoAnswer
// wrapping ctx's error), another window staying over the dialog for CoverBudget although it
// restacked itself (ErrCovered), or a display that cannot be reached or does not map the
// window within 5 s (ErrDisplay). The window is destroyed and the connection closed before
// Ask returns.
//
// Ask is safe for concurrent use; dialogs are shown one at a time, and a call waiting for
// its turn still returns when ctx ends.
func Ask(ctx context.Context, opts Options, req Request) (Answer, error) {
	noAnswer := func() error { return fmt.Errorf("%w: %w", ErrNoAnswer, context.Cause(ctx)) }
	select {
	case askSem <- struct{}{}:
	case <-ctx.Done():
		return Deny, noAnswer()
	}
	defer func() { <-askSem }()
	if ctx.Err() != nil {
		return Deny, noAnswer()
	}

	lines := layoutDialog(req)
	specs := dialogButtons(req)
	var g dialogGeometry
	s, err := newSurface(ctx, opts, func(c *conn, f, b font) windowSpec {
		g = measureDialog(lines, specs, f, b)
		return windowSpec{
			title: dialogTitle,
			x:     (int(c.screen.WidthInPixels) - g.w) / 2, y: (int(c.screen.HeightInPixels) - g.h) / 2,
			w: g.w, h: g.h,
			windowType: "_NET_WM_WINDOW_TYPE_DIALOG",
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return Deny, noAnswer()
		}
		return Deny, err
	}
	defer s.close()
	s.raiseOverOwn = true
	s.buttons = g.buttons
	s.paint = func() { s.paintDialog(lines, g) }
	xproto.MapWindow(s.c.x, s.win)

	mapTimer := time.NewTimer(mapTimeout)
	defer mapTimer.Stop()
	for {
		select {
		case <-ctx.Done():
			return Deny, noAnswer()
		case <-mapTimer.C:
			if !s.mapped {
				return Deny, fmt.Errorf("%w: dialog not mapped within %v", ErrDisplay, mapTimeout)
			}
		case <-s.coverDeadline():
			if why, expired := s.coverExpired(); expired {
				return Deny, fmt.Errorf("%w: %s", ErrCovered, why)
			}
		case ev, ok := <-s.events:
			b, err := s.handle(ev, ok)
			switch {
			case err != nil:
				return Deny, fmt.Errorf("%w: %w", ErrDisplay, err)
			case b != nil:
				return b.spec.answer, nil
			case s.deleted:
				return Deny, nil
			case s.destroyed:
				return Deny, fmt.Errorf("%w: the dialog was destroyed by another client", ErrDisplay)
			}
			if why, covered := s.afterEvent(); covered {
				return Deny, fmt.Errorf("%w: %s", ErrCovered, why)
			}
		}
	}
}

// dialogGeometry is the dialog laid out in pixels.
type dialogGeometry struct {
	w, h    int
	pad     int
	bandH   int // the heading band's height
	bodyY   int // top of row 1
	lineH   int
	font    font
	bold    font
	buttons []placed
}

func measureDialog(lines []textLine, specs []buttonSpec, f, b font) dialogGeometry {
	g := dialogGeometry{pad: 16, lineH: f.lineHeight(), font: f, bold: b}
	g.bandH = b.lineHeight() + 14
	g.bodyY = g.bandH + g.pad // top of row 1
	rows := 0
	for _, l := range lines {
		rows = max(rows, l.Row+1)
	}
	g.w = 2*g.pad + dialogCols*f.w
	by := g.bodyY + (rows-1)*g.lineH + g.pad
	bh := g.lineH + 14
	const gap = 24
	total := -gap
	for _, sp := range specs {
		total += len(sp.Label)*f.w + 40 + gap
	}
	x := (g.w - total) / 2
	for _, sp := range specs {
		w := len(sp.Label)*f.w + 40
		g.buttons = append(g.buttons, placed{spec: sp, rect: Rect{X: x, Y: by, Width: w, Height: bh}})
		x += w + gap
	}
	g.h = by + bh + g.pad
	return g
}

func (s *surface) paintDialog(lines []textLine, g dialogGeometry) {
	s.fill(Rect{Width: g.w, Height: g.h}, s.pix.bg)
	s.fill(Rect{Width: g.w, Height: g.bandH}, s.pix.accent)
	for _, l := range lines {
		if l.Row == 0 {
			y := (g.bandH-g.bold.ascent-g.bold.descent)/2 + g.bold.ascent
			s.drawText(g.bold, g.pad, y, l.Text, s.pix.accentFg, s.pix.accent)
			continue
		}
		f := g.font
		if l.Bold {
			f = g.bold
		}
		y := g.bodyY + (l.Row-1)*g.lineH + f.ascent
		s.drawText(f, g.pad+l.Col*g.font.w, y, l.Text, s.pix.fg, s.pix.bg)
	}
	s.outline(Rect{Width: g.w, Height: g.h}, s.pix.accent, 4)
	s.drawButtons()
}
