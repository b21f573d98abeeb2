package display

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// NestedOptions make Start run the display as a window on the person's display: Xephyr, a
// complete X server of its own (its own cookie, screen, window manager and buses) that
// draws into a window on Parent and turns the person's input there into input on it.
// Only Xephyr and this process are clients of Parent; nothing else Start runs, and no
// program of the display, is given Parent's cookie.
type NestedOptions struct {
	// Parent is the person's display, ":N" (a local display).
	Parent string
	// ParentXAuthority is the Xauthority file with Parent's cookie, used by Xephyr and by
	// this process's own connection; empty means no cookie (a server without access
	// control).
	ParentXAuthority string
	// Title is the window's title on Parent; empty means "cua-host: nested display".
	Title string
	// OnClose, when set, is called (from the display's own goroutine; it must not block)
	// when the person asks their window manager to close the window. The window stays
	// until Close: closing it is the caller's decision. Nil ignores the request.
	OnClose func()
}

// xephyrInstall says how to get Xephyr where it is missing.
const xephyrInstall = "Debian and Ubuntu: apt install xserver-xephyr"

// FindXephyr returns the path of Xephyr on path (empty: this process's PATH), or an error
// wrapping ErrNotFound that says how to install it.
func FindXephyr(path string) (string, error) {
	if path == "" {
		path = os.Getenv("PATH")
	}
	bin, err := lookPath(path, "Xephyr")
	if err != nil {
		return "", fmt.Errorf("%w (a nested display needs Xephyr; %s)", err, xephyrInstall)
	}
	return bin, nil
}

// frame is a nested display's window on the person's display. This process creates it (a
// top-level window with the title, never focused when it appears) and Xephyr draws into a
// child of it (-parent). One goroutine (run) owns the connection's events: it keeps the
// child the size of the frame (Xephyr then resizes its screen through RandR), passes the
// keyboard focus the window manager gives the frame on to the child, and keeps the
// person's activity (WatchPerson) up to date.
type frame struct {
	log     *slog.Logger
	x       *xgb.Conn
	parent  string
	root    xproto.Window
	top     xproto.Window
	child   xproto.Window // Xephyr's window; set before run starts
	onClose func()
	// size is what fitFrame decided before the window was mapped; refit reads it.
	size fit
	// wmDelete is WM_DELETE_WINDOW, wmProtocols WM_PROTOCOLS.
	wmDelete, wmProtocols xproto.Atom

	stop chan struct{} // closed by close
	done chan struct{} // closed when run has returned
	// stopOnce guards stop.
	stopOnce sync.Once

	// mu guards the fields below.
	mu      sync.Mutex
	active  bool          // the person is using the window
	changed chan struct{} // closed and replaced whenever active or err changes
	err     error         // why run stopped watching; set once
	// refitW×refitH is the size refit gave the window (0: it kept its size).
	refitW, refitH int
	// view is set when the screen is larger than the frame (viewport.go); lastX, lastY is
	// where the nested display's pointer was last seen.
	view         *viewport
	lastX, lastY int

	// following counts the goroutine that scrolls the view (startFollowing).
	following sync.WaitGroup
}

