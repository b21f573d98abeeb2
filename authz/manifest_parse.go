package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/cua-host/cua-host/internal/strictyaml"
	"github.com/cua-host/cua-host/policy"
)

// ParseManifest parses and validates a manifest strictly: unknown and duplicate keys,
// anchors, unknown tools (checked against inv; nil means the shipped inventory), a tool in
// more than one decision set, relative or non-canonical paths, bad durations, and every
// field cua-host cannot enforce (browser, driver_configuration, computer_history,
// bundle_id) are *ManifestError values naming the field and its line.
//
// It reads both vocabularies (Vocabulary). cua-host's own:
//
//	version: 1                   # no mode key
//	expires_after: 8h            # \d+[smh], at most 24h
//	idle_timeout: 30m            # at most expires_after
//	allow: {tools: [launch_app, click]}
//	deny:  {tools: [kill_app]}
//	resources:
//	  apps: [{executable: /usr/bin/xterm, launch: true, terminate: driver_launched, arguments: none}]
//	  desktop: {observe: false, input: false}
//	  clipboard: {read: false, write: true}
//	  files: {write: [{dir: /srv/shots, recursive: false}]}
//
// and the reference driver's (version 3 shown; versions 1–2 add mode: bounded and ask):
//
//	version: 3
//	expires_after: 8h
//	idle_timeout: 30m
//	allow: {tools: [launch_app, get_window_state, click]}
//	resources:
//	  apps: [{executable: /usr/bin/xterm, launch: true, windows: all, terminate: driver_launched}]
//	  desktop: {applications: [4242], windows: [{pid: 4243, window_id: 6291457}], display: false}
//	  files: {read: [/data/in/a.png], write: [{dir: /data/output, recursive: true}]}
//	  processes: {terminate: [4244]}
//
// File paths are canonicalized against the file system while parsing (see PathGrant).
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
		desktopApps: map[int]bool{}, terminate: map[int]bool{}, desktopWins: map[WindowRef]bool{},
	})
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	p.prescan(root)
	seen := map[string]bool{}
	keys := []string{"version", "expires_after", "idle_timeout", "allow", "deny", "resources"}
	if p.m.Vocabulary == VocabularyDriver {
		keys = []string{"version", "mode", "expires_after", "idle_timeout", "allow", "deny", "ask", "resources"}
	}
	err = p.mapping(root, "", keys, func(key string, k, v *yaml.Node) error {
		seen[key] = true
		switch key {
		case "version":
			return p.version(v)
		case "mode":
			return p.mode(k, v)
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
		case "ask":
			if p.m.Version == 3 {
				return p.errorf(k, "ask", "a version 3 manifest has no ask.tools (versions 1 and 2 treat them as deny)")
			}
			return p.toolLists(v, "ask", &p.m.AskTools, p.m.deny)
		default:
			return p.resources(v)
		}
	})
	if err != nil {
		return nil, err
	}
	required := []string{"version", "expires_after", "idle_timeout", "allow"}
	if p.m.Vocabulary == VocabularyDriver && p.m.Version < 3 {
		required = append(required, "mode")
	}
	for _, req := range required {
		if !seen[req] {
			why := "is required"
			switch req {
			case "expires_after", "idle_timeout":
				why = "is required (a bounded session needs both lifetimes)"
			case "mode":
				why = "is required in a version 1 or 2 manifest of the reference's format: mode: bounded"
			}
			return nil, &ManifestError{Line: root.Line, Field: req, Msg: why}
		}
	}
	m := p.m
	if len(m.AllowTools) == 0 {
		return nil, &ManifestError{Line: root.Line, Field: "allow.tools", Msg: "must list at least one tool"}
	}
	if m.IdleTimeout > m.ExpiresAfter {
		return nil, &ManifestError{Line: root.Line, Field: "idle_timeout", Msg: fmt.Sprintf("%v exceeds expires_after %v", m.IdleTimeout, m.ExpiresAfter)}
	}
	if m.Vocabulary == VocabularyDriver {
		// The reference has no clipboard resource: its clipboard tools are the grant.
		m.ClipboardRead, m.ClipboardWrite = m.Allows("clipboard_read"), m.Allows("clipboard_write")
		m.DriverSHA256 = driverSHA256(m.Version, data)
	}
	m.index()
	return m, nil
}

// manifestParser walks one manifest's node tree.
type manifestParser struct {
	inv *Inventory
	m   *Manifest
	w   *strictyaml.Walker
	// sets maps each tool already listed to the decision set it is in.
	sets map[string]string
}

func newManifestParser(inv *Inventory, m *Manifest) *manifestParser {
	p := &manifestParser{inv: inv, m: m, sets: map[string]string{}}
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

// prescan reads the root's version and whether it has a mode key, which together choose
// the vocabulary: version 1 without mode is cua-host's, versions 2 and 3 and version 1
// with mode the reference's. Anything malformed is left for the walk to report; until
// then the vocabulary is cua-host's.
func (p *manifestParser) prescan(root *yaml.Node) {
	p.m.Vocabulary = VocabularyHost
	if root.Kind != yaml.MappingNode {
		return
	}
	version, hasMode := 0, false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.Value == "mode":
			hasMode = true
		case k.Value == "version" && version == 0 && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int":
			version, _ = strconv.Atoi(v.Value)
		}
	}
	if version == 2 || version == 3 || (version == 1 && hasMode) {
		p.m.Vocabulary = VocabularyDriver
		p.m.Version = version
	}
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

// positive parses a positive integer no larger than max.
func (p *manifestParser) positive(n *yaml.Node, field string, max int64) (int64, error) {
	bad := p.errorf(n, field, "must be a positive integer (at most %d)", max)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, bad
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || v <= 0 || v > max {
		return 0, bad
	}
	return v, nil
}

func (p *manifestParser) version(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return p.errorf(n, "version", "must be the integer 1, 2 or 3")
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < MinManifestVersion || v > MaxManifestVersion {
		return p.errorf(n, "version", "unsupported version %s; this release reads versions 1, 2 and 3", n.Value)
	}
	p.m.Version = v
	return nil
}

// mode parses a reference version 1 or 2 manifest's mode, which must be bounded.
func (p *manifestParser) mode(k, v *yaml.Node) error {
	if p.m.Version == 3 {
		return p.errorf(k, "mode", "a version 3 manifest must not declare mode (the mode comes from the command line)")
	}
	s, err := p.str(v, "mode")
	if err != nil {
		return err
	}
	if s != "bounded" && s != "autonomous" {
		return p.errorf(v, "mode", "%q: a version 1 or 2 manifest's mode must be bounded (or its alias autonomous)", s)
	}
	p.m.Mode = s
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

// toolLists parses allow, deny or ask: a mapping with one key, tools. A tool may be in one
// decision set only; ask.tools go into the deny set.
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
			case !ok && p.m.Vocabulary == VocabularyDriver:
				return p.errorf(item, itemField, "unknown or unreviewed tool %q", name)
			case !ok:
				return p.errorf(item, itemField, "unknown tool %q", name)
			case !e.Exposed() && p.m.Vocabulary == VocabularyHost:
				return p.errorf(item, itemField, "tool %q is not exposed by cua-host", name)
			}
			switch other := p.sets[name]; {
			case other == field:
				return p.errorf(item, itemField, "tool %q is listed twice", name)
			case other != "":
				return p.errorf(item, itemField, "tool %q appears in more than one decision set (%s.tools and %s.tools)", name, other, field)
			}
			p.sets[name] = field
			set[name] = true
			*out = append(*out, name)
			return nil
		})
	})
}
