package desktop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// mouse_drag moves a button the session holds (mouse_button_down) without releasing it;
// parallel_mouse_drag runs several whole drags at once inside one window, each on a
// temporary master pointer of its own.

// Limits of parallel_mouse_drag.
const (
	minParallelDrags = 2
	maxParallelDrags = 8
	maxDragPath      = 400 // waypoints of one item
	maxParallelSteps = 300 // motion events of one item
)

// dragMoreSpecs are mouse_drag and parallel_mouse_drag.
func (d *desk) dragMoreSpecs() []spec {
	mouseDrag := targetProps(map[string]prop{
		"x": xProp, "y": yProp,
		"duration_ms": intProp("Time spread over the moves (default 500).", 0, 10000),
		"steps":       intProp("Number of motion events (default 20).", 1, 200),
	})
	point := prop{"type": "array", "items": prop{"type": "number"}, "minItems": 2, "maxItems": 2}
	item := prop{"type": "object", "additionalProperties": false, "properties": map[string]prop{
		"path": {"type": "array", "items": point, "minItems": 2, "maxItems": maxDragPath,
			"description": "Window-relative waypoints [[x,y],…] (2–400): pressed at the first, glided through, released at the last. Instead of from_x/from_y/to_x/to_y."},
		"from_x": numProp("Start x of a straight drag (window-relative)."), "from_y": numProp("Start y."),
		"to_x": numProp("End x."), "to_y": numProp("End y."),
		"button":      buttonProp,
		"duration_ms": intProp("Time from the press to the release (default 500).", 0, 10000),
		"steps":       intProp("Motion events along the whole path (default: one per 3 pixels, at least one per waypoint, 24–300).", 1, maxParallelSteps),
	}}
	parallel := map[string]prop{
		"pid": pidProp, "window_id": windowProp, "target": targetProp,
		"drags": {"type": "array", "items": item, "minItems": minParallelDrags, "maxItems": maxParallelDrags,
			"description": "The drags (2–8), each a path or a straight segment inside the window."},
	}
	return []spec{
		{name: "mouse_drag", description: "Move a button the session holds (after mouse_button_down) to x,y in steps motion events over duration_ms, without releasing it; mouse_button_up releases it. " +
			"Coordinates and target as move_cursor; delivery_mode must reach the pointer that pressed the button. Refused when this session holds no button there.",
			schema: schema([]string{"x", "y"}, mouseDrag), handler: d.mouseDrag, args: tool.NewArgs[mouseDragArgs]},
		{name: "parallel_mouse_drag", description: "Run 2–8 drags at the same time inside one window (pid and window_id): each drag gets a temporary XInput2 master pointer of its own, presses once, glides through its path and releases once; " +
			"the person's pointer does not move, and the temporary pointers are removed afterwards. One window per call (the reference driver keys drags by session and window). " +
			"A drag is a path of window-relative waypoints or a straight segment; function paths (fn) are not supported. " +
			"Refused with background_unavailable where the X server cannot create master pointers; never imitated with the core pointer.",
			schema: schema([]string{"drags"}, parallel), handler: d.parallelDrag, args: tool.NewArgs[parallelDragArgs]},
	}
}

// heldButtons records which buttons each session pressed with mouse_button_down on which
// devices, so that mouse_drag moves only a button the calling session holds (the core
// devices are shared by the sessions of a display).
type heldButtons struct {
	mu  sync.Mutex // guards byS
	byS map[*tool.Session]map[*x11.Devices]map[x11.Button]bool
}

// note records a press (down) or release of btn by s on dev.
func (h *heldButtons) note(s *tool.Session, dev *x11.Devices, btn x11.Button, down bool) {
	if s == nil {
		return
	}
	h.mu.Lock()
	if h.byS == nil {
		h.byS = map[*tool.Session]map[*x11.Devices]map[x11.Button]bool{}
	}
	byDev, known := h.byS[s]
	if !down && !known {
		h.mu.Unlock()
		return
	}
	if !known {
		byDev = map[*x11.Devices]map[x11.Button]bool{}
		h.byS[s] = byDev
	}
	if byDev[dev] == nil {
		byDev[dev] = map[x11.Button]bool{}
	}
	if down {
		byDev[dev][btn] = true
	} else {
		delete(byDev[dev], btn)
	}
	h.mu.Unlock()
	if !known {
		// Registered unlocked: on a session that already ended it runs at once.
		s.OnEnd(func() {
			h.mu.Lock()
			delete(h.byS, s)
			h.mu.Unlock()
		})
	}
}

