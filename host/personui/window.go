package personui

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// closeGrace bounds the graceful close of a connection (xgb flushes with a round trip);
// after it the socket is closed under it.
const closeGrace = time.Second

// windowSpec says what top-level window to create.
type windowSpec struct {
	title      string
	x, y, w, h int
	// windowType is the _NET_WM_WINDOW_TYPE atom name.
	windowType string
	// overrideRedirect makes a window no window manager manages (the indicator).
	overrideRedirect bool
}

// placed is a button at its place in window coordinates.
type placed struct {
	spec buttonSpec
	rect Rect
}

// surface is one top-level window of ours: its connection, fonts, colours, buttons, the
// click gate, the input rule and the stacking watch. Every method runs on the goroutine that
// owns the surface (Ask's, or the Indicator's loop); the event reader goroutine only
// forwards events.
type surface struct {
	c       *conn
	log     *slog.Logger
	onShown func(Shown)
	win     xproto.Window
	gc      xproto.Gcontext
	font    font // body text
	bold    font // headings; may be font itself
	pix     palette
	atoms   map[string]xproto.Atom
	w, h    int
	buttons []placed
	paint   func() // draws the whole window
	// raiseOverOwn: when the window is obscured, raise it even above this process's other
	// windows (the dialog does, over the indicator; the indicator never fights the dialog).
	raiseOverOwn bool

	events     chan any      // forwarded by the reader; closed when the connection ends
	stopReader chan struct{} // closed to stop the reader
	readerDone chan struct{} // closed when the reader has returned

	// mapped: a MapNotify came and no UnmapNotify since. deleted: the window manager
	// asked us to close the window (the person closed it). destroyed: another client
	// destroyed it.
	mapped    bool
	deleted   bool
	destroyed bool

	// The click gate. unobscured: the last VisibilityNotify said Unobscured and no unmap
	// came since. armed: a server timestamp taken after the window last became unobscured
	// or moved has come back; presses count from armAt on. originX/Y: the window's root
	// position when it was armed. pressed: the button the counted press was on, or -1;
	// pressedDev and pressedSrc: the master and slave devices of that press.
	unobscured             bool
	armed                  bool
	armAt                  xproto.Timestamp
	originX, originY       int
	pressed                int
	pressedDev, pressedSrc uint16

	// The input rule (input.go). xiOpcode: XInputExtension's major opcode. inputStale: the
	// device hierarchy changed since input was read.
	xiOpcode        byte
	input           *inputTable
	inputStale      bool
	physicalForTest func(string) bool

	// The stop key (the indicator's, key.go): the keycodes grabbed on the root, and the key
	// presses that count, not yet taken by the owner. keymapChanged: a MappingNotify for the
	// keyboard came.
	stopKeycodes  []byte
	stopKeys      int
	keymapChanged bool

	// The stacking watch (stacking.go). top: the root's child holding the window (the
	// window manager's frame, or the window). topOR: top was given the override-redirect
	// attribute. stackDirty: the root's children changed since the last check, made at
	// lastCheck. cover: what the checks found. restacks: when the surface restacked itself
	// within the last fightWindow; fightReported: when a fight was last reported.
	top           xproto.Window
	topOR         bool
	stackDirty    bool
	lastCheck     time.Time
	cover         coverState
	restacks      []time.Time
	fightReported time.Time
}

// atomNames are interned once per surface.
var atomNames = []string{
	"WM_PROTOCOLS", "WM_DELETE_WINDOW", "UTF8_STRING", "_NET_WM_NAME", "_NET_WM_PID",
	"_NET_WM_WINDOW_TYPE", "_NET_WM_WINDOW_TYPE_DIALOG", "_NET_WM_WINDOW_TYPE_DOCK",
	"_NET_WM_WINDOW_TYPE_NOTIFICATION", "_NET_WM_STATE", "_NET_WM_STATE_ABOVE",
	"_NET_WM_STATE_STICKY", "_NET_WM_STATE_SKIP_TASKBAR", "_NET_WM_STATE_SKIP_PAGER",
	"_NET_WM_DESKTOP", "_CUA_HOST_STAMP",
}

// xiRequired is what a window needs of the server to tell who answers it.
const xiRequired = "XInput 2.2 (the windows read answers as XI2 events, which carry the source device)"

