package personui

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jezek/xgb/xproto"
)

// Keeping a window top-most. Every change of the stacking of the root's children (a window
// mapped, moved, resized, raised or lowered, override-redirect or not) comes to the surface
// as a SubstructureNotify event on the root; after the events at hand the surface reads the
// stacking order (QueryTree) and the geometry of every window above its own top-level
// window, and when one of them overlaps the window's area it restacks that top-level window
// above everything, directly: a window manager's frame is given the override-redirect
// attribute first, so that the request is not redirected to the window manager, which keeps
// managed windows under override-redirect ones. The next check shows whether it worked;
// one still covered CoverBudget after it was first found covered is reported.

// ownTops are the top-level windows of this process's surfaces (their frames, or
// themselves when unframed): they never count as covering each other.
var ownTops sync.Map // xproto.Window → struct{}

// coverState is what the last stacking check found.
type coverState struct {
	// covered: a window was over part of ours at the last check. since: when it was first
	// found covered since the last check that found none. why: the covering window, for
	// messages.
	covered bool
	since   time.Time
	why     string
	// timer fires CoverBudget after since; nil when it is not running.
	timer *time.Timer
	// reported: this cover was reported already.
	reported bool
}

// coverDeadline returns the channel that fires when the window has been covered for
// CoverBudget, or nil.
func (s *surface) coverDeadline() <-chan time.Time {
	if s.cover.timer == nil {
		return nil
	}
	return s.cover.timer.C
}

// setTop records win as the surface's top-level window.
func (s *surface) setTop(win xproto.Window) {
	if s.top != 0 {
		ownTops.Delete(s.top)
	}
	s.top, s.topOR = win, false
	ownTops.Store(win, struct{}{})
}

// findTop walks up from the surface's window to the root's child that holds it.
func (s *surface) findTop() (xproto.Window, error) {
	w := s.win
	for range 8 {
		r, err := xproto.QueryTree(s.c.x, w).Reply()
		if err != nil {
			return 0, err
		}
		if r.Parent == s.c.screen.Root || r.Parent == 0 {
			return w, nil
		}
		w = r.Parent
	}
	return 0, fmt.Errorf("window 0x%x is nested too deep", uint32(s.win))
}

// Fights. A window that raises itself again each time the surface restacks above it is
// on top often enough to take a click although each check may find the surface top-most:
// more than fightLimit restacks within fightWindow count as a cover that cannot be
// undone, reported at once (and again at most once per fightWindow while it goes on).
const (
	fightWindow = time.Second
	fightLimit  = 10
)

// checkStacking reads the stacking order and restacks the window when something covers
// it. The first check that finds it covered starts the cover timer (coverDeadline) and
// disarms the window. It returns a cover to report when the window is in a restacking
// fight. It is a no-op, and ends a cover, while the window is not mapped.
func (s *surface) checkStacking() (why string, report bool) {
	s.stackDirty = false
	s.lastCheck = time.Now()
	if !s.mapped {
		s.uncovered()
		return "", false
	}
	covers, err := s.coveringWindows()
	over := ""
	switch {
	case err != nil:
		// The tree changed under the walk (our window went away or was reparented): until
		// a check succeeds it counts as covered.
		s.log.Debug("personui: stacking check", "window", s.win, "error", err)
		over = fmt.Sprintf("the stacking order could not be read (%v)", err)
	case len(covers) > 0:
		over = covers[0].String()
	}
	if over == "" {
		s.uncovered()
		return "", false
	}
	now := time.Now()
	if !s.cover.covered {
		s.cover = coverState{covered: true, since: now, timer: time.NewTimer(CoverBudget)}
		s.disarm("covered")
		s.log.Debug("personui: covered", "window", s.win, "by", over)
	}
	s.cover.why = over
	s.restack(covers)
	s.restacks = append(s.restacks, now)
	for len(s.restacks) > 0 && now.Sub(s.restacks[0]) > fightWindow {
		s.restacks = s.restacks[1:]
	}
	if len(s.restacks) > fightLimit && now.Sub(s.fightReported) > fightWindow {
		s.fightReported, s.cover.reported = now, true
		return fmt.Sprintf("%s, and raised itself again %d times in %v", over, len(s.restacks), fightWindow), true
	}
	return "", false
}

// uncovered ends a cover; a window that is visible again arms anew.
func (s *surface) uncovered() {
	if !s.cover.covered {
		return
	}
	if s.cover.timer != nil {
		s.cover.timer.Stop()
	}
	s.cover = coverState{}
	s.log.Debug("personui: uncovered", "window", s.win)
	if s.mapped && s.unobscured && !s.armed {
		s.requestStamp()
	}
}

// coverExpired runs when the cover timer fires: it checks once more and reports a window
// still covered (once per cover), with what covers it.
func (s *surface) coverExpired() (why string, report bool) {
	s.cover.timer = nil
	if why, report := s.checkStacking(); report {
		return why, true
	}
	if !s.cover.covered || s.cover.reported {
		return "", false
	}
	s.cover.reported = true
	return s.cover.why, true
}

