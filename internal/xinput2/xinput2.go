// Package xinput2 encodes the few XInput2 requests that per-session input devices need:
// xgb has no XInput bindings. Layouts and minor opcodes are those of XI2proto.h (XI 2.2).
// Every function takes the connection the request goes on, on which Init ran first.
//
// It also owns the naming of the master pairs cua-host creates ("cua-host LABEL (pid N)"),
// so that the worker that made a pair and the host that outlives a killed worker agree on
// whose pairs are whose.
package xinput2

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Extension is the X extension name.
const Extension = "XInputExtension"

// Minor opcodes.
const (
	opQueryPointer     = 40
	opChangeHierarchy  = 43
	opSetClientPointer = 44
	opQueryVersion     = 47
	opQueryDevice      = 48
	opSetFocus         = 49
	opGetFocus         = 50
)

// Hierarchy change types and the removal mode.
const (
	changeAddMaster    = 1
	changeRemoveMaster = 2
	modeFloating       = 2
	allDevices         = 0
)

// Device uses, as XIQueryDevice reports them.
const (
	MasterPointer  = 1
	MasterKeyboard = 2
	SlavePointer   = 3
	SlaveKeyboard  = 4
	FloatingSlave  = 5
)

// Errors.
var (
	// ErrUnsupported: the server has no XInput 2.2.
	ErrUnsupported = errors.New("xinput2: not supported by the X server")
	// ErrShortReply: a reply shorter than its own counts say.
	ErrShortReply = errors.New("xinput2: short reply")
)

// Device is one entry of XIQueryDevice.
type Device struct {
	ID uint16
	// Use is MasterPointer, MasterKeyboard, SlavePointer, SlaveKeyboard or FloatingSlave.
	Use uint16
	// Attachment is a master's paired master, a slave's master.
	Attachment uint16
	Name       string
}

// Init makes XInput2 usable on c: it records the extension's major opcode in c and
// announces XI 2.2, which the server requires before any other XI2 request of a client.
func Init(c *xgb.Conn) error {
	if err := recordExtension(c, Extension); err != nil {
		return err
	}
	buf := request(c, opQueryVersion, 4)
	xgb.Put16(buf[4:], 2)
	xgb.Put16(buf[6:], 2)
	reply, err := roundTrip(c, buf)
	if err != nil {
		return fmt.Errorf("XIQueryVersion: %w", err)
	}
	if len(reply) < 12 {
		return fmt.Errorf("XIQueryVersion: %w", ErrShortReply)
	}
	major, minor := xgb.Get16(reply[8:]), xgb.Get16(reply[10:])
	if major < 2 || (major == 2 && minor < 2) {
		return fmt.Errorf("%w: the server speaks XInput %d.%d, 2.2 is needed", ErrUnsupported, major, minor)
	}
	return nil
}

// request returns a request buffer of 4+bodyLen bytes (bodyLen a multiple of 4) with its
// header filled in.
func request(c *xgb.Conn, minor byte, bodyLen int) []byte {
	buf := make([]byte, 4+bodyLen)
	c.ExtLock.RLock()
	buf[0] = c.Extensions[Extension]
	c.ExtLock.RUnlock()
	buf[1] = minor
	xgb.Put16(buf[2:], uint16(len(buf)/4))
	return buf
}

// roundTrip sends buf and waits for its reply.
func roundTrip(c *xgb.Conn, buf []byte) ([]byte, error) {
	cookie := c.NewCookie(true, true)
	c.NewRequest(buf, cookie)
	return cookie.Reply()
}

// checked sends buf, a request without a reply, and waits until the server processed it,
// returning the server's error if any.
func checked(c *xgb.Conn, buf []byte) error {
	cookie := c.NewCookie(true, false)
	c.NewRequest(buf, cookie)
	return cookie.Check()
}

// AddMaster creates a master pointer "name pointer" and a master keyboard "name keyboard",
// each with an XTEST slave, sending core events and enabled. The server does not say which
// ids it chose (and accepts a name that exists): compare Devices before and after.
func AddMaster(c *xgb.Conn, name string) error {
	if name == "" || len(name) > 200 {
		return fmt.Errorf("XIChangeHierarchy(AddMaster): device name of %d bytes (want 1–200)", len(name))
	}
	padded := (len(name) + 3) &^ 3
	buf := request(c, opChangeHierarchy, 4+8+padded)
	buf[4] = 1 // number of changes
	ch := buf[8:]
	xgb.Put16(ch[0:], changeAddMaster)
	xgb.Put16(ch[2:], uint16((8+padded)/4))
	xgb.Put16(ch[4:], uint16(len(name)))
	ch[6] = 1 // send_core
	ch[7] = 1 // enable
	copy(ch[8:], name)
	if err := checked(c, buf); err != nil {
		return fmt.Errorf("XIChangeHierarchy(AddMaster %q): %w", name, err)
	}
	return nil
}

