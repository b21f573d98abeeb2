package personui

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
)

func TestParseDisplay(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		num, screen int
		ok          bool
	}{
		{"plain", ":1", 1, 0, true},
		{"screen", ":12.1", 12, 1, true},
		{"unix", "unix:3", 3, 0, true},
		{"remote", "host:0", 0, 0, false},
		{"tcp", "tcp/host:0", 0, 0, false},
		{"empty", "", 0, 0, false},
		{"negative", ":-1", 0, 0, false},
		{"bad screen", ":1.x", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			num, screen, err := parseDisplay(tt.in)
			if (err == nil) != tt.ok || tt.ok && (num != tt.num || screen != tt.screen) {
				t.Fatalf("parseDisplay(%q) = %d, %d, %v, want %d, %d, ok=%v", tt.in, num, screen, err, tt.num, tt.screen, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrDisplay) {
				t.Errorf("parseDisplay(%q) error %v is not ErrDisplay", tt.in, err)
			}
		})
	}
}

func TestReadCookie(t *testing.T) {
	dir := t.TempDir()
	cookie := bytes.Repeat([]byte{7}, 16)
	any := filepath.Join(dir, "any")
	writeXauth(t, any, "", cookie)
	five := filepath.Join(dir, "five")
	writeXauth(t, five, "5", cookie)
	if got, err := readCookie(any, 3); err != nil || !bytes.Equal(got, cookie) {
		t.Errorf("readCookie(any display) = %x, %v", got, err)
	}
	if got, err := readCookie(five, 5); err != nil || !bytes.Equal(got, cookie) {
		t.Errorf("readCookie(display 5) = %x, %v", got, err)
	}
	if _, err := readCookie(five, 6); !errors.Is(err, ErrDisplay) {
		t.Errorf("readCookie(other display) error = %v, want ErrDisplay", err)
	}
}
