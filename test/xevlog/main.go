// Command xevlog is a test X client: it maps one window of a given size, colour and title
// and writes every input-related event it receives as a JSON line. Input tests use it as
// their oracle: what xevlog logged is what a real client saw.
//
//	xevlog -title T -width 400 -height 300 -color ff0000 [-out FILE]
//
// The first line is {"type":"ready","window":ID,...} once the window is mapped.
//
// With -xi2 it selects the pointer's XInput2 events (button press, release and motion of
// every master pointer) instead of the core ones, and logs each with the master device
// that produced it ("device"), its slave ("source") and the held buttons in "state" as
// core events give them (Button1Mask = 0x100 …). Lines are in the order the server
// delivered the events.
//
// With -xi2-focus it also logs every master keyboard's XInput2 focus events on its window
// (xi_focus_in, xi_focus_out, with the device, mode and detail).
//
// With -take-focus D it is a globally active client (WM_TAKE_FOCUS, input hint false)
// that answers _NET_WM_PING: it logs the window manager's WM_TAKE_FOCUS as "take_focus",
// waits D and only then sets the keyboard focus to its window, as a busy toolkit does.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xauth"
	"github.com/cua-host/cua-host/internal/xinput2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "xevlog:", err)
		os.Exit(1)
	}
}

// Event is one logged line.
type Event struct {
	Type string `json:"type"`
	// Device and Source are, in -xi2 mode, the master device an XI2 event is reported for
	// and the slave that produced it.
	Device  int    `json:"device,omitempty"`
	Source  int    `json:"source,omitempty"`
	Window  uint32 `json:"window,omitempty"`
	Button  int    `json:"button,omitempty"`
	X       int    `json:"x"`
	Y       int    `json:"y"`
	RootX   int    `json:"root_x"`
	RootY   int    `json:"root_y"`
	State   uint16 `json:"state"`
	Keycode int    `json:"keycode,omitempty"`
	Keysym  uint32 `json:"keysym,omitempty"`
	Char    string `json:"char,omitempty"`
	Detail  int    `json:"detail,omitempty"`
	Mode    int    `json:"mode,omitempty"`
	Request int    `json:"request,omitempty"`
	Width   int    `json:"width,omitempty"`
	Height  int    `json:"height,omitempty"`
	PID     int    `json:"pid,omitempty"`
	// Time is the X server's timestamp of a key or button event, in milliseconds.
	Time uint32 `json:"time,omitempty"`
}

