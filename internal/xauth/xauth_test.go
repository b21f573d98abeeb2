package xauth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// entry encodes one Xauthority entry.
func entry(family uint16, addr, disp, name string, data []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, family)
	for _, f := range [][]byte{[]byte(addr), []byte(disp), []byte(name), data} {
		_ = binary.Write(&b, binary.BigEndian, uint16(len(f)))
		b.Write(f)
	}
	return b.Bytes()
}

func TestFind(t *testing.T) {
	c1, c2 := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 16)
	tests := []struct {
		name string
		data []byte
		num  int
		want []byte
	}{
		{name: "local entry for the display", data: entry(FamilyLocal, "box", "3", CookieName, c1), num: 3, want: c1},
		{name: "local entry of another host", data: entry(FamilyLocal, "other", "3", CookieName, c1), num: 3},
		{name: "wild entry for any display", data: entry(FamilyWild, "", "", CookieName, c2), num: 7, want: c2},
		{name: "another display", data: entry(FamilyLocal, "box", "4", CookieName, c1), num: 3},
		{name: "another protocol", data: entry(FamilyLocal, "box", "3", "XDM-AUTHORIZATION-1", c1), num: 3},
		{name: "short cookie", data: entry(FamilyLocal, "box", "3", CookieName, c1[:8]), num: 3},
		{name: "the first that fits", data: append(entry(FamilyLocal, "box", "4", CookieName, c2), entry(FamilyLocal, "box", "3", CookieName, c1)...), num: 3, want: c1},
		{name: "truncated", data: entry(FamilyLocal, "box", "3", CookieName, c1)[:20], num: 3},
		{name: "empty", num: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Find(tt.data, "box", tt.num)
			if ok != (tt.want != nil) || !bytes.Equal(got, tt.want) {
				t.Errorf("Find = %x, %v; want %x", got, ok, tt.want)
			}
		})
	}
}

func TestCookie(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	c := bytes.Repeat([]byte{9}, 16)
	path := filepath.Join(t.TempDir(), "Xauthority")
	if err := os.WriteFile(path, entry(FamilyLocal, host, "5", CookieName, c), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Cookie(path, 5); err != nil || !bytes.Equal(got, c) {
		t.Errorf("Cookie(:5) = %x, %v", got, err)
	}
	if _, err := Cookie(path, 6); !errors.Is(err, ErrNoEntry) {
		t.Errorf("Cookie(:6) error = %v, want ErrNoEntry", err)
	}
	if _, err := Cookie(filepath.Join(t.TempDir(), "missing"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Cookie(missing file) error = %v, want fs.ErrNotExist", err)
	}
}

// TestSetupConn: the setup request xgb writes is replaced by one carrying the cookie (or
// none), whatever xgb put in it; later writes pass through.
func TestSetupConn(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	cookie := bytes.Repeat([]byte{7}, 16)
	sc := &SetupConn{Conn: a, Cookie: cookie}
	// xgb's request: 'l', unused, 11, 0, name "X" (1, padded to 4), data "ab" (2, padded to 4).
	req := []byte{'l', 0, 11, 0, 0, 0, 1, 0, 2, 0, 0, 0, 'X', 0, 0, 0, 'a', 'b', 0, 0}
	got := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 64)
		n, _ := b.Read(buf)
		got <- buf[:n]
	}()
	if n, err := sc.Write(req); err != nil || n != len(req) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	want := append([]byte{'l', 0, 11, 0, 0, 0, 18, 0, 16, 0, 0, 0}, []byte(CookieName+"\x00\x00")...)
	want = append(want, cookie...)
	if g := <-got; !bytes.Equal(g, want) {
		t.Errorf("setup request on the wire = %q, want %q", g, want)
	}
	if _, err := (&SetupConn{Conn: a}).Write([]byte{'B', 0}); err == nil {
		t.Error("a request that is not xgb's little-endian setup was passed on")
	}
}

// FuzzFind: any Xauthority content yields a 16-byte cookie or none, never a panic.
func FuzzFind(f *testing.F) {
	f.Add(entry(FamilyLocal, "box", "3", CookieName, make([]byte, 16)), 3)
	f.Add(entry(FamilyWild, "", "", CookieName, make([]byte, 16)), 0)
	f.Add([]byte{0xff, 0xff, 0, 0}, 0)
	f.Fuzz(func(t *testing.T, data []byte, num int) {
		if c, ok := Find(data, "box", num); ok && len(c) != 16 {
			t.Fatalf("Find returned a %d-byte cookie", len(c))
		}
	})
}
