package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/cua-host/cua-host/internal/strictyaml"
	"github.com/cua-host/cua-host/policy"
)

// ManifestVersion is the only manifest version this release reads.
const ManifestVersion = 1

// MaxManifestSize bounds a manifest file.
const MaxManifestSize = 64 << 10

// MaxManifestLifetime bounds expires_after (and so idle_timeout).
const MaxManifestLifetime = 24 * time.Hour

// Terminate says which processes of an app a bounded session may stop.
type Terminate int

// Terminate rules.
const (
	// TerminateDeny: none.
	TerminateDeny Terminate = iota + 1
	// TerminateDriverLaunched: only processes the session launched.
	TerminateDriverLaunched
	// TerminateAny: any process running the executable.
	TerminateAny
)

var terminateNames = [...]string{TerminateDeny: "deny", TerminateDriverLaunched: "driver_launched", TerminateAny: "any"}

// String returns the rule as the manifest spells it.
func (t Terminate) String() string { return enumName(terminateNames[:], int(t), "Terminate") }

// MarshalText implements encoding.TextMarshaler.
func (t Terminate) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// App is one resources.apps entry.
type App struct {
	// Executable is an absolute, clean path; windows and processes match it by
	// /proc/PID/exe (symbolic links resolved).
	Executable string `json:"executable"`
	// Launch allows launch_app to start it.
	Launch bool `json:"launch"`
	// Terminate says which of its processes kill_app may stop; the default is
	// driver_launched.
	Terminate Terminate `json:"terminate"`
	// Arguments are the RE2 patterns, as written, that each argument of a launch must
	// fully match (at least one of them). Empty (the default, "none"): the app may be
	// launched only without arguments.
	Arguments []string `json:"arguments,omitempty"`

	// args are Arguments compiled, each anchored at both ends.
	args []*regexp.Regexp
}

// Limits on resources.apps[].arguments.
const (
	// MaxArgumentPatterns bounds the patterns of one app.
	MaxArgumentPatterns = 64
	// MaxArgumentPatternLen bounds one pattern.
	MaxArgumentPatternLen = 1024
)

// checkArguments refuses a launch of a whose arguments (argv[1:]) are not all allowed.
func (a *App) checkArguments(argv []string) *Refusal {
	if len(argv) <= 1 {
		return nil
	}
	if len(a.args) == 0 {
		return Refuse(CodeOutsideManifest, "resources.apps lists %s without arguments: it may be launched only without any (this launch has %d)", a.Executable, len(argv)-1)
	}
	for i, arg := range argv[1:] {
		ok := false
		for _, re := range a.args {
			if re.MatchString(arg) {
				ok = true
				break
			}
		}
		if !ok {
			return Refuse(CodeOutsideManifest, "argument %d %q of %s matches none of the patterns in resources.apps arguments", i+1, arg, a.Executable)
		}
	}
	return nil
}

// Manifest is a bounded session's capability manifest: exactly what the session may do.
// It is immutable once parsed and safe for concurrent use.
type Manifest struct {
	Version      int           `json:"version"`
	ExpiresAfter time.Duration `json:"expires_after"`
	IdleTimeout  time.Duration `json:"idle_timeout"`
	// AllowTools and DenyTools are canonical tool names in file order.
	AllowTools []string `json:"allow_tools"`
	DenyTools  []string `json:"deny_tools"`
	Apps       []App    `json:"apps"`
	// DesktopObserve allows whole-display observation; DesktopInput allows input at desktop
	// coordinates (which lands on whatever window is there, protected ones excepted).
	DesktopObserve bool `json:"desktop_observe"`
	DesktopInput   bool `json:"desktop_input"`
	// ClipboardRead and ClipboardWrite allow clipboard_read and clipboard_write.
	ClipboardRead  bool `json:"clipboard_read"`
	ClipboardWrite bool `json:"clipboard_write"`
	// SHA256 is the hex digest of the manifest's bytes.
	SHA256 string `json:"sha256"`

	allow, deny map[string]bool
	// byExe maps each app's executable, and its symlink-resolved path, to the app.
	byExe map[string]*App
}

