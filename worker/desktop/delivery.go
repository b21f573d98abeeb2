package desktop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// How input reaches its target. A call names the delivery it wants (delivery_mode):
//
//   - background (the default on a display shared with a person): through the session's
//     own input devices, an XInput2 master pointer and keyboard pair (x11.Seat). The
//     person's pointer and keyboard focus never move; the target is not raised. Where the
//     pair cannot be created, or the input would land on the desktop background (a click
//     there moves the person's focus to the window manager), the call is refused with
//     background_unavailable, never delivered in the foreground instead.
//   - foreground: through the core devices after raising and focusing the target; on a
//     shared display the previously active window and the pointer position are put back
//     afterwards.
//
// On a display the session owns no person is there to disturb: both are allowed, and the
// default is the core devices (foreground). Naming background there still uses the
// session's own devices, where the server can create them.

// Routes and deliveries as results report them.
const (
	routeSeat = "xinput2" // the session's own master pair, driven through its XTEST slaves
	routeCore = "xtest"   // the core devices through XTEST

	deliveryBackground = "background"
	deliveryForeground = "foreground"
)

// delivery is how one call's input goes.
type delivery struct {
	mode  string // deliveryBackground or deliveryForeground, as delivered
	route string // routeSeat or routeCore
	dev   *x11.Devices
	// shared is true on a display the session does not own.
	shared bool
	// restore, for foreground delivery on a shared display, puts back the window that was
	// active and the pointer position; nil otherwise.
	restore func(context.Context)
	// personFocus, for background input to a window on a shared display, is the person's
	// focus before the call, and keep what gives it back after the input when a window
	// manager moved it (keepPersonFocus); both nil otherwise.
	personFocus *x11.Focus
	keep        func(context.Context, map[string]any)
	// backsBefore is how many times a watch had given the person's focus back before the
	// input (focusWatches.backs).
	backsBefore uint64
	// focusAhead, when not nil, gives the question of the person's focus that pointerReady
	// sends beside its checks (readFocusAhead), once sent.
	focusAhead chan *x11.FocusQuestion
	// session and tool are the call's (for the session's agent cursor).
	session *tool.Session
	tool    string
	// afterKeys, for keyboard input to a window, records that keys went to it (typedwin.go).
	afterKeys func()
	// pressed is set once background pointer presses were sent (settleClick), and seen
	// to what the wait for their replay last saw.
	pressed bool
	seen    x11.PointerSeen
	// landed is what the server said lay at the point of one-point pointer input when
	// the guard under the input lock last asked, right before the input; nil until then.
	landed *x11.TopLevel
}

// background reports whether input goes through the session's own devices.
func (dl *delivery) background() bool { return dl.dev.Seat() != nil }

// deliveryFor chooses the delivery of one call from its delivery_mode and the display.
func (d *desk) deliveryFor(ctx context.Context, call *tool.Call, asked string) (*delivery, error) {
	owned := call.Session == nil || call.Session.OwnsDisplay
	core := &delivery{mode: deliveryForeground, route: routeCore, dev: d.b.Core(), shared: !owned, session: call.Session, tool: call.Name}
	switch {
	case asked == deliveryForeground && !owned && call.Session != nil && !d.foreground.allowed(call.Session, callTarget(call), time.Now()):
		return nil, foregroundRequired(callWindow(call))
	case asked == deliveryForeground, asked == "" && owned:
		return core, nil
	case call.Session == nil:
		// A handler called without a session (tests) owns its display.
		return core, nil
	}
	seat, err := d.seats.get(ctx, d.b, call.Session)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if owned {
			return core, nil
		}
		return nil, authz.Refuse(authz.CodeBackgroundUnavailable,
			"this X server cannot give the session input devices of its own (%v); nothing was sent. "+
				"Use an element action (AT-SPI), or delivery_mode \"foreground\", which moves the person's pointer and keyboard focus", err)
	}
	return &delivery{mode: deliveryBackground, route: routeSeat, dev: seat.Devices(), shared: !owned, session: call.Session, tool: call.Name}, nil
}

