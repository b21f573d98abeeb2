package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
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

// resourceKeys are the keys of resources in either vocabulary.
var resourceKeys = []string{"apps", "desktop", "clipboard", "files", "processes", "browser", "driver_configuration", "computer_history"}

// unsupported are the reference's resources cua-host cannot enforce, and why.
var unsupported = map[string]string{
	"browser":              "cua-host has no browser adapters (browser_prepare, page, browser_navigate…)",
	"driver_configuration": "the configuration is fixed by the host; set_config is not exposed",
	"computer_history":     "cua-host records no computer history (history_status, history_query)",
}

// notSupported refuses a field cua-host cannot enforce: it is never ignored.
func (p *manifestParser) notSupported(k *yaml.Node, field, why string) error {
	return p.errorf(k, field, "is not supported by cua-host: %s. A manifest field cua-host cannot enforce is refused, never ignored; remove it", why)
}

func (p *manifestParser) resources(n *yaml.Node) error {
	return p.mapping(n, "resources", resourceKeys, func(key string, k, v *yaml.Node) error {
		field := "resources." + key
		if why, ok := unsupported[key]; ok {
			return p.notSupported(k, field, why)
		}
		switch key {
		case "apps":
			if p.m.Vocabulary == VocabularyDriver && p.m.Version == 1 {
				return p.errorf(k, field, "application resources need manifest version 2 or later")
			}
			return p.sequence(v, field, p.app)
		case "desktop":
			return p.desktop(v)
		case "clipboard":
			if p.m.Vocabulary == VocabularyDriver {
				return p.errorf(k, field, "belongs to cua-host's own version 1 format (without mode); in the reference's format clipboard_read and clipboard_write in allow.tools grant the clipboard")
			}
			return p.mapping(v, field, []string{"read", "write"}, func(k string, _, b *yaml.Node) error {
				val, err := p.boolean(b, field+"."+k)
				if k == "read" {
					p.m.ClipboardRead = val
				} else {
					p.m.ClipboardWrite = val
				}
				return err
			})
		case "files":
			return p.mapping(v, field, []string{"read", "write"}, func(k string, _, list *yaml.Node) error {
				f := field + "." + k
				out := &p.m.FilesRead
				if k == "write" {
					out = &p.m.FilesWrite
				}
				return p.sequence(list, f, func(i int, item *yaml.Node) error {
					g, err := p.pathGrant(item, fmt.Sprintf("%s[%d]", f, i), *out)
					if err == nil {
						*out = append(*out, g)
					}
					return err
				})
			})
		default: // processes
			return p.mapping(v, field, []string{"terminate"}, func(_ string, _, list *yaml.Node) error {
				return p.pids(list, field+".terminate", &p.m.TerminatePIDs)
			})
		}
	})
}

// desktop parses resources.desktop in the manifest's vocabulary; a key of the other one is
// refused with the key to write instead.
func (p *manifestParser) desktop(n *yaml.Node) error {
	host := p.m.Vocabulary == VocabularyHost
	return p.mapping(n, "resources.desktop", []string{"observe", "input", "applications", "windows", "display"}, func(key string, k, v *yaml.Node) error {
		f := "resources.desktop." + key
		switch key {
		case "observe", "input":
			if !host {
				return p.errorf(k, f, "belongs to cua-host's own version 1 format (without mode); in the reference's format write display: true")
			}
			val, err := p.boolean(v, f)
			if key == "observe" {
				p.m.DesktopObserve = val
			} else {
				p.m.DesktopInput = val
			}
			return err
		}
		if host {
			return p.errorf(k, f, "belongs to the reference's format (version 2 or 3, or 1 with mode); in cua-host's version 1 write observe and input")
		}
		switch key {
		case "display":
			val, err := p.boolean(v, f)
			p.m.DesktopObserve, p.m.DesktopInput = val, val
			return err
		case "applications":
			return p.pids(v, f, &p.m.DesktopApplications)
		}
		return p.sequence(v, f, func(i int, item *yaml.Node) error {
			itemField := fmt.Sprintf("%s[%d]", f, i)
			var w WindowRef
			err := p.mapping(item, itemField, []string{"pid", "window_id"}, func(key string, _, val *yaml.Node) error {
				if key == "pid" {
					pid, err := p.positive(val, itemField+".pid", math.MaxInt32)
					w.PID = int(pid)
					return err
				}
				id, err := p.positive(val, itemField+".window_id", math.MaxUint32)
				w.WindowID = uint32(id)
				return err
			})
			switch {
			case err != nil:
				return err
			case w.PID == 0 || w.WindowID == 0:
				return p.errorf(item, itemField, "needs both pid and window_id")
			case slices.Contains(p.m.DesktopWindows, w):
				return p.errorf(item, itemField, "pid %d window %d is listed twice", w.PID, w.WindowID)
			}
			p.m.DesktopWindows = append(p.m.DesktopWindows, w)
			return nil
		})
	})
}

