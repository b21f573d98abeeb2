package secretservice_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/cua-host/cua-host/internal/credential"
	"github.com/cua-host/cua-host/internal/secretservice"
	"github.com/cua-host/cua-host/test/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.CheckLeaks(m.Run())) }

// randomSecret is a secret nothing could hold by chance, with bytes around it that a
// trim would lose: a space first and a newline last.
func randomSecret(t *testing.T) []byte {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return []byte(" Grüße " + hex.EncodeToString(b) + "\n")
}

// TestStore runs the store against gnome-keyring-daemon on a private bus. Items are
// stored with secret-tool (outside cua-host); the selection sees only the matching
// ones, a secret comes back with its exact bytes and is zeroed by Wipe, the bus carries
// it only encrypted (dbus-monitor, with the plain algorithm as the positive control), and
// a locked item is refused ErrLocked without a prompt.
func TestStore(t *testing.T) {
	kr := testkit.StartKeyring(t)
	secret := randomSecret(t)
	other := randomSecret(t)
	kr.Store(t, "mail/login", secret, "service", "cua-test", "user", "ada")
	kr.Store(t, "bank", other, "service", "other", "user", "ada")
	kr.Store(t, "twin", []byte("a"), "service", "cua-test", "n", "1")
	kr.Store(t, "twin", []byte("b"), "service", "cua-test", "n", "2")
	// secret-tool replaces an item whose attributes include all of the new one's: every
	// item here has an attribute of its own.
	kr.Store(t, "user only", []byte("c"), "user", "ada", "n", "3")

	if _, err := secretservice.New(kr.Addr, nil); err == nil {
		t.Fatal("New with no attributes = nil error, want the whole keyring refused")
	}
	s, err := secretservice.New(kr.Addr, map[string]string{"service": "cua-test"})
	if err != nil {
		t.Fatal(err)
	}
	es, err := s.List(credential.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// "twin" is two items with one handle: neither is listed. "bank" and "user only" do
	// not match the selection.
	if len(es) != 1 || es[0].Handle != "mail_login" || es[0].Label != "mail/login" || es[0].Attributes["user"] != "ada" || es[0].Attributes["service"] != "cua-test" {
		t.Fatalf("List = %+v, want mail_login alone, labelled mail/login, with its attributes", es)
	}
	if es, _ := s.List(credential.Filter{Attributes: map[string]string{"user": "bob"}}); len(es) != 0 {
		t.Errorf("List(user bob) = %+v, want none", es)
	}

	stop := testkit.MonitorBus(t, kr.Addr)
	got, err := s.Read("mail_login")
	if err != nil {
		t.Fatal(err)
	}
	b := got.Bytes()
	if !bytes.Equal(b, secret) {
		t.Fatalf("Read(mail_login) = %q, want %q", b, secret)
	}
	got.Wipe()
	if bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
		t.Fatalf("after Wipe the secret's memory holds %q", b)
	}
	captured := stop()
	if !bytes.Contains(captured, []byte("GetSecret")) || !bytes.Contains(captured, []byte(secretservice.Algorithm)) {
		t.Fatalf("the bus capture (%d bytes) shows no GetSecret in an encrypted session: the monitor saw nothing", len(captured))
	}
	if bytes.Contains(captured, bytes.TrimSpace(secret)) {
		t.Error("the secret crossed the bus in the clear")
	}
	// Positive control: the same item read in a plain session shows in a capture.
	stop = testkit.MonitorBus(t, kr.Addr)
	conn := kr.Conn(t)
	svc := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets")
	var unlocked, locked []dbus.ObjectPath
	if err := svc.Call("org.freedesktop.Secret.Service.SearchItems", 0, map[string]string{"user": "ada", "service": "cua-test"}).Store(&unlocked, &locked); err != nil || len(unlocked) != 1 {
		t.Fatalf("SearchItems = %v, %v", unlocked, err)
	}
	var out dbus.Variant
	var session dbus.ObjectPath
	if err := svc.Call("org.freedesktop.Secret.Service.OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&out, &session); err != nil {
		t.Fatal(err)
	}
	if err := conn.Object("org.freedesktop.secrets", unlocked[0]).Call("org.freedesktop.Secret.Item.GetSecret", 0, session).Err; err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(stop(), bytes.TrimSpace(secret)) {
		t.Error("a plain session's secret is not in the bus capture: the capture would miss a secret in the clear")
	}

	for _, h := range []string{"bank", "twin", "user only", "mail/login", "../x", "nope", ""} {
		if _, err := s.Read(h); !errors.Is(err, credential.ErrNotFound) {
			t.Errorf("Read(%q) = %v, want ErrNotFound", h, err)
		}
	}
	// A Secret Service credential goes only into password fields: the any_field exemption
	// is the credentials directory's, written by the operator alone, while an item's
	// attributes are written by whatever stored it.
	if _, ok := any(s).(interface{ AnyField(string) (bool, error) }); ok {
		t.Error("the store offers AnyField: its items could be typed outside password fields")
	}

	kr.Lock(t)
	if _, err := s.Read("mail_login"); !errors.Is(err, credential.ErrLocked) {
		t.Errorf("Read of a locked item = %v, want ErrLocked", err)
	}
	if es, err := s.List(credential.Filter{}); err != nil || len(es) != 1 {
		t.Errorf("List with the keyring locked = %+v, %v, want mail_login still listed", es, err)
	}
}