// ready prepares delivery to win (nil: desktop scope or wherever the focus is) before the
// first event; nothing has been sent yet, so a failure is a refusal. Background delivery
// gives the session's keyboard the focus of win when keys follow (needFocus); foreground
// delivery brings win to the front (and records what to restore on a shared display).
func (d *desk) ready(ctx context.Context, call *tool.Call, dl *delivery, win *x11.Window, ev map[string]any, needFocus bool) error {
	ev["delivery"] = dl.mode
	if dl.background() {
		seat := dl.dev.Seat()
		ev["devices"] = seat.Name()
		if win != nil && d.launchedBy(call, win.PID) {
			if err := seat.Adopt(ctx, win.ID); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return refusal(err)
			}
		}
		if dl.shared && win != nil && (dl.focusAhead == nil || needFocus) {
			d.notePersonFocus(ctx, dl, win)
		}
		if win == nil || !needFocus {
			return nil
		}
		if err := dl.dev.Seat().Focus(ctx, win.ID); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return refusal(err)
		}
		ev["focus"] = fmt.Sprintf("session keyboard on 0x%x", win.ID)
		return nil
	}
	if dl.shared && win != nil {
		dl.restore = d.restorer(ctx, win)
	}
	return d.front(ctx, win, ev, needFocus)
}

// launchedBy reports whether the session launched process pid, or the process pid runs
// below (a sandbox, an app's helper), and the backend still holds that process (so the
// pid cannot have been reused).
func (d *desk) launchedBy(call *tool.Call, pid int) bool {
	if pid <= 0 || call.Session == nil {
		return false
	}
	root := call.Session.LaunchRoot(pid)
	return root != 0 && d.b.Launched(root)
}

// pointerReady chooses the delivery of pointer input at pts in win and prepares it. Before
// anything happens it runs the checks that the events land where they were authorized
// (and pre's, a further check of the call on the chosen delivery, when pre is not nil),
// then ready. It returns the delivery, also when a
// check refused (its caller may try accessibility instead), and the guards to run again
// right before the first event.
func (d *desk) pointerReady(ctx context.Context, call *tool.Call, asked string, win *x11.Window, ev map[string]any, needFocus bool, pre func(*delivery) x11.Guard, pts ...x11.Point) (*delivery, []x11.Guard, error) {
	dl, err := d.deliveryFor(ctx, call, asked)
	if err != nil {
		return nil, nil, err
	}
	guards := []x11.Guard{d.pointerLands(call, win, dl, pts...), d.windowManagerSettled()}
	checks := []x11.Guard{d.pointerLandsEarly(call, win, dl, pts...), guards[1]}
	if pre != nil {
		checks = append(checks, pre(dl))
	}
	if dl.background() && dl.shared && win != nil {
		dl.readFocusAhead(d.b)
	}
	if err := precheck(ctx, checks...); err != nil {
		dl.dropFocusAhead()
		return dl, nil, err
	}
	if err := d.ready(ctx, call, dl, win, ev, needFocus); err != nil {
		dl.dropFocusAhead()
		return dl, nil, err
	}
	if err := d.awaitTyped(ctx, win, ev); err != nil {
		dl.dropFocusAhead()
		return dl, nil, err
	}
	if dl.focusAhead != nil {
		// The question went out while the checks ran, before the guards' own on the same
		// connection: once they have their answers, its answer is usually in too. It is
		// read before the first event is sent, so it says where the focus was before.
		guards = append(guards, func(ctx context.Context) error {
			d.notePersonFocus(ctx, dl, win)
			return nil
		})
	}
	return dl, guards, nil
}

