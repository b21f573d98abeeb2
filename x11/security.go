package x11

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// The SECURITY extension (X11R6.4 "Security Extension Specification"), which xgb has no
// binding for: requests are encoded here by hand. Byte offsets are in the comments.
const (
	securityName = "SECURITY"
	// Minor opcodes.
	securityQueryVersion          = 0
	securityGenerateAuthorization = 1
	securityRevokeAuthorization   = 2
	// GenerateAuthorization value-mask bits, values in this order.
	securityTimeout    = 1 << 0
	securityTrustLevel = 1 << 1
	// Trust levels.
	securityUntrusted = 1
	// mitMagicCookie is the authorization protocol the server generates data for.
	mitMagicCookie = "MIT-MAGIC-COOKIE-1"
)

// UntrustedTimeout is how long an untrusted authorization stays valid while no client
// uses it: an application must connect within it after its launch, and the authorization
// expires this long after the last client that used it disconnects.
const UntrustedTimeout = 60 // seconds

// ErrNoSecurity reports that the display lacks the SECURITY extension, so launched
// programs cannot be made untrusted clients.
var ErrNoSecurity = errors.New("x11: the display has no SECURITY extension")

// security is a SECURITY extension client on one connection.
type security struct {
	conn  *xgb.Conn
	major byte
}

// initSecurity finds the extension and checks that the server speaks version 1.
func initSecurity(conn *xgb.Conn) (*security, error) {
	ext, err := xproto.QueryExtension(conn, uint16(len(securityName)), securityName).Reply()
	if err != nil {
		return nil, xerr("QueryExtension SECURITY", err)
	}
	if !ext.Present {
		return nil, ErrNoSecurity
	}
	s := &security{conn: conn, major: ext.MajorOpcode}
	// QueryVersion: 0 major, 1 minor, 2–3 length 2, 4–5 client major, 6–7 client minor.
	req := make([]byte, 8)
	req[0], req[1] = s.major, securityQueryVersion
	xgb.Put16(req[2:], 2)
	xgb.Put16(req[4:], 1)
	xgb.Put16(req[6:], 0)
	rep, err := s.roundTrip(req, true)
	if err != nil {
		return nil, fmt.Errorf("x11: SecurityQueryVersion: %w", err)
	}
	// Reply: 8–9 server major, 10–11 server minor.
	if len(rep) < 12 {
		return nil, fmt.Errorf("x11: SecurityQueryVersion: short reply (%d bytes)", len(rep))
	}
	if major := xgb.Get16(rep[8:]); major != 1 {
		return nil, fmt.Errorf("x11: SECURITY version %d.%d; want 1.x", major, xgb.Get16(rep[10:]))
	}
	return s, nil
}

// roundTrip sends one checked request and returns its reply (nil for a request without
// one).
func (s *security) roundTrip(req []byte, reply bool) ([]byte, error) {
	c := s.conn.NewCookie(true, reply)
	s.conn.NewRequest(req, c)
	if !reply {
		return nil, c.Check()
	}
	return c.Reply()
}

// generateUntrusted asks the server for a new MIT-MAGIC-COOKIE-1 authorization of trust
// level untrusted with the given timeout (seconds), and returns its id and cookie.
func (s *security) generateUntrusted(timeout uint32) (id uint32, cookie []byte, err error) {
	name := []byte(mitMagicCookie)
	pad := (4 - len(name)%4) % 4
	// 0 major, 1 minor, 2–3 length, 4–5 protocol name length, 6–7 protocol data length (0:
	// the server generates it), 8–11 value mask, 12… name (padded), then the values.
	req := make([]byte, 12+len(name)+pad+8)
	req[0], req[1] = s.major, securityGenerateAuthorization
	xgb.Put16(req[2:], uint16(len(req)/4))
	xgb.Put16(req[4:], uint16(len(name)))
	xgb.Put16(req[6:], 0)
	xgb.Put32(req[8:], securityTimeout|securityTrustLevel)
	copy(req[12:], name)
	v := 12 + len(name) + pad
	xgb.Put32(req[v:], timeout)
	xgb.Put32(req[v+4:], securityUntrusted)
	rep, err := s.roundTrip(req, true)
	if err != nil {
		return 0, nil, fmt.Errorf("x11: SecurityGenerateAuthorization: %w", err)
	}
	// Reply: 8–11 authorization id, 12–13 data length, 14–31 unused, 32… data.
	if len(rep) < 32 {
		return 0, nil, fmt.Errorf("x11: SecurityGenerateAuthorization: short reply (%d bytes)", len(rep))
	}
	id = xgb.Get32(rep[8:])
	n := int(xgb.Get16(rep[12:]))
	if n == 0 || 32+n > len(rep) {
		return 0, nil, fmt.Errorf("x11: SecurityGenerateAuthorization: %d bytes of data in a %d-byte reply", n, len(rep))
	}
	return id, append([]byte(nil), rep[32:32+n]...), nil
}