// of returns the buttons s pressed on dev that dev still holds (ReleaseAll, a seat's
// Close or another session's release may have let go of them since).
func (h *heldButtons) of(s *tool.Session, dev *x11.Devices) []x11.Button {
	if s == nil {
		return nil
	}
	h.mu.Lock()
	mine := h.byS[s][dev]
	var out []x11.Button
	held, _ := dev.Held()
	for _, b := range held {
		if mine[b] {
			out = append(out, b)
		}
	}
	h.mu.Unlock()
	slices.Sort(out)
	return out
}

// mouseDragArgs are mouse_drag's arguments.
type mouseDragArgs struct {
	targetArgs
	X          *float64 `json:"x"`
	Y          *float64 `json:"y"`
	DurationMS *int     `json:"duration_ms"`
	Steps      *int     `json:"steps"`
}

func (d *desk) mouseDrag(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[mouseDragArgs](call)
	if err != nil {
		return nil, err
	}
	dur, steps, err := motionTiming(a.DurationMS, a.Steps, 500)
	if err != nil {
		return nil, err
	}
	win, to, _, err := d.prepare(ctx, call.Window, a.targetArgs, a.X, a.Y, "", nil)
	if err != nil {
		return nil, err
	}
	dl, err := d.deliveryFor(ctx, call, a.Delivery)
	if err != nil {
		return nil, err
	}
	held := d.holds.of(call.Session, dl.dev)
	if len(held) == 0 {
		return nil, invalid("this session holds no mouse button on the %s pointer; call mouse_button_down first (with the same delivery_mode); nothing was sent", dl.mode)
	}
	from, err := dl.dev.Pointer(ctx)
	if err != nil {
		return nil, refusal(err)
	}
	// While the button is held the events go to the window that got the press, but a
	// drag-and-drop source drops on the window under the pointer: every point is checked.
	path := x11.DragPath(from, to, steps)[1:]
	guards := []x11.Guard{d.pointerLands(call, win, dl, path...)}
	if err := precheck(ctx, guards...); err != nil {
		return nil, err
	}
	ev := map[string]any{"delivery": dl.mode}
	if s := dl.dev.Seat(); s != nil {
		ev["devices"] = s.Name()
	}
	if err := dl.dev.Glide(ctx, path, time.Duration(dur)*time.Millisecond, guards...); err != nil {
		if errors.Is(err, x11.ErrNothingHeld) {
			return nil, invalid("the button was released before the drag could start; call mouse_button_down first; nothing was sent")
		}
		return nil, err
	}
	// A window manager that grabbed the press may still hold the motions for a moment.
	_, _ = dl.dev.WaitPointerAt(ctx, to, 300*time.Millisecond) // verifyPointer reports where it is
	ok := d.verifyPointer(ctx, dl, to, win, ev)
	effect := tool.EffectConfirmed // the pointer position is the effect, and it was read back
	if landed, _ := ev["pointer_landed"].(bool); !landed {
		effect = tool.EffectSuspectedNoop
	}
	names := make([]string, len(held))
	for i, b := range held {
		names[i] = b.String()
	}
	return deviceResult(dl, fmt.Sprintf("dragged %v from (%d,%d) to (%d,%d), still held", names, from.X, from.Y, to.X, to.Y), effect, steps, ok, ev,
		map[string]any{"from": from, "to": to, "x": to.X, "y": to.Y, "held": names, "steps": steps, "duration_ms": dur}), nil
}

// parallelDragArgs are parallel_mouse_drag's arguments. Drags stay as decoded JSON: each
// item is read by dragItem.
type parallelDragArgs struct {
	targetArgs
	Drags []any `json:"drags"`
}

// dragItem is one parsed drag of parallel_mouse_drag.
type dragItem struct {
	button    x11.Button
	waypoints []x11.Point // root coordinates
	path      []x11.Point // what the pointer visits: the press at path[0], then one motion each
	duration  time.Duration
}