// notePersonFocus reads the person's focus before background input to win on a shared
// display (the question asked ahead, if any) and, when it is elsewhere, arranges for it to
// be kept there (keepPersonFocus). A focus that cannot be read is not kept.
func (d *desk) notePersonFocus(ctx context.Context, dl *delivery, win *x11.Window) {
	f, err := dl.inputFocus(ctx, d.b)
	if err != nil {
		return
	}
	if f.TopLevel == win.ID {
		// On win already: a manager moved it there after earlier input, and the watch
		// of that input has not given it back yet. This call gives it back to where the
		// watch would.
		before, ok := d.focusWatch.watched(win.ID)
		if !ok {
			return
		}
		f = before
	}
	dl.personFocus = &f
	dl.backsBefore, _ = d.focusWatch.backs()
	dl.keep = func(ctx context.Context, ev map[string]any) { d.keepPersonFocus(ctx, dl, win, ev) }
}

// readFocusAhead sends the question of the person's focus beside the checks that run
// before anything is sent, from a goroutine: sending costs about as much per request as a
// round trip's wait. Pointer input reads its answer in its last guard, under the input
// lock right before the first event; the guard before it asks the server on the same
// connection, so the answer costs no round trip of its own.
func (dl *delivery) readFocusAhead(b *x11.Backend) {
	ch := make(chan *x11.FocusQuestion, 1)
	go func() { ch <- b.AskInputFocus() }()
	dl.focusAhead = ch
}

// inputFocus returns the answer of the question asked ahead, or reads the focus.
func (dl *delivery) inputFocus(ctx context.Context, b *x11.Backend) (x11.Focus, error) {
	if dl.focusAhead == nil {
		return b.InputFocus(ctx)
	}
	q := <-dl.focusAhead
	dl.focusAhead = nil
	return q.Answer(ctx)
}

// dropFocusAhead drops the answer of a question asked ahead.
func (dl *delivery) dropFocusAhead() {
	if dl.focusAhead != nil {
		(<-dl.focusAhead).Discard()
		dl.focusAhead = nil
	}
}

// restorer records the active window and the core pointer position before foreground
// input to win, and returns what puts them back.
func (d *desk) restorer(ctx context.Context, win *x11.Window) func(context.Context) {
	prevPointer, perr := d.b.Core().Pointer(ctx)
	focus, ferr := d.b.InputFocus(ctx)
	return func(ctx context.Context) {
		if ferr == nil && focus.TopLevel != 0 && focus.TopLevel != win.ID {
			if _, _, err := d.b.Activate(ctx, focus.TopLevel); err != nil {
				d.log.Debug("foreground delivery: put back the active window", "window", focus.TopLevel, "err", err)
			}
		}
		if perr == nil {
			if err := d.b.Core().MoveTo(ctx, prevPointer); err != nil {
				d.log.Debug("foreground delivery: put back the pointer", "err", err)
			}
		}
	}
}

// finish runs after the input: it keeps the person's focus where background input found
// it, puts back what foreground delivery moved on a shared display, and records that in ev.
func (dl *delivery) finish(ctx context.Context, ev map[string]any) {
	if dl.afterKeys != nil {
		dl.afterKeys()
	}
	if dl.keep != nil {
		dl.keep(context.WithoutCancel(ctx), ev)
	}
	if dl.restore == nil {
		return
	}
	dl.restore(context.WithoutCancel(ctx))
	ev["restored"] = "previously active window and pointer position"
}

// inputFocusWatch bounds how long after background input the person's focus is watched.
const inputFocusWatch = 3 * time.Second

// focusWatchTick is how often a watch reads the person's focus: a move it finds is given
// back within a frame (16 ms at 60 Hz). A read is one round trip.
const focusWatchTick = 10 * time.Millisecond

// clientCatchUp bounds the wait, after a background click, for the clicked client to
// answer a ping before the person's focus is read back (keepPersonFocus). A client that
// answers later is left to watchFocus.
const clientCatchUp = 500 * time.Millisecond