func run() error {
	title := flag.String("title", "xevlog", "window title")
	width := flag.Int("width", 400, "window width")
	height := flag.Int("height", 300, "window height")
	color := flag.String("color", "ffffff", "background colour as RRGGBB hex")
	out := flag.String("out", "", "write events to this file instead of stdout")
	xi2Focus := flag.Bool("xi2-focus", false, "also log every master keyboard's XInput2 focus events on the window, as xi_focus_in and xi_focus_out with the device, mode and detail (a toolkit that reads XI2 sees these, not the core ones, for the keyboards it does not treat as core)")
	xi2 := flag.Bool("xi2", false, "log the pointer's XInput2 events, with the device of each, instead of its core events")
	busy := flag.Duration("busy-after-key", 0, "after each key press, repaint the window with changing colours for this long, then log \"still\" with the server time (an application laying itself out again after keys)")
	takeFocus := flag.Duration("take-focus", -1, "take part in the window manager's focus protocol as a globally active client (WM_TAKE_FOCUS, no input hint) and answer _NET_WM_PING: on WM_TAKE_FOCUS log \"take_focus\", wait this long, then set the keyboard focus to the window with the message's time (a toolkit that moves the focus itself, late)")
	xkb := flag.Bool("xkb", false, "announce XKB, so that event states are the sending keyboard's (remapped keycodes then read as the mapping at start)")
	flag.Parse()
	pixel, err := strconv.ParseUint(strings.TrimPrefix(*color, "#"), 16, 32)
	if err != nil {
		return fmt.Errorf("bad -color %q: %v", *color, err)
	}
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	enc := json.NewEncoder(w)
	xgb.Logger = log.New(io.Discard, "", 0)
	var c *xgb.Conn
	var ec *xinput2.EventConn
	if *xi2 || *xi2Focus {
		c, ec, err = dialXI2()
	} else {
		c, err = xgb.NewConn()
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if *xkb {
		if err := useXKB(c); err != nil {
			return err
		}
	}
	scr := xproto.Setup(c).DefaultScreen(c)
	wid, err := xproto.NewWindowId(c)
	if err != nil {
		return err
	}
	mask := uint32(xproto.EventMaskKeyPress | xproto.EventMaskKeyRelease | xproto.EventMaskButtonPress |
		xproto.EventMaskButtonRelease | xproto.EventMaskPointerMotion | xproto.EventMaskFocusChange |
		xproto.EventMaskStructureNotify | xproto.EventMaskEnterWindow | xproto.EventMaskPropertyChange)
	if err := xproto.CreateWindowChecked(c, scr.RootDepth, wid, scr.Root, 0, 0, uint16(*width), uint16(*height), 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask,
		[]uint32{uint32(pixel), mask}).Check(); err != nil {
		return err
	}
	atom := func(name string) xproto.Atom {
		r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
		if err != nil {
			return 0
		}
		return r.Atom
	}
	setProp := func(prop, typ xproto.Atom, format byte, data []byte) {
		n := uint32(len(data))
		if format == 32 {
			n /= 4
		}
		xproto.ChangeProperty(c, xproto.PropModeReplace, wid, prop, typ, format, n, data)
	}
	setProp(xproto.AtomWmName, xproto.AtomString, 8, []byte(*title))
	setProp(atom("_NET_WM_NAME"), atom("UTF8_STRING"), 8, []byte(*title))
	setProp(xproto.AtomWmClass, xproto.AtomString, 8, []byte("xevlog\x00XEvLog\x00"))
	pid := make([]byte, 4)
	binary.LittleEndian.PutUint32(pid, uint32(os.Getpid()))
	setProp(atom("_NET_WM_PID"), xproto.AtomCardinal, 32, pid)
	wmDelete := atom("WM_DELETE_WINDOW")
	del := make([]byte, 4)
	binary.LittleEndian.PutUint32(del, uint32(wmDelete))
	takeFocusAtom, pingAtom := atom("WM_TAKE_FOCUS"), atom("_NET_WM_PING")
	if *takeFocus >= 0 {
		for _, a := range []xproto.Atom{takeFocusAtom, pingAtom} {
			del = binary.LittleEndian.AppendUint32(del, uint32(a))
		}
		// WM_HINTS with InputHint set and input false: the window manager does not set
		// the focus itself, it asks the client to.
		wmHints := make([]byte, 9*4)
		binary.LittleEndian.PutUint32(wmHints[0:], 1)
		setProp(xproto.AtomWmHints, xproto.AtomWmHints, 32, wmHints)
	}
	setProp(atom("WM_PROTOCOLS"), xproto.AtomAtom, 32, del)
	// A size hint so the window manager keeps the requested size (USSize|PSize, min=max).
	hints := make([]byte, 18*4)
	binary.LittleEndian.PutUint32(hints[0:], 1<<1|1<<3)
	binary.LittleEndian.PutUint32(hints[3*4:], uint32(*width))
	binary.LittleEndian.PutUint32(hints[4*4:], uint32(*height))
	setProp(xproto.AtomWmNormalHints, xproto.AtomWmSizeHints, 32, hints)
	if *xi2 || *xi2Focus {
		if err := xinput2.Init(c); err != nil {
			return err
		}
		var types []int
		if *xi2 {
			types = append(types, xinput2.EventButtonPress, xinput2.EventButtonRelease, xiMotion)
		}
		if *xi2Focus {
			types = append(types, xiFocusIn, xiFocusOut)
		}
		if err := xinput2.SelectEvents(c, wid, xinput2.AllMasterDevices, xinput2.Mask(types...)); err != nil {
			return err
		}
	}
	xproto.MapWindow(c, wid)

	km := loadKeymap(c)
	ready := false
	stillAtom := atom("_XEVLOG_STILL")
	anim := &animation{c: c, win: wid, base: uint32(pixel), still: stillAtom}
	for {
		ev, xe := c.WaitForEvent()
		if ev == nil && xe == nil {
			return nil
		}
		if xe != nil {
			continue
		}
		var line *Event
		switch e := ev.(type) {
		case xproto.MapNotifyEvent:
			if !ready && e.Window == wid {
				ready = true
				line = &Event{Type: "ready", Window: uint32(wid), Width: *width, Height: *height, PID: os.Getpid()}
			}
		case xproto.GeGenericEvent:
			if ge, ok := ec.Next(); ok {
				line = xiEvent(ge)
			}
		case xproto.ButtonPressEvent:
			line = &Event{Type: "button_press", Button: int(e.Detail), X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), State: e.State, Time: uint32(e.Time)}
		case xproto.ButtonReleaseEvent:
			line = &Event{Type: "button_release", Button: int(e.Detail), X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), State: e.State}
		case xproto.MotionNotifyEvent:
			line = &Event{Type: "motion", X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), State: e.State}
		case xproto.KeyPressEvent:
			line = keyEvent("key_press", km, e.Detail, e.State, e.EventX, e.EventY)
			line.Time = uint32(e.Time)
			if *busy > 0 {
				anim.extend(*busy)
			}
		case xproto.PropertyNotifyEvent:
			if e.Atom == stillAtom && e.Window == wid {
				line = &Event{Type: "still", Time: uint32(e.Time)}
			}
		case xproto.KeyReleaseEvent:
			line = keyEvent("key_release", km, e.Detail, e.State, e.EventX, e.EventY)
			line.Time = uint32(e.Time)
		case xproto.FocusInEvent:
			line = &Event{Type: "focus_in", Detail: int(e.Detail), Mode: int(e.Mode)}
		case xproto.FocusOutEvent:
			line = &Event{Type: "focus_out", Detail: int(e.Detail), Mode: int(e.Mode)}
		case xproto.MappingNotifyEvent:
			if e.Request == xproto.MappingKeyboard {
				km = loadKeymap(c)
			}
			line = &Event{Type: "mapping_notify", Request: int(e.Request), Keycode: int(e.FirstKeycode)}
		case xproto.ConfigureNotifyEvent:
			line = &Event{Type: "configure", X: int(e.X), Y: int(e.Y), Width: int(e.Width), Height: int(e.Height)}
		case xproto.ClientMessageEvent:
			if e.Type != atom("WM_PROTOCOLS") {
				break
			}
			switch xproto.Atom(e.Data.Data32[0]) {
			case wmDelete:
				return nil
			case takeFocusAtom:
				line = &Event{Type: "take_focus", Time: e.Data.Data32[1]}
				if err := enc.Encode(line); err != nil {
					return err
				}
				line = nil
				time.Sleep(*takeFocus)
				xproto.SetInputFocus(c, xproto.InputFocusParent, wid, xproto.Timestamp(e.Data.Data32[1]))
			case pingAtom:
				// Answered in order, after every event before it: the reply says so.
				e.Window = scr.Root
				xproto.SendEvent(c, false, scr.Root, xproto.EventMaskSubstructureNotify|xproto.EventMaskSubstructureRedirect, string(e.Bytes()))
			}
		}
		if line != nil {
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
	}
}

