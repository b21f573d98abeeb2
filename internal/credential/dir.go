package credential

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/cua-host/cua-host/internal/safefile"
)

// AttributesFile is the optional file of a credentials directory that gives credentials
// non-secret attributes: a JSON object from handle to an object of string attributes,
// {"mail": {"url": "https://mail.example", "username": "ada"}}. Being a dot file, it is
// no credential itself.
const AttributesFile = ".attributes.json"

// AnyFieldAttribute is the attribute of AttributesFile by which the operator lets
// type_secret type a credential into whatever element has the focus, not only into a
// password field: "true" allows it, "false" (or no such attribute) keeps the default. Any
// other value makes the file invalid, so that a typo never widens where a secret goes
// unnoticed. Only the operator writes AttributesFile; the agent sees the attribute among
// the others.
const AnyFieldAttribute = "any_field"

// maxAttributesBytes bounds AttributesFile.
const maxAttributesBytes = 1 << 20

// Dir is a credentials directory, modelled on systemd's: each regular file whose name
// does not start with "." is one credential, its name the handle and the label, its
// content the secret (one trailing newline removed). Every file is opened relative to
// the directory's descriptor without following symbolic links, and a secret is read only
// by Read.
type Dir struct {
	d *safefile.Dir
}

// NewDir returns the credentials directory d. It takes ownership of d.
func NewDir(d *safefile.Dir) *Dir { return &Dir{d: d} }

// Close releases the directory. It may be called more than once.
func (c *Dir) Close() error { return c.d.Close() }

// List returns the credentials that pass f, sorted by handle. Entries that are not
// regular files are left out.
func (c *Dir) List(f Filter) ([]Entry, error) {
	names, err := c.d.Names()
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	attrs, err := c.attributes()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Entry
	for _, name := range names {
		if !ValidHandle(name) {
			continue
		}
		if m, err := c.d.Mode(name); err != nil || m.Type() != 0 {
			continue
		}
		e := Entry{Handle: name, Label: name, Attributes: attrs[name]}
		if f.Match(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// attributes reads AttributesFile; a directory without one has no attributes.
func (c *Dir) attributes() (map[string]map[string]string, error) {
	f, err := c.d.Open(AttributesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credential attributes: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAttributesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("credential attributes: %w", err)
	}
	if len(data) > maxAttributesBytes {
		return nil, fmt.Errorf("credential attributes: %s is larger than %d bytes", AttributesFile, maxAttributesBytes)
	}
	return ParseAttributes(data)
}

// ParseAttributes decodes the content of AttributesFile. Handles that are not valid
// handles are an error, and so is anything but an object of objects of strings.
func ParseAttributes(data []byte) (map[string]map[string]string, error) {
	var m map[string]map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("credential attributes: %s: %w", AttributesFile, err)
	}
	for h, attrs := range m {
		if !ValidHandle(h) {
			return nil, fmt.Errorf("credential attributes: %s names %q, which is not a credential's file name", AttributesFile, h)
		}
		if attrs == nil {
			delete(m, h)
			continue
		}
		if v, ok := attrs[AnyFieldAttribute]; ok && v != "true" && v != "false" {
			return nil, fmt.Errorf("credential attributes: %s gives %q %s %q; it must be \"true\" or \"false\"", AttributesFile, h, AnyFieldAttribute, v)
		}
	}
	return m, nil
}

// AnyField reports whether the operator allowed handle to be typed into any focused
// element (AnyFieldAttribute), as AttributesFile says at this moment. A directory
// without the file, or a credential the file does not name, allows only password fields.
func (c *Dir) AnyField(handle string) (bool, error) {
	attrs, err := c.attributes()
	if err != nil {
		return false, err
	}
	return attrs[handle][AnyFieldAttribute] == "true", nil
}

// Read returns the secret of handle, read at this moment into a buffer the caller owns
// and must Wipe. The file is opened relative to the directory without following a
// symbolic link; a handle that is not one plain entry of the directory, or names
// anything but a regular file, is ErrNotFound, and nothing outside the directory is
// opened.
func (c *Dir) Read(handle string) (*Secret, error) {
	if !ValidHandle(handle) {
		return nil, ErrNotFound
	}
	f, err := c.d.Open(handle)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, safefile.ErrSymlink) || errors.Is(err, safefile.ErrNotRegular) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("read credential: %w", err)
	}
	defer f.Close()
	// One buffer of the final size, so that no growing leaves a copy behind; one byte
	// more than allowed, plus the newline, tells a secret that is too long.
	s := &Secret{buf: make([]byte, MaxSecretBytes+2)}
	for s.n < len(s.buf) {
		n, err := f.Read(s.buf[s.n:])
		s.n += n
		if err == io.EOF {
			break
		}
		if err != nil {
			s.Wipe()
			return nil, fmt.Errorf("read credential: %w", err)
		}
	}
	if s.n > 0 && s.buf[s.n-1] == '\n' {
		s.n--
		s.buf[s.n] = 0
	}
	if s.n > MaxSecretBytes {
		s.Wipe()
		return nil, ErrTooLarge
	}
	return s, nil
}