// focusWatches are the windows watchFocus watches, one goroutine each.
type focusWatches struct {
	mu sync.Mutex // guards byWin
	// byWin maps a window to the person's focus to give back and the watch's end.
	byWin map[uint32]focusWatchState
	// moves is set once the person's focus was seen to move to a window the session gave
	// input to, by a call's read-back or by a watch. Some managers move it only after they
	// let a press through (i3 replays the press, then focuses), so the replay wait's focus
	// answer may come before the move: keepPersonFocus then asks the manager to catch up
	// before it reads the focus back.
	moves atomic.Bool
	// firstChecked is set by the first background click read back after the manager
	// caught up: that click tells whether the manager moves the focus on a click, before
	// any click has been seen to move it.
	firstChecked atomic.Bool
	// gaveBack counts the times a watch gave the person's focus back, and lastFrom is the
	// window it last gave it back from; guarded by mu.
	gaveBack uint64
	lastFrom uint32
	// giving serializes the watches' give-backs and the calls' read-backs, so that a call
	// reads the person's focus after a watch's give-back has settled, not between it and
	// the manager's answer to it. Taken before mu.
	giving sync.Mutex
}

// watched returns the person's focus a running watch of window id gives back.
func (cw *focusWatches) watched(id uint32) (x11.Focus, bool) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	st, ok := cw.byWin[id]
	return st.before, ok && time.Now().Before(st.until)
}

// backs returns how many times a watch gave the person's focus back, from any window, and
// the window it last did so from. A watch of one window also gives the focus back from
// another when its own window has gone.
func (cw *focusWatches) backs() (n uint64, lastFrom uint32) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.gaveBack, cw.lastFrom
}

type focusWatchState struct {
	before   x11.Focus
	win      x11.Window
	activate bool // GiveFocusBack's
	until    time.Time
	// seat is the session's pair whose keyboard may have win's focus; nil when none.
	seat *x11.Seat
}

// refocus, after the person's focus was given back from win, tells win's client again
// that the session's keyboard has its focus, when it has (x11.Seat.Refocus).
func refocus(ctx context.Context, d *desk, seat *x11.Seat, win uint32) {
	if seat == nil {
		return
	}
	if err := seat.Refocus(ctx, win); err != nil {
		d.log.Debug("refocus the session's keyboard", "window", win, "err", err)
	}
}

