package display

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cua-host/cua-host/internal/xauth"
)

const (
	familyLocal = xauth.FamilyLocal
	familyWild  = xauth.FamilyWild
	cookieName  = xauth.CookieName
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