// TestUnreachable: a bus that is not there is an error, not an empty list.
func TestUnreachable(t *testing.T) {
	s, err := secretservice.New("unix:path="+filepath.Join(t.TempDir(), "none"), map[string]string{"a": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(credential.Filter{}); err == nil {
		t.Error("List on no bus = nil error")
	}
	if _, err := s.Read("x"); err == nil || errors.Is(err, credential.ErrNotFound) {
		t.Errorf("Read on no bus = %v, want a connection error", err)
	}
}

func TestHandleOf(t *testing.T) {
	for _, tc := range []struct{ label, want string }{
		{"mail", "mail"}, {"https://mail.example/login", "https:__mail.example_login"}, {".hidden", "_hidden"},
		{"a\nb", "a_b"}, {"", ""}, {"Grüße", "Grüße"}, {"a\xffb", "a\uFFFDb"},
		{string(bytes.Repeat([]byte("é"), 200)), string(bytes.Repeat([]byte("é"), 127))},
	} {
		got := secretservice.HandleOf(tc.label)
		if got != tc.want {
			t.Errorf("HandleOf(%q) = %q, want %q", tc.label, got, tc.want)
		}
		if got != "" && !credential.ValidHandle(got) {
			t.Errorf("HandleOf(%q) = %q, not a valid handle", tc.label, got)
		}
	}
}

var selectionSeeds = []string{"service=cua-test", "service=cua-test,user=ada", "a=b=c", "a=", "", "=x", "a", "a=1,a=2", "a=1,,b=2"}

func TestParseSelection(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{"service=cua-test", map[string]string{"service": "cua-test"}},
		{"service=cua-test,user=ada", map[string]string{"service": "cua-test", "user": "ada"}},
		{"a=b=c", map[string]string{"a": "b=c"}},
		{"a=", map[string]string{"a": ""}},
		{"", nil}, {"=x", nil}, {"a", nil}, {"a=1,a=2", nil}, {"a=1,,b=2", nil},
	} {
		got, err := secretservice.ParseSelection(tc.in)
		if (err == nil) != (tc.want != nil) || len(got) != len(tc.want) {
			t.Errorf("ParseSelection(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("ParseSelection(%q)[%q] = %q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}

func FuzzParseSelection(f *testing.F) {
	for _, s := range selectionSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := secretservice.ParseSelection(s)
		if err != nil {
			return
		}
		if len(m) == 0 || len(m) > secretservice.MaxAttributes || slices.Contains(slices.Collect(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}), "") {
			t.Fatalf("ParseSelection(%q) = %v", s, m)
		}
	})
}