// keepPersonFocus runs after background input to win on a shared display. Window managers
// that focus on a press from any pointer (i3, fluxbox, kwin_x11, mutter) or that follow
// the session keyboard's focus move the person's focus to win; this reads the focus back,
// gives it back (GiveFocusBack) when the input moved it, reads it again, and records what
// it saw in ev: person_focus, and focus_restored when it had moved. watchFocus then
// keeps it for inputFocusWatch more, since some managers decide later.
func (d *desk) keepPersonFocus(ctx context.Context, dl *delivery, win *x11.Window, ev map[string]any) {
	before := *dl.personFocus
	defer d.watchFocus(before, win, true, dl.dev.Seat())
	d.focusWatch.giving.Lock()
	defer d.focusWatch.giving.Unlock()
	read := d.b.FocusWindow
	// A manager answers this question only after it has handled the press, or the focus
	// events of the session keyboard's focus; the focus is then read afresh
	// (FocusWindow). It is asked on the display's first click and, once the manager has
	// been seen to move the focus, after all input: about 0.3 ms more.
	caughtUp := false
	moves := d.focusWatch.moves.Load()
	if dl.pressed && !win.Pings && (moves || !d.focusWatch.firstChecked.Load()) || !dl.pressed && moves {
		caughtUp = d.b.WindowManagerCaughtUp(ctx, clientCatchUp) == nil
		d.focusWatch.firstChecked.Store(true)
	}
	switch {
	case dl.pressed && win.Pings:
		// A window manager that focuses on a click may hand the focus to the client
		// (WM_TAKE_FOCUS) before it lets the press through; the client then moves the
		// focus itself when it gets to that message. Its answer to a ping comes after.
		read = func(ctx context.Context) (uint32, error) { return d.b.FocusWhenCaughtUp(ctx, *win, clientCatchUp) }
	case dl.pressed && dl.seen.FocusRead && !caughtUp:
		// The wait for the press's replay read the focus with its last question, after
		// the window manager let the press through.
		read = func(context.Context) (uint32, error) { return dl.seen.Focus, nil }
	}
	w, err := read(ctx)
	if err == nil && w == before.Window {
		if n, from := d.focusWatch.backs(); n != dl.backsBefore {
			// A watch gave it back since the input began: it moved.
			d.focusWatch.moves.Store(true)
			ev["person_focus"] = givenBack(from, before.Window)
			ev["focus_restored"] = true
			return
		}
		ev["person_focus"] = "kept"
		return
	}
	f, ferr := d.b.InputFocus(ctx)
	if ferr != nil {
		ev["person_focus"] = "not read back: " + ferr.Error()
		return
	}
	if f.Window == before.Window {
		if err == nil {
			// It was on w a moment ago and is back: the manager or the client moved it
			// back (watches wait for this read-back: focusWatches.giving).
			d.focusWatch.moves.Store(true)
			ev["person_focus"] = fmt.Sprintf("the window manager moved it to 0x%x; it is back on 0x%x (read back)", w, before.Window)
			ev["focus_restored"] = true
			return
		}
		ev["person_focus"] = "kept"
		return
	}
	d.focusWatch.moves.Store(true)
	after, err, rerr := d.giveBack(ctx, before, true, win, dl.dev.Seat())
	restored := err == nil && rerr == nil && after.Window == before.Window
	ev["focus_restored"] = restored
	switch {
	case restored:
		ev["person_focus"] = givenBack(f.Window, before.Window)
	case err != nil:
		ev["person_focus"] = fmt.Sprintf("the window manager moved it to 0x%x; giving it back to 0x%x failed: %v", f.Window, before.Window, err)
	default:
		ev["person_focus"] = fmt.Sprintf("the window manager moved it to 0x%x; given back to 0x%x, but it is on 0x%x", f.Window, before.Window, after.Window)
	}
}

// giveBack gives the person's focus back (GiveFocusBack; activate is its) from win, tells
// win's client again that the session's keyboard has its focus (refocus, when seat is not
// nil) and reads the focus after: once the window manager, when it has been seen to move
// the focus, has caught up with the focus events that followed, and win's client, when it
// answers pings, has answered one. Telling the window its focus again can make the manager
// focus it again (i3, at those focus events) and the client take the focus it is offered
// (Qt): then the focus is given back once more, without telling the window. err is the
// give-back's, rerr the read's. The caller holds focusWatches.giving.
func (d *desk) giveBack(ctx context.Context, before x11.Focus, activate bool, win *x11.Window, seat *x11.Seat) (after x11.Focus, err, rerr error) {
	err = d.b.GiveFocusBack(ctx, before, activate)
	refocus(ctx, d, seat, win.ID)
	if d.focusWatch.moves.Load() {
		d.b.WindowManagerCaughtUp(ctx, clientCatchUp)
		if win.Pings {
			d.b.FocusWhenCaughtUp(ctx, *win, clientCatchUp)
		}
	}
	after, rerr = d.b.InputFocus(ctx)
	if err == nil && rerr == nil && after.Window != before.Window {
		err = d.b.GiveFocusBack(ctx, before, activate)
		after, rerr = d.b.InputFocus(ctx)
	}
	return after, err, rerr
}

// givenBack is person_focus for a focus the window manager moved to window from and that
// was given back to window to, as read back.
func givenBack(from, to uint32) string {
	return fmt.Sprintf("the window manager moved it to 0x%x; given back to 0x%x (read back)", from, to)
}