// newFrame connects to the person's display and creates the (unmapped) frame window
// titled title, of width×height or of what of it fits the person's work area (fitFrame).
func newFrame(ctx context.Context, log *slog.Logger, no *NestedOptions, title string, width, height int) (_ *frame, _ fit, err error) {
	x, err := dialParent(ctx, no.Parent, no.ParentXAuthority)
	if err != nil {
		return nil, fit{}, err
	}
	defer func() {
		if err != nil {
			x.Close()
		}
	}()
	scr := xproto.Setup(x).DefaultScreen(x)
	f := &frame{log: log, x: x, parent: no.Parent, root: scr.Root, onClose: no.OnClose,
		stop: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{})}
	if f.top, err = xproto.NewWindowId(x); err != nil {
		return nil, fit{}, fmt.Errorf("window id: %w", err)
	}
	mask := uint32(xproto.EventMaskStructureNotify | xproto.EventMaskSubstructureNotify | xproto.EventMaskFocusChange |
		xproto.EventMaskEnterWindow | xproto.EventMaskLeaveWindow)
	if err := xproto.CreateWindowChecked(x, scr.RootDepth, f.top, scr.Root, 0, 0, uint16(width), uint16(height), 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask, []uint32{scr.BlackPixel, mask}).Check(); err != nil {
		return nil, fit{}, fmt.Errorf("create the window: %w", err)
	}
	atom := func(name string) xproto.Atom {
		r, err := xproto.InternAtom(x, false, uint16(len(name)), name).Reply()
		if err != nil {
			return 0
		}
		return r.Atom
	}
	str := func(prop, typ xproto.Atom, v string) {
		xproto.ChangeProperty(x, xproto.PropModeReplace, f.top, prop, typ, 8, uint32(len(v)), []byte(v))
	}
	card := func(prop, typ xproto.Atom, vs ...uint32) {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			xgb.Put32(b[4*i:], v)
		}
		xproto.ChangeProperty(x, xproto.PropModeReplace, f.top, prop, typ, 32, uint32(len(vs)), b)
	}
	utf8 := atom("UTF8_STRING")
	f.wmProtocols, f.wmDelete = atom("WM_PROTOCOLS"), atom("WM_DELETE_WINDOW")
	str(xproto.AtomWmName, xproto.AtomString, title)
	str(atom("_NET_WM_NAME"), utf8, title)
	str(xproto.AtomWmClass, xproto.AtomString, "cua-host-nested\x00cua-host\x00")
	if host, err := os.Hostname(); err == nil {
		str(xproto.AtomWmClientMachine, xproto.AtomString, host)
	}
	card(atom("_NET_WM_PID"), xproto.AtomCardinal, uint32(os.Getpid()))
	// A user time of 0: the window manager does not give the window the focus when it
	// appears; the person's focus stays where it is.
	card(atom("_NET_WM_USER_TIME"), xproto.AtomCardinal, 0)
	// WM_HINTS: input (flag 1) true, initial state (flag 2) normal (1).
	card(xproto.AtomWmHints, xproto.AtomWmHints, 1|2, 1, 1, 0, 0, 0, 0, 0, 0)
	// Closing the window asks us (WM_DELETE_WINDOW) rather than killing our connection.
	card(f.wmProtocols, xproto.AtomAtom, uint32(f.wmDelete))
	size := fitFrame(ctx, x, f.root, f.top, width, height)
	size.place(x, f.top)
	f.size = size
	if size.clamped {
		f.view = &viewport{screenW: width, screenH: height, viewW: size.width, viewH: size.height}
	}
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil { // a round trip: every request above was handled
		return nil, fit{}, fmt.Errorf("set up the window: %w", err)
	}
	return f, size, nil
}

