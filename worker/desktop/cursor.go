package desktop

import (
	"context"
	"errors"
	"fmt"
	"github.com/cua-host/cua-host/authz"
	"sync"
	"time"

	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// The agent cursor: a cursor of the session's own on the display, distinct from the
// person's, that shows where the session's pointer is (set_agent_cursor_enabled,
// set_agent_cursor_theme, set_agent_cursor_motion, get_agent_cursor_state). It is drawn
// one of two ways:
//
//   - the session has its own master pointer (background delivery, x11.Seat): the server
//     already draws that pointer; it gets the theme's cursor (XIChangeCursor on the root).
//     The person's core pointer keeps its own;
//   - the session drives the core devices: an overlay window drawn with the theme follows
//     the pointer after each of the session's pointer actions, gliding per the motion
//     settings. Its input shape is empty, so every click passes through it, and it
//     belongs to the worker's own process, which no tool may target, click or capture.
//
// A session's cursor is off until it turns it on. It goes away when the session ends,
// and with the worker.

// Where the agent cursor is drawn, as get_agent_cursor_state's details say.
const (
	cursorRouteNone    = "none"
	cursorRouteOverlay = "overlay"
	cursorRouteSeat    = "session_pointer"
)

// glideFrame is the time between two positions of a glide.
const glideFrame = 16 * time.Millisecond

// cursorStore holds each session's agent cursor, created on the session's first call of
// an agent-cursor tool.
type cursorStore struct {
	mu  sync.Mutex // guards byS
	byS map[*tool.Session]*agentCursor
}

func newCursorStore() *cursorStore { return &cursorStore{byS: map[*tool.Session]*agentCursor{}} }

// get returns s's cursor, creating it (off) on first use.
func (st *cursorStore) get(d *desk, s *tool.Session) *agentCursor {
	st.mu.Lock()
	if c, ok := st.byS[s]; ok {
		st.mu.Unlock()
		return c
	}
	c := &agentCursor{d: d, label: s.Label, owns: s.OwnsDisplay, theme: defaultTheme, reduced: "auto",
		motion: defaultMotion, requested: "idle", kick: make(chan struct{}, 1), stop: make(chan struct{})}
	st.byS[s] = c
	st.mu.Unlock()
	// Registered unlocked: on a session that already ended it runs at once.
	s.OnEnd(func() {
		st.mu.Lock()
		delete(st.byS, s)
		st.mu.Unlock()
		c.close()
	})
	return c
}

// of returns s's cursor, or nil when it has none.
func (st *cursorStore) of(s *tool.Session) *agentCursor {
	if s == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.byS[s]
}

// agentCursor is one session's agent cursor.
type agentCursor struct {
	d     *desk
	label string
	owns  bool // the session owns the display: the core pointer is its own

	// mu guards the fields below, and orders the X requests that draw the cursor.
	mu        sync.Mutex
	enabled   bool
	theme     string
	reduced   string // reduced_motion: auto, on or off
	motion    cursorMotion
	pos       x11.Point // the session's pointer after its last pointer action
	hasPos    bool
	requested string // the last pointer action's kind (visual_state)
	frames    uint64 // overlay positions drawn
	preempted uint64 // glides cut short by a newer position
	ac        *x11.AgentCursor
	acErr     error  // why ac could not be created; retried on the next need
	seatPtr   uint16 // the master pointer showing the theme, 0 for none
	// The overlay's glide: from → to, started at glideAt; gliding while it runs.
	gliding        bool
	from, to, drew x11.Point
	glideAt        time.Time
	lastMove       time.Time // when the overlay last moved (idle_hide_ms)
	idleHidden     bool      // the overlay was hidden for being idle
	running        bool      // the animation goroutine runs
	ended          bool

	kick chan struct{} // wakes the animation goroutine
	stop chan struct{} // closed when the session ends
	wg   sync.WaitGroup
}

// reducedMotionLocked reports whether glides are skipped: reduced_motion "on". "auto" follows
// no desktop preference on X11 (there is none cua-host reads), so it glides.
func (c *agentCursor) reducedMotionLocked() bool { return c.reduced == "on" }

// imageLocked is the current theme's artwork for this session.
func (c *agentCursor) imageLocked() x11.CursorImage {
	t, _ := themeByID(c.theme)
	return t.image(c.label)
}

// ensureLocked creates the x11 agent cursor when it does not exist yet.
func (c *agentCursor) ensureLocked(ctx context.Context) (*x11.AgentCursor, error) {
	if c.ac != nil {
		return c.ac, nil
	}
	ac, err := c.d.b.NewAgentCursor(ctx, fmt.Sprintf("cua-host agent cursor %s", c.label), c.imageLocked())
	if err != nil {
		c.acErr = err
		return nil, err
	}
	c.ac, c.acErr = ac, nil
	return ac, nil
}

// actionKind is the visual_state action of pointer tool name.
func actionKind(name string) string {
	switch name {
	case "click", "double_click", "right_click", "mouse_button_down", "mouse_button_up":
		return "click"
	case "drag":
		return "drag"
	case "scroll":
		return "scroll"
	}
	return "idle"
}

// followCursor moves the session's cursor to p, where its pointer is after the pointer action
// dl delivered. It never fails the action: a cursor that cannot be drawn is reported by
// get_agent_cursor_state.
func (d *desk) followCursor(ctx context.Context, dl *delivery, p x11.Point) {
	c := d.cursors.of(dl.session)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.pos, c.hasPos = p, true
	c.requested = actionKind(dl.tool)
	if !c.enabled {
		return
	}
	if seat := dl.dev.Seat(); seat != nil {
		ptr, _ := seat.IDs()
		if err := c.onSeatLocked(ctx, ptr); err != nil {
			d.log.Debug("agent cursor on the session's pointer", "session", c.label, "err", err)
		}
		return
	}
	if c.seatPtr != 0 {
		return // the session's own pointer shows the cursor; the overlay is not used
	}
	if err := c.overlayToLocked(ctx, p); err != nil {
		d.log.Debug("agent cursor overlay", "session", c.label, "err", err)
	}
}

// onSeatLocked shows the theme on master pointer ptr and hides the overlay.
func (c *agentCursor) onSeatLocked(ctx context.Context, ptr uint16) error {
	ac, err := c.ensureLocked(ctx)
	if err != nil {
		return err
	}
	if c.seatPtr != ptr {
		if err := ac.ShowOnPointer(ctx, ptr); err != nil {
			return err
		}
		c.seatPtr = ptr
	}
	c.gliding = false
	return ac.Hide(ctx)
}

// overlayToLocked moves the overlay to p: at once when it is not shown yet, glides are off
// or motion is reduced; else it glides there from where it is drawn.
func (c *agentCursor) overlayToLocked(ctx context.Context, p x11.Point) error {
	ac, err := c.ensureLocked(ctx)
	if err != nil {
		return err
	}
	c.lastMove = time.Now()
	c.idleHidden = false
	_, shown := ac.Shown()
	if !shown || c.reducedMotionLocked() || c.motion.GlideDurationMS <= 0 || c.drew == p {
		if c.gliding {
			c.preempted++
		}
		c.gliding = false
		if err := ac.MoveTo(ctx, p); err != nil {
			return err
		}
		c.drew = p
		c.frames++
		c.wakeLocked()
		return nil
	}
	if c.gliding {
		c.preempted++
	}
	c.gliding, c.from, c.to, c.glideAt = true, c.drew, p, time.Now()
	c.wakeLocked()
	return nil
}

// wakeLocked starts the animation goroutine when there is something to animate (a glide,
// an idle overlay to hide), or wakes it.
func (c *agentCursor) wakeLocked() {
	if c.running {
		select {
		case c.kick <- struct{}{}:
		default:
		}
		return
	}
	if _, ok := c.nextLocked(); !ok {
		return
	}
	c.running = true
	c.wg.Add(1)
	go c.animate()
}

// nextLocked returns when the animation has something to do next, and whether it has.
func (c *agentCursor) nextLocked() (time.Time, bool) {
	switch {
	case c.ended || !c.enabled || c.ac == nil:
		return time.Time{}, false
	case c.gliding:
		return time.Now().Add(glideFrame), true
	}
	if _, shown := c.ac.Shown(); shown && c.motion.IdleHideMS > 0 {
		return c.lastMove.Add(time.Duration(c.motion.IdleHideMS * float64(time.Millisecond))), true
	}
	return time.Time{}, false
}

// animate draws glides frame by frame and hides an idle overlay, until there is nothing
// left to do, the session ends or the backend closes.
func (c *agentCursor) animate() {
	defer c.wg.Done()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		c.mu.Lock()
		at, ok := c.nextLocked()
		if !ok {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		timer.Reset(time.Until(at))
		select {
		case <-c.stop:
			return
		case <-c.d.b.Done():
			return
		case <-c.kick:
			continue
		case <-timer.C:
		}
		c.mu.Lock()
		c.stepLocked()
		c.mu.Unlock()
	}
}

// stepLocked draws the glide's next position, or hides the overlay once it has been idle
// for idle_hide_ms.
func (c *agentCursor) stepLocked() {
	if c.ended || !c.enabled || c.ac == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if c.gliding {
		dur := time.Duration(c.motion.GlideDurationMS * float64(time.Millisecond))
		t := float64(time.Since(c.glideAt)) / float64(dur)
		p := c.motion.glidePoint(c.from, c.to, t)
		if t >= 1 {
			p, c.gliding = c.to, false
			c.lastMove = time.Now()
		}
		if err := c.ac.MoveTo(ctx, p); err != nil {
			c.gliding = false
			c.d.log.Debug("agent cursor glide", "session", c.label, "err", err)
			return
		}
		c.drew = p
		c.frames++
		return
	}
	idle := time.Duration(c.motion.IdleHideMS * float64(time.Millisecond))
	if _, shown := c.ac.Shown(); shown && idle > 0 && time.Since(c.lastMove) >= idle {
		if err := c.ac.Hide(ctx); err == nil {
			c.idleHidden = true
		}
	}
}

// setEnabled turns the cursor on or off. On: where the session has its own pointer, that
// pointer gets the theme; else, once the session's pointer position is known (after its
// first pointer action, or at once on a display the session owns, whose core pointer is
// its own), the overlay is shown there. Off: the overlay is unmapped and the session's
// pointer gets the default cursor back.
func (c *agentCursor) setEnabled(ctx context.Context, on bool, seat *x11.Seat) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enabled = on
	if !on {
		c.gliding = false
		var first error
		if c.ac != nil {
			first = c.ac.Hide(ctx)
			if c.seatPtr != 0 {
				if err := c.ac.RestorePointer(ctx, c.seatPtr); err != nil && first == nil {
					first = err
				}
			}
		}
		c.seatPtr = 0
		return first
	}
	if seat != nil {
		ptr, _ := seat.IDs()
		return c.onSeatLocked(ctx, ptr)
	}
	if !c.hasPos && c.owns {
		p, err := c.d.b.Core().Pointer(ctx)
		if err != nil {
			return err
		}
		c.pos, c.hasPos = p, true
	}
	if !c.hasPos {
		_, err := c.ensureLocked(ctx) // drawn after the session's first pointer action
		return err
	}
	c.drew = c.pos // no glide into place
	return c.overlayToLocked(ctx, c.pos)
}