// newSurface connects, creates the window described by spec (unmapped) and starts the
// event reader. The caller closes the surface.
func newSurface(ctx context.Context, opts Options, spec func(c *conn, f, b font) windowSpec) (_ *surface, err error) {
	c, err := dial(ctx, opts)
	if err != nil {
		return nil, err
	}
	s := &surface{c: c, log: opts.logger(), onShown: opts.OnShown, pressed: -1, physicalForTest: opts.physicalForTest,
		events: make(chan any, 64), stopReader: make(chan struct{}), readerDone: make(chan struct{})}
	go s.read()
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	// Every round trip below ends when ctx does: the socket is closed under it.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.Close() })
	defer stop()

	if s.atoms, err = internAtoms(c.x, atomNames); err != nil {
		return nil, s.setupErr(ctx, "intern atoms", err)
	}
	if err = xinput2.Init(c.x); err != nil {
		return nil, s.setupErr(ctx, xiRequired, err)
	}
	c.x.ExtLock.RLock()
	s.xiOpcode = c.x.Extensions[xinput2.Extension]
	c.x.ExtLock.RUnlock()
	if s.input, err = loadInputs(c, s.physicalForTest); err != nil {
		return nil, s.setupErr(ctx, "list input devices", err)
	}
	if s.font, err = openFont(c.x, regularFonts); err != nil {
		return nil, s.setupErr(ctx, "open font", err)
	}
	if s.bold, err = openFont(c.x, boldFonts); err != nil || s.bold.w != s.font.w {
		s.bold = s.font
		s.bold.overstrike = true
	}
	if s.pix, err = allocPalette(c.x, c.screen); err != nil {
		return nil, s.setupErr(ctx, "allocate colours", err)
	}
	ws := spec(c, s.font, s.bold)
	s.w, s.h = ws.w, ws.h
	if s.win, err = xproto.NewWindowId(c.x); err != nil {
		return nil, s.setupErr(ctx, "window id", err)
	}
	// Neither keys nor core button events are selected: buttons come as XI2 events, which
	// name their source device, and no key reaches the window's logic.
	mask := uint32(xproto.EventMaskExposure | xproto.EventMaskStructureNotify |
		xproto.EventMaskVisibilityChange | xproto.EventMaskPropertyChange)
	or := uint32(0)
	if ws.overrideRedirect {
		or = 1
	}
	if err = xproto.CreateWindowChecked(c.x, c.screen.RootDepth, s.win, c.screen.Root,
		int16(ws.x), int16(ws.y), uint16(ws.w), uint16(ws.h), 0, xproto.WindowClassInputOutput,
		c.screen.RootVisual, xproto.CwBackPixel|xproto.CwBorderPixel|xproto.CwOverrideRedirect|xproto.CwEventMask,
		[]uint32{s.pix.bg, s.pix.accent, or, mask}).Check(); err != nil {
		return nil, s.setupErr(ctx, "create window", err)
	}
	s.setTop(s.win)
	s.setProperties(ws)
	// Buttons of every master pointer on the window; changes of the device hierarchy and
	// of the stacking of every top-level window on the root.
	if err = xinput2.SelectEvents(c.x, s.win, xinput2.AllMasterDevices,
		xinput2.Mask(xinput2.EventButtonPress, xinput2.EventButtonRelease)); err != nil {
		return nil, s.setupErr(ctx, "select XI2 button events", err)
	}
	if err = xinput2.SelectEvents(c.x, c.screen.Root, xinput2.AllDevices,
		xinput2.Mask(xinput2.EventHierarchyChanged)); err != nil {
		return nil, s.setupErr(ctx, "select XI2 hierarchy events", err)
	}
	if err = xproto.ChangeWindowAttributesChecked(c.x, c.screen.Root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify}).Check(); err != nil {
		return nil, s.setupErr(ctx, "watch the stacking of the root's children", err)
	}
	if s.gc, err = xproto.NewGcontextId(c.x); err != nil {
		return nil, s.setupErr(ctx, "gc id", err)
	}
	if err = xproto.CreateGCChecked(c.x, s.gc, xproto.Drawable(s.win),
		xproto.GcForeground|xproto.GcBackground|xproto.GcGraphicsExposures,
		[]uint32{s.pix.fg, s.pix.bg, 0}).Check(); err != nil {
		return nil, s.setupErr(ctx, "create gc", err)
	}
	return s, nil
}

// setupErr wraps a setup failure, preferring the context's error when it caused it.
func (s *surface) setupErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return fmt.Errorf("%w: %s: %w", ErrDisplay, what, err)
}

