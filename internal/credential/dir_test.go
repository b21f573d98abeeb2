package credential_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cua-host/cua-host/internal/credential"
	"github.com/cua-host/cua-host/internal/safefile"
)

func openDir(t *testing.T, dir string) *credential.Dir {
	t.Helper()
	d, err := safefile.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := credential.NewDir(d)
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDirReadAndList(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "creds")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside")
	write(t, outside, "outside-secret")
	write(t, filepath.Join(dir, "mail"), "Pa ss:1\n")
	write(t, filepath.Join(dir, "bank"), "two\n\n")
	write(t, filepath.Join(dir, "big"), string(bytes.Repeat([]byte("x"), credential.MaxSecretBytes+1)))
	write(t, filepath.Join(dir, "edge"), string(bytes.Repeat([]byte("y"), credential.MaxSecretBytes))+"\n")
	write(t, filepath.Join(dir, ".hidden"), "hidden")
	write(t, filepath.Join(dir, credential.AttributesFile), `{"mail": {"url": "https://mail.example", "username": "ada"}}`)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub", "x"), "nested")
	c := openDir(t, dir)

	for _, tc := range []struct {
		name, handle string
		want         string
		err          error
	}{
		{name: "one trailing newline removed", handle: "mail", want: "Pa ss:1"},
		{name: "only one newline removed", handle: "bank", want: "two\n"},
		{name: "at the limit", handle: "edge", want: string(bytes.Repeat([]byte("y"), credential.MaxSecretBytes))},
		{name: "too large", handle: "big", err: credential.ErrTooLarge},
		{name: "unknown", handle: "nope", err: credential.ErrNotFound},
		{name: "parent", handle: "../outside", err: credential.ErrNotFound},
		{name: "dot dot", handle: "..", err: credential.ErrNotFound},
		{name: "nested path", handle: "sub/x", err: credential.ErrNotFound},
		{name: "absolute", handle: outside, err: credential.ErrNotFound},
		{name: "symlink out", handle: "link", err: credential.ErrNotFound},
		{name: "directory", handle: "sub", err: credential.ErrNotFound},
		{name: "hidden", handle: ".hidden", err: credential.ErrNotFound},
		{name: "attributes file", handle: credential.AttributesFile, err: credential.ErrNotFound},
		{name: "empty", handle: "", err: credential.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := c.Read(tc.handle)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Read(%q) = %v, want %v", tc.handle, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read(%q) = %v", tc.handle, err)
			}
			b := s.Bytes()
			if string(b) != tc.want {
				t.Fatalf("Read(%q) = %q, want %q", tc.handle, b, tc.want)
			}
			s.Wipe()
			if bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
				t.Fatalf("after Wipe the secret's memory holds %q", b)
			}
		})
	}

	es, err := c.List(credential.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var handles []string
	for _, e := range es {
		handles = append(handles, e.Handle)
	}
	if want := []string{"bank", "big", "edge", "mail"}; !equal(handles, want) {
		t.Fatalf("List = %v, want %v", handles, want)
	}
	es, err = c.List(credential.Filter{Query: "MA", Attributes: map[string]string{"username": "ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Handle != "mail" || es[0].Attributes["url"] != "https://mail.example" {
		t.Fatalf("List(query MA, username ada) = %+v, want mail with its url", es)
	}
	es, _ = c.List(credential.Filter{Attributes: map[string]string{"username": "bob"}})
	if len(es) != 0 {
		t.Fatalf("List(username bob) = %+v, want none", es)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestValidHandle(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want bool
	}{
		{"mail", true}, {"bank login", true}, {"Grüße", true},
		{"", false}, {".", false}, {"..", false}, {".x", false}, {"a/b", false}, {"/etc/passwd", false},
		{"a\x00b", false}, {"a\nb", false}, {"\xff", false}, {string(bytes.Repeat([]byte("a"), 256)), false},
	} {
		if got := credential.ValidHandle(tc.h); got != tc.want {
			t.Errorf("ValidHandle(%q) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

var attributeSeeds = []string{
	`{"mail": {"url": "https://mail.example", "username": "ada"}}`,
	`{}`, `{"a": null}`, `{"../x": {}}`, `[]`, `{"a": {"b": 1}}`, `{"a": "b"}`, ``, `null`,
	`{"sudo": {"any_field": "true"}}`, `{"sudo": {"any_field": "false"}}`, `{"sudo": {"any_field": "yes"}}`, `{"sudo": {"any_field": "TRUE"}}`,
}

func TestParseAttributes(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{attributeSeeds[0], true}, {`{}`, true}, {`{"a": null}`, true}, {`null`, true},
		{`{"../x": {}}`, false}, {`[]`, false}, {`{"a": {"b": 1}}`, false}, {`{"a": "b"}`, false}, {``, false},
		{attributeSeeds[9], true}, {attributeSeeds[10], true}, {attributeSeeds[11], false}, {attributeSeeds[12], false},
	} {
		_, err := credential.ParseAttributes([]byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("ParseAttributes(%q) = %v, want ok %v", tc.in, err, tc.ok)
		}
	}
}

func FuzzParseAttributes(f *testing.F) {
	for _, s := range attributeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := credential.ParseAttributes(data)
		if err != nil {
			return
		}
		for h, attrs := range m {
			if !credential.ValidHandle(h) {
				t.Fatalf("ParseAttributes accepted handle %q", h)
			}
			if attrs == nil {
				t.Fatalf("ParseAttributes kept a nil attribute set for %q", h)
			}
			if v, ok := attrs[credential.AnyFieldAttribute]; ok && v != "true" && v != "false" {
				t.Fatalf("ParseAttributes accepted %s %q for %q", credential.AnyFieldAttribute, v, h)
			}
		}
	})
}

func TestAnyField(t *testing.T) {
	dir := t.TempDir()
	for _, h := range []string{"sudo", "mail", "plain"} {
		write(t, filepath.Join(dir, h), "s")
	}
	c := openDir(t, dir)
	want := map[string]bool{"sudo": false, "mail": false, "plain": false, "nope": false}
	check := func(when string) {
		t.Helper()
		for h, w := range want {
			if got, err := c.AnyField(h); err != nil || got != w {
				t.Errorf("%s: AnyField(%q) = %v, %v, want %v", when, h, got, err, w)
			}
		}
	}
	check("without " + credential.AttributesFile)
	// The file is read at each call: the operator's change applies to the next one.
	write(t, filepath.Join(dir, credential.AttributesFile), `{"sudo": {"any_field": "true"}, "mail": {"any_field": "false", "url": "https://mail.example"}}`)
	want["sudo"] = true
	check("with sudo allowed")
	write(t, filepath.Join(dir, credential.AttributesFile), `{"sudo": {"any_field": "1"}}`)
	if got, err := c.AnyField("sudo"); err == nil || got {
		t.Errorf("AnyField with any_field \"1\" = %v, %v, want an error", got, err)
	}
}
