package desktopentry

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on what Parse accepts.
const (
	// MaxFileSize bounds a desktop entry file.
	MaxFileSize = 64 << 10
	// MaxValueLen bounds one value (Exec included).
	MaxValueLen = 4096
	// MaxArgs bounds the arguments of an Exec line.
	MaxArgs = 128
)

// FileArgs says which file or URL arguments an entry's Exec line takes.
type FileArgs int

// File argument kinds, from the Exec field code.
const (
	// NoFiles: the Exec line has none of %f %F %u %U; the entry takes no arguments.
	NoFiles FileArgs = iota + 1
	// OneFile: %f, a single local file.
	OneFile
	// ManyFiles: %F, any number of local files.
	ManyFiles
	// OneURL: %u, a single URL or local file.
	OneURL
	// ManyURLs: %U, any number of URLs or local files.
	ManyURLs
)

var fileArgsNames = [...]string{NoFiles: "none", OneFile: "%f", ManyFiles: "%F", OneURL: "%u", ManyURLs: "%U"}

// String returns the field code ("%f") or "none".
func (f FileArgs) String() string {
	if f < NoFiles || int(f) >= len(fileArgsNames) {
		return fmt.Sprintf("FileArgs(%d)", int(f))
	}
	return fileArgsNames[f]
}

// Max returns how many arguments of this kind one launch takes (-1: any number).
func (f FileArgs) Max() int {
	switch f {
	case OneFile, OneURL:
		return 1
	case ManyFiles, ManyURLs:
		return -1
	}
	return 0
}

// URLs reports whether the arguments may be URLs (not only local files).
func (f FileArgs) URLs() bool { return f == OneURL || f == ManyURLs }

// Entry is the [Desktop Entry] group of one desktop entry file, the keys a launch needs.
type Entry struct {
	// ID is the desktop id ("debian-xterm.desktop"); set by the directory scan, empty
	// for Parse.
	ID string
	// File is the path the entry was read from (%k); empty for Parse.
	File string
	// Type is the entry's Type ("Application", "Link", "Directory").
	Type string
	// Name is the untranslated Name.
	Name string
	// Icon is the untranslated Icon (%i), possibly empty.
	Icon string
	// Exec is the raw Exec value (after the string escapes), empty when absent.
	Exec string
	// TryExec is a program that must exist for the entry to be used, possibly empty.
	TryExec string
	// Terminal is true when the program runs in a terminal.
	Terminal bool
	// Hidden is true for a deleted entry: it hides entries with its id in
	// lower-precedence directories and is never launched.
	Hidden bool
	// NoDisplay is true for an entry that menus do not show.
	NoDisplay bool
	// Files is the kind of file arguments Exec takes.
	Files FileArgs

	// args is Exec split into arguments, field codes kept (see Expand).
	args []token
}

// token is one argument of an Exec line.
type token struct {
	text   string
	quoted bool
}

// Program returns the program the Exec line runs (its first argument) and whether there
// is one.
func (e *Entry) Program() (string, bool) {
	if len(e.args) == 0 {
		return "", false
	}
	return e.args[0].text, true
}

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("desktop entry")

// ParseError is a syntax error in a desktop entry, with the line it is on (0: the file).
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "desktop entry: " + e.Msg
	}
	return fmt.Sprintf("desktop entry: line %d: %s", e.Line, e.Msg)
}

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *ParseError) Unwrap() error { return ErrSyntax }

