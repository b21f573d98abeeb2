package personui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jezek/xgb/xproto"
)

// indicatorTitle is the indicator's window title.
const indicatorTitle = "cua-host: agent sessions active"

// Indicator is the bar at the top centre of the display that lists the active agent
// sessions and offers a Stop button, and the stop key (StopKey) grabbed on the display. The
// bar is hidden while the list is empty, and kept above every other window while shown. It
// is drawn on its own X connection by a goroutine of its own; its methods are safe for
// concurrent use.
type Indicator struct {
	s         *surface
	onStop    func()
	onCovered func(reason string)
	keyOK     atomic.Bool // the stop key is grabbed (written by the loop once started)

	update    chan struct{} // Set wakes the loop (capacity 1)
	notifySig chan struct{} // the loop wakes the notifier (capacity 1)
	done      chan struct{} // closed by Close
	loopDone  chan struct{} // closed when the loop has returned
	cbDone    chan struct{} // closed when the notifier has returned

	closeOnce sync.Once

	// mu guards the fields below.
	mu       sync.Mutex
	sessions []Session // the latest Set, not yet applied when dirty
	stops    int       // Stop presses not yet handed to onStop
	covers   []string  // covers not yet handed to onCovered
}

// NewIndicator connects to the display and prepares the indicator, hidden, and grabs the
// stop key. ctx bounds the connection and setup only.
//
// onStop is called once for each press of Stop: a click on the button (pressed and released
// on it, ArmDelay after the bar was last fully visible, top-most and in place) or a press of
// StopKey, by a device the input rule accepts (see the package comment). onCovered is called
// when the shown bar stayed under another window for CoverBudget although it restacked
// itself above it (or something kept raising itself over it), with what covers it: the
// person may no longer see the bar or reach Stop, so the caller should end the sessions as
// Stop would. Both run one call at a time (Stop presses first) on a goroutine of the
// Indicator's; they may call Set but must not call Close, which waits for them. When the stop key cannot be grabbed (another program holds it) the bar
// says Stop is click-only and a warning is logged. The caller closes the Indicator.
func NewIndicator(ctx context.Context, opts Options, onStop func(), onCovered func(reason string)) (*Indicator, error) {
	if onStop == nil || onCovered == nil {
		panic("personui: NewIndicator with a nil onStop or onCovered")
	}
	var g indicatorGeometry
	s, err := newSurface(ctx, opts, func(c *conn, f, b font) windowSpec {
		g = measureIndicator(layoutIndicator(nil)+stopHint(true), f, int(c.screen.WidthInPixels))
		return windowSpec{title: indicatorTitle, x: g.x, y: g.y, w: g.w, h: g.h,
			windowType: "_NET_WM_WINDOW_TYPE_DOCK", overrideRedirect: true}
	})
	if err != nil {
		return nil, err
	}
	ind := &Indicator{s: s, onStop: onStop, onCovered: onCovered,
		update: make(chan struct{}, 1), notifySig: make(chan struct{}, 1), done: make(chan struct{}),
		loopDone: make(chan struct{}), cbDone: make(chan struct{})}
	ok, why := s.grabStopKey()
	if ind.keyOK.Store(ok); !ok {
		s.log.Warn("personui: the stop key is not available: Stop is click-only", "key", StopKey, "why", why)
	}
	go ind.loop(g)
	go ind.notify()
	return ind, nil
}

// StopKey returns the key combination that presses Stop, or "" when the Indicator could not
// grab it and Stop is click-only.
func (ind *Indicator) StopKey() string {
	if ind.keyOK.Load() {
		return StopKey
	}
	return ""
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

// latest returns the session list of the latest Set.
func (ind *Indicator) latest() []Session {
	ind.mu.Lock()
	defer ind.mu.Unlock()
	return ind.sessions
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
			list := layoutIndicator(sessions)
			s.setTitle(indicatorTitle + ": " + strings.TrimPrefix(list, indicatorHead))
			text = list + stopHint(ind.keyOK.Load())
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
		case <-s.coverDeadline():
			if why, covered := s.coverExpired(); covered {
				ind.covered(why)
			}
		case ev, ok := <-s.events:
			b, err := s.handle(ev, ok)
			if err != nil {
				s.log.Warn("personui: indicator lost its display", "error", err)
				<-ind.done
				return
			}
			if b != nil || s.stopKeys > 0 {
				n := s.stopKeys
				if b != nil {
					n++
				}
				s.stopKeys = 0
				ind.post(func() { ind.stops += n })
			}
			if s.keymapChanged && ind.keyOK.Load() {
				if ok, why := s.regrabStopKey(); !ok {
					s.log.Warn("personui: the stop key is lost after a keyboard map change: Stop is click-only", "key", StopKey, "why", why)
					ind.keyOK.Store(false)
					ind.Set(ind.latest()) // lay the bar out again with the new hint
				}
			}
			if why, covered := s.afterEvent(); covered {
				ind.covered(why)
			}
		}
	}
}

// covered hands a cover of the bar to onCovered.
func (ind *Indicator) covered(why string) {
	ind.s.log.Warn("personui: the indicator stays covered", "window", ind.s.win, "why", why)
	ind.post(func() { ind.covers = append(ind.covers, why) })
}

// post changes the notifier's queue under mu and wakes the notifier.
func (ind *Indicator) post(change func()) {
	ind.mu.Lock()
	change()
	ind.mu.Unlock()
	select {
	case ind.notifySig <- struct{}{}:
	default:
	}
}

// notify calls onStop once per Stop press and onCovered once per cover, one at a time,
// Stop presses first.
func (ind *Indicator) notify() {
	defer close(ind.cbDone)
	for {
		select {
		case <-ind.done:
			return
		case <-ind.notifySig:
		}
		for {
			ind.mu.Lock()
			stop, cover := ind.stops > 0, ""
			switch {
			case stop:
				ind.stops--
			case len(ind.covers) > 0:
				cover = ind.covers[0]
				ind.covers = ind.covers[1:]
			}
			ind.mu.Unlock()
			if !stop && cover == "" {
				break
			}
			select {
			case <-ind.done:
				return
			default:
			}
			if stop {
				ind.onStop()
			} else {
				ind.onCovered(cover)
			}
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