// RemoveMaster removes the master pair that id (its pointer or keyboard) belongs to; the
// pair's slaves float.
func RemoveMaster(c *xgb.Conn, id uint16) error {
	buf := request(c, opChangeHierarchy, 4+12)
	buf[4] = 1
	ch := buf[8:]
	xgb.Put16(ch[0:], changeRemoveMaster)
	xgb.Put16(ch[2:], 3)
	xgb.Put16(ch[4:], id)
	ch[6] = modeFloating
	if err := checked(c, buf); err != nil {
		return fmt.Errorf("XIChangeHierarchy(RemoveMaster %d): %w", id, err)
	}
	return nil
}

// Devices lists every input device of the server.
func Devices(c *xgb.Conn) ([]Device, error) {
	buf := request(c, opQueryDevice, 4)
	xgb.Put16(buf[4:], allDevices)
	reply, err := roundTrip(c, buf)
	if err != nil {
		return nil, fmt.Errorf("XIQueryDevice: %w", err)
	}
	devs, err := ParseDevices(reply)
	if err != nil {
		return nil, fmt.Errorf("XIQueryDevice: %w", err)
	}
	return devs, nil
}

// ParseDevices decodes an XIQueryDevice reply, refusing one that runs short of what its
// counts announce.
func ParseDevices(reply []byte) ([]Device, error) {
	if len(reply) < 32 {
		return nil, ErrShortReply
	}
	n := int(xgb.Get16(reply[8:]))
	out := make([]Device, 0, min(n, 256))
	p := reply[32:]
	for range n {
		if len(p) < 12 {
			return nil, ErrShortReply
		}
		d := Device{ID: xgb.Get16(p[0:]), Use: xgb.Get16(p[2:]), Attachment: xgb.Get16(p[4:])}
		classes, nameLen := int(xgb.Get16(p[6:])), int(xgb.Get16(p[8:]))
		p = p[12:]
		padded := (nameLen + 3) &^ 3
		if len(p) < padded {
			return nil, ErrShortReply
		}
		d.Name = string(p[:nameLen])
		p = p[padded:]
		for range classes {
			if len(p) < 4 {
				return nil, ErrShortReply
			}
			l := int(xgb.Get16(p[2:])) * 4
			if l < 4 || len(p) < l {
				return nil, ErrShortReply
			}
			p = p[l:]
		}
		out = append(out, d)
	}
	return out, nil
}

// SetClientPointer makes master pointer id the client pointer of the client that created
// win, or of c's own client when win is 0: the pointer that client's core requests and
// core XTEST input use, its paired keyboard for keys, focus and keyboard grabs, and the
// keyboard whose modifiers the client's core events carry when it does not use XKB.
func SetClientPointer(c *xgb.Conn, win xproto.Window, id uint16) error {
	buf := request(c, opSetClientPointer, 8)
	xgb.Put32(buf[4:], uint32(win))
	xgb.Put16(buf[8:], id)
	if err := checked(c, buf); err != nil {
		return fmt.Errorf("XISetClientPointer 0x%x %d: %w", uint32(win), id, err)
	}
	return nil
}

// SetFocus sets the focus of keyboard device id to win (at CurrentTime).
func SetFocus(c *xgb.Conn, id uint16, win xproto.Window) error {
	buf := request(c, opSetFocus, 12)
	xgb.Put32(buf[4:], uint32(win))
	// time CurrentTime (bytes 8–11)
	xgb.Put16(buf[12:], id)
	if err := checked(c, buf); err != nil {
		return fmt.Errorf("XISetFocus %d 0x%x: %w", id, uint32(win), err)
	}
	return nil
}

// Focus returns the focus window of keyboard device id (0 None, 1 PointerRoot).
func Focus(c *xgb.Conn, id uint16) (xproto.Window, error) { return AskFocus(c, id).Reply() }

// FocusCookie is an XIGetFocus question in flight (AskFocus).
type FocusCookie struct {
	cookie *xgb.Cookie
	id     uint16
}

// AskFocus sends the question of keyboard device id's focus without waiting for the
// answer: the server answers it in order with c's other requests, whichever device c's
// core requests use.
func AskFocus(c *xgb.Conn, id uint16) FocusCookie {
	buf := request(c, opGetFocus, 4)
	xgb.Put16(buf[4:], id)
	cookie := c.NewCookie(true, true)
	c.NewRequest(buf, cookie)
	return FocusCookie{cookie: cookie, id: id}
}

// Reply waits for the answer: the focus window (0 None, 1 PointerRoot).
func (f FocusCookie) Reply() (xproto.Window, error) {
	reply, err := f.cookie.Reply()
	if err == nil {
		var w xproto.Window
		if w, err = parseFocusReply(reply); err == nil {
			return w, nil
		}
	}
	return 0, fmt.Errorf("XIGetFocus %d: %w", f.id, err)
}

