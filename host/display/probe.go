package display

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"unicode/utf8"

	"github.com/cua-host/cua-host/internal/xauth"
)

// ServerFacts is what one trusted connection learns about an X server: the extensions it
// offers, the versions of the ones whose version matters to cua-host, and the EWMH window
// manager that has taken its screen, if any. ProbeServer reads them for a readiness
// report (`cua-host doctor`); nothing here is used to drive the display.
type ServerFacts struct {
	// Cookie says how the connection was authorized: the Xauthority file whose
	// MIT-MAGIC-COOKIE-1 was sent, or "" when none was (no file, or no entry for the
	// display, as Xlib would do).
	Cookie string
	// Extensions are the names ListExtensions returned, sorted.
	Extensions []string
	// XInput and XRes are the versions the server agreed to ("2.2", "1.2"): XIQueryVersion
	// asking for 2.2 and X-Resource QueryVersion asking for 1.2. Empty when the extension is
	// absent or the request failed.
	XInput, XRes string
	// WindowManager is the _NET_WM_NAME (or WM_NAME) of the window the root's
	// _NET_SUPPORTING_WM_CHECK names, when that window names itself back as EWMH asks;
	// WMCheck is whether the root has the property at all. A window manager that sets the
	// check but no name gives WMCheck true and WindowManager "".
	WindowManager string
	WMCheck       bool
}

// Has reports whether the server offers the extension name.
func (f ServerFacts) Has(name string) bool {
	_, found := slices.BinarySearch(f.Extensions, name)
	return found
}

// AtLeast reports whether version ("M.m") is at least major.minor.
func AtLeast(version string, major, minor int) bool {
	maj, mnr, ok := parseVersion(version)
	return ok && (maj > major || maj == major && mnr >= minor)
}

func parseVersion(v string) (int, int, bool) {
	var maj, mnr int
	if _, err := fmt.Sscanf(v, "%d.%d", &maj, &mnr); err != nil {
		return 0, 0, false
	}
	return maj, mnr, true
}

// ProbeServer connects to the local display name (":N", ":N.S", "unix:N") as an X client
// started with XAUTHORITY=xauthority would — with the display's cookie from that file, or
// with none when the file is missing or has no entry for the display — and reads
// ServerFacts. A refused connection is an error wrapping ErrAuthRefused that says which
// cookie was sent, or why none was.
func ProbeServer(ctx context.Context, name, xauthority string) (ServerFacts, error) {
	num, err := localDisplayNumber(name)
	if err != nil {
		return ServerFacts{}, err
	}
	cookie, why := probeCookie(xauthority, num)
	x, err := dialX(ctx, num, cookie)
	if err != nil {
		if errors.Is(err, ErrAuthRefused) {
			if cookie == nil {
				return ServerFacts{}, fmt.Errorf("%w (no cookie was sent: %s)", err, why)
			}
			return ServerFacts{}, fmt.Errorf("%w (the cookie for :%d in %s was sent)", err, num, xauthority)
		}
		return ServerFacts{}, err
	}
	defer x.Close()
	f := ServerFacts{}
	if cookie != nil {
		f.Cookie = xauthority
	}
	if f.Extensions, err = x.listExtensionNames(); err != nil {
		return f, err
	}
	slices.Sort(f.Extensions)
	if f.Has("XInputExtension") {
		f.XInput = x.extensionVersion("XInputExtension", 47, true) // XIQueryVersion, 2.2
	}
	if f.Has("X-Resource") {
		f.XRes = x.extensionVersion("X-Resource", 0, false) // QueryVersion, 1.2
	}
	f.WindowManager, f.WMCheck, err = x.windowManagerName()
	return f, err
}

// probeCookie returns the MIT-MAGIC-COOKIE-1 for local display num in the Xauthority file
// at path, or nil and why there is none to send: Xlib's rule (no file, an unreadable
// file, no entry for the display: connect without one). An entry counts when its family is
// Local with this host's name, or Wild, and its display is num or any.
func probeCookie(path string, num int) ([]byte, string) {
	if path == "" {
		return nil, "no Xauthority file ($XAUTHORITY unset and no home directory)"
	}
	cookie, err := xauth.Cookie(path, num)
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, xauth.ErrNoEntry):
		return nil, fmt.Sprintf("%s has no %s for display :%d", path, cookieName, num)
	case errors.As(err, &pathErr):
		return nil, pathErr.Error()
	case err != nil:
		return nil, err.Error()
	}
	return cookie, ""
}

// listExtensionNames sends ListExtensions (opcode 99).
func (x *xconn) listExtensionNames() ([]string, error) {
	rep, err := x.roundTrip([]byte{99, 0, 1, 0})
	if err != nil {
		return nil, fmt.Errorf("ListExtensions: %w", err)
	}
	return parseExtensionNames(rep)
}

