package xinput2

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Minor opcodes of the event and grab requests.
const (
	opSelectEvents      = 46
	opPassiveGrabDevice = 54
	opPassiveUngrab     = 55
	opListProperties    = 56
)

// Special device ids of XI2 requests.
const (
	// AllDevices selects or grabs for every device, slaves included.
	AllDevices = 0
	// AllMasterDevices selects or grabs for every master device, present and future.
	AllMasterDevices = 1
)

// XI2 event types (the evtype of a generic event of the extension).
const (
	EventKeyPress         = 2
	EventKeyRelease       = 3
	EventButtonPress      = 4
	EventButtonRelease    = 5
	EventHierarchyChanged = 11
)

// Flags of a device event.
const (
	// FlagKeyRepeat marks a key press the server repeats while the key is held.
	FlagKeyRepeat = 1 << 16
)

// XTestDeviceProperty is the device property the X server puts on every XTEST slave (and on
// no other device); its value cannot be changed and it cannot be deleted.
const XTestDeviceProperty = "XTEST Device"

// Mask returns an XI2 event mask with the bits of types set.
func Mask(types ...int) []uint32 {
	var m []uint32
	for _, t := range types {
		for len(m) <= t/32 {
			m = append(m, 0)
		}
		m[t/32] |= 1 << (t % 32)
	}
	return m
}

// SelectEvents selects, for device id on win, the XI2 events of mask (replacing what c
// selected before for that device; an empty mask deselects). The server delivers them as
// generic events, which xgb cannot read: use the connection over an EventConn.
func SelectEvents(c *xgb.Conn, win xproto.Window, id uint16, mask []uint32) error {
	buf := request(c, opSelectEvents, 8+4+4*len(mask))
	xgb.Put32(buf[4:], uint32(win))
	xgb.Put16(buf[8:], 1) // num_masks
	m := buf[12:]
	xgb.Put16(m[0:], id)
	xgb.Put16(m[2:], uint16(len(mask)))
	for i, v := range mask {
		xgb.Put32(m[4+4*i:], v)
	}
	if err := checked(c, buf); err != nil {
		return fmt.Errorf("XISelectEvents 0x%x device %d: %w", uint32(win), id, err)
	}
	return nil
}

// Grab status of one modifier combination of a passive grab (XI2proto's GrabSuccess …).
const (
	GrabSuccess        = 0
	GrabAlreadyGrabbed = 1
)

// GrabFailure is one modifier combination a passive grab could not take, with the server's
// status for it (GrabAlreadyGrabbed when another client holds it).
type GrabFailure struct {
	Modifiers uint32
	Status    uint8
}

// GrabKeycode sets up an asynchronous passive grab of keycode on win for device id (usually
// AllMasterDevices) under each of modifiers: while one of those combinations is down the key's
// XI2 events of mask go to c alone. The server grants the combinations it can and returns the
// others; a combination another client holds is GrabAlreadyGrabbed.
func GrabKeycode(c *xgb.Conn, win xproto.Window, keycode byte, id uint16, modifiers []uint32, mask []uint32) ([]GrabFailure, error) {
	const (
		grabTypeKeycode = 1
		grabModeAsync   = 1
	)
	buf := request(c, opPassiveGrabDevice, 28+4*len(mask)+4*len(modifiers))
	// time CurrentTime (bytes 4–7)
	xgb.Put32(buf[8:], uint32(win))
	// cursor None (bytes 12–15)
	xgb.Put32(buf[16:], uint32(keycode))
	xgb.Put16(buf[20:], id)
	xgb.Put16(buf[22:], uint16(len(modifiers)))
	xgb.Put16(buf[24:], uint16(len(mask)))
	buf[26] = grabTypeKeycode
	buf[27] = grabModeAsync
	buf[28] = grabModeAsync // paired device mode
	buf[29] = 0             // owner_events
	p := buf[32:]
	for i, v := range mask {
		xgb.Put32(p[4*i:], v)
	}
	p = p[4*len(mask):]
	for i, v := range modifiers {
		xgb.Put32(p[4*i:], v)
	}
	reply, err := roundTrip(c, buf)
	if err != nil {
		return nil, fmt.Errorf("XIPassiveGrabDevice keycode %d: %w", keycode, err)
	}
	return parseGrabReply(reply)
}

func parseGrabReply(reply []byte) ([]GrabFailure, error) {
	if len(reply) < 32 {
		return nil, fmt.Errorf("XIPassiveGrabDevice: %w", ErrShortReply)
	}
	n := int(xgb.Get16(reply[8:]))
	if len(reply) < 32+8*n {
		return nil, fmt.Errorf("XIPassiveGrabDevice: %w", ErrShortReply)
	}
	var out []GrabFailure
	for i := range n {
		e := reply[32+8*i:]
		out = append(out, GrabFailure{Modifiers: xgb.Get32(e), Status: e[4]})
	}
	return out, nil
}