// LoadManifest reads and parses a manifest file; see ParseManifest.
func LoadManifest(path string, inv *Inventory) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	m, err := ParseManifest(data, inv)
	var me *ManifestError
	if errors.As(err, &me) {
		me.File = path
	}
	return m, err
}

// ParseManifest parses and validates a manifest strictly: unknown and duplicate keys,
// anchors, unknown or unexposed tools (checked against inv; nil means the shipped
// inventory), a tool in both lists, relative or non-canonical paths and bad durations are
// *ManifestError values naming the field.
//
//	version: 1
//	expires_after: 8h            # \d+[smh], at most 24h
//	idle_timeout: 30m            # at most expires_after
//	allow: {tools: [launch_app, click]}
//	deny:  {tools: [kill_app]}
//	resources:
//	  apps: [{executable: /usr/bin/xterm, launch: true, terminate: driver_launched, arguments: none}]
//	  desktop: {observe: false, input: false}
//	  clipboard: {read: false, write: true}
func ParseManifest(data []byte, inv *Inventory) (*Manifest, error) {
	if inv == nil {
		inv = DefaultInventory()
	}
	if len(data) > MaxManifestSize {
		return nil, &ManifestError{Msg: fmt.Sprintf("manifest is larger than %d bytes", MaxManifestSize)}
	}
	sum := sha256.Sum256(data)
	p := newManifestParser(inv, &Manifest{
		SHA256: hex.EncodeToString(sum[:]),
		allow:  map[string]bool{}, deny: map[string]bool{}, byExe: map[string]*App{},
	})
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	err = p.mapping(root, "", []string{"version", "expires_after", "idle_timeout", "allow", "deny", "resources"}, func(key string, k, v *yaml.Node) error {
		seen[key] = true
		switch key {
		case "version":
			return p.version(v)
		case "expires_after":
			d, err := p.duration(v, key)
			p.m.ExpiresAfter = d
			return err
		case "idle_timeout":
			d, err := p.duration(v, key)
			p.m.IdleTimeout = d
			return err
		case "allow":
			return p.toolLists(v, "allow", &p.m.AllowTools, p.m.allow)
		case "deny":
			return p.toolLists(v, "deny", &p.m.DenyTools, p.m.deny)
		default:
			return p.resources(v)
		}
	})
	if err != nil {
		return nil, err
	}
	for _, req := range []string{"version", "expires_after", "idle_timeout", "allow"} {
		if !seen[req] {
			return nil, &ManifestError{Line: root.Line, Field: req, Msg: "is required"}
		}
	}
	m := p.m
	if len(m.AllowTools) == 0 {
		return nil, &ManifestError{Line: root.Line, Field: "allow.tools", Msg: "must list at least one tool"}
	}
	if m.IdleTimeout > m.ExpiresAfter {
		return nil, &ManifestError{Line: root.Line, Field: "idle_timeout", Msg: fmt.Sprintf("%v exceeds expires_after %v", m.IdleTimeout, m.ExpiresAfter)}
	}
	for _, t := range m.DenyTools {
		if m.allow[t] {
			return nil, &ManifestError{Line: root.Line, Field: "deny.tools", Msg: fmt.Sprintf("tool %q appears in both allow.tools and deny.tools", t)}
		}
	}
	for i := range m.Apps {
		a := &m.Apps[i]
		m.byExe[a.Executable] = a
		if real, err := filepath.EvalSymlinks(a.Executable); err == nil && real != a.Executable {
			if _, taken := m.byExe[real]; !taken {
				m.byExe[real] = a
			}
		}
	}
	return m, nil
}

// Allows reports whether the manifest lists tool in allow.tools and not in deny.tools.
func (m *Manifest) Allows(tool string) bool { return m.allow[tool] && !m.deny[tool] }

// App returns the resources.apps entry whose executable (or its resolved path) is exe.
func (m *Manifest) App(exe string) (*App, bool) {
	a, ok := m.byExe[exe]
	return a, ok
}

// Check decides a call of entry e on resource r against the manifest: the tool lists
// first (deny wins), then the resource. A nil refusal means the manifest covers the call.
func (m *Manifest) Check(e *Entry, r Resource) *Refusal {
	switch {
	case m.deny[e.Tool]:
		return Refuse(CodeManifestDenied, "capability manifest denies tool '%s'", e.Tool)
	case !m.allow[e.Tool]:
		return Refuse(CodeOutsideManifest, "tool '%s' is outside the capability manifest", e.Tool)
	}
	return m.CheckResource(r)
}