// watchFocus, after background input into win on a shared display, gives the person their
// focus back if within inputFocusWatch it moves to win (a window manager that decides late, or
// that follows the session keyboard's focus at its next event), or moves anywhere when win
// goes away (a manager that is not MPX-aware believes the window the session's keyboard
// focused is focused, and when it closes — Return in a dialog, "exit" in a terminal — it
// hands the core focus to another window). Focus the person moves to another window of
// their own is left alone. One goroutine watches a window; further input extends its
// watch. activate is GiveFocusBack's: false after a launch, whose new window stays on top.
// seat, when not nil, is the session's pair: its keyboard's focus on win is told to win's
// client again after a give-back (refocus). It ends with the watch or the backend.
func (d *desk) watchFocus(before x11.Focus, win *x11.Window, activate bool, seat *x11.Seat) {
	cw := &d.focusWatch
	cw.mu.Lock()
	_, running := cw.byWin[win.ID]
	if cw.byWin == nil {
		cw.byWin = map[uint32]focusWatchState{}
	}
	cw.byWin[win.ID] = focusWatchState{before: before, win: *win, activate: activate, until: time.Now().Add(inputFocusWatch), seat: seat}
	cw.mu.Unlock()
	if !running {
		go d.focusWatchLoop(win.ID)
	}
}

func (d *desk) focusWatchLoop(id uint32) {
	cw := &d.focusWatch
	state := func() (focusWatchState, bool) {
		cw.mu.Lock()
		defer cw.mu.Unlock()
		st := cw.byWin[id]
		if time.Now().After(st.until) {
			delete(cw.byWin, id)
			return st, false
		}
		return st, true
	}
	defer func() {
		cw.mu.Lock()
		delete(cw.byWin, id)
		cw.mu.Unlock()
	}()
	ctx := context.Background()
	tick := time.NewTicker(focusWatchTick)
	defer tick.Stop()
	for {
		select {
		case <-d.b.Done():
			return
		case <-tick.C:
		}
		st, live := state()
		if !live {
			return
		}
		if w, err := d.b.FocusWindow(ctx); err != nil || w == st.before.Window {
			if err != nil {
				return
			}
			continue
		}
		if d.watchGiveBack(ctx, id, st) {
			return
		}
	}
}

// watchGiveBack is one give-back of a watch of window id, whose state is st, after it
// found the person's focus elsewhere: under focusWatches.giving, it reads the focus again
// and gives it back when it is on id (or id's process), or anywhere once id has gone. It
// reports whether the watch ends.
func (d *desk) watchGiveBack(ctx context.Context, id uint32, st focusWatchState) (end bool) {
	cw := &d.focusWatch
	cw.giving.Lock()
	defer cw.giving.Unlock()
	f, err := d.b.InputFocus(ctx)
	if err != nil {
		return true
	}
	if f.Window == st.before.Window {
		return false // a call gave it back meanwhile
	}
	gone := false
	if w, err := d.b.Window(ctx, id); err != nil || !w.Mapped {
		gone = true
	}
	onTarget := f.TopLevel == id || (st.win.PID > 0 && f.PID == st.win.PID)
	if !gone && !onTarget {
		return false // the person focused something else
	}
	if !gone {
		cw.moves.Store(true)
	}
	cw.mu.Lock()
	cw.gaveBack++
	cw.lastFrom = f.Window
	cw.mu.Unlock()
	var seat *x11.Seat
	if !gone {
		seat = st.seat
	}
	win := st.win
	if _, err, _ := d.giveBack(ctx, st.before, st.activate, &win, seat); err != nil {
		d.log.Debug("give the person's focus back", "window", st.before.Window, "err", err)
	} else {
		d.log.Debug("gave the person's focus back", "from", f.Window, "to", st.before.Window, "target_gone", gone)
	}
	return gone
}