// read forwards events until the connection ends or the surface closes.
func (s *surface) read() {
	defer close(s.readerDone)
	defer close(s.events)
	for {
		ev, xerr := s.c.x.WaitForEvent()
		if ev == nil && xerr == nil {
			return
		}
		if xerr != nil {
			s.log.Debug("personui: x error", "error", xerr)
			continue
		}
		var fwd any = ev
		if _, ok := ev.(xproto.GeGenericEvent); ok {
			// The whole event waits in the EventConn, in the same order.
			ge, ok := s.c.ev.Next()
			if !ok {
				continue
			}
			fwd = ge
		}
		select {
		case s.events <- fwd:
		case <-s.stopReader:
			return
		}
	}
}

// close destroys the window by closing the connection (the server destroys every
// resource of a closed client) and waits for the reader. It is bounded: a server that does
// not answer gets its socket closed after closeGrace. The window is gone from the server
// once close returns, unless the server stopped answering.
func (s *surface) close() {
	if s.top != 0 {
		ownTops.Delete(s.top)
	}
	if s.cover.timer != nil {
		s.cover.timer.Stop()
	}
	if s.win != 0 {
		xproto.DestroyWindow(s.c.x, s.win)
		// A round trip, so the destroy has been processed when close returns.
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = xproto.GetInputFocus(s.c.x).Reply()
		}()
		select {
		case <-done:
		case <-time.After(closeGrace):
			_ = s.c.nc.Close()
			<-done
		}
	}
	close(s.stopReader)
	s.c.x.Close()
	select {
	case <-s.readerDone:
	case <-time.After(closeGrace):
		_ = s.c.nc.Close()
		<-s.readerDone
	}
}

func (s *surface) setProperties(ws windowSpec) {
	x, a := s.c.x, s.atoms
	set := func(prop, typ xproto.Atom, format byte, data []byte) {
		n := uint32(len(data))
		if format == 32 {
			n /= 4
		}
		xproto.ChangeProperty(x, xproto.PropModeReplace, s.win, prop, typ, format, n, data)
	}
	u32 := func(vs ...uint32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
		return b
	}
	set(xproto.AtomWmName, xproto.AtomString, 8, []byte(ws.title))
	set(a["_NET_WM_NAME"], a["UTF8_STRING"], 8, []byte(ws.title))
	set(xproto.AtomWmClass, xproto.AtomString, 8, []byte("cua-host\x00cua-host\x00"))
	if host, err := os.Hostname(); err == nil {
		set(xproto.AtomWmClientMachine, xproto.AtomString, 8, []byte(host))
	}
	set(a["_NET_WM_PID"], xproto.AtomCardinal, 32, u32(uint32(os.Getpid())))
	set(a["WM_PROTOCOLS"], xproto.AtomAtom, 32, u32(uint32(a["WM_DELETE_WINDOW"])))
	// WM_HINTS: flags InputHint|StateHint, input False, initial state Normal: the window
	// never asks for the keyboard focus.
	set(xproto.AtomWmHints, xproto.AtomWmHints, 32, u32(1|2, 0, 1, 0, 0, 0, 0, 0, 0))
	s.setSizeHints(ws.x, ws.y, ws.w, ws.h)
	set(a["_NET_WM_WINDOW_TYPE"], xproto.AtomAtom, 32, u32(uint32(a[ws.windowType])))
	set(a["_NET_WM_STATE"], xproto.AtomAtom, 32, u32(uint32(a["_NET_WM_STATE_ABOVE"]),
		uint32(a["_NET_WM_STATE_STICKY"]), uint32(a["_NET_WM_STATE_SKIP_TASKBAR"]),
		uint32(a["_NET_WM_STATE_SKIP_PAGER"])))
	set(a["_NET_WM_DESKTOP"], xproto.AtomCardinal, 32, u32(0xffffffff))
}

// setSizeHints sets WM_NORMAL_HINTS: USPosition|USSize|PPosition|PSize|PMinSize|PMaxSize,
// with min = max = size, so the window manager neither places nor resizes the window.
// setTitle replaces the window's title (WM_NAME in Latin-1, _NET_WM_NAME in UTF-8), so
// that window lists and pagers name what the window shows.
func (s *surface) setTitle(title string) {
	latin := sanitize(title)
	xproto.ChangeProperty(s.c.x, xproto.PropModeReplace, s.win, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(latin)), []byte(latin))
	xproto.ChangeProperty(s.c.x, xproto.PropModeReplace, s.win, s.atoms["_NET_WM_NAME"], s.atoms["UTF8_STRING"], 8, uint32(len(title)), []byte(title))
}

func (s *surface) setSizeHints(x, y, w, h int) {
	v := [18]uint32{1 | 2 | 4 | 8 | 16 | 32, uint32(x), uint32(y), uint32(w), uint32(h),
		uint32(w), uint32(h), uint32(w), uint32(h)}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	xproto.ChangeProperty(s.c.x, xproto.PropModeReplace, s.win, xproto.AtomWmNormalHints,
		xproto.AtomWmSizeHints, 32, uint32(len(v)), b)
}