// UngrabKeycode releases c's passive grabs of keycode on win for device id under each of
// modifiers.
func UngrabKeycode(c *xgb.Conn, win xproto.Window, keycode byte, id uint16, modifiers []uint32) error {
	const grabTypeKeycode = 1
	buf := request(c, opPassiveUngrab, 16+4*len(modifiers))
	xgb.Put32(buf[4:], uint32(win))
	xgb.Put32(buf[8:], uint32(keycode))
	xgb.Put16(buf[12:], id)
	xgb.Put16(buf[14:], uint16(len(modifiers)))
	buf[16] = grabTypeKeycode
	for i, v := range modifiers {
		xgb.Put32(buf[20+4*i:], v)
	}
	if err := checked(c, buf); err != nil {
		return fmt.Errorf("XIPassiveUngrabDevice keycode %d: %w", keycode, err)
	}
	return nil
}

// Properties returns the property names (atoms) of each device of ids, in the order of ids,
// with one pipelined batch of XIListProperties requests.
func Properties(c *xgb.Conn, ids []uint16) ([][]xproto.Atom, error) {
	cookies := make([]*xgb.Cookie, len(ids))
	for i, id := range ids {
		buf := request(c, opListProperties, 4)
		xgb.Put16(buf[4:], id)
		cookies[i] = c.NewCookie(true, true)
		c.NewRequest(buf, cookies[i])
	}
	out := make([][]xproto.Atom, len(ids))
	var first error
	for i, ck := range cookies {
		reply, err := ck.Reply()
		if err == nil {
			out[i], err = parseAtoms(reply)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("XIListProperties %d: %w", ids[i], err)
		}
	}
	return out, first
}

func parseAtoms(reply []byte) ([]xproto.Atom, error) {
	if len(reply) < 32 {
		return nil, ErrShortReply
	}
	n := int(xgb.Get16(reply[8:]))
	if len(reply) < 32+4*n {
		return nil, ErrShortReply
	}
	atoms := make([]xproto.Atom, n)
	for i := range atoms {
		atoms[i] = xproto.Atom(xgb.Get32(reply[32+4*i:]))
	}
	return atoms, nil
}

// DeviceEvent is an XI2 device event: a key or button press or release (XIDeviceEvent).
type DeviceEvent struct {
	// Type is EventKeyPress, EventKeyRelease, EventButtonPress or EventButtonRelease.
	Type uint16
	// Device is the device the event is reported for (a master, when masters were
	// selected); Source is the slave device that produced it.
	Device, Source uint16
	Time           xproto.Timestamp
	// Detail is the button or keycode.
	Detail uint32
	Root   xproto.Window
	// Event is the window the event is reported relative to, Child its child on the
	// pointer's way down, or None.
	Event, Child xproto.Window
	// RootX/Y and EventX/Y are the pointer's position, whole pixels.
	RootX, RootY, EventX, EventY int
	// Flags are the event's flags (FlagKeyRepeat …).
	Flags uint32
	// Mods is the effective modifier state.
	Mods uint32
}

// deviceEventLen is the fixed part of an XIDeviceEvent.
const deviceEventLen = 80

// ParseDeviceEvent decodes a whole generic event holding an XIDeviceEvent.
func ParseDeviceEvent(b []byte) (DeviceEvent, error) {
	if len(b) < deviceEventLen || b[0]&0x7f != xproto.GeGeneric {
		return DeviceEvent{}, ErrShortReply
	}
	if need := 32 + 4*int(xgb.Get32(b[4:])); len(b) < need {
		return DeviceEvent{}, ErrShortReply
	}
	fp := func(off int) int { return int(int32(xgb.Get32(b[off:])) >> 16) }
	return DeviceEvent{
		Type:   xgb.Get16(b[8:]),
		Device: xgb.Get16(b[10:]),
		Time:   xproto.Timestamp(xgb.Get32(b[12:])),
		Detail: xgb.Get32(b[16:]),
		Root:   xproto.Window(xgb.Get32(b[20:])),
		Event:  xproto.Window(xgb.Get32(b[24:])),
		Child:  xproto.Window(xgb.Get32(b[28:])),
		RootX:  fp(32), RootY: fp(36), EventX: fp(40), EventY: fp(44),
		Source: xgb.Get16(b[52:]),
		Flags:  xgb.Get32(b[56:]),
		Mods:   xgb.Get32(b[72:]),
	}, nil
}