// waitChild waits until Xephyr (its process done when c.done closes) has created its
// window inside the frame, then maps the frame and starts run.
func (f *frame) waitChild(ctx context.Context, c *child) error {
	for {
		tree, err := xproto.QueryTree(f.x, f.top).Reply()
		if err != nil {
			return fmt.Errorf("the window on %s: %w", f.parent, err)
		}
		if len(tree.Children) > 0 {
			f.child = tree.Children[0]
			break
		}
		select {
		case <-c.done:
			return fmt.Errorf("the Xephyr server exited: %s", c.stderrTail())
		case <-ctx.Done():
			return fmt.Errorf("no window of Xephyr appeared on %s: %w", f.parent, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := xproto.MapWindowChecked(f.x, f.top).Check(); err != nil {
		return fmt.Errorf("map the window on %s: %w", f.parent, err)
	}
	go f.run()
	return nil
}

// run handles the frame's events and, on each and at least every watchPoll, recomputes
// the person's activity, until close or until the connection or Xephyr's window is gone.
func (f *frame) run() {
	defer close(f.done)
	events := make(chan xgb.Event, 16)
	go func() {
		defer close(events)
		for {
			ev, xerr := f.x.WaitForEvent()
			if ev == nil && xerr == nil {
				return // the connection closed
			}
			if ev != nil {
				events <- ev
			}
		}
	}()
	defer func() {
		f.x.Close()
		for range events { // until the reader has returned
		}
	}()
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	for {
		active, err := personActive(f.x, f.root, f.top)
		if err == nil {
			_, err = xproto.GetGeometry(f.x, xproto.Drawable(f.child)).Reply()
			if err != nil {
				err = fmt.Errorf("the window of Xephyr is gone: %w", err)
			}
		}
		if err != nil {
			f.set(false, err)
			return
		}
		f.set(active, nil)
		select {
		case <-f.stop:
			f.set(false, errors.New("display: the nested display was closed"))
			return
		case ev, ok := <-events:
			if !ok {
				f.set(false, fmt.Errorf("the connection to %s ended", f.parent))
				return
			}
			f.handle(ev)
		case <-tick.C:
		}
	}
}

// handle reacts to one event of the frame.
func (f *frame) handle(ev xgb.Event) {
	switch e := ev.(type) {
	case xproto.ConfigureNotifyEvent:
		if e.Window == f.top {
			f.setView(int(e.Width), int(e.Height))
		}
	case xproto.ReparentNotifyEvent:
		if e.Window == f.top && e.Parent != f.root {
			f.refit()
		}
	case xproto.FocusInEvent:
		if e.Event == f.top && e.Mode == xproto.NotifyModeNormal && e.Detail != xproto.NotifyDetailInferior {
			// The window manager focused the frame: keys go to Xephyr's window even when
			// the pointer is outside it.
			xproto.SetInputFocus(f.x, xproto.InputFocusParent, f.child, xproto.TimeCurrentTime)
		}
	case xproto.ClientMessageEvent:
		if e.Type == f.wmProtocols && e.Format == 32 && xproto.Atom(e.Data.Data32[0]) == f.wmDelete {
			f.log.Info("the person asked to close the nested display's window", "parent", f.parent)
			if f.onClose != nil {
				f.onClose()
			}
		}
	}
}

// set records the person's activity and why watching stopped (once).
func (f *frame) set(active bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil || (active == f.active && err == nil) {
		return
	}
	f.active, f.err = active, err
	close(f.changed)
	f.changed = make(chan struct{})
}

// state returns the person's activity, a channel closed at its next change, and why
// watching stopped (nil while it goes on).
func (f *frame) state() (bool, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active, f.changed, f.err
}

// close stops run (which closes the connection: the frame window goes with it) and waits
// for it; safe to repeat. Before run started it closes the connection itself.
func (f *frame) close(started bool) {
	f.stopOnce.Do(func() { close(f.stop) })
	f.following.Wait()
	if started {
		<-f.done
		return
	}
	f.x.Close()
}

// startNested creates the window on the person's display, runs Xephyr in it with the
// display's fresh cookie (-auth), without grabbing the person's keyboard and pointer
// (-no-host-grab), and waits until Xephyr accepts connections and has drawn its window;
// then it shows the window.
func (d *Display) startNested(ctx context.Context, path string, opts Options) error {
	no := opts.Nested
	if _, err := localDisplayNumber(no.Parent); err != nil {
		return fmt.Errorf("display: nested: the person's display: %w", err)
	}
	bin, err := FindXephyr(path)
	if err != nil {
		return fmt.Errorf("display: %w", err)
	}
	title := no.Title
	if title == "" {
		title = "cua-host: nested display"
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	f, size, err := newFrame(tctx, d.log, no, title, opts.Width, opts.Height)
	if err != nil {
		return fmt.Errorf("display: nested: %w", err)
	}
	screenW, screenH := size.width, size.height
	if f.view != nil {
		// The screen keeps the asked size; the window shows part of it (viewport.go).
		screenW, screenH = opts.Width, opts.Height
		d.log.Debug("nested screen larger than the person's work area: its window shows part of it, following the pointer",
			"screen", fmt.Sprintf("%dx%d", screenW, screenH), "window", fmt.Sprintf("%dx%d", size.width, size.height),
			"work_area", fmt.Sprintf("%dx%d+%d+%d", size.work.width, size.work.height, size.work.x, size.work.y),
			"frame_extents", fmt.Sprintf("%d,%d,%d,%d", size.left, size.right, size.top, size.bottom))
	}
	d.nested = &nested{parent: no.Parent, frame: f, width: screenW, height: screenH,
		askedWidth: opts.Width, askedHeight: opts.Height}
	// Xephyr alone, besides this process, connects to the person's display: their display
	// and cookie are in its environment only.
	env := append(append([]string(nil), d.env...), "DISPLAY="+no.Parent)
	if no.ParentXAuthority != "" {
		env = append(env, "XAUTHORITY="+no.ParentXAuthority)
	}
	// -parent must come before -screen for the screen to be drawn into the window. The
	// title Xephyr gives its own window (inside the frame) differs from the frame's, so
	// that a search by the frame's title finds the frame alone. Without the GLX extension
	// Xephyr starts in half the time (its GLX loads Mesa's software renderer, about 95 ms
	// here); programs render OpenGL through EGL or in software, as the agent's apps
	// (GTK 4, Chromium, Firefox, LibreOffice, Qt) do on it.
	args := []string{"-displayfd", "3", "-auth", d.xauth, "-title", title + " (Xephyr)",
		"-parent", "0x" + strconv.FormatUint(uint64(f.top), 16),
		"-screen", fmt.Sprintf("%dx%d", screenW, screenH), "-resizeable", "-no-host-grab",
		"-nolisten", "tcp", "-noreset", "-extension", "GLX"}
	c, err := d.runServer(ctx, "Xephyr", bin, args, env)
	if err != nil {
		return err
	}
	if err := f.waitChild(tctx, c); err != nil {
		return fmt.Errorf("display: nested: %w", err)
	}
	d.nested.started = true
	d.log.Debug("nested display shown", "parent", no.Parent, "window", fmt.Sprintf("0x%x", f.top), "xephyr_window", fmt.Sprintf("0x%x", f.child))
	return nil
}

// nested is what a nested display keeps of the person's display.
type nested struct {
	parent string
	frame  *frame
	// started says frame.run runs (set before Start returns).
	started bool
	// width×height is the screen's size at start; askedWidth×askedHeight the size Options
	// asked for, larger when it did not fit the person's work area.
	width, height, askedWidth, askedHeight int
}

// NestedSize returns the size a nested display's screen started at and the size Options
// asked for. A screen larger than the person's work area has the asked size, its window
// showing part of it (viewport.go); they differ only where the window manager told its
// frame's size by drawing it, which shrank window and screen once framed. Zeros for a
// display that is not nested. The screen follows its window's size afterwards, never
// below the asked size when that did not fit.
func (d *Display) NestedSize() (width, height, askedWidth, askedHeight int) {
	if d.nested == nil {
		return 0, 0, 0, 0
	}
	n := d.nested
	if w, h := n.frame.refitted(); w > 0 {
		return w, h, n.askedWidth, n.askedHeight
	}
	return n.width, n.height, n.askedWidth, n.askedHeight
}

// Nested reports whether the display is shown as a window on the person's display.
func (d *Display) Nested() bool { return d.nested != nil }

// Parent returns the person's display a nested display is shown on ("" otherwise).
func (d *Display) Parent() string {
	if d.nested == nil {
		return ""
	}
	return d.nested.parent
}

// Window returns the id of a nested display's window on the person's display (0
// otherwise): the top-level window this process created, Xephyr's being its child.
func (d *Display) Window() uint32 {
	if d.nested == nil {
		return 0
	}
	return uint32(d.nested.frame.top)
}
