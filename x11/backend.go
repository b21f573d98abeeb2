package x11

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/res"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// DefaultRemapSettle is how long TypeText lets other clients catch up with a keyboard
// mapping before it changes that mapping again (reusing a spare keycode or restoring it).
const DefaultRemapSettle = 100 * time.Millisecond

// Options configure Open.
type Options struct {
	// Display is the X display name (":1"); empty means $DISPLAY. The Xauthority file
	// comes from $XAUTHORITY (or ~/.Xauthority), as for every Xlib client.
	Display string
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// RemapSettle overrides DefaultRemapSettle when positive.
	RemapSettle time.Duration
	// UntrustedLaunches makes every program Launch starts an untrusted X client: it gets
	// an authorization of the SECURITY extension's untrusted trust level (XAUTHORITY to a
	// 0600 file of its own), so it cannot use XTEST, read images of, send events to or
	// grab against trusted clients. Use it on a display shared with a person. Without the
	// extension every launch fails with ErrUnsupported.
	UntrustedLaunches bool
	// LaunchWrapper, when set, gives the command line Launch actually runs for a program:
	// argv is the program's (argv[0] an absolute path) and env its environment, and the
	// result runs the program inside a sandbox (internal/sandbox). An error refuses the
	// launch before anything runs. Windows of the result's descendants are the program's.
	LaunchWrapper func(argv, env []string) ([]string, error)
}

// Capabilities says what the server and its window manager offer.
type Capabilities struct {
	// XTest is true when the XTEST extension is present (input needs it).
	XTest bool
	// XTestVersion is "major.minor" of XTEST.
	XTestVersion string
	// SHM is true when MIT-SHM is present; SHMUsable says whether attaching worked.
	SHM bool
	// XRes is true when X-Resource is present (server-observed pids).
	XRes bool
	// Shape is true when the SHAPE extension is present (non-rectangular windows).
	Shape bool
	// WindowManager is the EWMH window manager's name, or "" when none runs.
	WindowManager string
}