// setTheme selects theme id (installed) and reduced motion, and redraws.
func (c *agentCursor) setTheme(ctx context.Context, id, reduced string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.theme, c.reduced = id, reduced
	if c.reducedMotionLocked() && c.gliding {
		c.gliding = false
		c.preempted++
		if c.ac != nil {
			if err := c.ac.MoveTo(ctx, c.to); err != nil {
				return err
			}
			c.drew = c.to
			c.frames++
		}
	}
	if c.ac == nil {
		return nil
	}
	return c.ac.SetImage(ctx, c.imageLocked())
}

// setMotion replaces the motion settings.
func (c *agentCursor) setMotion(m cursorMotion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.motion = m
	c.wakeLocked()
}

// close stops the animation and removes the overlay and the session pointer's theme.
func (c *agentCursor) close() {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	close(c.stop)
	c.mu.Unlock()
	c.wg.Wait()
	c.mu.Lock()
	ac := c.ac
	c.ac = nil
	c.mu.Unlock()
	if ac != nil {
		ac.Close()
	}
}

// cursorState is get_agent_cursor_state's structured result, in the contract's shape.
type cursorState struct {
	Session     string            `json:"session"`
	Enabled     bool              `json:"enabled"`
	Position    cursorPosition    `json:"position"`
	Theme       cursorThemeState  `json:"theme"`
	VisualState cursorVisualState `json:"visual_state"`
	Motion      cursorMotion      `json:"motion"`
}

