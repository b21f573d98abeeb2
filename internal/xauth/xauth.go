// Package xauth reads the MIT-MAGIC-COOKIE-1 of a local X display from an Xauthority file
// and hands it to jezek/xgb's connection setup. It is for the host's own X clients (the
// person's windows, the nested display's parent window, readiness and doctor probes), which
// are given an Xauthority file explicitly and never read XAUTHORITY themselves. It does not
// write Xauthority files.
package xauth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
)

// CookieName is the one authorization protocol this package knows.
const CookieName = "MIT-MAGIC-COOKIE-1"

// Entry families (Xauth.h).
const (
	FamilyLocal = 256
	FamilyWild  = 0xffff
)

// maxFile bounds how much of an Xauthority file is read.
const maxFile = 1 << 20

// ErrNoEntry reports an Xauthority file without a cookie for the display.
var ErrNoEntry = errors.New("xauth: no " + CookieName + " for the display")

// Cookie returns the MIT-MAGIC-COOKIE-1 for local display num from the Xauthority file at
// path. A missing file's error satisfies errors.Is(err, fs.ErrNotExist); a file without an
// entry for the display, errors.Is(err, ErrNoEntry).
func Cookie(path string, num int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("xauthority: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return nil, fmt.Errorf("xauthority %s: %w", path, err)
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("hostname: %w", err)
	}
	if c, ok := Find(data, host, num); ok {
		return c, nil
	}
	return nil, fmt.Errorf("xauthority %s: display :%d: %w", path, num, ErrNoEntry)
}

// Find walks Xauthority entries — family u16, then address, display number, name and
// data, each a big-endian u16 length and its bytes — and returns the first 16-byte
// MIT-MAGIC-COOKIE-1 whose family is Local with address host, or Wild, and whose display
// is num or any. A truncated entry ends the walk.
func Find(data []byte, host string, num int) ([]byte, bool) {
	want := strconv.Itoa(num)
	r := bytes.NewReader(data)
	field := func() ([]byte, bool) {
		var n uint16
		if binary.Read(r, binary.BigEndian, &n) != nil || int(n) > r.Len() {
			return nil, false
		}
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err == nil
	}
	for r.Len() > 0 {
		var family uint16
		if binary.Read(r, binary.BigEndian, &family) != nil {
			return nil, false
		}
		var fs [4][]byte
		for i := range fs {
			var ok bool
			if fs[i], ok = field(); !ok {
				return nil, false
			}
		}
		addr, disp, name, cookie := string(fs[0]), string(fs[1]), string(fs[2]), fs[3]
		if (family == FamilyWild || family == FamilyLocal && addr == host) &&
			(disp == "" || disp == want) && name == CookieName && len(cookie) == 16 {
			return cookie, true
		}
	}
	return nil, false
}

// SetupConn replaces the authorization in the first request written on it — xgb's
// connection setup request, which carries whatever xgb found through XAUTHORITY — with
// Cookie (MIT-MAGIC-COOKIE-1, or no authorization when Cookie is empty). Later writes pass
// through. xgb writes the setup request in NewConnNet before it starts its goroutines, so
// no lock is needed.
type SetupConn struct {
	net.Conn
	Cookie    []byte
	rewritten bool
}

func pad4(n int) int { return (n + 3) &^ 3 }

// Write rewrites the first request and passes later ones through.
func (c *SetupConn) Write(p []byte) (int, error) {
	if c.rewritten {
		return c.Conn.Write(p)
	}
	c.rewritten = true
	// Setup request: byte order, unused, major u16, minor u16, name length u16, data
	// length u16, unused u16, name, pad, data, pad. xgb writes it little-endian and whole.
	if len(p) < 12 || p[0] != 'l' {
		return 0, errors.New("xauth: unexpected connection setup request")
	}
	nameLen, dataLen := int(binary.LittleEndian.Uint16(p[6:])), int(binary.LittleEndian.Uint16(p[8:]))
	if len(p) != 12+pad4(nameLen)+pad4(dataLen) {
		return 0, errors.New("xauth: unexpected connection setup request")
	}
	name := ""
	if len(c.Cookie) > 0 {
		name = CookieName
	}
	buf := make([]byte, 12+pad4(len(name))+pad4(len(c.Cookie)))
	copy(buf, p[:6])
	binary.LittleEndian.PutUint16(buf[6:], uint16(len(name)))
	binary.LittleEndian.PutUint16(buf[8:], uint16(len(c.Cookie)))
	copy(buf[12:], name)
	copy(buf[12+pad4(len(name)):], c.Cookie)
	if _, err := c.Conn.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
