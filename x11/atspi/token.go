package atspi

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// MaxElementIndex bounds element indices in tokens; no snapshot holds more elements.
const MaxElementIndex = 1<<20 - 1

// Target names one element of one snapshot.
type Target struct {
	// SnapshotID is "s" followed by 8 lowercase hex digits.
	SnapshotID string
	// Index is the element's 0-based index in the snapshot.
	Index int
}

// Token returns the canonical element token "sXXXXXXXX:N".
func (t Target) Token() string { return t.SnapshotID + ":" + strconv.Itoa(t.Index) }

// ParseToken parses an element token "sXXXXXXXX:N" (snapshot id, colon, decimal index
// without sign or leading zeros, at most MaxElementIndex). Every accepted token is
// canonical: Target.Token gives it back byte for byte.
func ParseToken(tok string) (Target, error) {
	id, idx, ok := strings.Cut(tok, ":")
	if !ok {
		return Target{}, fmt.Errorf("%w: %q: want sXXXXXXXX:N", ErrInvalidToken, clip(tok, 40))
	}
	if err := CheckSnapshotID(id); err != nil {
		return Target{}, err
	}
	n, err := parseIndex(idx)
	if err != nil {
		return Target{}, fmt.Errorf("%w: %q: %v", ErrInvalidToken, clip(tok, 40), err)
	}
	return Target{SnapshotID: id, Index: n}, nil
}

// CheckSnapshotID returns ErrInvalidToken unless id is "s" followed by exactly 8
// lowercase hex digits.
func CheckSnapshotID(id string) error {
	if len(id) != 9 || id[0] != 's' {
		return fmt.Errorf("%w: snapshot id %q: want s and 8 hex digits", ErrInvalidToken, clip(id, 40))
	}
	for i := 1; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("%w: snapshot id %q: want s and 8 lowercase hex digits", ErrInvalidToken, id)
		}
	}
	return nil
}

// CheckIndex returns ErrInvalidToken unless 0 ≤ i ≤ MaxElementIndex.
func CheckIndex(i int) error {
	if i < 0 || i > MaxElementIndex {
		return fmt.Errorf("%w: element index %d: want 0–%d", ErrInvalidToken, i, MaxElementIndex)
	}
	return nil
}

func parseIndex(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty index")
	}
	if len(s) > 7 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("index %q is not canonical", s)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("index %q is not a decimal number", s)
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > MaxElementIndex {
		return 0, fmt.Errorf("index %d above %d", n, MaxElementIndex)
	}
	return n, nil
}

// newSnapshotID returns a random snapshot id.
func newSnapshotID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return fmt.Sprintf("s%08x", binary.BigEndian.Uint32(b[:]))
}

// clip shortens s to at most n bytes on a rune boundary, adding "…" when it cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