type cursorPosition struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type cursorThemeState struct {
	ID            string  `json:"id"`
	Version       string  `json:"version"`
	Profile       string  `json:"profile"`
	ReducedMotion string  `json:"reduced_motion"`
	Fallback      *string `json:"fallback"`
}

type cursorVisualState struct {
	RequestedAction string   `json:"requested_action"`
	ResolvedAction  string   `json:"resolved_action"`
	Modifiers       []string `json:"modifiers"`
	Phase           string   `json:"phase"`
	Frame           uint64   `json:"frame"`
	PreemptedCount  uint64   `json:"preempted_count"`
}

func (c *agentCursor) themeStateLocked() cursorThemeState {
	t, _ := themeByID(c.theme)
	return cursorThemeState{ID: t.id, Version: t.version, Profile: themeProfile, ReducedMotion: c.reduced}
}

// state reads the cursor's state; seat is the session's own devices, or nil.
func (c *agentCursor) state(ctx context.Context, session string, seat *x11.Seat) (cursorState, map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	details := map[string]any{"session_label": c.label, "reduced_motion_active": c.reducedMotionLocked()}
	pos, source := c.pos, "last_pointer_action"
	switch {
	case seat != nil:
		if p, err := seat.Devices().Pointer(ctx); err == nil {
			pos, source = p, "session_pointer"
		}
	case !c.hasPos:
		if p, err := c.d.b.Core().Pointer(ctx); err == nil {
			pos, source = p, "core_pointer"
		}
	}
	details["position_source"] = source
	route, visible, phase := cursorRouteNone, false, "hidden"
	switch {
	case !c.enabled:
	case c.seatPtr != 0:
		route, visible, phase = cursorRouteSeat, true, "resting"
		details["pointer_device"] = c.seatPtr
	case c.ac != nil:
		route = cursorRouteOverlay
		_, visible = c.ac.Shown()
		switch {
		case c.gliding:
			phase = "gliding"
		case visible:
			phase = "resting"
		case c.idleHidden:
			details["hidden_reason"] = "idle for idle_hide_ms"
		default:
			details["hidden_reason"] = "shown after the session's next pointer action"
		}
	case c.acErr != nil:
		details["hidden_reason"] = c.acErr.Error()
	}
	if c.ac != nil {
		details["overlay_window"] = c.ac.Window()
	}
	details["route"], details["visible"] = route, visible
	return cursorState{
		Session: session, Enabled: c.enabled,
		Position: cursorPosition{X: float64(pos.X), Y: float64(pos.Y)},
		Theme:    c.themeStateLocked(),
		VisualState: cursorVisualState{
			RequestedAction: c.requested, ResolvedAction: "idle", Modifiers: []string{},
			Phase: phase, Frame: c.frames, PreemptedCount: c.preempted,
		},
		Motion: c.motion,
	}, details
}