// CheckResource checks one resource a call touches against the manifest's resources,
// whatever the tool: Check after the tool's allowance, and on its own for a call's further
// resources (a paste reads the clipboard).
func (m *Manifest) CheckResource(r Resource) *Refusal {
	switch r.Kind {
	case ResourceWindow:
		if _, ok := m.byExe[r.Executable]; !ok {
			return Refuse(CodeOutsideManifest, "%s runs %s, which is not in the manifest's resources.apps", r, orUnknown(r.Executable))
		}
	case ResourceDisplay:
		if r.Op == OpObserve && !m.DesktopObserve {
			return Refuse(CodeOutsideManifest, "whole-display observation needs resources.desktop.observe")
		}
		if r.Op == OpInput && !m.DesktopInput {
			return Refuse(CodeOutsideManifest, "input at desktop coordinates needs resources.desktop.input")
		}
	case ResourceClipboard:
		if r.Op == OpObserve && !m.ClipboardRead {
			return Refuse(CodeOutsideManifest, "reading the clipboard needs resources.clipboard.read")
		}
		if r.Op == OpInput && !m.ClipboardWrite {
			return Refuse(CodeOutsideManifest, "writing the clipboard needs resources.clipboard.write")
		}
	case ResourceApplication:
		a, ok := m.byExe[r.Executable]
		switch {
		case !ok:
			return Refuse(CodeOutsideManifest, "launching %s is outside the manifest's resources.apps", orUnknown(r.Executable))
		case !a.Launch:
			return Refuse(CodeOutsideManifest, "resources.apps lists %s without launch: true", a.Executable)
		}
		if r := a.checkArguments(r.Argv); r != nil {
			return r
		}
	case ResourceProcess:
		a, ok := m.byExe[r.Executable]
		switch {
		case !ok:
			return Refuse(CodeOutsideManifest, "%s runs %s, which is not in the manifest's resources.apps", r, orUnknown(r.Executable))
		case a.Terminate == TerminateDeny:
			return Refuse(CodeManifestDenied, "resources.apps denies terminating %s", a.Executable)
		case a.Terminate == TerminateDriverLaunched && !r.Owned:
			return Refuse(CodeForeignProcessTermination, "%s was not launched by this session (terminate: driver_launched)", r)
		}
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown executable"
	}
	return s
}

// manifestParser walks one manifest's node tree.
type manifestParser struct {
	inv *Inventory
	m   *Manifest
	w   *strictyaml.Walker
}

func newManifestParser(inv *Inventory, m *Manifest) *manifestParser {
	p := &manifestParser{inv: inv, m: m}
	p.w = strictyaml.New(strictyaml.Options{Error: p.problem})
	return p
}