func (d *desk) parallelDrag(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[parallelDragArgs](call)
	if err != nil {
		return nil, err
	}
	if err := a.check(); err != nil {
		return nil, err
	}
	switch {
	case a.PID == nil:
		return nil, invalid("parallel_mouse_drag acts inside one window: pass pid and window_id (or a window target)")
	case a.Delivery == deliveryForeground:
		return nil, invalid("parallel_mouse_drag runs on temporary pointers of its own (background); delivery_mode \"foreground\" does not apply")
	case len(a.Drags) < minParallelDrags || len(a.Drags) > maxParallelDrags:
		return nil, invalid("drags has %d items: want %d–%d (use drag for a single one)", len(a.Drags), minParallelDrags, maxParallelDrags)
	}
	win, err := resolve(ctx, d.b, call.Window, a.targetArgs)
	if err != nil {
		return nil, err
	}
	sw, sh := d.b.ScreenSize()
	items := make([]dragItem, len(a.Drags))
	var all []x11.Point
	for i, raw := range a.Drags {
		if items[i], err = parseDragItem(i, raw, win, sw, sh); err != nil {
			return nil, err
		}
		all = append(all, items[i].path...)
	}
	cover := d.landsOn(call, win, all...)
	if err := precheck(ctx, cover); err != nil {
		return nil, err
	}
	if err := d.seats.usable(); err != nil {
		return nil, parallelUnavailable(err)
	}
	// One temporary master pair per drag, removed on every path out of here.
	label := "drag"
	if call.Session != nil {
		label = call.Session.Label + " drag"
	}
	seats := make([]*x11.Seat, 0, len(items))
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		for _, s := range seats {
			s.Close(cctx)
		}
	}()
	drags := make([]x11.ParallelDrag, len(items))
	for i, it := range items {
		s, err := d.b.OpenSeat(ctx, fmt.Sprintf("%s %d", label, i+1))
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, x11.ErrUnsupported):
			return nil, parallelUnavailable(err)
		case err != nil:
			return nil, refusal(err)
		}
		seats = append(seats, s)
		drags[i] = x11.ParallelDrag{Seat: s, Button: it.button, Path: it.path, Duration: it.duration}
	}
	motions, err := d.b.ParallelDrag(ctx, drags, cover)
	if err != nil {
		if motions > 0 || !isRefusal(err) {
			return nil, afterEffect(err, fmt.Sprintf("parallel drag sent %d motions", motions))
		}
		return nil, err
	}
	// Each temporary pointer is read back before it is removed.
	landed := true
	ends := make([]map[string]any, len(items))
	for i, s := range seats {
		want := items[i].path[len(items[i].path)-1]
		e := map[string]any{"devices": s.Name(), "button": items[i].button.String(), "from": items[i].path[0], "to": want, "motions": len(items[i].path) - 1}
		p, perr := s.Devices().WaitPointerAt(ctx, want, 300*time.Millisecond)
		if perr != nil {
			e["pointer_error"] = perr.Error()
			landed = false
		} else {
			e["pointer"] = p
			e["pointer_landed"] = p == want
			landed = landed && p == want
		}
		ends[i] = e
	}
	dl := &delivery{mode: deliveryBackground, route: routeSeat, dev: seats[0].Devices(), shared: call.Session != nil && !call.Session.OwnsDisplay, session: call.Session, tool: call.Name}
	ev := map[string]any{"delivery": dl.mode, "drags": ends, "pointer_landed": landed}
	return deviceResult(dl, fmt.Sprintf("ran %d drags at the same time in window 0x%x (%d motions)", len(items), win.ID, motions), inputEffect, motions, landed, ev,
		map[string]any{"drags": len(items), "window_id": win.ID}), nil
}

// parallelUnavailable is the refusal when master pointers cannot be created.
func parallelUnavailable(err error) error {
	return authz.Refuse(authz.CodeBackgroundUnavailable,
		"parallel_mouse_drag needs XInput2 master pointers, which this X server cannot give (%v); nothing was sent. "+
			"Run the drags one after the other with drag", err)
}

func isRefusal(err error) bool {
	var r *authz.Refusal
	return errors.As(err, &r)
}

// usable returns why sessions cannot get input devices of their own, or nil.
func (st *seatStore) usable() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.unusable
}