// Backend is an open connection to one X display. Its methods are safe for concurrent use.
type Backend struct {
	conn    *xgb.Conn
	display string
	// screen is the default screen's number; serverPID the server's pid from the peer
	// credentials of its local socket (0 when remote). Both are fixed at Open.
	screen    int
	serverPID int
	root      xproto.Window
	// size is the root window's width<<32 | height, kept by the event loop from the
	// root's ConfigureNotify (a RandR resize, a nested server's resized window).
	size   atomic.Uint64
	depth  byte
	log    *slog.Logger
	settle time.Duration
	caps   Capabilities

	atoms atomCache
	// lastChain is the frame and client the last walk of TopLevelsAt found, which the next
	// one asks about first (guessChain).
	lastChain atomic.Pointer[chain]
	// activeFromFocus is set when the last read of the active window found no
	// _NET_ACTIVE_WINDOW: the next read asks the input focus with it (sendActive).
	activeFromFocus atomic.Bool

	// input is a one-slot semaphore: whoever holds it may send input. It guards the
	// fields below and is taken with a context (lockInput).
	input chan struct{}
	remap remapState
	// core is the core device set; corePressed what it holds.
	core        Devices
	corePressed pressedState

	// seatsMu guards seats, the open seats (lock order: input, then seatsMu).
	seatsMu sync.Mutex
	seats   map[*Seat]struct{}

	cap captureState

	// grabMu is held while this connection grabs the server (grabs do not nest). Lock
	// order: cap.mu, then grabMu.
	grabMu sync.Mutex

	procs procTable

	// untrustedLaunch is Options.UntrustedLaunches; untrusted issues the authorizations
	// (nil when the extension is missing, with untrustedErr saying why).
	untrustedLaunch bool
	untrusted       *untrustedAuth
	untrustedErr    error
	// wrap is Options.LaunchWrapper.
	wrap func(argv, env []string) ([]string, error)

	clipOnce sync.Once
	clip     *clipboard
	clipErr  error

	// notify wakes waiters when a root property changes (client lists, active window).
	notify notifier
	// pings routes the answers of clients pinged with _NET_WM_PING (pingClient).
	pings pings
	// wm asks the window manager whether it caught up (WindowManagerCaughtUp).
	wm wmSync
	// windows keeps the listed windows' descriptions while no event says they changed;
	// barrier tells when the event loop has handled the events sent before a read.
	windows windowCache
	barrier eventBarrier

	closeOnce sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

var silenceXGB sync.Once

// Open connects to the display named in opts and probes its extensions. It returns an error
// wrapping ErrNoDisplay when the display cannot be opened.
func Open(ctx context.Context, opts Options) (*Backend, error) {
	silenceXGB.Do(func() { xgb.Logger = log.New(io.Discard, "", 0) })
	display := opts.Display
	if display == "" {
		display = os.Getenv("DISPLAY")
	}
	if display == "" {
		return nil, fmt.Errorf("%w: DISPLAY is not set", ErrNoDisplay)
	}
	conn, err := dial(ctx, display)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	setup := xproto.Setup(conn)
	if setup == nil || len(setup.Roots) == 0 {
		conn.Close()
		return nil, fmt.Errorf("%w: %s: no screen", ErrNoDisplay, display)
	}
	scr := setup.DefaultScreen(conn)
	b := &Backend{
		conn:    conn,
		display: display,
		screen:  conn.DefaultScreen,
		root:    scr.Root,
		depth:   scr.RootDepth,
		log:     logger,
		settle:  DefaultRemapSettle,
		input:   make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	b.core = Devices{b: b, conn: conn, pressed: &b.corePressed}
	if opts.RemapSettle > 0 {
		b.settle = opts.RemapSettle
	}
	b.atoms.init(conn)
	b.notify.init()
	b.windows.init(&b.atoms)
	b.barrier.init(b)
	b.procs.init()
	b.probe()
	b.serverPID = serverPeerPID(display)
	b.wrap = opts.LaunchWrapper
	if opts.UntrustedLaunches {
		b.untrustedLaunch = true
		if b.untrusted, b.untrustedErr = newUntrustedAuth(conn, display); b.untrustedErr != nil {
			b.log.Warn("x11 launched programs cannot be untrusted clients; launches will fail", "err", b.untrustedErr)
		}
	}
	// Root property changes wake launch and activation waiters; the root's own
	// ConfigureNotify keeps the screen size.
	xproto.ChangeWindowAttributes(conn, b.root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskPropertyChange | xproto.EventMaskSubstructureNotify | xproto.EventMaskStructureNotify})
	// The size read after the selection, before the event loop runs: a resize after it
	// comes as an event the loop stores later.
	b.setSize(int(scr.WidthInPixels), int(scr.HeightInPixels))
	if g, err := xproto.GetGeometry(conn, xproto.Drawable(b.root)).Reply(); err == nil {
		b.setSize(int(g.Width), int(g.Height))
	}
	b.wg.Add(1)
	go b.eventLoop()
	// The window manager's first answer, or its silence, is known before a call needs it
	// (WindowManagerCaughtUp).
	b.askWindowManager()
	w, h := b.ScreenSize()
	b.log.Debug("x11 open", "display", display, "width", w, "height", h,
		"xtest", b.caps.XTest, "shm", b.caps.SHM, "xres", b.caps.XRes, "wm", b.caps.WindowManager)
	return b, nil
}

// dial opens the xgb connection, giving up when ctx ends.
func dial(ctx context.Context, display string) (*xgb.Conn, error) {
	type result struct {
		c   *xgb.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := xgb.NewConnDisplay(display)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoDisplay, display, r.err)
		}
		return r.c, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, fmt.Errorf("%w: %s: %v", ErrNoDisplay, display, ctx.Err())
	}
}

func (b *Backend) probe() {
	if err := initExtension(b.conn, "XTEST"); err == nil {
		b.caps.XTest = true
		if v, err := xtest.GetVersion(b.conn, 2, 2).Reply(); err == nil {
			b.caps.XTestVersion = fmt.Sprintf("%d.%d", v.MajorVersion, v.MinorVersion)
		}
	}
	if err := initExtension(b.conn, "MIT-SHM"); err == nil {
		b.caps.SHM = true
	}
	if err := initExtension(b.conn, "SHAPE"); err == nil {
		b.caps.Shape = true
	}
	if err := initExtension(b.conn, "X-Resource"); err == nil {
		if _, err := res.QueryVersion(b.conn, 1, 2).Reply(); err == nil {
			b.caps.XRes = true
		}
	}
	b.caps.WindowManager = b.wmName()
}

// Capabilities reports what Open found. WindowManager is re-read on every call, since a
// window manager may start after the backend.
func (b *Backend) Capabilities() Capabilities {
	c := b.caps
	c.WindowManager = b.wmName()
	return c
}

// Display returns the display name the backend is connected to.
func (b *Backend) Display() string { return b.display }

// ScreenSize returns the size of the default screen in pixels, as the last ConfigureNotify
// of the root window gave it (no round trip). A resize is seen once its event has been
// read: a call racing a resize may get the size before it; the checks of where input lands
// read the windows themselves.
func (b *Backend) ScreenSize() (width, height int) {
	v := b.size.Load()
	return int(v >> 32), int(v & 0xffffffff)
}

