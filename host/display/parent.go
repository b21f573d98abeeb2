package display

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jezek/xgb"
)

var silenceXGB sync.Once

// dialParent connects to the person's display name (":N") with the cookie for it in the
// Xauthority file at xauth (empty, or no entry for the display: no cookie, as Xlib does).
// xgb runs its own connection setup and looks for a cookie through XAUTHORITY; the setup
// request it writes is replaced on the wire by one carrying the cookie read here, so this
// process's environment plays no part.
func dialParent(ctx context.Context, name, xauth string) (*xgb.Conn, error) {
	num, err := localDisplayNumber(name)
	if err != nil {
		return nil, err
	}
	var cookie []byte
	if xauth != "" {
		cookie, _ = readCookie(xauth, num) // none: connect without one
	}
	silenceXGB.Do(func() { xgb.Logger = log.New(io.Discard, "", 0) })
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	path := "/tmp/.X11-unix/X" + strconv.Itoa(num)
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		var err2 error
		if nc, err2 = d.DialContext(ctx, "unix", "@"+path); err2 != nil {
			return nil, fmt.Errorf("connect %s: %w", name, err)
		}
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	x, err := xgb.NewConnNet(&setupConn{Conn: nc, cookie: cookie})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("connect %s: %w", name, err)
	}
	_ = nc.SetDeadline(time.Time{})
	return x, nil
}

// setupConn replaces the authorization of the first request written on it — xgb's
// connection setup — with cookie (none when empty). Later writes pass through. The first
// Write happens in NewConnNet before xgb starts its goroutines, so rewritten needs no lock.
type setupConn struct {
	net.Conn
	cookie    []byte
	rewritten bool
}

func (c *setupConn) Write(p []byte) (int, error) {
	if c.rewritten {
		return c.Conn.Write(p)
	}
	c.rewritten = true
	// byte order, unused, major u16, minor u16, name length u16, data length u16, unused
	// u16, name, pad, data, pad; xgb writes it little-endian and whole.
	if len(p) < 12 || p[0] != 'l' {
		return 0, errors.New("unexpected connection setup request")
	}
	nameLen, dataLen := int(binary.LittleEndian.Uint16(p[6:])), int(binary.LittleEndian.Uint16(p[8:]))
	if len(p) != 12+pad4(nameLen)+pad4(dataLen) {
		return 0, errors.New("unexpected connection setup request")
	}
	name := ""
	if len(c.cookie) > 0 {
		name = cookieName
	}
	buf := make([]byte, 12+pad4(len(name))+pad4(len(c.cookie)))
	copy(buf, p[:6])
	binary.LittleEndian.PutUint16(buf[6:], uint16(len(name)))
	binary.LittleEndian.PutUint16(buf[8:], uint16(len(c.cookie)))
	copy(buf[12:], name)
	copy(buf[12+pad4(len(name)):], c.cookie)
	if _, err := c.Conn.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