// parseDragItem reads drags[i]: a path or a straight segment, window-relative, each
// waypoint inside win.
func parseDragItem(i int, raw any, win *x11.Window, sw, sh int) (dragItem, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return dragItem{}, invalid("drags[%d] must be an object", i)
	}
	var it dragItem
	var button string
	steps, dur := 0, 500
	for k, v := range m {
		switch k {
		case "path", "from_x", "from_y", "to_x", "to_y":
		case "button":
			s, ok := v.(string)
			if !ok {
				return dragItem{}, invalid("drags[%d].button must be a string", i)
			}
			button = s
		case "duration_ms", "steps":
			f, ok := v.(float64)
			if !ok || f != math.Trunc(f) || math.Abs(f) > 1e9 {
				return dragItem{}, invalid("drags[%d].%s must be an integer", i, k)
			}
			if k == "steps" {
				steps = int(f)
			} else {
				dur = int(f)
			}
		case "fn", "x_from", "x_to", "samples":
			return dragItem{}, invalid("drags[%d].%s: function paths are not supported; give path [[x,y],…] or from_x/from_y/to_x/to_y", i, k)
		default:
			return dragItem{}, invalid("drags[%d]: unknown argument %q", i, k)
		}
	}
	if dur < 0 || dur > 10000 {
		return dragItem{}, invalid("drags[%d].duration_ms %d: want 0–10000", i, dur)
	}
	if _, given := m["steps"]; given && (steps < 1 || steps > maxParallelSteps) {
		return dragItem{}, invalid("drags[%d].steps %d: want 1–%d", i, steps, maxParallelSteps)
	}
	btn, err := x11.ParseButton(button)
	if err != nil {
		return dragItem{}, refusal(err)
	}
	it.button, it.duration = btn, time.Duration(dur)*time.Millisecond
	var local [][2]float64
	_, straight := m["from_x"]
	for _, k := range []string{"from_y", "to_x", "to_y"} {
		if _, ok := m[k]; ok {
			straight = true
		}
	}
	switch path, hasPath := m["path"]; {
	case hasPath && straight:
		return dragItem{}, invalid("drags[%d]: give path or from_x/from_y/to_x/to_y, not both", i)
	case hasPath:
		pts, ok := path.([]any)
		if !ok || len(pts) < 2 || len(pts) > maxDragPath {
			return dragItem{}, invalid("drags[%d].path must be an array of 2–%d [x,y] points", i, maxDragPath)
		}
		for j, p := range pts {
			xy, ok := p.([]any)
			var x, y float64
			var okx, oky bool
			if ok && len(xy) == 2 {
				x, okx = xy[0].(float64)
				y, oky = xy[1].(float64)
			}
			if !okx || !oky {
				return dragItem{}, invalid("drags[%d].path[%d] must be [x, y]", i, j)
			}
			local = append(local, [2]float64{x, y})
		}
	case straight:
		var xy [4]float64
		for j, k := range []string{"from_x", "from_y", "to_x", "to_y"} {
			f, ok := m[k].(float64)
			if !ok {
				return dragItem{}, invalid("drags[%d] needs from_x, from_y, to_x and to_y as numbers (or a path)", i)
			}
			xy[j] = f
		}
		local = [][2]float64{{xy[0], xy[1]}, {xy[2], xy[3]}}
	default:
		return dragItem{}, invalid("drags[%d] needs a path or from_x/from_y/to_x/to_y", i)
	}
	for j, p := range local {
		r, err := toRoot(win, "", sw, sh, &p[0], &p[1])
		if err != nil {
			var rf *authz.Refusal
			if errors.As(err, &rf) {
				return dragItem{}, authz.Refuse(rf.Code, "drags[%d] point %d: %s", i, j, rf.Message)
			}
			return dragItem{}, err
		}
		it.waypoints = append(it.waypoints, r)
	}
	if steps == 0 {
		steps = min(max(int(math.Round(pathLength(it.waypoints)/3)), len(it.waypoints)-1, 24), maxParallelSteps)
	}
	it.path = resample(it.waypoints, steps)
	return it, nil
}

// pathLength is the length of the polyline pts in pixels.
func pathLength(pts []x11.Point) float64 {
	var total float64
	for i := 1; i < len(pts); i++ {
		total += math.Hypot(float64(pts[i].X-pts[i-1].X), float64(pts[i].Y-pts[i-1].Y))
	}
	return total
}

// resample returns pts[0] and then steps points evenly spaced along the polyline pts by
// length, the last being the last of pts. Every point lies on a segment of pts.
func resample(pts []x11.Point, steps int) []x11.Point {
	out := make([]x11.Point, 0, steps+1)
	out = append(out, pts[0])
	cum := make([]float64, len(pts))
	for i := 1; i < len(pts); i++ {
		cum[i] = cum[i-1] + math.Hypot(float64(pts[i].X-pts[i-1].X), float64(pts[i].Y-pts[i-1].Y))
	}
	total := cum[len(cum)-1]
	seg := 1
	for s := 1; s < steps; s++ {
		at := total * float64(s) / float64(steps)
		for seg < len(pts)-1 && cum[seg] < at {
			seg++
		}
		a, b := pts[seg-1], pts[seg]
		t := 0.0
		if l := cum[seg] - cum[seg-1]; l > 0 {
			t = (at - cum[seg-1]) / l
		}
		out = append(out, x11.Point{X: int(math.Round(float64(a.X) + t*float64(b.X-a.X))), Y: int(math.Round(float64(a.Y) + t*float64(b.Y-a.Y)))})
	}
	return append(out, pts[len(pts)-1])
}