// click sends a click through dl, to be followed by settleClick. Through the session's own
// pointer it does not wait for the server to process it: settleClick's first question
// does.
func (dl *delivery) click(ctx context.Context, p x11.Point, btn x11.Button, count int, mods []string, guards ...x11.Guard) error {
	if dl.background() {
		return dl.dev.ClickUnsynced(ctx, p, btn, count, mods, guards...)
	}
	return dl.dev.Click(ctx, p, btn, count, mods, guards...)
}

// settleClick waits, after background pointer presses, until the window manager has let
// go of the session's pointer (it grabs a click to focus on it and replays it), so that
// keys sent next do not overtake the press. A client that still holds the press in a
// synchronous grab after clickReplayWait has not let it reach the window: the click was
// sent, its effect is unknown, and settleClick says so in an error. A grab that does not
// hold events (a menu the click opened) is waited for briefly, as a matter of course.
//
// It returns the pointer as the wait last saw it (not Valid through the core pointer, which
// is not waited for).
func settleClick(ctx context.Context, dl *delivery, p x11.Point) (x11.PointerSeen, error) {
	if !dl.background() {
		return x11.PointerSeen{}, nil
	}
	dl.pressed = true
	seen, err := dl.dev.WaitPointerReplayed(ctx, clickGrabWait, clickReplayWait)
	dl.seen = seen
	switch {
	case errors.Is(err, x11.ErrPointerFrozen):
		return seen, fmt.Errorf("the press at (%d,%d) was sent, but another client (the window manager, grabbing clicks to focus) still holds it (%v): "+
			"whether and when it reaches the window is unknown; look before acting again", p.X, p.Y, err)
	case err != nil && ctx.Err() != nil:
		return seen, ctx.Err()
	case err != nil && !errors.Is(err, x11.ErrTimeout):
		// The click was written without waiting for the server (ClickUnsynced): this
		// wait was the first to ask it anything, and it could not.
		return seen, fmt.Errorf("the click at (%d,%d) was sent, but the X server could not be asked whether it was processed: %w", p.X, p.Y, err)
	}
	return seen, nil
}

// clickGrabWait bounds the wait for another client's grab of the session's pointer after
// a click; clickReplayWait the wait for a grab that holds its events (see settleClick).
const (
	clickGrabWait   = 200 * time.Millisecond
	clickReplayWait = 3 * time.Second
)

// seatStore holds each session's input devices, created on the session's first background
// input and removed when the session ends.
type seatStore struct {
	mu       sync.Mutex // guards byS; held while a pair is created
	byS      map[*tool.Session]*x11.Seat
	unusable error // set once the server refused to create a pair: it will not later
}

func newSeatStore() *seatStore { return &seatStore{byS: map[*tool.Session]*x11.Seat{}} }

// get returns s's pair, creating it on first use.
func (st *seatStore) get(ctx context.Context, b *x11.Backend, s *tool.Session) (*x11.Seat, error) {
	st.mu.Lock()
	if seat, ok := st.byS[s]; ok {
		st.mu.Unlock()
		return seat, nil
	}
	if st.unusable != nil {
		st.mu.Unlock()
		return nil, st.unusable
	}
	seat, err := b.OpenSeat(ctx, s.Label)
	if err != nil {
		if errors.Is(err, x11.ErrUnsupported) {
			st.unusable = err
		}
		st.mu.Unlock()
		return nil, err
	}
	st.byS[s] = seat
	st.mu.Unlock()
	// Registered unlocked: on a session that already ended it runs at once.
	s.OnEnd(func() {
		st.mu.Lock()
		delete(st.byS, s)
		st.mu.Unlock()
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		seat.Close(cctx)
	})
	return seat, nil
}

// of returns s's pair, or nil when it has none.
func (st *seatStore) of(s *tool.Session) *x11.Seat {
	if s == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.byS[s]
}