// revoke deletes an authorization; the server disconnects every client that connected
// with it.
func (s *security) revoke(id uint32) error {
	// 0 major, 1 minor, 2–3 length 2, 4–7 authorization id.
	req := make([]byte, 8)
	req[0], req[1] = s.major, securityRevokeAuthorization
	xgb.Put16(req[2:], 2)
	xgb.Put32(req[4:], id)
	if _, err := s.roundTrip(req, false); err != nil {
		return fmt.Errorf("x11: SecurityRevokeAuthorization %d: %w", id, err)
	}
	return nil
}

// displayNumber returns the display number of a display name ("host:7.0" → "7").
func displayNumber(display string) (string, error) {
	i := strings.LastIndexByte(display, ':')
	if i < 0 {
		return "", fmt.Errorf("x11: display name %q has no ':'", display)
	}
	num, _, _ := strings.Cut(display[i+1:], ".")
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return "", fmt.Errorf("x11: display name %q has no display number", display)
	}
	return num, nil
}

// Xauthority families (Xauth.h).
const (
	xauthFamilyLocal = 256
	xauthFamilyWild  = 0xffff
)

// writeXauthority writes an Xauthority file at path, mode 0600, created exclusively,
// holding cookie for display number num on this host (a FamilyLocal entry for the host
// name and a FamilyWild one). The format is Xau's: per entry a big-endian u16 family, then
// address, display number, protocol name and data, each as a u16 length and bytes.
func writeXauthority(path, num string, cookie []byte) error {
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("x11: hostname: %w", err)
	}
	var buf bytes.Buffer
	entry := func(family uint16, addr string) {
		_ = binary.Write(&buf, binary.BigEndian, family)
		for _, f := range [][]byte{[]byte(addr), []byte(num), []byte(mitMagicCookie), cookie} {
			_ = binary.Write(&buf, binary.BigEndian, uint16(len(f)))
			buf.Write(f)
		}
	}
	entry(xauthFamilyLocal, host)
	entry(xauthFamilyWild, "")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("x11: xauthority: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("x11: xauthority: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("x11: xauthority: %w", err)
	}
	return nil
}

// untrustedAuth hands out untrusted authorizations for launched programs, one per launch,
// each in its own 0600 Xauthority file in a private 0700 directory. close revokes them
// all (disconnecting any client still using one) and removes the directory.
type untrustedAuth struct {
	sec *security
	num string
	dir string
	// xtResources is the XENVIRONMENT file of launched programs (untrustedXtResources).
	xtResources string
	// mu guards the fields below.
	mu     sync.Mutex
	ids    []uint32
	next   int
	closed bool
}

func newUntrustedAuth(conn *xgb.Conn, display string) (*untrustedAuth, error) {
	num, err := displayNumber(display)
	if err != nil {
		return nil, err
	}
	sec, err := initSecurity(conn)
	if err != nil {
		return nil, err
	}
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" || !filepath.IsAbs(base) {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "cua-untrusted-")
	if err != nil {
		return nil, fmt.Errorf("x11: untrusted xauthority directory: %w", err)
	}
	xt, err := writeXtResources(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &untrustedAuth{sec: sec, num: num, dir: dir, xtResources: xt}, nil
}

// issue generates a new untrusted authorization and returns the path of the Xauthority
// file that holds it.
func (a *untrustedAuth) issue() (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return "", ErrClosed
	}
	id, cookie, err := a.sec.generateUntrusted(UntrustedTimeout)
	if err != nil {
		return "", err
	}
	a.ids = append(a.ids, id)
	a.next++
	path := filepath.Join(a.dir, fmt.Sprintf("launch-%d.xauth", a.next))
	if err := writeXauthority(path, a.num, cookie); err != nil {
		return "", err
	}
	return path, nil
}

// close revokes every authorization issued and removes their files. Idempotent.
func (a *untrustedAuth) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var errs []error
	for _, id := range a.ids {
		if err := a.sec.revoke(id); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(a.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
