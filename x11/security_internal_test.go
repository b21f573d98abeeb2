package x11

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func TestDisplayNumber(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", ":7", "7", true},
		{"screen", ":12.0", "12", true},
		{"host", "localhost:3.1", "3", true},
		{"no colon", "7", "", false},
		{"no number", ":", "", false},
		{"letters", ":x", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := displayNumber(tt.in)
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("displayNumber(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestWriteXauthority(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth")
	cookie := bytes.Repeat([]byte{0xab}, 16)
	if err := writeXauthority(path, "42", cookie); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("Stat = %v, %v; want mode 0600", st, err)
	}
	data, _ := os.ReadFile(path)
	r := bytes.NewReader(data)
	for i, family := range []uint16{xauthFamilyLocal, xauthFamilyWild} {
		var f uint16
		binary.Read(r, binary.BigEndian, &f)
		var fields [][]byte
		for range 4 {
			var n uint16
			binary.Read(r, binary.BigEndian, &n)
			b := make([]byte, n)
			r.Read(b)
			fields = append(fields, b)
		}
		if f != family || string(fields[1]) != "42" || string(fields[2]) != mitMagicCookie || !bytes.Equal(fields[3], cookie) {
			t.Errorf("entry %d = family %d %q", i, f, fields)
		}
	}
	if r.Len() != 0 {
		t.Errorf("%d trailing bytes", r.Len())
	}
	if err := writeXauthority(path, "42", cookie); err == nil {
		t.Error("writeXauthority over an existing file = nil error, want one (exclusive create)")
	}
}
