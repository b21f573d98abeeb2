package xinput2

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/jezek/xgb/xproto"
)

// The stream tests feed EventConn a server's byte stream through one end of a pipe and read
// what xgb would read from the other.

// setupReply is a successful setup reply with n units of additional data.
func setupReply(n int) []byte {
	b := make([]byte, 8+4*n)
	b[0] = 1
	binary.LittleEndian.PutUint16(b[2:], 11)
	binary.LittleEndian.PutUint16(b[6:], uint16(n))
	for i := 8; i < len(b); i++ {
		b[i] = byte(i)
	}
	return b
}

// unit is a 32-byte message with code and a marker byte.
func unit(code, mark byte) []byte {
	b := make([]byte, 32)
	b[0], b[2] = code, mark
	return b
}

// reply is a reply with n extra units.
func reply(mark byte, n int) []byte {
	b := make([]byte, 32+4*n)
	b[0], b[2] = 1, mark
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	for i := 32; i < len(b); i++ {
		b[i] = mark
	}
	return b
}

// generic is an XI2-like generic event of extension ext and evtype typ, n extra units.
func generic(ext byte, typ uint16, n int) []byte {
	b := make([]byte, 32+4*n)
	b[0], b[1] = xproto.GeGeneric, ext
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	binary.LittleEndian.PutUint16(b[8:], typ)
	for i := 32; i < len(b); i++ {
		b[i] = byte(typ)
	}
	return b
}

// run writes stream in chunks of chunk bytes and returns what EventConn let through and
// the generic events it queued.
func run(t testing.TB, stream []byte, chunk int, keep func(byte) bool) ([]byte, []GenericEvent, int) {
	t.Helper()
	server, client := net.Pipe()
	ec := NewEventConn(client, keep)
	go func() {
		for len(stream) > 0 {
			n := min(chunk, len(stream))
			if _, err := server.Write(stream[:n]); err != nil {
				return
			}
			stream = stream[n:]
		}
		server.Close()
	}()
	out, _ := io.ReadAll(ec)
	ec.Close()
	var evs []GenericEvent
	for {
		ev, ok := ec.Next()
		if !ok {
			break
		}
		evs = append(evs, ev)
	}
	return out, evs, ec.Dropped()
}

func TestEventConn(t *testing.T) {
	sent := unit(xproto.ButtonPress|0x80, 7)
	sentMsg := unit(xproto.ClientMessage|0x80, 8)
	ge1, ge2 := generic(131, EventButtonPress, 12), generic(131, EventHierarchyChanged, 3)
	var stream []byte
	extErr := unit(0, 5)
	extErr[1], extErr[10] = 130, 131 // XInput's BadDevice (first error 128 + 2) of request 131
	for _, p := range [][]byte{setupReply(5), unit(xproto.Expose, 1), reply(2, 9), ge1, unit(0, 3), sent, sentMsg, ge2, extErr, reply(4, 0)} {
		stream = append(stream, p...)
	}
	implErr := unit(0, 5)
	implErr[1], implErr[10], implErr[11] = xproto.BadImplementation, 131, 130
	placeholder := func(ge []byte) []byte {
		h := append([]byte(nil), ge[:32]...)
		binary.LittleEndian.PutUint32(h[4:], 0)
		return h
	}
	var want []byte
	for _, p := range [][]byte{setupReply(5), unit(xproto.Expose, 1), reply(2, 9), placeholder(ge1), unit(0, 3), sentMsg, placeholder(ge2), implErr, reply(4, 0)} {
		want = append(want, p...)
	}
	keep := func(code byte) bool { return code == xproto.ClientMessage }
	for _, chunk := range []int{1, 3, 31, 32, 33, 100, len(stream)} {
		out, evs, dropped := run(t, stream, chunk, keep)
		if !bytes.Equal(out, want) {
			t.Errorf("chunk %d: xgb reads %d bytes, want %d:\n%x\nwant\n%x", chunk, len(out), len(want), out, want)
		}
		if len(evs) != 2 || !bytes.Equal(evs[0].Data, ge1) || !bytes.Equal(evs[1].Data, ge2) ||
			evs[0].Extension != 131 || evs[0].Type != EventButtonPress || evs[1].Type != EventHierarchyChanged {
			t.Errorf("chunk %d: queued %+v, want the two generic events whole", chunk, evs)
		}
		if dropped != 1 {
			t.Errorf("chunk %d: Dropped() = %d, want 1 (the sent ButtonPress)", chunk, dropped)
		}
	}
}

func TestEventConnOversizedGeneric(t *testing.T) {
	big := generic(131, 99, maxGenericEvent/4)
	stream := append(append(setupReply(0), big...), unit(xproto.Expose, 1)...)
	out, evs, dropped := run(t, stream, 4096, nil)
	if want := append(setupReply(0), unit(xproto.Expose, 1)...); !bytes.Equal(out, want) || len(evs) != 0 || dropped != 1 {
		t.Fatalf("oversized generic event: out %d bytes, %d queued, %d dropped; want it dropped whole", len(out), len(evs), dropped)
	}
}

