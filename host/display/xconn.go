package display

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// ErrAuthRefused means the X server refused a connection's authorization.
var ErrAuthRefused = errors.New("display: X server refused the connection")

// xconn is a minimal X11 client: connection setup plus the two requests readiness needs.
type xconn struct {
	c    net.Conn
	root uint32
}

// dialX connects to display number num over its Unix socket, authorizing with cookie
// (nil: no authorization).
func dialX(ctx context.Context, num int, cookie []byte) (*xconn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", "/tmp/.X11-unix/X"+strconv.Itoa(num))
	if err != nil {
		return nil, fmt.Errorf("connect :%d: %w", num, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	} else {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	x := &xconn{c: c}
	if err := x.setup(cookie); err != nil {
		c.Close()
		return nil, err
	}
	return x, nil
}

func pad4(n int) int { return (n + 3) &^ 3 }

func (x *xconn) setup(cookie []byte) error {
	name := ""
	if cookie != nil {
		name = cookieName
	}
	req := make([]byte, 12+pad4(len(name))+pad4(len(cookie)))
	req[0] = 'l'
	binary.LittleEndian.PutUint16(req[2:], 11)
	binary.LittleEndian.PutUint16(req[6:], uint16(len(name)))
	binary.LittleEndian.PutUint16(req[8:], uint16(len(cookie)))
	copy(req[12:], name)
	copy(req[12+pad4(len(name)):], cookie)
	if _, err := x.c.Write(req); err != nil {
		return fmt.Errorf("x setup: %w", err)
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(x.c, head); err != nil {
		return fmt.Errorf("x setup: %w", err)
	}
	body := make([]byte, int(binary.LittleEndian.Uint16(head[6:]))*4)
	if _, err := io.ReadFull(x.c, body); err != nil {
		return fmt.Errorf("x setup: %w", err)
	}
	if head[0] != 1 {
		reason := body
		if head[0] == 0 && int(head[1]) <= len(body) {
			reason = body[:head[1]]
		}
		return fmt.Errorf("%w: %q", ErrAuthRefused, string(reason))
	}
	// Success: body starts at byte 8 of the reply (see the X11 protocol, connection setup).
	if len(body) < 32 {
		return errors.New("x setup: short reply")
	}
	vendorLen := int(binary.LittleEndian.Uint16(body[16:]))
	numFormats := int(body[21])
	off := 32 + pad4(vendorLen) + 8*numFormats
	if len(body) < off+4 {
		return errors.New("x setup: short reply")
	}
	x.root = binary.LittleEndian.Uint32(body[off:])
	return nil
}

func (x *xconn) Close() error { return x.c.Close() }

// roundTrip sends one request and reads its 32-byte reply plus extra data.
func (x *xconn) roundTrip(req []byte) ([]byte, error) {
	if _, err := x.c.Write(req); err != nil {
		return nil, err
	}
	for {
		head := make([]byte, 32)
		if _, err := io.ReadFull(x.c, head); err != nil {
			return nil, err
		}
		switch head[0] {
		case 0:
			return nil, fmt.Errorf("x error %d", head[1])
		case 1:
			extra := make([]byte, int(binary.LittleEndian.Uint32(head[4:]))*4)
			if _, err := io.ReadFull(x.c, extra); err != nil {
				return nil, err
			}
			return append(head, extra...), nil
		}
		// An event: skip it.
	}
}

// internAtom returns the atom named name, or 0 when it does not exist.
func (x *xconn) internAtom(name string) (uint32, error) {
	req := make([]byte, 8+pad4(len(name)))
	req[0] = 16 // InternAtom
	req[1] = 1  // only-if-exists
	binary.LittleEndian.PutUint16(req[2:], uint16(len(req)/4))
	binary.LittleEndian.PutUint16(req[4:], uint16(len(name)))
	copy(req[8:], name)
	rep, err := x.roundTrip(req)
	if err != nil {
		return 0, fmt.Errorf("InternAtom: %w", err)
	}
	return binary.LittleEndian.Uint32(rep[8:]), nil
}

// windowProperty returns the first 32-bit value of property prop on the root window.
func (x *xconn) rootProperty32(prop uint32) (uint32, bool, error) {
	req := make([]byte, 24)
	req[0] = 20 // GetProperty
	binary.LittleEndian.PutUint16(req[2:], 6)
	binary.LittleEndian.PutUint32(req[4:], x.root)
	binary.LittleEndian.PutUint32(req[8:], prop)
	binary.LittleEndian.PutUint32(req[12:], 0) // AnyPropertyType
	binary.LittleEndian.PutUint32(req[16:], 0)
	binary.LittleEndian.PutUint32(req[20:], 1)
	rep, err := x.roundTrip(req)
	if err != nil {
		return 0, false, fmt.Errorf("GetProperty: %w", err)
	}
	if rep[1] != 32 || len(rep) < 36 {
		return 0, false, nil
	}
	return binary.LittleEndian.Uint32(rep[32:]), true, nil
}