// afterEvent runs the stacking check when the root's children changed and no event is
// waiting — or when the last check is older than checkEvery, so that a flood of events
// cannot put the check off. It returns a cover to report, as checkStacking.
func (s *surface) afterEvent() (why string, report bool) {
	if s.stackDirty && (len(s.events) == 0 || time.Since(s.lastCheck) >= checkEvery) {
		return s.checkStacking()
	}
	return "", false
}

// checkEvery bounds how long a stream of events can put off the stacking check.
const checkEvery = 10 * time.Millisecond

// coverWindow is a window found over the surface.
type coverWindow struct {
	win              xproto.Window
	bounds           Rect
	overrideRedirect bool
	inputOnly        bool
}

// String describes the window for messages.
func (c coverWindow) String() string {
	kind := ""
	if c.overrideRedirect {
		kind = ", override-redirect"
	}
	if c.inputOnly {
		kind += ", input-only"
	}
	r := c.bounds
	return fmt.Sprintf("window 0x%x (%dx%d+%d+%d%s) is above it", uint32(c.win), r.Width, r.Height, r.X, r.Y, kind)
}

// coveringWindows returns the viewable windows stacked above the surface's top-level
// window that overlap the surface's area, top-most last. Windows of this process's own
// surfaces do not count; InputOnly windows do (they take the clicks).
func (s *surface) coveringWindows() ([]coverWindow, error) {
	x := s.c.x
	treeCk := xproto.QueryTree(x, s.c.screen.Root)
	posCk := xproto.TranslateCoordinates(x, s.win, s.c.screen.Root, 0, 0)
	tree, err := treeCk.Reply()
	if err != nil {
		return nil, err
	}
	pos, err := posCk.Reply()
	if err != nil {
		return nil, err
	}
	ours := Rect{X: int(pos.DstX), Y: int(pos.DstY), Width: s.w, Height: s.h}
	i := slices.Index(tree.Children, s.top)
	if i < 0 {
		// Reparented since the last look: find the top-level window again.
		top, err := s.findTop()
		if err != nil {
			return nil, err
		}
		s.setTop(top)
		if i = slices.Index(tree.Children, top); i < 0 {
			return nil, fmt.Errorf("window 0x%x is not among the root's children", uint32(top))
		}
	}
	above := tree.Children[i+1:]
	attrs := make([]xproto.GetWindowAttributesCookie, len(above))
	geos := make([]xproto.GetGeometryCookie, len(above))
	for j, w := range above {
		attrs[j] = xproto.GetWindowAttributes(x, w)
		geos[j] = xproto.GetGeometry(x, xproto.Drawable(w))
	}
	var out []coverWindow
	for j, w := range above {
		a, aerr := attrs[j].Reply()
		g, gerr := geos[j].Reply()
		if aerr != nil || gerr != nil || a.MapState != xproto.MapStateViewable {
			continue // a window gone since QueryTree no longer covers anything
		}
		if _, own := ownTops.Load(w); own {
			continue
		}
		r := Rect{X: int(g.X), Y: int(g.Y), Width: int(g.Width) + 2*int(g.BorderWidth), Height: int(g.Height) + 2*int(g.BorderWidth)}
		if r.overlaps(ours) {
			out = append(out, coverWindow{win: w, bounds: r, overrideRedirect: a.OverrideRedirect,
				inputOnly: a.Class == xproto.WindowClassInputOnly})
		}
	}
	return out, nil
}

// restack puts the surface's top-level window above every sibling, directly: an
// override-redirect window (the indicator) by itself; a window manager's frame (the
// dialog's) after giving it the override-redirect attribute, so that the request is not
// redirected to the window manager, which keeps managed windows under override-redirect
// ones. A window manager also restacks its frames itself — openbox raises a clicked window
// to just under its own reference window, under every override-redirect window mapped
// since it started, and the click is then replayed to whatever is on top — so the
// override-redirect windows that covered a framed surface are also sent to the bottom of
// the stack. The surface's own window never gets the attribute while unframed: a window
// manager would then not manage it.
func (s *surface) restack(covers []coverWindow) {
	framed := s.top != s.win
	if framed && !s.topOR {
		xproto.ChangeWindowAttributes(s.c.x, s.top, xproto.CwOverrideRedirect, []uint32{1})
		s.topOR = true
	}
	xproto.ConfigureWindow(s.c.x, s.top, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
	if !framed {
		return
	}
	for _, c := range covers {
		if c.overrideRedirect {
			xproto.ConfigureWindow(s.c.x, c.win, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeBelow})
		}
	}
}

func (r Rect) overlaps(o Rect) bool {
	return r.X < o.X+o.Width && o.X < r.X+r.Width && r.Y < o.Y+o.Height && o.Y < r.Y+r.Height
}