// parseFocusReply reads the focus window of an XIGetFocus reply.
func parseFocusReply(reply []byte) (xproto.Window, error) {
	if len(reply) < 12 {
		return 0, ErrShortReply
	}
	return xproto.Window(xgb.Get32(reply[8:])), nil
}

// QueryPointer returns the position of master pointer id in root coordinates.
func QueryPointer(c *xgb.Conn, root xproto.Window, id uint16) (x, y int, err error) {
	buf := request(c, opQueryPointer, 8)
	xgb.Put32(buf[4:], uint32(root))
	xgb.Put16(buf[8:], id)
	reply, err := roundTrip(c, buf)
	if err != nil {
		return 0, 0, fmt.Errorf("XIQueryPointer %d: %w", id, err)
	}
	if len(reply) < 24 {
		return 0, 0, fmt.Errorf("XIQueryPointer %d: %w", id, ErrShortReply)
	}
	// FP16.16; the integer part is the pixel.
	return int(int32(xgb.Get32(reply[16:])) >> 16), int(int32(xgb.Get32(reply[20:])) >> 16), nil
}

// seatPrefix starts the name of every master pair cua-host creates.
const seatPrefix = "cua-host "

// SeatName is the name of the master pair that process pid creates for session label: the
// server names the pair's devices "NAME pointer" and "NAME keyboard".
func SeatName(label string, pid int) string {
	return fmt.Sprintf("%s%s (pid %d)", seatPrefix, label, pid)
}

// ParseSeatPointer reports whether device name is the master pointer of a pair named by
// SeatName, and the label and pid in it.
func ParseSeatPointer(name string) (label string, pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, seatPrefix)
	if !ok {
		return "", 0, false
	}
	rest, ok = strings.CutSuffix(rest, ") pointer")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndex(rest, " (pid ")
	if i < 0 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(rest[i+len(" (pid "):])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return rest[:i], pid, true
}

// releaseAll releases whatever the pair of master pointer id still holds — its buttons and
// its keyboard's keys — as the process that made it would have before removing it: a
// removed device's held buttons and keys are never released to the windows that got them.
// It sends XTEST releases on c with the pair as c's client pointer (releases of what is not
// down are ignored), then makes the core pointer c's client pointer again.
func releaseAll(c *xgb.Conn, id uint16) error {
	if err := recordExtension(c, "XTEST"); err != nil {
		return err
	}
	if err := SetClientPointer(c, 0, id); err != nil {
		return err
	}
	const fakeInput = 2 // XTEST minor opcode
	send := func(typ, detail byte) {
		buf := make([]byte, 36)
		c.ExtLock.RLock()
		buf[0] = c.Extensions["XTEST"]
		c.ExtLock.RUnlock()
		buf[1] = fakeInput
		xgb.Put16(buf[2:], 9)
		buf[4], buf[5] = typ, detail
		// time 0 (now), window None, x y 0, device 0 (the client pointer's)
		c.NewRequest(buf, c.NewCookie(false, false))
	}
	for b := byte(1); b <= 7; b++ {
		send(xproto.ButtonRelease, b)
	}
	setup := xproto.Setup(c)
	for k := int(setup.MinKeycode); k <= int(setup.MaxKeycode); k++ {
		send(xproto.KeyRelease, byte(k))
	}
	_, err := xproto.GetInputFocus(c).Reply() // the releases were processed
	return err
}

// recordExtension records extension name's major opcode in c, as xgb's extension packages'
// Init do, without touching xgb's process-wide event tables.
func recordExtension(c *xgb.Conn, name string) error {
	r, err := xproto.QueryExtension(c, uint16(len(name)), name).Reply()
	if err != nil {
		return fmt.Errorf("QueryExtension %s: %w", name, err)
	}
	if !r.Present {
		return fmt.Errorf("%w: no %s", ErrUnsupported, name)
	}
	c.ExtLock.Lock()
	c.Extensions[name] = r.MajorOpcode
	c.ExtLock.Unlock()
	return nil
}

// RemoveSeats removes every master pair named by SeatName whose pid remove selects, after
// releasing what it holds, and returns the pointer names of the pairs it removed. It goes
// on past a failed removal and returns the first error.
func RemoveSeats(c *xgb.Conn, remove func(pid int) bool) ([]string, error) {
	devs, err := Devices(c)
	if err != nil {
		return nil, err
	}
	var removed []string
	var first error
	for _, d := range devs {
		if d.Use != MasterPointer {
			continue
		}
		if _, pid, ok := ParseSeatPointer(d.Name); ok && remove(pid) {
			if err := releaseAll(c, d.ID); err != nil {
				first = cmp.Or(first, err)
			}
			if err := RemoveMaster(c, d.ID); err != nil {
				first = cmp.Or(first, err)
				continue
			}
			removed = append(removed, d.Name)
		}
	}
	return removed, first
}