func (b *Backend) setSize(width, height int) {
	b.size.Store(uint64(width)<<32 | uint64(height))
}

// eventLoop drains the main connection's events (xgb blocks when nobody reads them) and
// wakes waiters on root property and structure changes. It ends when the connection closes.
func (b *Backend) eventLoop() {
	defer b.wg.Done()
	for {
		ev, xe := b.conn.WaitForEvent()
		if ev == nil && xe == nil {
			return
		}
		if xe != nil {
			b.log.Debug("x11 async error", "err", xe.Error())
			continue
		}
		b.windows.note(ev)
		switch e := ev.(type) {
		case xproto.ConfigureNotifyEvent:
			if e.Window == b.root {
				b.setSize(int(e.Width), int(e.Height))
			}
			b.handleWindowManagerAnswer(e)
			b.notify.wake()
		case xproto.PropertyNotifyEvent:
			if b.barrier.handle(e) {
				continue
			}
			b.notify.wake()
		case xproto.MapNotifyEvent, xproto.CreateNotifyEvent, xproto.ReparentNotifyEvent:
			b.notify.wake()
		case xproto.MappingNotifyEvent:
			b.handleMappingNotify(e)
		case xproto.ClientMessageEvent:
			b.handlePing(e)
		}
	}
}

// closeSettle is how much longer than usual Close lets clients read keys typed with
// remapped keycodes before it restores the rows: a client of a loaded machine can take
// longer than RemapSettle, and after Close no later call waits for it. With remapHold it
// stays inside the host's default grace (2 s) for a worker's exit.
const closeSettle = 250 * time.Millisecond

// Close releases held input, restores the keyboard mapping, stops launched applications
// still running, and closes the connections. It is idempotent.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		b.ReleaseAll(ctx)
		// Keys typed with remapped keycodes just before the end (a one-shot `cua-host
		// call`) are read by their clients after it: the rows go back only once those
		// clients had their time — the usual settle and closeSettle more, since nothing
		// later will wait for a slow client — at most until ctx ends.
		if b.lockInput(ctx) == nil {
			if len(b.remap.orig) > 0 {
				b.remap.due = b.remap.due.Add(closeSettle)
			}
			if err := b.restoreDueLocked(ctx); err != nil {
				b.restoreKeymapLocked()
			}
			b.unlockInput()
		}
		b.closeSeats(ctx)
		cancel()
		close(b.done)
		b.procs.stopAll(b.log)
		if b.untrusted != nil {
			if err := b.untrusted.close(); err != nil {
				b.log.Warn("x11 revoke untrusted authorizations", "err", err)
			}
		}
		// Wait for a clipboard connection being opened, and forbid new ones.
		b.clipOnce.Do(func() { b.clipErr = ErrClosed })
		if b.clip != nil {
			b.clip.close()
		}
		b.cap.release(b.conn)
		b.conn.Close()
		b.wg.Wait()
	})
	return nil
}

func (b *Backend) closed() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// sync makes a round trip, so every request sent before it has been processed.
func (b *Backend) sync() error { return syncConn(b.conn) }

// syncConn makes a round trip on c.
func syncConn(c *xgb.Conn) error {
	if _, err := xproto.GetInputFocus(c).Reply(); err != nil {
		return xerr("GetInputFocus", err)
	}
	return nil
}

// newPropertyWindow creates a never-mapped 1×1 input-only window on conn whose property
// changes come to conn as PropertyNotify events: a place for selections and markers in the
// event stream.
func newPropertyWindow(conn *xgb.Conn, root xproto.Window) (xproto.Window, error) {
	return newWindow(conn, root, xproto.EventMaskPropertyChange)
}

// newWindow creates a never-mapped 1×1 input-only window on conn, off the screen, whose
// events in mask come to conn.
func newWindow(conn *xgb.Conn, root xproto.Window, mask uint32) (xproto.Window, error) {
	id, err := xproto.NewWindowId(conn)
	if err != nil {
		return 0, xerr("NewWindowId", err)
	}
	if err := xproto.CreateWindowChecked(conn, 0, id, root, -10, -10, 1, 1, 0, xproto.WindowClassInputOnly,
		0, xproto.CwEventMask, []uint32{mask}).Check(); err != nil {
		return 0, xerr("CreateWindow", err)
	}
	return id, nil
}

// notifier lets goroutines wait for "something changed" without polling hard.
type notifier struct {
	mu sync.Mutex // mu guards ch
	ch chan struct{}
}

func (n *notifier) init() { n.ch = make(chan struct{}) }

func (n *notifier) wake() {
	n.mu.Lock()
	close(n.ch)
	n.ch = make(chan struct{})
	n.mu.Unlock()
}

// wait returns a channel closed at the next wake.
func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}