// Tools.

func (d *desk) cursorSpecs() []spec {
	num := func(desc string) prop { return prop{"type": []string{"number", "null"}, "description": desc} }
	return []spec{
		{name: "set_agent_cursor_enabled", description: "Show or hide the session's agent cursor: a cursor distinct from the person's that follows the session's pointer " +
			"(its own pointer gets the theme's cursor; with the core pointer, a click-through overlay follows each pointer action). Off by default.",
			schema: schema([]string{"session", "enabled"}, map[string]prop{"enabled": boolProp("true shows the agent cursor, false hides it.")}), handler: d.setCursorEnabled, args: tool.NewArgs[cursorEnabledArgs]},
		{name: "set_agent_cursor_motion", description: "Set how the session's agent cursor overlay moves (only the fields given; null keeps a value): glide duration and path, idle hiding.",
			schema: schema([]string{"session"}, map[string]prop{
				"start_handle":         num("Glide path: first handle, fraction of the way (0–1)."),
				"end_handle":           num("Glide path: second handle, fraction of the way back from the end (0–1)."),
				"arc_size":             num("Glide path: sideways bulge, fraction of the distance (0–1)."),
				"arc_flow":             num("Glide path: bulge towards the start (-1) or the end (1)."),
				"spring":               num("Kept and reported; no effect on X11 (0–1)."),
				"glide_duration_ms":    num("Glide time in ms (0–2000; 0 jumps)."),
				"dwell_after_click_ms": num("Kept and reported; no effect on X11 (0–5000)."),
				"idle_hide_ms":         num("Hide the overlay after this many ms without a pointer action (0 never, up to 600000)."),
				"turn_radius":          num("Kept and reported; no effect on X11 (0–1000)."),
			}), handler: d.setCursorMotion, args: tool.NewArgs[motionArgs]},
		{name: "set_agent_cursor_theme", description: "Select an installed theme for the session's agent cursor (" + themeIDs() + ") and reduced motion (on: no glides).",
			schema: schema([]string{"session", "theme_id"}, map[string]prop{
				"theme_id":       prop{"type": "string", "minLength": 1, "maxLength": 200, "description": "Installed theme id: " + themeIDs() + "."},
				"reduced_motion": prop{"type": "string", "enum": []string{"auto", "on", "off"}, "default": "auto", "description": "on: the overlay jumps instead of gliding; auto and off glide."},
			}), handler: d.setCursorTheme, args: tool.NewArgs[cursorThemeArgs]},
		{name: "get_agent_cursor_state", description: "Return the session's agent cursor: enabled, position, theme, visual state and motion.",
			schema: schema([]string{"session"}, nil), handler: d.cursorState, args: tool.NewArgs[cursorStateArgs]},
	}
}