type keymap struct {
	min  xproto.Keycode
	per  int
	syms []xproto.Keysym
}

func loadKeymap(c *xgb.Conn) keymap {
	s := xproto.Setup(c)
	r, err := xproto.GetKeyboardMapping(c, s.MinKeycode, byte(s.MaxKeycode-s.MinKeycode+1)).Reply()
	if err != nil {
		return keymap{}
	}
	return keymap{min: s.MinKeycode, per: int(r.KeysymsPerKeycode), syms: r.Keysyms}
}

// keyEvent resolves the keysym with the core rules: column 1 with Shift, else column 0
// (a letter with only a lower-case entry is upper-cased with Shift).
func keyEvent(typ string, km keymap, kc xproto.Keycode, state uint16, x, y int16) *Event {
	ev := &Event{Type: typ, Keycode: int(kc), State: state, X: int(x), Y: int(y)}
	if km.per == 0 || kc < km.min {
		return ev
	}
	i := int(kc-km.min) * km.per
	if i+1 >= len(km.syms) {
		return ev
	}
	ks := km.syms[i]
	if state&xproto.ModMaskShift != 0 {
		if s1 := km.syms[i+1]; s1 != 0 {
			ks = s1
		} else if ks >= 'a' && ks <= 'z' {
			ks -= 0x20
		}
	}
	ev.Keysym = uint32(ks)
	switch {
	case ks >= 0x20 && ks <= 0x7e, ks >= 0xa0 && ks <= 0xff:
		ev.Char = string(rune(ks))
	case ks&0xff000000 == 0x01000000:
		ev.Char = string(rune(ks & 0xffffff))
	}
	return ev
}

