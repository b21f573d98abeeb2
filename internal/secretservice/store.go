package secretservice

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"

	"github.com/cua-host/cua-host/internal/credential"
)

// The Secret Service's names (freedesktop Secret Service API 0.2).
const (
	busName      = "org.freedesktop.secrets"
	servicePath  = dbus.ObjectPath("/org/freedesktop/secrets")
	serviceIface = "org.freedesktop.Secret.Service"
	itemIface    = "org.freedesktop.Secret.Item"
	sessionIface = "org.freedesktop.Secret.Session"
	errIsLocked  = "org.freedesktop.Secret.Error.IsLocked"
)

// callTimeout bounds one List or Read: connecting, searching, opening the session and
// fetching the secret. Nothing here waits for a person.
const callTimeout = 10 * time.Second

// MaxAttributes bounds the operator's selection.
const MaxAttributes = 16

// Store is the part of the person's secret store an operator selected: the items of the
// Secret Service at one bus address whose attributes include every one of Attributes.
// It holds no connection: each List and Read connects, asks, and disconnects, so a
// keyring restarted or locked in between is seen at the next call. It is safe for
// concurrent use.
type Store struct {
	addr  string
	attrs map[string]string
}

// New returns the store of the Secret Service on the session bus at addr, restricted to
// the items whose attributes match all of attrs. An empty selection is an error: the
// whole keyring is never made available. New does not connect.
func New(addr string, attrs map[string]string) (*Store, error) {
	if addr == "" {
		return nil, errors.New("secret service: no session bus address")
	}
	if len(attrs) == 0 {
		return nil, errors.New("secret service: no attributes select the items (the whole keyring is never made available)")
	}
	if len(attrs) > MaxAttributes {
		return nil, fmt.Errorf("secret service: more than %d attributes", MaxAttributes)
	}
	for k, v := range attrs {
		if k == "" || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, fmt.Errorf("secret service: attribute %q=%q: names must be non-empty and both valid UTF-8", k, v)
		}
	}
	return &Store{addr: addr, attrs: maps.Clone(attrs)}, nil
}

// ParseSelection parses the operator's selection "ATTR=VALUE[,ATTR=VALUE…]". A name
// given twice, an entry without "=" or with an empty name is an error; a value may be
// empty and may contain "=", never ",".
func ParseSelection(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not ATTR=VALUE", part)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("attribute %q is given twice", k)
		}
		m[k] = v
	}
	if len(m) > MaxAttributes {
		return nil, fmt.Errorf("more than %d attributes", MaxAttributes)
	}
	return m, nil
}

// Attributes returns a copy of the operator's selection.
func (s *Store) Attributes() map[string]string { return maps.Clone(s.attrs) }

// Close releases nothing (the store holds no connection); it is here so that every
// store closes alike.
func (s *Store) Close() error { return nil }

// item is one selected item, without its secret.
type item struct {
	path   dbus.ObjectPath
	locked bool
	entry  credential.Entry
}