// cursorFor returns the calling session's cursor after checking the session argument.
func (d *desk) cursorFor(call *tool.Call, session *string) (*agentCursor, error) {
	if session == nil {
		return nil, invalid("session is required (a label; the cursor is always the calling session's)")
	}
	if call.Session == nil {
		return nil, invalid("the agent cursor belongs to a session; this call has none")
	}
	return d.cursors.get(d, call.Session), nil
}

// cursorRefusal maps a failure to draw the cursor to a refusal; the setting is kept.
func cursorRefusal(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return refusal(err)
}

type cursorEnabledArgs struct {
	Session *string `json:"session"`
	Enabled *bool   `json:"enabled"`
}

func (d *desk) setCursorEnabled(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[cursorEnabledArgs](call)
	if err != nil {
		return nil, err
	}
	if a.Enabled == nil {
		return nil, invalid("enabled is required (true or false)")
	}
	c, err := d.cursorFor(call, a.Session)
	if err != nil {
		return nil, err
	}
	if err := c.setEnabled(ctx, *a.Enabled, d.seats.of(call.Session)); err != nil {
		return nil, cursorRefusal(err)
	}
	_, details := c.state(ctx, *a.Session, d.seats.of(call.Session))
	word := "hidden"
	if *a.Enabled {
		word = "shown"
	}
	r := tool.TextResult(fmt.Sprintf("agent cursor %s (route %v)", word, details["route"]),
		map[string]any{"session": *a.Session, "enabled": *a.Enabled})
	r.Details = details
	return r, nil
}