func perr(line int, format string, args ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads one desktop entry file strictly: valid UTF-8 of at most MaxFileSize bytes,
// no control characters but tabs, comments and blank lines, the [Desktop Entry] group
// first, well-formed group headers and keys, no duplicate groups or keys. Groups other
// than [Desktop Entry] are checked for form and otherwise ignored. Type and Name are
// required; an Application's Exec (when present) must follow the Exec quoting and field
// code rules (see Expand).
func Parse(data []byte) (*Entry, error) {
	if len(data) > MaxFileSize {
		return nil, perr(0, "file is larger than %d bytes", MaxFileSize)
	}
	if !utf8.Valid(data) {
		return nil, perr(0, "file is not valid UTF-8")
	}
	lines := strings.Split(string(data), "\n")
	group := ""
	groups := map[string]bool{}
	raw := map[string]string{}  // keys of [Desktop Entry], locale suffix included
	rawLine := map[string]int{} // the line each key is on
	var keys map[string]bool    // keys of the current group
	for i, line := range lines {
		n := i + 1
		for _, r := range line {
			if r < 0x20 && r != '\t' || r == 0x7f {
				return nil, perr(n, "control character %U", r)
			}
		}
		t := strings.TrimLeft(line, " \t")
		switch {
		case t == "" || t[0] == '#':
			continue
		case t[0] == '[':
			name, ok := strings.CutSuffix(strings.TrimRight(t, " \t")[1:], "]")
			if !ok || name == "" || strings.ContainsAny(name, "[]") {
				return nil, perr(n, "malformed group header %q", t)
			}
			if group == "" && name != "Desktop Entry" {
				return nil, perr(n, "the first group must be [Desktop Entry], not [%s]", name)
			}
			if groups[name] {
				return nil, perr(n, "duplicate group [%s]", name)
			}
			groups[name] = true
			group, keys = name, map[string]bool{}
			continue
		}
		if group == "" {
			return nil, perr(n, "key outside any group")
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return nil, perr(n, "line is neither a comment, a group header nor Key=Value")
		}
		k = strings.TrimRight(k, " \t")
		v = strings.TrimLeft(v, " \t")
		if err := checkKey(k); err != nil {
			return nil, perr(n, "%v", err)
		}
		if keys[k] {
			return nil, perr(n, "duplicate key %s", k)
		}
		keys[k] = true
		if len(v) > MaxValueLen {
			return nil, perr(n, "value of %s is longer than %d bytes", k, MaxValueLen)
		}
		if group == "Desktop Entry" {
			raw[k], rawLine[k] = v, n
		}
	}
	if group == "" {
		return nil, perr(0, "no [Desktop Entry] group")
	}
	e := &Entry{}
	str := func(k string) (string, error) {
		v, err := unescape(raw[k])
		if err != nil {
			return "", perr(rawLine[k], "%s: %v", k, err)
		}
		return v, nil
	}
	boolean := func(k string) (bool, error) {
		switch v, ok := raw[k]; {
		case !ok || v == "false":
			return false, nil
		case v == "true":
			return true, nil
		default:
			return false, perr(rawLine[k], "%s: %q is not true or false", k, v)
		}
	}
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"Type", &e.Type}, {"Name", &e.Name}, {"Icon", &e.Icon}, {"Exec", &e.Exec}, {"TryExec", &e.TryExec}} {
		if *f.dst, err = str(f.key); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{"Terminal", &e.Terminal}, {"Hidden", &e.Hidden}, {"NoDisplay", &e.NoDisplay}} {
		if *f.dst, err = boolean(f.key); err != nil {
			return nil, err
		}
	}
	if _, ok := raw["Type"]; !ok || e.Type == "" {
		return nil, perr(0, "Type is required")
	}
	if _, ok := raw["Name"]; !ok || e.Name == "" {
		return nil, perr(0, "Name is required")
	}
	e.Files = NoFiles
	if e.Type == "Application" && e.Exec != "" {
		if e.args, e.Files, err = parseExec(e.Exec); err != nil {
			return nil, perr(rawLine["Exec"], "Exec: %v", err)
		}
	}
	return e, nil
}

// checkKey accepts Key or Key[locale]: key characters A-Za-z0-9-, locale characters
// A-Za-z0-9_@.-.
func checkKey(k string) error {
	name, locale, hasLocale := strings.Cut(k, "[")
	if name == "" {
		return fmt.Errorf("empty key")
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("key %q has a character outside A-Za-z0-9-", k)
		}
	}
	if !hasLocale {
		return nil
	}
	locale, ok := strings.CutSuffix(locale, "]")
	if !ok || locale == "" {
		return fmt.Errorf("key %q has a malformed locale", k)
	}
	for _, c := range locale {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("_@.-", c)) {
			return fmt.Errorf("key %q has a malformed locale", k)
		}
	}
	return nil
}

// unescape applies the string escapes \s \n \t \r \\; any other backslash is an error.
func unescape(v string) (string, error) {
	if !strings.Contains(v, `\`) {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			b.WriteByte(v[i])
			continue
		}
		if i+1 == len(v) {
			return "", fmt.Errorf("trailing backslash")
		}
		i++
		switch v[i] {
		case 's':
			b.WriteByte(' ')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("unknown escape \\%c", v[i])
		}
	}
	return b.String(), nil
}
