package desktop

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// ForegroundRetryWindow is how long after a background attempt on a window failed (refused
// with background_unavailable, or delivered with an unconfirmed effect that suggests the
// foreground) a foreground retry on that window is allowed on a shared display.
const ForegroundRetryWindow = 2 * time.Minute

// foregroundGate keeps foreground delivery on a display shared with a person for the
// retries that need it. Foreground delivery takes the person's pointer and keyboard focus
// (and gives them back after): asked for first, it would take them for input that the
// session's own devices could have delivered. Like the reference driver, cua-host refuses
// it with foreground_required unless a background attempt on the same target failed
// recently. On a display the session owns there is nobody to take anything from, and the
// gate does not apply. A target is a window, or for desktop coordinates one point: a
// failure at one point of the desktop never opens the rest of it.
type foregroundGate struct {
	mu     sync.Mutex
	failed map[*tool.Session]map[gateKey]time.Time
}

// gateKey is what a background failure unlocks: a window (any point in it), or, for a call
// with no window, one desktop point.
type gateKey struct {
	window uint32
	x, y   int
}

func newForegroundGate() *foregroundGate {
	return &foregroundGate{failed: map[*tool.Session]map[gateKey]time.Time{}}
}

// record notes that background delivery to k failed for s at now, and forgets failures
// older than the retry window.
func (g *foregroundGate) record(s *tool.Session, k gateKey, now time.Time) {
	if s == nil {
		return
	}
	g.mu.Lock()
	m := g.failed[s]
	first := m == nil
	if first {
		m = map[gateKey]time.Time{}
		g.failed[s] = m
	}
	for old, at := range m {
		if now.Sub(at) > ForegroundRetryWindow {
			delete(m, old)
		}
	}
	m[k] = now
	g.mu.Unlock()
	if first {
		// Registered unlocked: on a session that already ended, OnEnd runs f at once.
		s.OnEnd(func() {
			g.mu.Lock()
			delete(g.failed, s)
			g.mu.Unlock()
		})
	}
}

// allowed reports whether s may use foreground delivery to k at now.
func (g *foregroundGate) allowed(s *tool.Session, k gateKey, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.failed[s][k]
	return ok && now.Sub(at) <= ForegroundRetryWindow
}

// callWindow is the window a call targets: the one the authorizer resolved, else the
// window_id argument, else 0.
func callWindow(call *tool.Call) uint32 {
	if call.Window != nil {
		return call.Window.ID
	}
	if t, ok := call.Args.(tool.Targeted); ok {
		return t.Target().WindowID
	}
	return 0
}

// callTarget is the gate's key of a call: its window, or without one the first point it
// names (x/y, else from_x/from_y; 0,0 for none: keys to the focused window).
func callTarget(call *tool.Call) gateKey {
	if w := callWindow(call); w != 0 {
		return gateKey{window: w}
	}
	if p, ok := call.Args.(tool.Pointed); ok {
		var buf [2]x11.Point
		if pts := p.AppendPoints(buf[:0]); len(pts) > 0 {
			return gateKey{x: pts[0].X, y: pts[0].Y}
		}
	}
	return gateKey{}
}

// observed wraps a handler so that a background failure is recorded: a background_unavailable
// refusal, or an action whose escalation suggests the foreground.
func (g *foregroundGate) observed(h tool.Handler) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
		res, err := h(ctx, call)
		var r *authz.Refusal
		switch {
		case errors.As(err, &r) && r.Code == authz.CodeBackgroundUnavailable:
			g.record(call.Session, callTarget(call), time.Now())
		case err == nil && res != nil:
			if a, ok := res.Structured.(tool.Action); ok && a.Escalation != nil && a.Escalation.Target == "foreground" {
				g.record(call.Session, callTarget(call), time.Now())
			}
		}
		return res, err
	}
}

// foregroundRequired is the refusal of a first foreground attempt on a shared display.
func foregroundRequired(win uint32) *authz.Refusal {
	what := "this target"
	if win != 0 {
		what = "this window"
	}
	return authz.Refuse(authz.CodeForegroundRequired,
		"foreground delivery takes the person's pointer and keyboard focus; on a shared display it is allowed only as a retry after background delivery to %s failed (background_unavailable, or an unconfirmed effect) within the last %v. Call again without delivery_mode first", what, ForegroundRetryWindow)
}