func (d *desk) setCursorMotion(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[motionArgs](call)
	if err != nil {
		return nil, err
	}
	c, err := d.cursorFor(call, a.Session)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	m, err := a.apply(c.motion)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c.setMotion(m)
	r := tool.TextResult(fmt.Sprintf("agent cursor motion: glide %vms, idle hide %vms", m.GlideDurationMS, m.IdleHideMS),
		map[string]any{"session": *a.Session, "motion": m})
	r.Details = map[string]any{"session_label": c.label, "applied": []string{"start_handle", "end_handle", "arc_size", "arc_flow", "glide_duration_ms", "idle_hide_ms"},
		"kept_only": []string{"spring", "dwell_after_click_ms", "turn_radius"}}
	return r, nil
}

type cursorThemeArgs struct {
	Session       *string `json:"session"`
	ThemeID       string  `json:"theme_id"`
	ReducedMotion *string `json:"reduced_motion"`
}

func (d *desk) setCursorTheme(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[cursorThemeArgs](call)
	if err != nil {
		return nil, err
	}
	if a.ThemeID == "" || len(a.ThemeID) > 200 {
		return nil, invalid("theme_id is required (1–200 characters); installed themes: %s", themeIDs())
	}
	if a.ThemeID == "default" {
		a.ThemeID = themes[0].id // the name a caller uses for "whatever the default is"
	}
	if _, ok := themeByID(a.ThemeID); !ok {
		// A well-formed request for a theme this host does not have: not a malformed call.
		return nil, authz.Refuse(authz.CodeUnsupported, "theme_id %q is not installed; installed themes: default (%s), %s", a.ThemeID, themes[0].id, themeIDs())
	}
	reduced := "auto"
	if a.ReducedMotion != nil {
		reduced = *a.ReducedMotion
	}
	switch reduced {
	case "auto", "on", "off":
	default:
		return nil, invalid("reduced_motion %q: want auto, on or off", reduced)
	}
	c, err := d.cursorFor(call, a.Session)
	if err != nil {
		return nil, err
	}
	if err := c.setTheme(ctx, a.ThemeID, reduced); err != nil {
		return nil, cursorRefusal(err)
	}
	c.mu.Lock()
	ts := c.themeStateLocked()
	c.mu.Unlock()
	r := tool.TextResult(fmt.Sprintf("agent cursor theme %s, reduced motion %s", ts.ID, ts.ReducedMotion),
		map[string]any{"session": *a.Session, "theme": ts})
	r.Details = map[string]any{"session_label": c.label, "installed_themes": themeIDs()}
	return r, nil
}

// cursorStateArgs are get_agent_cursor_state's arguments.
type cursorStateArgs struct {
	Session *string `json:"session"`
}

func (d *desk) cursorState(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[cursorStateArgs](call)
	if err != nil {
		return nil, err
	}
	c, err := d.cursorFor(call, a.Session)
	if err != nil {
		return nil, err
	}
	st, details := c.state(ctx, *a.Session, d.seats.of(call.Session))
	text := fmt.Sprintf("agent cursor enabled %v at (%v,%v), theme %s, route %v, visible %v",
		st.Enabled, st.Position.X, st.Position.Y, st.Theme.ID, details["route"], details["visible"])
	r := tool.TextResult(text, st)
	r.Details = details
	return r, nil
}