func (p *manifestParser) errorf(n *yaml.Node, field, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ManifestError{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// problem words a structural problem of the manifest's YAML.
func (p *manifestParser) problem(pr *strictyaml.Problem) error {
	n, field := pr.Node, pr.Field
	switch pr.Kind {
	case strictyaml.KindSyntax:
		return &ManifestError{Msg: strings.TrimPrefix(pr.Err.Error(), "yaml: ")}
	case strictyaml.KindEmpty:
		return p.errorf(n, "", "empty manifest")
	case strictyaml.KindSecondDocument:
		return p.errorf(n, "", "a manifest holds one YAML document; found a second one")
	case strictyaml.KindNotOneDocument:
		return p.errorf(n, "", "expected one YAML document")
	case strictyaml.KindAlias:
		return p.errorf(n, field, "anchors and aliases are not allowed in a manifest")
	case strictyaml.KindNotMapping:
		return p.errorf(n, field, "must be a mapping with keys %s", strings.Join(pr.Keys, ", "))
	case strictyaml.KindNotSequence:
		return p.errorf(n, field, "must be a list")
	case strictyaml.KindMergeKey:
		return p.errorf(n, field, "merge keys are not allowed in a manifest")
	case strictyaml.KindKeyNotString:
		return p.errorf(n, field, "keys must be strings")
	case strictyaml.KindUnknownKey:
		what := field
		if what == "" {
			what = "the manifest"
		}
		return p.errorf(n, field, "unknown key %q in %s; expected %s", pr.Key, what, strings.Join(pr.Keys, ", "))
	case strictyaml.KindDuplicateKey:
		return p.errorf(n, field, "duplicate key %q", pr.Key)
	}
	return p.errorf(n, field, "%v", pr.Kind)
}

// document returns the root mapping of the manifest's only document.
func (p *manifestParser) document(data []byte) (*yaml.Node, error) {
	if !utf8.Valid(data) {
		return nil, &ManifestError{Msg: "manifest is not valid UTF-8"}
	}
	return p.w.Document(data)
}

// mapping calls fn for each entry of the mapping n in file order; keys must be unique and
// among keys, and no anchors, aliases or merge keys. field is n's path ("" for the root).
func (p *manifestParser) mapping(n *yaml.Node, field string, keys []string, fn func(key string, k, v *yaml.Node) error) error {
	return p.w.Mapping(n, field, keys, fn)
}

// sequence calls fn for each item of the sequence n.
func (p *manifestParser) sequence(n *yaml.Node, field string, fn func(i int, item *yaml.Node) error) error {
	return p.w.Sequence(n, field, fn)
}

func (p *manifestParser) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", p.errorf(n, field, "must be a string")
	}
	return n.Value, nil
}

func (p *manifestParser) boolean(n *yaml.Node, field string) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, p.errorf(n, field, "must be true or false")
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, p.errorf(n, field, "must be true or false")
	}
	return b, nil
}

func (p *manifestParser) version(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return p.errorf(n, "version", "must be the integer %d", ManifestVersion)
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v != ManifestVersion {
		return p.errorf(n, "version", "unsupported version %s; this release reads version %d", n.Value, ManifestVersion)
	}
	p.m.Version = v
	return nil
}

// duration parses \d+[smh] in (0, 24h].
func (p *manifestParser) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := p.str(n, field)
	if err != nil {
		return 0, p.errorf(n, field, "must be a duration like 30m, 8h or 90s")
	}
	bad := p.errorf(n, field, "bad duration %q: want a whole number of s, m or h, like 30m", s)
	if len(s) < 2 || len(s) > 8 {
		return 0, bad
	}
	num, unit := s[:len(s)-1], s[len(s)-1]
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, bad
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, bad
	}
	var d time.Duration
	switch unit {
	case 's':
		d = time.Duration(v) * time.Second
	case 'm':
		d = time.Duration(v) * time.Minute
	case 'h':
		d = time.Duration(v) * time.Hour
	default:
		return 0, bad
	}
	if d <= 0 || d > MaxManifestLifetime {
		return 0, p.errorf(n, field, "%s is outside (0, %v]", s, MaxManifestLifetime)
	}
	return d, nil
}

// toolLists parses allow or deny: a mapping with one key, tools.
func (p *manifestParser) toolLists(n *yaml.Node, field string, out *[]string, set map[string]bool) error {
	return p.mapping(n, field, []string{"tools"}, func(_ string, _, v *yaml.Node) error {
		f := field + ".tools"
		return p.sequence(v, f, func(i int, item *yaml.Node) error {
			itemField := fmt.Sprintf("%s[%d]", f, i)
			name, err := p.str(item, itemField)
			if err != nil {
				return err
			}
			name = policy.CanonicalTool(name)
			e, ok := p.inv.Lookup(name)
			switch {
			case !ok:
				return p.errorf(item, itemField, "unknown tool %q", name)
			case !e.Exposed():
				return p.errorf(item, itemField, "tool %q is not exposed by cua-host", name)
			case set[name]:
				return p.errorf(item, itemField, "tool %q is listed twice", name)
			}
			set[name] = true
			*out = append(*out, name)
			return nil
		})
	})
}