// internAtoms interns names with one pipelined batch of requests.
func internAtoms(x *xgb.Conn, names []string) (map[string]xproto.Atom, error) {
	cookies := make([]xproto.InternAtomCookie, len(names))
	for i, n := range names {
		cookies[i] = xproto.InternAtom(x, false, uint16(len(n)), n)
	}
	m := make(map[string]xproto.Atom, len(names))
	for i, ck := range cookies {
		r, err := ck.Reply()
		if err != nil {
			return nil, err
		}
		m[names[i]] = r.Atom
	}
	return m, nil
}

// errConnClosed reports a connection that ended under a surface.
var errConnClosed = errors.New("connection to the display closed")

// handle applies one event to the gate, the drawing and the stacking watch. It returns the
// button released on with a counted click, or nil. It reports errConnClosed when ev is nil
// (the reader ended). A counted press of the stop key adds to s.stopKeys.
func (s *surface) handle(ev any, ok bool) (*placed, error) {
	if !ok {
		return nil, errConnClosed
	}
	root := s.c.screen.Root
	switch e := ev.(type) {
	case xinput2.GenericEvent:
		return s.handleXI(e), nil
	case xproto.ExposeEvent:
		if e.Count == 0 {
			s.redraw()
		}
	case xproto.VisibilityNotifyEvent:
		s.unobscured = e.State == xproto.VisibilityUnobscured
		s.disarm("visibility")
		switch {
		case s.unobscured && !s.cover.covered:
			s.requestStamp()
		case !s.unobscured:
			s.stackDirty = true
			if s.raiseOverOwn {
				s.restack(nil)
			}
		}
	case xproto.MapNotifyEvent:
		if e.Event == s.win {
			s.mapped = true
		}
		s.stackDirty = true
	case xproto.ClientMessageEvent:
		if e.Type == s.atoms["WM_PROTOCOLS"] && e.Format == 32 &&
			xproto.Atom(e.Data.Data32[0]) == s.atoms["WM_DELETE_WINDOW"] {
			s.deleted = true
		}
	case xproto.DestroyNotifyEvent:
		if e.Window == s.win {
			s.destroyed = true
			s.unobscured = false
			s.disarm("destroyed")
		}
		s.stackDirty = true
	case xproto.UnmapNotifyEvent:
		if e.Event == s.win {
			s.mapped = false
			s.unobscured = false
			s.disarm("unmapped")
		}
		s.stackDirty = true
	case xproto.ReparentNotifyEvent:
		if e.Event == s.win {
			if top, err := s.findTop(); err == nil {
				s.setTop(top)
			}
		}
		s.stackDirty = true
	case xproto.CirculateNotifyEvent, xproto.GravityNotifyEvent:
		s.stackDirty = true
	case xproto.ConfigureNotifyEvent:
		if e.Event == root {
			s.stackDirty = true
		}
		// Our window resized or moved, or its frame moved (which moves it).
		if e.Window != s.win && (e.Window != s.top || e.Event != root) {
			break
		}
		resized := e.Window == s.win && (int(e.Width) != s.w || int(e.Height) != s.h)
		if e.Window == s.win {
			s.w, s.h = int(e.Width), int(e.Height)
		}
		if x, y, err := s.origin(); err == nil && (resized || x != s.originX || y != s.originY) {
			s.originX, s.originY = x, y
			s.disarm("moved")
			if s.unobscured && !s.cover.covered {
				s.requestStamp()
			}
		}
	case xproto.PropertyNotifyEvent:
		if e.Atom == s.atoms["_CUA_HOST_STAMP"] && s.unobscured && !s.armed && !s.cover.covered {
			s.arm(e.Time)
		}
	case xproto.MappingNotifyEvent:
		if e.Request == xproto.MappingKeyboard {
			s.keymapChanged = true
		}
	}
	return nil, nil
}