// useXKB announces XKB to the server (XkbUseExtension 1.0), as every toolkit's X library
// does: the state of the key and button events it then sends is the state of the
// keyboard that sent them. A client that never announces XKB gets, in every event, the
// modifiers of its own core keyboard instead, whichever keyboard typed. An XKB client no
// longer gets core MappingNotify (it would have to select XKB's map events, which xevlog
// does not), so its view of the keymap stays the one it read at start.
func useXKB(c *xgb.Conn) error {
	const name = "XKEYBOARD"
	ext, err := xproto.QueryExtension(c, uint16(len(name)), name).Reply()
	if err != nil {
		return fmt.Errorf("QueryExtension %s: %w", name, err)
	}
	if !ext.Present {
		return fmt.Errorf("the X server has no %s extension", name)
	}
	buf := make([]byte, 8)
	buf[0], buf[1] = ext.MajorOpcode, 0 // XkbUseExtension
	xgb.Put16(buf[2:], 2)               // length in 4-byte units
	xgb.Put16(buf[4:], 1)               // wanted major
	xgb.Put16(buf[6:], 0)               // wanted minor
	cookie := c.NewCookie(true, true)
	c.NewRequest(buf, cookie)
	reply, err := cookie.Reply()
	if err != nil {
		return fmt.Errorf("XkbUseExtension: %w", err)
	}
	if len(reply) < 2 || reply[1] == 0 {
		return fmt.Errorf("XkbUseExtension: the server refused XKB 1.0")
	}
	return nil
}

// xiMotion is XI_Motion, the XI2 motion event type.
const xiMotion = 6

// XI_FocusIn and XI_FocusOut, the XI2 focus event types.
const (
	xiFocusIn  = 9
	xiFocusOut = 10
)

// xiEvent logs an XI2 pointer or focus event; nil for any other generic event.
func xiEvent(ge xinput2.GenericEvent) *Event {
	if ge.Type == xiFocusIn || ge.Type == xiFocusOut {
		return xiFocus(ge)
	}
	e, err := xinput2.ParseDeviceEvent(ge.Data)
	if err != nil {
		return nil
	}
	var typ string
	switch e.Type {
	case xinput2.EventButtonPress:
		typ = "button_press"
	case xinput2.EventButtonRelease:
		typ = "button_release"
	case xiMotion:
		typ = "motion"
	default:
		return nil
	}
	line := &Event{Type: typ, Device: int(e.Device), Source: int(e.Source), X: e.EventX, Y: e.EventY, RootX: e.RootX, RootY: e.RootY,
		State: uint16(e.Mods&0xff) | heldButtons(ge.Data)}
	if typ != "motion" {
		line.Button = int(e.Detail)
	}
	return line
}