func (p *manifestParser) resources(n *yaml.Node) error {
	return p.mapping(n, "resources", []string{"apps", "desktop", "clipboard"}, func(key string, _, v *yaml.Node) error {
		switch key {
		case "apps":
			return p.sequence(v, "resources.apps", p.app)
		case "desktop":
			return p.mapping(v, "resources.desktop", []string{"observe", "input"}, func(k string, _, b *yaml.Node) error {
				val, err := p.boolean(b, "resources.desktop."+k)
				if k == "observe" {
					p.m.DesktopObserve = val
				} else {
					p.m.DesktopInput = val
				}
				return err
			})
		default:
			return p.mapping(v, "resources.clipboard", []string{"read", "write"}, func(k string, _, b *yaml.Node) error {
				val, err := p.boolean(b, "resources.clipboard."+k)
				if k == "read" {
					p.m.ClipboardRead = val
				} else {
					p.m.ClipboardWrite = val
				}
				return err
			})
		}
	})
}

func (p *manifestParser) app(i int, n *yaml.Node) error {
	field := fmt.Sprintf("resources.apps[%d]", i)
	a := App{Terminate: TerminateDriverLaunched}
	hasExe := false
	err := p.mapping(n, field, []string{"executable", "launch", "terminate", "arguments"}, func(key string, _, v *yaml.Node) error {
		f := field + "." + key
		switch key {
		case "arguments":
			return p.arguments(v, f, &a)
		case "executable":
			s, err := p.str(v, f)
			if err != nil {
				return err
			}
			if err := checkExecutable(s); err != nil {
				return p.errorf(v, f, "%v", err)
			}
			for _, other := range p.m.Apps {
				if other.Executable == s {
					return p.errorf(v, f, "%s is listed twice", s)
				}
			}
			a.Executable, hasExe = s, true
		case "launch":
			b, err := p.boolean(v, f)
			a.Launch = b
			return err
		default:
			s, err := p.str(v, f)
			if err != nil {
				return err
			}
			switch s {
			case "deny":
				a.Terminate = TerminateDeny
			case "driver_launched":
				a.Terminate = TerminateDriverLaunched
			case "any":
				a.Terminate = TerminateAny
			default:
				return p.errorf(v, f, "%q: want deny, driver_launched or any", s)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !hasExe {
		return p.errorf(n, field+".executable", "is required")
	}
	p.m.Apps = append(p.m.Apps, a)
	return nil
}

// arguments parses resources.apps[i].arguments: the word none, or a non-empty list of RE2
// patterns, each compiled anchored (it must match a whole argument).
func (p *manifestParser) arguments(n *yaml.Node, field string, a *App) error {
	if n.Kind == yaml.ScalarNode {
		if n.ShortTag() == "!!str" && n.Value == "none" {
			return nil
		}
		return p.errorf(n, field, "must be none or a list of regular expressions")
	}
	if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		return p.errorf(n, field, "an empty list allows nothing; write none")
	}
	if len(n.Content) > MaxArgumentPatterns {
		return p.errorf(n, field, "more than %d patterns", MaxArgumentPatterns)
	}
	return p.sequence(n, field, func(i int, item *yaml.Node) error {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, err := p.str(item, f)
		if err != nil {
			return err
		}
		switch {
		case s == "":
			return p.errorf(item, f, "empty pattern")
		case len(s) > MaxArgumentPatternLen:
			return p.errorf(item, f, "pattern is longer than %d bytes", MaxArgumentPatternLen)
		}
		re, err := regexp.Compile(`^(?:` + s + `)$`)
		if err != nil {
			return p.errorf(item, f, "invalid RE2 pattern %q: %v", s, err)
		}
		a.Arguments = append(a.Arguments, s)
		a.args = append(a.args, re)
		return nil
	})
}

// checkExecutable requires an absolute, canonical path that is not the root.
func checkExecutable(s string) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case strings.ContainsAny(s, "\x00\n\r"):
		return fmt.Errorf("%q contains control characters", s)
	case !filepath.IsAbs(s):
		return fmt.Errorf("%q is not an absolute path", s)
	case slices.Contains(strings.Split(s, "/"), ".."):
		return fmt.Errorf("%q contains \"..\"", s)
	case filepath.Clean(s) != s:
		return fmt.Errorf("%q is not canonical (clean form %q)", s, filepath.Clean(s))
	case s == "/":
		return errors.New("the root directory is not an executable")
	}
	return nil
}