// handleXI applies one XI2 event: a button of a master pointer on the window, a key of the
// stop-key grab on the root, or a change of the device hierarchy.
func (s *surface) handleXI(ge xinput2.GenericEvent) *placed {
	if ge.Extension != s.xiOpcode {
		return nil
	}
	switch ge.Type {
	case xinput2.EventHierarchyChanged:
		s.inputStale = true
		return nil
	case xinput2.EventButtonPress, xinput2.EventButtonRelease, xinput2.EventKeyPress:
	default:
		return nil
	}
	e, err := xinput2.ParseDeviceEvent(ge.Data)
	if err != nil {
		s.log.Debug("personui: malformed XI2 event", "error", err)
		return nil
	}
	switch e.Type {
	case xinput2.EventKeyPress:
		if e.Event == s.c.screen.Root && slices.Contains(s.stopKeycodes, byte(e.Detail)) &&
			e.Flags&xinput2.FlagKeyRepeat == 0 && s.acceptInput(e) {
			s.stopKeys++
		}
	case xinput2.EventButtonPress:
		if e.Event != s.win || e.Detail != 1 || !s.acceptInput(e) {
			return nil
		}
		s.pressed = -1
		if !s.open(e.Time) {
			s.log.Debug("personui: press ignored", "window", s.win, "armed", s.armed, "unobscured", s.unobscured, "covered", s.cover.covered)
			return nil
		}
		s.pressed, s.pressedDev, s.pressedSrc = s.hit(e.EventX, e.EventY), e.Device, e.Source
	case xinput2.EventButtonRelease:
		if e.Event != s.win || e.Detail != 1 || e.Device != s.pressedDev || s.pressed < 0 {
			return nil
		}
		i := s.pressed
		s.pressed = -1
		if e.Source == s.pressedSrc && s.acceptInput(e) && s.open(e.Time) && s.hit(e.EventX, e.EventY) == i {
			return &s.buttons[i]
		}
	}
	return nil
}

// acceptInput applies the input rule to an XI2 event, reading the devices again when the
// hierarchy changed or the source is new. It refuses when the devices cannot be read.
func (s *surface) acceptInput(e xinput2.DeviceEvent) bool {
	for attempt := 0; ; attempt++ {
		if s.inputStale || attempt == 1 {
			t, err := loadInputs(s.c, s.physicalForTest)
			if err != nil {
				s.log.Debug("personui: input ignored: the devices cannot be read", "error", err)
				return false
			}
			s.input, s.inputStale = t, false
		}
		ok, known, why := s.input.accept(e.Device, e.Source)
		if !known && attempt == 0 {
			continue
		}
		if !ok {
			s.log.Debug("personui: input ignored", "window", s.win, "device", e.Device, "source", e.Source, "why", why)
		}
		return ok
	}
}

// open reports whether a press or release at server time t counts.
func (s *surface) open(t xproto.Timestamp) bool {
	return s.unobscured && s.armed && !s.cover.covered && int32(t-s.armAt) >= 0
}

func (s *surface) disarm(why string) {
	if s.armed {
		s.log.Debug("personui: disarmed", "window", s.win, "why", why)
	}
	s.armed = false
	s.pressed = -1
}

// requestStamp asks the server for its current time: a zero-length append to a property
// of our own comes back as a PropertyNotify carrying the time the server processed it,
// which is no earlier than every event received before it.
func (s *surface) requestStamp() {
	xproto.ChangeProperty(s.c.x, xproto.PropModeAppend, s.win, s.atoms["_CUA_HOST_STAMP"],
		xproto.AtomInteger, 8, 0, nil)
}

// arm opens the gate ArmDelay after server time t and reports the window as shown.
func (s *surface) arm(t xproto.Timestamp) {
	x, y, err := s.origin()
	if err != nil {
		return
	}
	s.originX, s.originY = x, y
	s.armed = true
	s.armAt = t + xproto.Timestamp(ArmDelay/time.Millisecond)
	s.log.Debug("personui: armed", "window", s.win, "x", x, "y", y)
	if s.onShown != nil {
		s.onShown(s.shown())
	}
}

// shown describes the window in root coordinates.
func (s *surface) shown() Shown {
	sh := Shown{Window: uint32(s.win), Bounds: Rect{X: s.originX, Y: s.originY, Width: s.w, Height: s.h}}
	for _, b := range s.buttons {
		r := b.rect
		r.X += s.originX
		r.Y += s.originY
		sh.Buttons = append(sh.Buttons, Button{Name: b.spec.Name, Rect: r})
	}
	return sh
}

// origin returns the window's position in root coordinates (inside any frame).
func (s *surface) origin() (int, int, error) {
	r, err := xproto.TranslateCoordinates(s.c.x, s.win, s.c.screen.Root, 0, 0).Reply()
	if err != nil {
		return 0, 0, err
	}
	return int(r.DstX), int(r.DstY), nil
}

// hit returns the index of the button at window point (x, y), or -1.
func (s *surface) hit(x, y int) int {
	for i, b := range s.buttons {
		if b.rect.contains(x, y) {
			return i
		}
	}
	return -1
}
