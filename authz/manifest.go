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
	"time"
)

// Manifest versions this release reads: cua-host's own version 1, and the reference
// driver's versions 1, 2 and 3 (see Vocabulary).
const (
	MinManifestVersion = 1
	MaxManifestVersion = 3
)

// MaxManifestSize bounds a manifest file.
const MaxManifestSize = 64 << 10

// MaxManifestLifetime bounds expires_after (and so idle_timeout).
const MaxManifestLifetime = 24 * time.Hour

// Vocabulary says which of the two manifest formats a manifest is written in. Both are
// read by the same strict parser and enforced by the same checks; they differ in a few
// resource keys and defaults (docs/security.md, "Bounded manifests").
type Vocabulary int

// Manifest vocabularies.
const (
	// VocabularyHost is cua-host's own format: version 1 without a mode key, with
	// resources.desktop {observe, input} and resources.clipboard {read, write}; an app's
	// terminate defaults to driver_launched.
	VocabularyHost Vocabulary = iota + 1
	// VocabularyDriver is the reference driver's format: version 1 or 2 with mode bounded
	// (or autonomous), or version 3 without one; resources.desktop {applications, windows,
	// display}, clipboard access through the tool lists, ask.tools (versions 1–2) as deny;
	// an app's terminate defaults to deny.
	VocabularyDriver
)

var vocabularyNames = [...]string{VocabularyHost: "cua-host", VocabularyDriver: "cua-driver"}

// String returns "cua-host" or "cua-driver".
func (v Vocabulary) String() string { return enumName(vocabularyNames[:], int(v), "Vocabulary") }

// MarshalText implements encoding.TextMarshaler.
func (v Vocabulary) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

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
	// Windows is the windows scope as written: "all" (the only scope either vocabulary
	// has, and the default): every window of a process running the executable, whoever
	// started it.
	Windows string `json:"windows,omitempty"`
	// Terminate says which of its processes kill_app may stop; the default is
	// driver_launched in cua-host's vocabulary and deny in the reference's.
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

// WindowRef is one resources.desktop.windows entry: a window of a process.
type WindowRef struct {
	PID      int    `json:"pid"`
	WindowID uint32 `json:"window_id"`
}

// Manifest is a bounded session's capability manifest: exactly what the session may do.
// It is immutable once parsed and safe for concurrent use.
type Manifest struct {
	Version int `json:"version"`
	// Vocabulary is the format the manifest is written in.
	Vocabulary Vocabulary `json:"vocabulary"`
	// Mode is the mode a reference-format version 1 or 2 manifest declares ("bounded" or
	// "autonomous"); "" otherwise.
	Mode         string        `json:"mode,omitempty"`
	ExpiresAfter time.Duration `json:"expires_after"`
	IdleTimeout  time.Duration `json:"idle_timeout"`
	// AllowTools, DenyTools and AskTools are canonical tool names in file order. Tools in
	// ask.tools (reference versions 1–2) are refused like those in deny.tools.
	AllowTools []string `json:"allow_tools"`
	DenyTools  []string `json:"deny_tools"`
	AskTools   []string `json:"ask_tools,omitempty"`
	Apps       []App    `json:"apps"`
	// DesktopObserve allows whole-display observation; DesktopInput allows input at desktop
	// coordinates (which lands on whatever window is there, protected ones excepted). The
	// reference's resources.desktop.display sets both.
	DesktopObserve bool `json:"desktop_observe"`
	DesktopInput   bool `json:"desktop_input"`
	// DesktopApplications are pids whose every window the session may observe and act on;
	// DesktopWindows are single windows of a pid (resources.desktop.applications and
	// .windows, reference vocabulary).
	DesktopApplications []int       `json:"desktop_applications,omitempty"`
	DesktopWindows      []WindowRef `json:"desktop_windows,omitempty"`
	// ClipboardRead and ClipboardWrite allow reading and writing the clipboard. In the
	// reference vocabulary they follow allow.tools (clipboard_read, clipboard_write).
	ClipboardRead  bool `json:"clipboard_read"`
	ClipboardWrite bool `json:"clipboard_write"`
	// FilesRead and FilesWrite are the files a call may read (clipboard_write's image_path
	// and file_path) and write (screenshot_out_file).
	FilesRead  []PathGrant `json:"files_read,omitempty"`
	FilesWrite []PathGrant `json:"files_write,omitempty"`
	// TerminatePIDs are processes kill_app may stop whatever their executable
	// (resources.processes.terminate).
	TerminatePIDs []int `json:"terminate_pids,omitempty"`
	// SHA256 is the hex digest of the manifest's bytes: cua-host's identity of it, which
	// the host and the worker compare.
	SHA256 string `json:"sha256"`
	// DriverSHA256 is the digest the reference driver reports for the same file (a
	// domain string naming the version, a NUL, the bytes); "" in cua-host's vocabulary.
	DriverSHA256 string `json:"cua_driver_sha256,omitempty"`

	allow, deny map[string]bool
	// byExe maps each app's executable, and its symlink-resolved path, to the app.
	byExe                  map[string]*App
	desktopApps, terminate map[int]bool
	desktopWins            map[WindowRef]bool
}

// LoadManifest reads and parses a manifest file; see ParseManifest.
func LoadManifest(path string, inv *Inventory) (*Manifest, error) {
	data, err := ReadManifest(path)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(data, inv)
	var me *ManifestError
	if errors.As(err, &me) {
		me.File = path
	}
	return m, err
}

