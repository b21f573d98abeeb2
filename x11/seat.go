package x11

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// Seat is one session's own input devices: a master pointer and keyboard pair the X server
// created for it (XInput2 multi-pointer), named "cua-host LABEL (pid N)". Its events go
// through the pair's XTEST slaves, so they move the session's pointer and go to its
// keyboard's focus; the person's core pointer and core keyboard focus never change.
//
// A pair outlives the connection that made it: Close removes it, and RemoveStaleSeats
// removes the pairs of processes that died without closing theirs.
type Seat struct {
	dev      Devices
	pressed  pressedState
	name     string
	pointer  uint16
	keyboard uint16
	// coreKeyboard is the server's virtual core keyboard, whose focus is the person's;
	// 0 when the server lists none by that name.
	coreKeyboard uint16

	// adopted are the windows whose clients use the pair as their client pointer (Adopt).
	adoptMu sync.Mutex
	adopted map[uint32]bool

	closeOnce sync.Once
	// gone is set, under the input semaphore, once Close began: input on the seat fails
	// with ErrClosed from then on.
	gone    bool
	drained chan struct{} // closed when the connection's event drain ends
}

// OpenSeat creates the master pair of session label and a connection that drives it. It
// fails with ErrUnsupported when the server cannot create masters (no XInput 2.2, no
// XTEST).
func (b *Backend) OpenSeat(ctx context.Context, label string) (*Seat, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	if !b.caps.XTest {
		return nil, fmt.Errorf("%w: the X server has no XTEST extension", ErrUnsupported)
	}
	conn, err := dial(ctx, b.display)
	if err != nil {
		return nil, err
	}
	s, err := b.newSeat(ctx, conn, label)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

func (b *Backend) newSeat(ctx context.Context, conn *xgb.Conn, label string) (*Seat, error) {
	if err := initExtension(conn, "XTEST"); err != nil {
		return nil, err
	}
	if err := xinput2.Init(conn); err != nil {
		if errors.Is(err, xinput2.ErrUnsupported) {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		return nil, xerr("XInput2", err)
	}
	before, err := xinput2.Devices(conn)
	if err != nil {
		return nil, xerr("XInput2", err)
	}
	name := xinput2.SeatName(label, os.Getpid())
	if err := xinput2.AddMaster(conn, name); err != nil {
		return nil, fmt.Errorf("%w: create the session's input devices: %v", ErrUnsupported, err)
	}
	after, err := xinput2.Devices(conn)
	if err != nil {
		return nil, xerr("XInput2", err)
	}
	s := &Seat{name: name, drained: make(chan struct{}), coreKeyboard: coreKeyboard(before)}
	for _, d := range after {
		if d.Use == xinput2.MasterPointer && d.Name == name+" pointer" &&
			!slices.ContainsFunc(before, func(o xinput2.Device) bool { return o.ID == d.ID }) {
			s.pointer, s.keyboard = d.ID, d.Attachment
		}
	}
	if s.pointer == 0 {
		return nil, fmt.Errorf("%w: the X server did not list the master pointer %q it was asked to create", ErrUnsupported, name+" pointer")
	}
	if err := xinput2.SetClientPointer(conn, 0, s.pointer); err != nil {
		_ = xinput2.RemoveMaster(conn, s.pointer)
		return nil, xerr("XInput2", err)
	}
	s.dev = Devices{b: b, conn: conn, pressed: &s.pressed, seat: s}
	go s.drain()
	if err := b.lockInput(ctx); err != nil {
		s.closeLocked()
		return nil, err
	}
	err = b.copyKeymapLocked(ctx, conn)
	b.unlockInput()
	if err != nil {
		s.closeLocked()
		return nil, err
	}
	b.seatsMu.Lock()
	if b.seats == nil {
		b.seats = map[*Seat]struct{}{}
	}
	b.seats[s] = struct{}{}
	b.seatsMu.Unlock()
	b.log.Debug("x11 seat opened", "name", name, "pointer", s.pointer, "keyboard", s.keyboard)
	return s, nil
}

// coreKeyboard returns the id of the virtual core keyboard among devs, or 0.
func coreKeyboard(devs []xinput2.Device) uint16 {
	for _, d := range devs {
		if d.Use == xinput2.MasterKeyboard && d.Name == "Virtual core keyboard" {
			return d.ID
		}
	}
	return 0
}

// drain reads the seat connection's events and errors (nothing is selected; asynchronous
// errors of XTEST requests land here), so xgb never blocks on a full queue.
func (s *Seat) drain() {
	defer close(s.drained)
	for {
		ev, xe := s.dev.conn.WaitForEvent()
		if ev == nil && xe == nil {
			return
		}
	}
}

// Devices returns the seat's devices, to send input through.
func (s *Seat) Devices() *Devices { return &s.dev }

// Name is the pair's name: the server calls its devices "NAME pointer" and "NAME keyboard".
func (s *Seat) Name() string { return s.name }

// IDs returns the XInput device ids of the master pointer and keyboard.
func (s *Seat) IDs() (pointer, keyboard uint16) { return s.pointer, s.keyboard }

// Focus gives the seat's keyboard focus to win. Keys the seat sends go there; the person's
// focus does not change.
func (s *Seat) Focus(ctx context.Context, win uint32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := xinput2.SetFocus(s.dev.conn, s.keyboard, xproto.Window(win)); err != nil {
		return xerr("XInput2", err)
	}
	return nil
}

// Refocus tells the client of window win again that the pair's keyboard has its focus,
// when it has: it moves the keyboard's focus away and back. A toolkit that keeps one
// focus flag per window for every keyboard (GTK) takes the person's keyboard leaving the
// window — the window manager focused it on a click, and the focus was given back — for
// the window losing the focus, and GTK 4 then marks no element focused. Elsewhere it
// does nothing.
func (s *Seat) Refocus(ctx context.Context, win uint32) error {
	// Under the input semaphore: keys sent between the two changes would go nowhere.
	ctx, cancel := context.WithTimeout(ctx, refocusWait)
	defer cancel()
	if err := s.dev.lock(ctx); err != nil {
		return err
	}
	defer s.dev.b.unlockInput()
	cur, err := xinput2.Focus(s.dev.conn, s.keyboard)
	if err != nil {
		return xerr("XInput2", err)
	}
	if uint32(cur) != win {
		return nil
	}
	if err := xinput2.SetFocus(s.dev.conn, s.keyboard, xproto.WindowNone); err != nil {
		return xerr("XInput2", err)
	}
	if err := xinput2.SetFocus(s.dev.conn, s.keyboard, xproto.Window(win)); err != nil {
		return xerr("XInput2", err)
	}
	return nil
}

// refocusWait bounds Refocus's wait for input under way to end.
const refocusWait = 2 * time.Second

// Adopt makes the pair the client pointer of the client that created window win: that
// client's own core requests (where is the pointer, grab the keyboard for a menu) then use
// the session's devices, not the person's, and the modifiers in the core events it gets
// are those of the session's keyboard even when it does not use XKB (an untrusted client
// cannot). Use it for the windows of programs the session launched, never for a person's.
// The server forgets it when the pair is removed.
func (s *Seat) Adopt(ctx context.Context, win uint32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.adoptMu.Lock()
	defer s.adoptMu.Unlock()
	if s.adopted[win] {
		return nil
	}
	if err := xinput2.SetClientPointer(s.dev.conn, xproto.Window(win), s.pointer); err != nil {
		return xerr("XInput2", err)
	}
	if s.adopted == nil {
		s.adopted = map[uint32]bool{}
	}
	s.adopted[win] = true
	return nil
}

// Close releases what the seat holds, removes its master pair and closes its connection.
// It waits for a running input operation to end but gives up waiting when ctx ends (and
// removes the pair anyway). It is idempotent.
func (s *Seat) Close(ctx context.Context) {
	s.closeOnce.Do(func() {
		b := s.dev.b
		if b.lockInput(ctx) == nil {
			s.dev.releaseHeldLocked()
			s.retireLocked(ctx)
			s.gone = true
			b.unlockInput()
		}
		b.seatsMu.Lock()
		delete(b.seats, s)
		b.seatsMu.Unlock()
		s.closeLocked()
	})
}

// retireTimeout bounds the wait for the clients the pair reached last to handle its
// final events before it is removed.
const retireTimeout = 500 * time.Millisecond

// retireLocked leaves every client window before the pair is removed: it moves the pair's
// pointer into a window of its own, takes its keyboard focus away, and waits until the
// clients it was over or typing into have handled those events (_NET_WM_PING, which they
// answer after every event queued before it). A toolkit asks about the device an event
// came from while it handles the event (GTK 3 queries the pointer of a motion hint, GTK 4
// sets its cursor on entry), and it learns that the device is gone only from a later
// event: a request about a removed device fails with BadDevice, which GTK treats as fatal.
// Asked while the device still exists, and with nothing left to handle, the question
// does not come. Preconditions: input semaphore held.
func (s *Seat) retireLocked(ctx context.Context) {
	if s.pointer == 0 {
		return
	}
	b, c := s.dev.b, s.dev.conn
	ctx, cancel := context.WithTimeout(ctx, retireTimeout)
	defer cancel()
	reached := map[xproto.Window]bool{}
	if p, err := s.dev.Pointer(ctx); err == nil {
		if top, err := b.TopLevelAt(ctx, p); err == nil && top.Window != 0 {
			reached[xproto.Window(top.Window)] = true
		}
	}
	if f, err := s.dev.InputFocus(ctx); err == nil && f.TopLevel != 0 {
		reached[xproto.Window(f.TopLevel)] = true
	}
	if len(reached) == 0 {
		return
	}
	if park, err := xproto.NewWindowId(c); err == nil {
		err = xproto.CreateWindowChecked(c, 0, park, b.root, 0, 0, 1, 1, 0, xproto.WindowClassInputOnly, 0,
			xproto.CwOverrideRedirect, []uint32{1}).Check()
		if err == nil {
			// The window stays until the connection closes, after the pair is gone:
			// destroying it sooner would move the pointer back into a client's window.
			xproto.MapWindow(c, park)
			s.dev.motionLocked(0, 0)
		}
	}
	_ = xinput2.SetFocus(c, s.keyboard, xproto.WindowNone)
	// The pings go out on the main connection: the server must have moved the pointer and
	// the focus (requests on this one) before it queues them, or a client answers a ping
	// before the events that make it ask about the pair.
	_, _ = xproto.GetInputFocus(c).Reply()
	var wg sync.WaitGroup
	for w := range reached {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.pingClient(ctx, w, retireTimeout)
		}()
	}
	wg.Wait()
	// A toolkit answers the ping in event order but may ask about the pointer of a motion
	// on its next frame: give it a few frames before the pair goes.
	_ = sleepCtx(ctx, retireFrames)
}

// retireFrames is how long retireLocked waits after the clients answered, for the work
// a toolkit leaves to its next frame (a few frames at 60 Hz).
const retireFrames = 60 * time.Millisecond

// closeLocked removes the pair and closes the connection.
func (s *Seat) closeLocked() {
	if s.pointer != 0 {
		if err := xinput2.RemoveMaster(s.dev.conn, s.pointer); err != nil {
			s.dev.b.log.Warn("x11 remove the session's input devices", "name", s.name, "err", err)
		}
	}
	s.dev.conn.Close()
	<-s.drained
	s.dev.b.log.Debug("x11 seat closed", "name", s.name)
}

// closeSeats removes every open seat's pair; the backend is closing.
func (b *Backend) closeSeats(ctx context.Context) {
	b.seatsMu.Lock()
	seats := make([]*Seat, 0, len(b.seats))
	for s := range b.seats {
		seats = append(seats, s)
	}
	b.seatsMu.Unlock()
	for _, s := range seats {
		s.Close(ctx)
	}
}

// WaitPointerFree waits until no client holds a grab of the set's pointer (a window
// manager grabs a press to focus on the click, then replays it), for at most max. It
// probes with a grab of its own on the root, undone at once.
func (d *Devices) WaitPointerFree(ctx context.Context, max time.Duration) error {
	deadline := time.Now().Add(max)
	// The manager usually lets go within a millisecond: poll at once, then less often.
	poll := newPoller()
	for {
		r, err := xproto.GrabPointer(d.conn, false, d.b.root, 0, xproto.GrabModeAsync, xproto.GrabModeAsync,
			xproto.WindowNone, xproto.CursorNone, xproto.TimeCurrentTime).Reply()
		if err != nil {
			return xerr("GrabPointer", err)
		}
		if r.Status == xproto.GrabStatusSuccess {
			xproto.UngrabPointer(d.conn, xproto.TimeCurrentTime)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: the pointer is still grabbed after %v", ErrTimeout, max)
		}
		if err := poll.next(ctx); err != nil {
			return err
		}
	}
}

// ErrPointerFrozen: another client's synchronous grab still holds the pointer's events.
var ErrPointerFrozen = errors.New("x11: the pointer's events are held by another client's grab")

// WaitPointerReplayed waits, after a click, until the server has processed the set's
// button releases, for at most frozenMax, and then until no other client holds a grab of
// the pointer, for at most max. A window manager that grabs a press synchronously, to
// focus on the click, freezes the pointer: the press reaches the window, and the release
// is processed, only when the manager lets it through, and a busy one (re-grabbing its
// bindings after keyboard mapping changes) takes seconds. The server's button state of
// the pointer shows it: a button stays down while its release waits. It returns an error
// wrapping ErrPointerFrozen when a button is still down at the end. A grab that does not
// hold the events (a menu the click opened) only bounds the second wait.
//
// It returns the pointer as the question that found the buttons up saw it: a read-back
// made after the click was processed. When that same question also found no other client
// holding the pointer, it returns the person's focus as the server had it then
// (PointerSeen.Focus): read in order with the question, on the set's connection, so after
// every request the window manager made before it let the press through.
func (d *Devices) WaitPointerReplayed(ctx context.Context, max, frozenMax time.Duration) (PointerSeen, error) {
	start := time.Now()
	poll := newPoller()
	var person uint16
	if d.seat != nil {
		person = d.seat.coreKeyboard
	}
	for {
		// The probe of WaitPointerFree goes with the question: when the buttons are up and
		// no other client holds the pointer, one round trip is the whole wait. While a
		// button is down the probe cannot succeed (the press's grab, or the manager's,
		// holds the pointer), so it changes nothing.
		query := xproto.QueryPointer(d.conn, d.b.root)
		probe := xproto.GrabPointer(d.conn, false, d.b.root, 0, xproto.GrabModeAsync, xproto.GrabModeAsync,
			xproto.WindowNone, xproto.CursorNone, xproto.TimeCurrentTime)
		var focusQ xinput2.FocusCookie
		if person != 0 {
			focusQ = xinput2.AskFocus(d.conn, person)
		}
		r, err := query.Reply()
		g, gerr := probe.Reply()
		var (
			focus     xproto.Window
			focusRead bool
		)
		if person != 0 {
			f, ferr := focusQ.Reply()
			focus, focusRead = f, ferr == nil
		}
		free := gerr == nil && g.Status == xproto.GrabStatusSuccess
		if free {
			xproto.UngrabPointer(d.conn, xproto.TimeCurrentTime)
		}
		if err != nil {
			return PointerSeen{}, xerr("QueryPointer", err)
		}
		if gerr != nil {
			return PointerSeen{}, xerr("GrabPointer", gerr)
		}
		const buttons = xproto.KeyButMaskButton1 | xproto.KeyButMaskButton2 | xproto.KeyButMaskButton3 |
			xproto.KeyButMaskButton4 | xproto.KeyButMaskButton5
		if r.Mask&buttons == 0 {
			seen := PointerSeen{At: Point{X: int(r.RootX), Y: int(r.RootY)}, Child: uint32(r.Child), Valid: true}
			if free {
				seen.Focus, seen.FocusRead = uint32(focus), focusRead
				return seen, nil
			}
			return seen, d.WaitPointerFree(ctx, max)
		}
		if waited := time.Since(start); waited > frozenMax {
			return PointerSeen{}, fmt.Errorf("%w: a button is still down %v after its release was sent", ErrPointerFrozen, waited.Round(time.Millisecond))
		}
		if err := poll.next(ctx); err != nil {
			return PointerSeen{}, err
		}
	}
}

// PointerSeen is a set's pointer as one reply of the server gave it.
type PointerSeen struct {
	// At is where the pointer is, in root coordinates.
	At Point
	// Child is the child of the root the pointer is in, as the server delivers pointer
	// events (a window manager's frame, or an override-redirect window); 0 for the root.
	Child uint32
	// Valid is false when nothing was read.
	Valid bool
	// Focus is the window with the core keyboard's focus (the person's) as the server
	// answered beside the pointer, when FocusRead (0 None, 1 PointerRoot).
	Focus     uint32
	FocusRead bool
}

// RemoveStaleSeats removes the master pairs that processes other than this one created
// and that are gone (remove says which pids count as gone), returning their names.
func (b *Backend) RemoveStaleSeats(ctx context.Context, gone func(pid int) bool) ([]string, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := dial(ctx, b.display)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := xinput2.Init(conn); err != nil {
		if errors.Is(err, xinput2.ErrUnsupported) {
			return nil, nil
		}
		return nil, xerr("XInput2", err)
	}
	me := os.Getpid()
	names, err := xinput2.RemoveSeats(conn, func(pid int) bool { return pid != me && gone(pid) })
	return names, xerr("XInput2", err)
}