// xiFocus logs an XI2 focus event (an xXIEnterEvent: device at byte 10, mode 18, detail
// 19, event window 24); nil when it is too short.
func xiFocus(ge xinput2.GenericEvent) *Event {
	b := ge.Data
	if len(b) < 32 {
		return nil
	}
	typ := "xi_focus_in"
	if ge.Type == xiFocusOut {
		typ = "xi_focus_out"
	}
	return &Event{Type: typ, Device: int(binary.LittleEndian.Uint16(b[10:])), Mode: int(b[18]), Detail: int(b[19]),
		Window: binary.LittleEndian.Uint32(b[24:])}
}

// heldButtons reads the button mask that follows an XIDeviceEvent's fixed part (buttons_len
// 4-byte units at byte 48, the mask from byte 80) as the core state's button bits: button n
// held is bit 7+n (Button1Mask = 0x100).
func heldButtons(b []byte) uint16 {
	n := 4 * int(binary.LittleEndian.Uint16(b[48:]))
	if len(b) < 80+n {
		return 0
	}
	var state uint16
	for btn := 1; btn <= 5 && btn/8 < n; btn++ {
		if b[80+btn/8]&(1<<(btn%8)) != 0 {
			state |= 1 << (7 + btn)
		}
	}
	return state
}

// dialXI2 connects to $DISPLAY (a local display) through an xinput2.EventConn, which takes
// XI2's generic events out of the stream xgb reads, with the cookie of $XAUTHORITY.
func dialXI2() (*xgb.Conn, *xinput2.EventConn, error) {
	disp := os.Getenv("DISPLAY")
	rest, ok := strings.CutPrefix(disp, ":")
	if !ok {
		return nil, nil, fmt.Errorf("-xi2 needs a local DISPLAY, not %q", disp)
	}
	num, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
	if err != nil {
		return nil, nil, fmt.Errorf("DISPLAY %q: %v", disp, err)
	}
	nc, err := net.Dial("unix", "/tmp/.X11-unix/X"+strconv.Itoa(num))
	if err != nil {
		return nil, nil, err
	}
	var cookie []byte
	if path := os.Getenv("XAUTHORITY"); path != "" {
		cookie, _ = xauth.Cookie(path, num) // none: connect without one, as Xlib does
	}
	ec := xinput2.NewEventConn(nc, nil)
	c, err := xgb.NewConnNet(&xauth.SetupConn{Conn: ec, Cookie: cookie})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return c, ec, nil
}

// animation repaints the window with changing colours until a deadline that every key
// press moves, then marks the end with a property change, whose PropertyNotify carries
// the server's time of it.
type animation struct {
	c     *xgb.Conn
	win   xproto.Window
	base  uint32
	still xproto.Atom

	mu      sync.Mutex // guards until and running
	until   time.Time
	running bool
}

// extend makes the window change for d from now.
func (a *animation) extend(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.until = time.Now().Add(d)
	if !a.running {
		a.running = true
		go a.run()
	}
}

func (a *animation) run() {
	for frame := uint32(1); ; frame++ {
		a.mu.Lock()
		done := !time.Now().Before(a.until)
		if done {
			a.running = false
		}
		a.mu.Unlock()
		pixel := a.base ^ (frame * 0x3f1f07 & 0xffffff)
		if done {
			pixel = a.base
		}
		xproto.ChangeWindowAttributes(a.c, a.win, xproto.CwBackPixel, []uint32{pixel})
		xproto.ClearArea(a.c, false, a.win, 0, 0, 0, 0)
		if done {
			xproto.ChangeProperty(a.c, xproto.PropModeReplace, a.win, a.still, xproto.AtomCardinal, 32, 1, []byte{0, 0, 0, 0})
			return
		}
		time.Sleep(15 * time.Millisecond)
	}
}