// ReadManifest reads a manifest file of at most MaxManifestSize bytes.
func ReadManifest(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if len(data) > MaxManifestSize {
		return nil, &ManifestError{File: path, Msg: fmt.Sprintf("manifest is larger than %d bytes", MaxManifestSize)}
	}
	return data, nil
}

// driverSHA256 is the reference driver's digest of a manifest of version v.
func driverSHA256(v int, data []byte) string {
	domain := "cua-driver-session-policy"
	if v == 3 {
		domain = "cua-driver-capability-manifest"
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s-v%d\x00", domain, v)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// index builds the lookup tables of a parsed manifest.
func (m *Manifest) index() {
	for i := range m.Apps {
		a := &m.Apps[i]
		m.byExe[a.Executable] = a
		if real, err := filepath.EvalSymlinks(a.Executable); err == nil && real != a.Executable {
			if _, taken := m.byExe[real]; !taken {
				m.byExe[real] = a
			}
		}
	}
	for _, pid := range m.DesktopApplications {
		m.desktopApps[pid] = true
	}
	for _, w := range m.DesktopWindows {
		m.desktopWins[w] = true
	}
	for _, pid := range m.TerminatePIDs {
		m.terminate[pid] = true
	}
}

// Allows reports whether the manifest lists tool in allow.tools and not in deny.tools (or
// ask.tools).
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
// resources (a paste reads the clipboard, a screenshot_out_file is a file written).
func (m *Manifest) CheckResource(r Resource) *Refusal {
	switch r.Kind {
	case ResourceWindow:
		if !m.coversWindow(r) {
			return Refuse(CodeOutsideManifest, "%s runs %s, which is not in the manifest's resources.apps (nor its pid in resources.desktop)", r, orUnknown(r.Executable))
		}
	case ResourceDisplay:
		if r.Op == OpObserve && !m.DesktopObserve {
			return Refuse(CodeOutsideManifest, "whole-display observation needs %s", m.desktopKey("observe"))
		}
		if r.Op == OpInput && !m.DesktopInput {
			return Refuse(CodeOutsideManifest, "input at desktop coordinates needs %s", m.desktopKey("input"))
		}
	case ResourceClipboard:
		if r.Op == OpObserve && !m.ClipboardRead {
			return Refuse(CodeOutsideManifest, "reading the clipboard needs %s", m.clipboardKey("read"))
		}
		if r.Op == OpInput && !m.ClipboardWrite {
			return Refuse(CodeOutsideManifest, "writing the clipboard needs %s", m.clipboardKey("write"))
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
		if r.PID > 0 && m.terminate[r.PID] {
			return nil
		}
		a, ok := m.byExe[r.Executable]
		switch {
		case !ok:
			return Refuse(CodeOutsideManifest, "%s runs %s, which is not in the manifest's resources.apps (nor its pid in resources.processes.terminate)", r, orUnknown(r.Executable))
		case a.Terminate == TerminateDeny:
			return Refuse(CodeManifestDenied, "resources.apps denies terminating %s", a.Executable)
		case a.Terminate == TerminateDriverLaunched && !r.Owned:
			return Refuse(CodeForeignProcessTermination, "%s was not launched by this session (terminate: driver_launched)", r)
		}
	case ResourceFile:
		grants, list := m.FilesRead, "read"
		if r.Op == OpWrite {
			grants, list = m.FilesWrite, "write"
		}
		if r.Op != OpRead && r.Op != OpWrite {
			return Refuse(CodeOutsideManifest, "operation %s on %s is outside the capability manifest", r.Op, r)
		}
		if !pathAllowed(r.Path, grants) {
			return Refuse(CodeOutsideManifest, "%s %s is outside the manifest's resources.files.%s", list, r.Path, list)
		}
	}
	return nil
}

// coversWindow reports whether a window resource is in the manifest: its executable is a
// listed app (every window of it), or its pid is in desktop.applications, or the exact
// window is in desktop.windows. A pid grant counts only for a pid the X server observed
// (Executable is set only then, see worker/resolve.go unverified).
func (m *Manifest) coversWindow(r Resource) bool {
	if r.Executable == "" {
		return false
	}
	if _, ok := m.byExe[r.Executable]; ok {
		return true
	}
	if r.PID <= 0 {
		return false
	}
	return m.desktopApps[r.PID] || (r.Window != 0 && m.desktopWins[WindowRef{PID: r.PID, WindowID: r.Window}])
}

// desktopKey names the key granting a desktop operation in the manifest's vocabulary.
func (m *Manifest) desktopKey(op string) string {
	if m.Vocabulary == VocabularyDriver {
		return "resources.desktop.display"
	}
	return "resources.desktop." + op
}

// clipboardKey names what grants a clipboard operation in the manifest's vocabulary.
func (m *Manifest) clipboardKey(op string) string {
	if m.Vocabulary == VocabularyDriver {
		return "clipboard_" + op + " in allow.tools"
	}
	return "resources.clipboard." + op
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown executable"
	}
	return s
}

// hasDuplicates reports whether a value repeats in vs.
func hasDuplicates[T comparable](vs []T) bool {
	for i := range vs {
		if slices.Contains(vs[i+1:], vs[i]) {
			return true
		}
	}
	return false
}
