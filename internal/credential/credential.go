package credential

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	// ErrNotFound is returned for a handle that names no credential of the store: an
	// unknown name, a name that is not one plain entry of the store (a path, "..", a
	// hidden file), or an entry that is not a regular file (a symbolic link, a directory).
	ErrNotFound = errors.New("no such credential")
	// ErrTooLarge is returned for a secret longer than MaxSecretBytes.
	ErrTooLarge = errors.New("the credential is larger than a secret may be")
	// ErrLocked is returned for a credential the store holds locked (a keyring the
	// person has not unlocked). Nothing asks the person to unlock it.
	ErrLocked = errors.New("the credential's keyring is locked")
)

// MaxSecretBytes bounds a secret, after its trailing newline is removed.
const MaxSecretBytes = 4096

// MaxHandleBytes bounds a handle (a file name on Linux filesystems).
const MaxHandleBytes = 255

// Entry describes one credential without its secret.
type Entry struct {
	// Handle names the credential in type_secret's arguments; it is stable for as long as
	// the store keeps the credential.
	Handle string
	// Label is what a person calls it.
	Label string
	// Attributes are the non-secret facts the operator recorded (for example "url" and
	// "username"); nil when there are none.
	Attributes map[string]string
}

// Filter selects entries: Query is a case-insensitive substring of the label or the
// handle, Attributes must all be present with exactly these values. The zero Filter
// selects every entry.
type Filter struct {
	Query      string
	Attributes map[string]string
}

// Match reports whether e passes f.
func (f Filter) Match(e Entry) bool {
	if q := strings.ToLower(f.Query); q != "" &&
		!strings.Contains(strings.ToLower(e.Label), q) && !strings.Contains(strings.ToLower(e.Handle), q) {
		return false
	}
	for k, v := range f.Attributes {
		if got, ok := e.Attributes[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Secret is the content of one credential, owned by whoever holds it. Wipe zeroes it;
// nothing else keeps a copy.
type Secret struct {
	buf []byte // the whole buffer read into, zeroed by Wipe
	n   int    // the secret is buf[:n]
}

// NewSecret returns the Secret buf[:n]. It takes ownership of buf, the whole of which
// Wipe zeroes: a store reads or decrypts into a buffer of its own and hands it over
// without copying it.
func NewSecret(buf []byte, n int) *Secret {
	if n < 0 || n > len(buf) {
		panic("credential: NewSecret: n out of range")
	}
	return &Secret{buf: buf, n: n}
}

// Bytes returns the secret. The slice is the Secret's own memory: it must not be kept
// past Wipe, converted to a string, or handed to anything that formats or encodes it.
func (s *Secret) Bytes() []byte { return s.buf[:s.n] }

// Wipe zeroes the secret. It may be called more than once.
func (s *Secret) Wipe() {
	clear(s.buf)
	s.n = 0
}

// ValidHandle reports whether h may name a credential: one plain file name of at most
// MaxHandleBytes bytes, valid UTF-8 without control characters or "/", not starting
// with "." (names starting with "." are the store's own files).
func ValidHandle(h string) bool {
	if h == "" || len(h) > MaxHandleBytes || h[0] == '.' || !utf8.ValidString(h) {
		return false
	}
	for _, r := range h {
		if r == '/' || unicode.IsControl(r) {
			return false
		}
	}
	return true
}