func TestParseDeviceEvent(t *testing.T) {
	b := generic(131, EventButtonPress, 12)
	put32 := func(off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
	binary.LittleEndian.PutUint16(b[10:], 2) // deviceid
	put32(12, 123456)                        // time
	put32(16, 1)                             // detail
	put32(24, 0x400001)                      // event
	put32(32, 100<<16)                       // root_x
	put32(36, 200<<16)                       // root_y
	put32(40, uint32(int32(37)<<16|0x8000))  // event_x 37.5
	put32(44, uint32(uint32(0xfffe)<<16))    // event_y -2
	binary.LittleEndian.PutUint16(b[52:], 6) // sourceid
	put32(56, FlagKeyRepeat)
	put32(72, 0x0d)
	e, err := ParseDeviceEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceEvent{Type: EventButtonPress, Device: 2, Source: 6, Time: 123456, Detail: 1, Event: 0x400001,
		RootX: 100, RootY: 200, EventX: 37, EventY: -2, Flags: FlagKeyRepeat, Mods: 0x0d}
	if e != want {
		t.Fatalf("ParseDeviceEvent = %+v, want %+v", e, want)
	}
	if _, err := ParseDeviceEvent(b[:79]); err == nil {
		t.Error("ParseDeviceEvent of a short event succeeded")
	}
	short := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(short[4:], 100)
	if _, err := ParseDeviceEvent(short); err == nil {
		t.Error("ParseDeviceEvent of an event shorter than its length succeeded")
	}
}

func TestMask(t *testing.T) {
	if m := Mask(EventButtonPress, EventButtonRelease); len(m) != 1 || m[0] != 1<<4|1<<5 {
		t.Errorf("Mask(4, 5) = %x", m)
	}
	if m := Mask(EventHierarchyChanged, 33); len(m) != 2 || m[0] != 1<<11 || m[1] != 1<<1 {
		t.Errorf("Mask(11, 33) = %x", m)
	}
}

func FuzzEventConn(f *testing.F) {
	var stream []byte
	for _, p := range [][]byte{setupReply(2), unit(xproto.Expose, 1), reply(2, 3), generic(131, 4, 12), unit(xproto.KeyPress|0x80, 3)} {
		stream = append(stream, p...)
	}
	f.Add(stream, 7)
	f.Add(setupReply(0), 1)
	f.Fuzz(func(t *testing.T, stream []byte, chunk int) {
		if chunk < 1 || chunk > 1<<16 || len(stream) > 1<<16 {
			return
		}
		out, evs, _ := run(t, stream, chunk, nil)
		if len(out) > len(stream) {
			t.Fatalf("EventConn let %d bytes through from %d", len(out), len(stream))
		}
		for _, e := range evs {
			if _, err := ParseDeviceEvent(e.Data); err != nil && len(e.Data) >= deviceEventLen {
				t.Fatalf("a queued generic event of %d bytes does not parse: %v", len(e.Data), err)
			}
		}
	})
}

func FuzzParseDeviceEvent(f *testing.F) {
	f.Add(generic(131, EventButtonPress, 12))
	f.Add(generic(131, EventKeyPress, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseDeviceEvent(b)
		if err == nil && len(b) < deviceEventLen {
			t.Fatalf("parsed %d bytes: %+v", len(b), e)
		}
	})
}

func TestParseGrabReply(t *testing.T) {
	r := make([]byte, 32+16)
	binary.LittleEndian.PutUint16(r[8:], 2)
	binary.LittleEndian.PutUint32(r[32:], 0x0d)
	r[36] = GrabAlreadyGrabbed
	binary.LittleEndian.PutUint32(r[40:], 0x0f)
	r[44] = 3
	got, err := parseGrabReply(r)
	if err != nil || len(got) != 2 || got[0] != (GrabFailure{0x0d, GrabAlreadyGrabbed}) || got[1] != (GrabFailure{0x0f, 3}) {
		t.Fatalf("parseGrabReply = %+v, %v", got, err)
	}
	if _, err := parseGrabReply(r[:40]); err == nil {
		t.Error("parseGrabReply of a short reply succeeded")
	}
	a := make([]byte, 32+8)
	binary.LittleEndian.PutUint16(a[8:], 2)
	binary.LittleEndian.PutUint32(a[32:], 7)
	binary.LittleEndian.PutUint32(a[36:], 9)
	if atoms, err := parseAtoms(a); err != nil || len(atoms) != 2 || atoms[0] != 7 || atoms[1] != 9 {
		t.Fatalf("parseAtoms = %v, %v", atoms, err)
	}
}

func TestParseFocusReply(t *testing.T) {
	r := make([]byte, 32)
	binary.LittleEndian.PutUint32(r[8:], 0x60000c)
	if w, err := parseFocusReply(r); err != nil || w != 0x60000c {
		t.Fatalf("parseFocusReply = 0x%x, %v", w, err)
	}
	if _, err := parseFocusReply(r[:11]); err != ErrShortReply {
		t.Errorf("parseFocusReply of 11 bytes: %v, want ErrShortReply", err)
	}
}

func FuzzParseFocusReply(f *testing.F) {
	f.Add(make([]byte, 32))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := parseFocusReply(b)
		if (err == nil) != (len(b) >= 12) {
			t.Fatalf("%d bytes: 0x%x, %v", len(b), w, err)
		}
		if err == nil && w != xproto.Window(binary.LittleEndian.Uint32(b[8:])) {
			t.Fatalf("read 0x%x from %x", w, b[8:12])
		}
	})
}