// HandleOf is the handle of an item labelled label: the label with every "/" and control
// character replaced by "_", a leading "." by "_", invalid UTF-8 by U+FFFD, cut to
// credential.MaxHandleBytes at a character boundary. An empty label has no handle ("").
// Two selected items with one handle are ambiguous: neither is listed nor typed.
func HandleOf(label string) string {
	var b strings.Builder
	for i, r := range strings.ToValidUTF8(label, "\uFFFD") {
		if r == '/' || unicode.IsControl(r) || (i == 0 && r == '.') {
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > credential.MaxHandleBytes {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// connect opens a private connection to the session bus at s.addr.
func (s *Store) connect(ctx context.Context) (*dbus.Conn, error) {
	conn, err := dbus.Connect(s.addr, dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("secret service: connect to the session bus: %w", err)
	}
	return conn, nil
}

// items returns the selected items by handle, leaving out items without a handle and
// items whose handle another selected item has.
func (s *Store) items(ctx context.Context, conn *dbus.Conn) (map[string]item, error) {
	var unlocked, locked []dbus.ObjectPath
	err := conn.Object(busName, servicePath).CallWithContext(ctx, serviceIface+".SearchItems", 0, s.attrs).Store(&unlocked, &locked)
	if err != nil {
		return nil, fmt.Errorf("secret service: search items: %w", err)
	}
	out := map[string]item{}
	ambiguous := map[string]bool{}
	for i, p := range slices.Concat(unlocked, locked) {
		var props map[string]dbus.Variant
		if err := conn.Object(busName, p).CallWithContext(ctx, "org.freedesktop.DBus.Properties.GetAll", 0, itemIface).Store(&props); err != nil {
			return nil, fmt.Errorf("secret service: item %s: %w", p, err)
		}
		label, _ := props["Label"].Value().(string)
		attrs, _ := props["Attributes"].Value().(map[string]string)
		if !matches(attrs, s.attrs) {
			continue // SearchItems answered more than was asked
		}
		h := HandleOf(label)
		if h == "" || ambiguous[h] {
			continue
		}
		if _, dup := out[h]; dup {
			delete(out, h)
			ambiguous[h] = true
			continue
		}
		e := credential.Entry{Handle: h, Label: label}
		if len(attrs) > 0 {
			e.Attributes = attrs
		}
		out[h] = item{path: p, locked: i >= len(unlocked), entry: e}
	}
	return out, nil
}

// matches reports whether attrs holds every one of want.
func matches(attrs, want map[string]string) bool {
	for k, v := range want {
		if got, ok := attrs[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// open connects to the bus for one List or Read (bounded by callTimeout) and finds the
// selected items; done closes the connection and releases the context.
func (s *Store) open() (ctx context.Context, conn *dbus.Conn, items map[string]item, done func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	if conn, err = s.connect(ctx); err != nil {
		cancel()
		return nil, nil, nil, nil, err
	}
	if items, err = s.items(ctx, conn); err != nil {
		conn.Close()
		cancel()
		return nil, nil, nil, nil, err
	}
	return ctx, conn, items, func() { conn.Close(); cancel() }, nil
}

// List returns the selected items that pass f, sorted by handle: handles, labels and
// attributes, never a secret. Locked items are listed too (Read refuses them).
func (s *Store) List(f credential.Filter) ([]credential.Entry, error) {
	_, _, items, done, err := s.open()
	if err != nil {
		return nil, err
	}
	defer done()
	var out []credential.Entry
	for _, h := range slices.Sorted(maps.Keys(items)) {
		if e := items[h].entry; f.Match(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// secretValue is the Secret structure of the API: (oayays).
type secretValue struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// Read returns the secret of handle, fetched at this moment through an encrypted session
// and decrypted into a buffer the caller owns and must Wipe. An unknown or ambiguous
// handle is credential.ErrNotFound, a locked item credential.ErrLocked (the person is
// never asked to unlock it), a secret over credential.MaxSecretBytes
// credential.ErrTooLarge. The secret's bytes are exactly the item's: nothing is trimmed.
func (s *Store) Read(handle string) (*credential.Secret, error) {
	if !credential.ValidHandle(handle) {
		return nil, credential.ErrNotFound
	}
	ctx, conn, items, done, err := s.open()
	if err != nil {
		return nil, err
	}
	defer done()
	it, ok := items[handle]
	if !ok {
		return nil, credential.ErrNotFound
	}
	if it.locked {
		return nil, credential.ErrLocked
	}
	kp, err := newKeyPair()
	if err != nil {
		return nil, err
	}
	defer kp.wipe()
	var out dbus.Variant
	var session dbus.ObjectPath
	err = conn.Object(busName, servicePath).CallWithContext(ctx, serviceIface+".OpenSession", 0, Algorithm, dbus.MakeVariant(kp.pub)).Store(&out, &session)
	if err != nil {
		return nil, fmt.Errorf("secret service: open a session with %s: %w", Algorithm, err)
	}
	defer conn.Object(busName, session).CallWithContext(context.WithoutCancel(ctx), sessionIface+".Close", dbus.FlagNoReplyExpected)
	peer, ok := out.Value().([]byte)
	if !ok {
		return nil, fmt.Errorf("secret service: OpenSession answered %s, not the service's public key", out.Signature())
	}
	key, err := kp.sessionKey(peer)
	if err != nil {
		return nil, err
	}
	defer clear(key)
	var sv secretValue
	err = conn.Object(busName, it.path).CallWithContext(ctx, itemIface+".GetSecret", 0, session).Store(&sv)
	var de dbus.Error
	if errors.As(err, &de) && de.Name == errIsLocked {
		return nil, credential.ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("secret service: get the secret of %q: %w", handle, err)
	}
	if sv.Session != session {
		return nil, fmt.Errorf("secret service: the secret of %q came for another session", handle)
	}
	return decrypt(key, sv.Parameters, sv.Value)
}