// parseExtensionNames reads a ListExtensions reply: byte 1 the number of names, then
// from byte 32 each name as a length byte and its bytes.
func parseExtensionNames(rep []byte) ([]string, error) {
	if len(rep) < 32 {
		return nil, errors.New("ListExtensions: short reply")
	}
	n := int(rep[1])
	names := make([]string, 0, n)
	off := 32
	for range n {
		if off >= len(rep) || off+1+int(rep[off]) > len(rep) {
			return names, errors.New("ListExtensions: truncated name list")
		}
		l := int(rep[off])
		name := string(rep[off+1 : off+1+l])
		if !utf8.ValidString(name) {
			return names, errors.New("ListExtensions: a name is not text")
		}
		names = append(names, name)
		off += 1 + l
	}
	return names, nil
}

// extensionOpcode sends QueryExtension (opcode 98) and returns the extension's major
// opcode, or 0 when the server does not have it.
func (x *xconn) extensionOpcode(name string) (byte, error) {
	req := make([]byte, 8+pad4(len(name)))
	req[0] = 98
	binary.LittleEndian.PutUint16(req[2:], uint16(len(req)/4))
	binary.LittleEndian.PutUint16(req[4:], uint16(len(name)))
	copy(req[8:], name)
	rep, err := x.roundTrip(req)
	if err != nil {
		return 0, fmt.Errorf("QueryExtension %s: %w", name, err)
	}
	if rep[8] == 0 {
		return 0, nil
	}
	return rep[9], nil
}

// extensionVersion asks the extension for its version, offering 2.2 with 16-bit
// numbers (wide: XIQueryVersion) or 1.2 with 8-bit ones (X-Resource QueryVersion), and
// returns the server's "M.m", or "" when the request fails. Both replies carry the
// server's major and minor as 16-bit numbers at bytes 8 and 10.
func (x *xconn) extensionVersion(name string, minor byte, wide bool) string {
	op, err := x.extensionOpcode(name)
	if err != nil || op == 0 {
		return ""
	}
	req := []byte{op, minor, 2, 0, 1, 2, 0, 0} // X-Resource: client 1.2
	if wide {
		req = []byte{op, minor, 2, 0, 2, 0, 2, 0} // XInput: client 2.2
	}
	rep, err := x.roundTrip(req)
	if err != nil || len(rep) < 12 {
		return ""
	}
	return fmt.Sprintf("%d.%d", binary.LittleEndian.Uint16(rep[8:]), binary.LittleEndian.Uint16(rep[10:]))
}

// windowManagerName reads _NET_SUPPORTING_WM_CHECK on the root, checks that the window it
// names carries the same property naming itself (EWMH: a stale property left by a window
// manager that died names a window that is gone or says otherwise), and returns that
// window's _NET_WM_NAME, or its WM_NAME.
func (x *xconn) windowManagerName() (name string, check bool, err error) {
	checkAtom, err := x.internAtom("_NET_SUPPORTING_WM_CHECK")
	if err != nil || checkAtom == 0 {
		return "", false, err
	}
	w, ok, err := x.rootProperty32(checkAtom)
	if err != nil || !ok || w == 0 {
		return "", false, err
	}
	self, err := x.windowProperty(w, checkAtom, 1)
	if err != nil || len(self) < 4 || binary.LittleEndian.Uint32(self) != w {
		// A window that is gone answers BadWindow: the window manager is not running.
		return "", false, nil
	}
	for _, prop := range []string{"_NET_WM_NAME", "WM_NAME"} {
		atom, err := x.internAtom(prop)
		if err != nil {
			return "", true, err
		}
		if atom == 0 {
			continue
		}
		v, err := x.windowProperty(w, atom, 64)
		if err != nil {
			return "", true, err
		}
		if len(v) > 0 {
			return string(bytes.ToValidUTF8(v, []byte("?"))), true, nil
		}
	}
	return "", true, nil
}

// windowProperty returns the value of property prop on window w (at most words 32-bit
// units of it), whatever its type; nil when the window has no such property.
func (x *xconn) windowProperty(w, prop uint32, words uint32) ([]byte, error) {
	req := make([]byte, 24)
	req[0] = 20 // GetProperty
	binary.LittleEndian.PutUint16(req[2:], 6)
	binary.LittleEndian.PutUint32(req[4:], w)
	binary.LittleEndian.PutUint32(req[8:], prop)
	binary.LittleEndian.PutUint32(req[12:], 0) // AnyPropertyType
	binary.LittleEndian.PutUint32(req[16:], 0)
	binary.LittleEndian.PutUint32(req[20:], words)
	rep, err := x.roundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("GetProperty: %w", err)
	}
	format := int(rep[1])
	n := int(binary.LittleEndian.Uint32(rep[16:])) * max(format/8, 1)
	if format == 0 || 32+n > len(rep) {
		return nil, nil
	}
	return rep[32 : 32+n], nil
}
