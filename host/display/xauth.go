package display

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

const (
	familyLocal = 256    // FamilyLocal in Xauth.h
	familyWild  = 0xffff // FamilyWild
	cookieName  = "MIT-MAGIC-COOKIE-1"
)

// newCookie returns 16 random bytes.
func newCookie() ([]byte, error) {
	c := make([]byte, 16)
	if _, err := rand.Read(c); err != nil {
		return nil, fmt.Errorf("cookie: %w", err)
	}
	return c, nil
}

// writeXauthority writes an Xauthority file holding cookie for display number num (-1: any
// display) on this host, atomically and with mode 0600.
func writeXauthority(path string, cookie []byte, num int) error {
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	disp := ""
	if num >= 0 {
		disp = strconv.Itoa(num)
	}
	var buf bytes.Buffer
	entry := func(family uint16, addr string) {
		_ = binary.Write(&buf, binary.BigEndian, family)
		for _, f := range [][]byte{[]byte(addr), []byte(disp), []byte(cookieName), cookie} {
			_ = binary.Write(&buf, binary.BigEndian, uint16(len(f)))
			buf.Write(f)
		}
	}
	entry(familyLocal, host)
	entry(familyWild, "")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".xauth-*")
	if err != nil {
		return fmt.Errorf("xauthority: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("xauthority: %w", err)
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("xauthority: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("xauthority: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("xauthority: %w", err)
	}
	return nil
}

// readCookie returns the MIT-MAGIC-COOKIE-1 for local display num in the Xauthority file at
// path: the first entry of family Local for this host, or Wild, for display num or for any
// display — the entry Xlib would send.
func readCookie(path string, num int) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("xauthority: %w", err)
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("hostname: %w", err)
	}
	want := strconv.Itoa(num)
	r := bytes.NewReader(data)
	field := func() ([]byte, error) {
		var n uint16
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			return nil, err
		}
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	for r.Len() > 0 {
		var family uint16
		if err := binary.Read(r, binary.BigEndian, &family); err != nil {
			break
		}
		var fs [4][]byte
		for i := range fs {
			if fs[i], err = field(); err != nil {
				return nil, fmt.Errorf("xauthority %s: truncated entry", path)
			}
		}
		addr, disp, name, cookie := string(fs[0]), string(fs[1]), string(fs[2]), fs[3]
		if (family == familyWild || family == familyLocal && addr == host) &&
			(disp == "" || disp == want) && name == cookieName && len(cookie) == 16 {
			return cookie, nil
		}
	}
	return nil, fmt.Errorf("xauthority %s: no %s for display :%d", path, cookieName, num)
}