// pids parses a list of distinct positive pids.
func (p *manifestParser) pids(n *yaml.Node, field string, out *[]int) error {
	return p.sequence(n, field, func(i int, item *yaml.Node) error {
		f := fmt.Sprintf("%s[%d]", field, i)
		v, err := p.positive(item, f, math.MaxInt32)
		if err != nil {
			return err
		}
		if slices.Contains(*out, int(v)) {
			return p.errorf(item, f, "pid %d is listed twice", v)
		}
		*out = append(*out, int(v))
		return nil
	})
}

// pathGrant parses one files.read or files.write item: a path (one file), or {dir,
// recursive} (the files directly in dir, or anywhere under it).
func (p *manifestParser) pathGrant(n *yaml.Node, field string, have []PathGrant) (PathGrant, error) {
	var g PathGrant
	var at *yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		s, err := p.str(n, field)
		if err != nil {
			return g, p.errorf(n, field, "must be an absolute path or a mapping {dir, recursive}")
		}
		g.Path, at = s, n
	case yaml.MappingNode:
		if p.m.Vocabulary == VocabularyDriver && p.m.Version == 1 {
			return g, p.errorf(n, field, "directory roots need manifest version 2 or later")
		}
		g.Dir = true
		err := p.mapping(n, field, []string{"dir", "recursive"}, func(key string, _, v *yaml.Node) error {
			if key == "recursive" {
				b, err := p.boolean(v, field+".recursive")
				g.Recursive = b
				return err
			}
			s, err := p.str(v, field+".dir")
			g.Path, at = s, v
			return err
		})
		if err != nil {
			return g, err
		}
		if at == nil {
			return g, p.errorf(n, field+".dir", "is required")
		}
		field += ".dir"
	default:
		return g, p.errorf(n, field, "must be an absolute path or a mapping {dir, recursive}")
	}
	if err := checkGrantPath(g.Path); err != nil {
		return g, p.errorf(at, field, "%v", err)
	}
	canonical, notDir, err := canonicalGrantPath(g.Path)
	if err != nil {
		return g, p.errorf(at, field, "%q: %v", g.Path, err)
	}
	if g.Dir && notDir {
		return g, p.errorf(at, field, "%q is not a directory", g.Path)
	}
	g.Canonical = canonical
	for _, o := range have {
		if o.Canonical == g.Canonical && o.Dir == g.Dir && o.Recursive == g.Recursive {
			return g, p.errorf(at, field, "%s is listed twice", g.Path)
		}
	}
	return g, nil
}

func (p *manifestParser) app(i int, n *yaml.Node) error {
	field := fmt.Sprintf("resources.apps[%d]", i)
	a := App{Terminate: TerminateDriverLaunched}
	if p.m.Vocabulary == VocabularyDriver {
		a.Terminate = TerminateDeny
	}
	hasExe := false
	err := p.mapping(n, field, []string{"executable", "bundle_id", "launch", "windows", "terminate", "arguments"}, func(key string, k, v *yaml.Node) error {
		f := field + "." + key
		switch key {
		case "bundle_id":
			return p.notSupported(k, f, "a bundle_id names a macOS application; on Linux name the executable")
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
		case "windows":
			s, err := p.str(v, f)
			if err != nil || s != "all" {
				return p.errorf(v, f, "unsupported windows scope %q; expected all", v.Value)
			}
			a.Windows = s
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
	if err := checkAbsolute(s); err != nil {
		return err
	}
	if s == "/" {
		return errors.New("the root directory is not an executable")
	}
	return nil
}

// checkAbsolute requires an absolute path in its clean spelling, with no ".." and no
// control characters.
func checkAbsolute(s string) error {
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
	}
	return nil
}
