package authz

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
