package personui

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/jezek/xgb/xproto"
)

// indicatorTitle is the indicator's window title.
const indicatorTitle = "cua-host: agent sessions active"

// Indicator is the bar at the top centre of the display that lists the active agent
// sessions and offers a Stop button. It is hidden while the list is empty. It is drawn on
// its own X connection by a goroutine of its own; its methods are safe for concurrent use.
type Indicator struct {
	s      *surface
	onStop func()

	update   chan struct{} // Set wakes the loop (capacity 1)
	stopSig  chan struct{} // the loop wakes the notifier (capacity 1)
	done     chan struct{} // closed by Close
	loopDone chan struct{} // closed when the loop has returned
	cbDone   chan struct{} // closed when the notifier has returned

	closeOnce sync.Once

	// mu guards the fields below.
	mu       sync.Mutex
	sessions []Session // the latest Set, not yet applied when dirty
	stops    int       // Stop clicks not yet handed to onStop
}

// NewIndicator connects to the display and prepares the indicator, hidden. ctx bounds the
// connection and setup only. onStop is called once for each click on Stop (pressed and
// released on it, ArmDelay after the bar was last fully visible and in place), one call at
// a time, on a goroutine of the Indicator's; it may call Set but must not call Close,
// which waits for it. The caller closes the Indicator.
func NewIndicator(ctx context.Context, opts Options, onStop func()) (*Indicator, error) {
	if onStop == nil {
		panic("personui: NewIndicator with a nil onStop")
	}
	var g indicatorGeometry
	s, err := newSurface(ctx, opts, func(c *conn, f, b font) windowSpec {
		g = measureIndicator(layoutIndicator(nil), f, int(c.screen.WidthInPixels))
		return windowSpec{title: indicatorTitle, x: g.x, y: g.y, w: g.w, h: g.h,
			windowType: "_NET_WM_WINDOW_TYPE_DOCK"}
	})
	if err != nil {
		return nil, err
	}
	ind := &Indicator{s: s, onStop: onStop,
		update: make(chan struct{}, 1), stopSig: make(chan struct{}, 1), done: make(chan struct{}),
		loopDone: make(chan struct{}), cbDone: make(chan struct{})}
	go ind.loop(g)
	go ind.notify()
	return ind, nil
}

// Set shows sessions (a copy is kept), or hides the bar when there are none. It never
// blocks on the display: the bar's goroutine applies the latest list. After Close it does
// nothing.
func (ind *Indicator) Set(sessions []Session) {
	ind.mu.Lock()
	ind.sessions = slices.Clone(sessions)
	ind.mu.Unlock()
	select {
	case ind.update <- struct{}{}:
	default:
	}
}

// Close removes the bar and closes its connection, waiting for a running onStop to return.
// Stop clicks not yet handed to onStop are dropped. Close is idempotent.
func (ind *Indicator) Close() error {
	ind.closeOnce.Do(func() {
		close(ind.done)
		<-ind.loopDone
		ind.s.close()
		<-ind.cbDone
	})
	return nil
}

// loop owns the surface: it applies Set and handles the window's events.
func (ind *Indicator) loop(g indicatorGeometry) {
	defer close(ind.loopDone)
	s := ind.s
	var text string
	s.paint = func() { s.paintIndicator(text, g) }
	mapped := false
	for {
		select {
		case <-ind.done:
			return
		case <-ind.update:
			ind.mu.Lock()
			sessions := ind.sessions
			ind.mu.Unlock()
			if len(sessions) == 0 {
				if mapped {
					xproto.UnmapWindow(s.c.x, s.win)
					mapped = false
				}
				continue
			}
			text = layoutIndicator(sessions)
			s.setTitle(indicatorTitle + ": " + strings.TrimPrefix(text, indicatorHead))
			ng := measureIndicator(text, g.font, int(s.c.screen.WidthInPixels))
			if ng.w != g.w || ng.h != g.h {
				s.setSizeHints(ng.x, ng.y, ng.w, ng.h)
				xproto.ConfigureWindow(s.c.x, s.win,
					xproto.ConfigWindowX|xproto.ConfigWindowY|xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
					[]uint32{uint32(ng.x), uint32(ng.y), uint32(ng.w), uint32(ng.h)})
			}
			g = ng
			s.buttons = g.buttons
			if !mapped {
				xproto.MapWindow(s.c.x, s.win)
				mapped = true
			}
			s.redraw()
		case ev, ok := <-s.events:
			b, err := s.handle(ev, ok)
			if err != nil {
				s.log.Warn("personui: indicator lost its display", "error", err)
				<-ind.done
				return
			}
			if b != nil {
				ind.mu.Lock()
				ind.stops++
				ind.mu.Unlock()
				select {
				case ind.stopSig <- struct{}{}:
				default:
				}
			}
		}
	}
}

// notify calls onStop once per Stop click, in order, one at a time.
func (ind *Indicator) notify() {
	defer close(ind.cbDone)
	for {
		select {
		case <-ind.done:
			return
		case <-ind.stopSig:
		}
		for {
			ind.mu.Lock()
			n := ind.stops
			if n > 0 {
				ind.stops--
			}
			ind.mu.Unlock()
			if n == 0 {
				break
			}
			select {
			case <-ind.done:
				return
			default:
			}
			ind.onStop()
		}
	}
}

// indicatorGeometry is the indicator laid out in pixels.
type indicatorGeometry struct {
	x, y, w, h int
	pad        int
	font       font
	buttons    []placed
}

func measureIndicator(text string, f font, screenW int) indicatorGeometry {
	g := indicatorGeometry{pad: 8, font: f}
	lineH := f.lineHeight()
	bh := lineH + 6
	g.h = bh + 2*4
	stop := buttonSpec{Name: "stop", Label: "Stop"}
	bw := len(stop.Label)*f.w + 32
	g.w = min(g.pad+len(text)*f.w+2*g.pad+bw+4, screenW)
	g.x, g.y = (screenW-g.w)/2, 0
	g.buttons = []placed{{spec: stop, rect: Rect{X: g.w - 4 - bw, Y: 4, Width: bw, Height: bh}}}
	return g
}

func (s *surface) paintIndicator(text string, g indicatorGeometry) {
	s.fill(Rect{Width: g.w, Height: g.h}, s.pix.accent)
	f := g.font
	s.drawText(f, g.pad, (g.h-f.ascent-f.descent)/2+f.ascent, text, s.pix.accentFg, s.pix.accent)
	s.drawButtons()
}
