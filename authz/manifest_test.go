package authz

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

const validManifest = `version: 1
expires_after: 8h
idle_timeout: 30m
allow:
  tools: [launch_app, click, type_text_chars, kill_app, clipboard_write]
deny:
  tools: [get_desktop_state]
resources:
  apps:
    - executable: /usr/bin/xterm
      launch: true
      terminate: driver_launched
    - executable: /opt/viewer/bin/viewer
    - executable: /usr/bin/evince
      launch: true
      arguments: ['/srv/docs/[a-z0-9_-]+\.pdf', '--page-index=[0-9]+']
  desktop: {observe: false, input: true}
  clipboard: {read: false, write: true}
`

func TestParseManifestValid(t *testing.T) {
	m, err := ParseManifest([]byte(validManifest), nil)
	if err != nil {
		t.Fatalf("ParseManifest = %v", err)
	}
	if m.Version != 1 || m.ExpiresAfter != 8*time.Hour || m.IdleTimeout != 30*time.Minute {
		t.Errorf("lifetimes = %d %v %v", m.Version, m.ExpiresAfter, m.IdleTimeout)
	}
	if got := strings.Join(m.AllowTools, ","); got != "launch_app,click,type_text,kill_app,clipboard_write" {
		t.Errorf("AllowTools = %s (the alias must be canonicalized)", got)
	}
	if !m.Allows("type_text") || m.Allows("get_desktop_state") || m.Allows("zoom") {
		t.Errorf("Allows is wrong")
	}
	if len(m.Apps) != 3 || len(m.Apps[0].Arguments) != 0 || len(m.Apps[2].Arguments) != 2 || !m.Apps[0].Launch || m.Apps[0].Terminate != TerminateDriverLaunched || m.Apps[1].Launch || m.Apps[1].Terminate != TerminateDriverLaunched {
		t.Errorf("Apps = %+v", m.Apps)
	}
	if m.DesktopObserve || !m.DesktopInput || m.ClipboardRead || !m.ClipboardWrite {
		t.Errorf("grants = %+v", m)
	}
	if len(m.SHA256) != 64 {
		t.Errorf("SHA256 = %q", m.SHA256)
	}
}

// manifestErrorTests are the malformed manifests every load error names a field for; they
// also seed FuzzParseManifest.
var manifestErrorTests = []manifestErrorCase{
	{name: "empty", yaml: "", wantMsg: "empty manifest"},
	{name: "null", yaml: "~\n", wantMsg: "empty manifest"},
	{name: "not a mapping", yaml: "[1, 2]\n", wantMsg: "must be a mapping"},
	{name: "syntax", yaml: "version: [1\n", wantMsg: "did not find expected"},
	{name: "unknown key", yaml: "version: 1\nalow: {tools: [click]}\n", wantField: "", wantMsg: `unknown key "alow" in the manifest`},
	{name: "duplicate key", yaml: "version: 1\nversion: 1\n", wantMsg: `duplicate key "version"`},
	{name: "missing version", yaml: "expires_after: 1h\nidle_timeout: 1m\nallow: {tools: [click]}\n", wantField: "version", wantMsg: "is required"},
	{name: "bad version", yaml: "version: 4\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [click]}\n", wantField: "version", wantMsg: "unsupported version 4; this release reads versions 1, 2 and 3"},
	{name: "version string", yaml: "version: \"1\"\n", wantField: "version", wantMsg: "must be the integer 1"},
	{name: "missing expiry", yaml: "version: 1\nidle_timeout: 1m\nallow: {tools: [click]}\n", wantField: "expires_after", wantMsg: "is required"},
	{name: "missing idle", yaml: "version: 1\nexpires_after: 1h\nallow: {tools: [click]}\n", wantField: "idle_timeout", wantMsg: "is required"},
	{name: "bad duration", yaml: "version: 1\nexpires_after: 1d\n", wantField: "expires_after", wantMsg: `bad duration "1d"`},
	{name: "compound duration", yaml: "version: 1\nexpires_after: 1h30m\n", wantField: "expires_after", wantMsg: "bad duration"},
	{name: "numeric duration", yaml: "version: 1\nexpires_after: 3600\n", wantField: "expires_after", wantMsg: "must be a duration"},
	{name: "zero duration", yaml: "version: 1\nexpires_after: 0s\n", wantField: "expires_after", wantMsg: "outside (0, 24h0m0s]"},
	{name: "too long", yaml: "version: 1\nexpires_after: 25h\n", wantField: "expires_after", wantMsg: "outside (0, 24h0m0s]"},
	{name: "idle exceeds expiry", yaml: "version: 1\nexpires_after: 1h\nidle_timeout: 2h\nallow: {tools: [click]}\n", wantField: "idle_timeout", wantMsg: "exceeds expires_after"},
	{name: "missing allow", yaml: "version: 1\nexpires_after: 1h\nidle_timeout: 1m\n", wantField: "allow", wantMsg: "is required"},
	{name: "empty allow", yaml: "version: 1\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: []}\n", wantField: "allow.tools", wantMsg: "at least one tool"},
	{name: "allow flat list", yaml: "version: 1\nallow: [click]\n", wantField: "allow", wantMsg: "must be a mapping with keys tools"},
	{name: "unknown allow key", yaml: "version: 1\nallow: {tools: [click], rules: []}\n", wantField: "allow", wantMsg: `unknown key "rules"`},
	{name: "unknown tool", yaml: "version: 1\nallow: {tools: [click, clik]}\n", wantField: "allow.tools[1]", wantMsg: `unknown tool "clik"`},
	{name: "not exposed tool", yaml: "version: 1\nallow: {tools: [run_shell]}\n", wantField: "allow.tools[0]", wantMsg: `tool "run_shell" is not exposed`},
	{name: "tool twice", yaml: "version: 1\nallow: {tools: [click, click]}\n", wantField: "allow.tools[1]", wantMsg: "listed twice"},
	{name: "alias twice", yaml: "version: 1\nallow: {tools: [type_text, type_text_chars]}\n", wantField: "allow.tools[1]", wantMsg: "listed twice"},
	{name: "tool not a string", yaml: "version: 1\nallow: {tools: [1]}\n", wantField: "allow.tools[0]", wantMsg: "must be a string"},
	{name: "tool in both lists", yaml: "version: 1\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [click]}\ndeny: {tools: [click]}\n", wantField: "deny.tools[0]", wantMsg: `tool "click" appears in more than one decision set (allow.tools and deny.tools)`},
	{name: "relative path", yaml: "version: 1\nresources: {apps: [{executable: bin/xterm}]}\n", wantField: "resources.apps[0].executable", wantMsg: "not an absolute path"},
	{name: "dotdot path", yaml: "version: 1\nresources: {apps: [{executable: /usr/../bin/sh}]}\n", wantField: "resources.apps[0].executable", wantMsg: `contains ".."`},
	{name: "unclean path", yaml: "version: 1\nresources: {apps: [{executable: /usr/bin//xterm}]}\n", wantField: "resources.apps[0].executable", wantMsg: "not canonical"},
	{name: "trailing slash", yaml: "version: 1\nresources: {apps: [{executable: /usr/bin/}]}\n", wantField: "resources.apps[0].executable", wantMsg: "not canonical"},
	{name: "root path", yaml: "version: 1\nresources: {apps: [{executable: /}]}\n", wantField: "resources.apps[0].executable", wantMsg: "root directory"},
	{name: "missing executable", yaml: "version: 1\nresources: {apps: [{launch: true}]}\n", wantField: "resources.apps[0].executable", wantMsg: "is required"},
	{name: "app twice", yaml: "version: 1\nresources: {apps: [{executable: /bin/a}, {executable: /bin/a}]}\n", wantField: "resources.apps[1].executable", wantMsg: "listed twice"},
	{name: "bad terminate", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, terminate: always}]}\n", wantField: "resources.apps[0].terminate", wantMsg: "want deny, driver_launched or any"},
	{name: "launch not bool", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, launch: \"yes\"}]}\n", wantField: "resources.apps[0].launch", wantMsg: "must be true or false"},
	{name: "unknown app key", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, colour: red}]}\n", wantField: "resources.apps[0]", wantMsg: `unknown key "colour"`},
	{name: "unknown resource", yaml: "version: 1\nresources: {network: {}}\n", wantField: "resources", wantMsg: `unknown key "network"`},
	{name: "unknown desktop key", yaml: "version: 1\nresources: {desktop: {screen: true}}\n", wantField: "resources.desktop", wantMsg: `unknown key "screen"`},
	{name: "reference desktop key in cua-host format", yaml: "version: 1\nresources: {desktop: {display: true}}\n", wantField: "resources.desktop.display", wantMsg: "belongs to the reference's format"},
	{name: "clipboard not bool", yaml: "version: 1\nresources: {clipboard: {read: 1}}\n", wantField: "resources.clipboard.read", wantMsg: "must be true or false"},
	{name: "anchor", yaml: "version: 1\nallow: &a {tools: [click]}\ndeny: *a\n", wantField: "allow", wantMsg: "anchors and aliases"},
	{name: "merge key", yaml: "version: 1\n<<: {version: 1}\n", wantMsg: "merge keys"},
	{name: "two documents", yaml: "version: 1\n---\nversion: 1\n", wantMsg: "one YAML document"},
	{name: "mode field", yaml: "version: 1\nmode: unrestricted\n", wantField: "mode", wantMsg: `"unrestricted": a version 1 or 2 manifest's mode must be bounded`},
	{name: "arguments not a list", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, arguments: all}]}\n", wantField: "resources.apps[0].arguments", wantMsg: "must be none or a list"},
	{name: "arguments empty list", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, arguments: []}]}\n", wantField: "resources.apps[0].arguments", wantMsg: "write none"},
	{name: "arguments bad pattern", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, arguments: ['(']}]}\n", wantField: "resources.apps[0].arguments[0]", wantMsg: "invalid RE2 pattern"},
	{name: "arguments backreference", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, arguments: ['(a)\\1']}]}\n", wantField: "resources.apps[0].arguments[0]", wantMsg: "invalid RE2 pattern"},
	{name: "arguments empty pattern", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, arguments: ['']}]}\n", wantField: "resources.apps[0].arguments[0]", wantMsg: "empty pattern"},
	{name: "arguments pattern not a string", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, arguments: [1]}]}\n", wantField: "resources.apps[0].arguments[0]", wantMsg: "must be a string"},
	{name: "arguments mapping", yaml: "version: 1\nresources: {apps: [{executable: /bin/a, arguments: {x: y}}]}\n", wantField: "resources.apps[0].arguments", wantMsg: "must be a list"},
	{name: "not utf8", yaml: "version: 1\n\xff\n", wantMsg: "not valid UTF-8"},
}

func TestParseManifestErrors(t *testing.T) { checkManifestErrors(t, manifestErrorTests, false) }

// manifestErrorCase is a malformed manifest and the field and message its error names.
type manifestErrorCase struct {
	name      string
	yaml      string
	wantField string
	wantMsg   string
}

// checkManifestErrors parses each case and wants a *ManifestError (matching
// ErrInvalidManifest) naming the case's field with a message containing its text; with
// wantLine, an error that names a field must also name a line.
func checkManifestErrors(t *testing.T, cases []manifestErrorCase, wantLine bool) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tt.yaml), nil)
			if err == nil {
				t.Fatalf("ParseManifest = %+v, want an error", m)
			}
			var me *ManifestError
			if !errors.As(err, &me) || !errors.Is(err, ErrInvalidManifest) {
				t.Fatalf("ParseManifest error %T %v, want a *ManifestError matching ErrInvalidManifest", err, err)
			}
			if me.Field != tt.wantField || !strings.Contains(me.Msg, tt.wantMsg) || wantLine && me.Line == 0 && tt.wantField != "" {
				t.Errorf("ParseManifest = line %d field %q msg %q, want field %q msg containing %q", me.Line, me.Field, me.Msg, tt.wantField, tt.wantMsg)
			}
		})
	}
}

// manifestCheckCase is one tool's use of one resource and the refusal code a manifest
// should give it ("" for allowed).
type manifestCheckCase struct {
	name string
	tool string
	r    Resource
	want Code
}

// checkManifestDecisions runs each case through m: a file resource through CheckResource,
// anything else through Check with the default inventory's entry for the tool.
func checkManifestDecisions(t *testing.T, m *Manifest, cases []manifestCheckCase) {
	t.Helper()
	inv := DefaultInventory()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var r *Refusal
			if tt.r.Kind == ResourceFile {
				r = m.CheckResource(tt.r)
			} else {
				e, _ := inv.Lookup(tt.tool)
				r = m.Check(e, tt.r)
			}
			switch {
			case tt.want == "" && r != nil:
				t.Errorf("Check(%s, %v) = %v, want allowed", tt.tool, tt.r, r)
			case tt.want != "" && (r == nil || r.Code != tt.want):
				t.Errorf("Check(%s, %v) = %v, want %s", tt.tool, tt.r, r, tt.want)
			}
		})
	}
}

func TestParseManifestTooLarge(t *testing.T) {
	big := validManifest + "#" + strings.Repeat("x", MaxManifestSize) + "\n"
	if _, err := ParseManifest([]byte(big), nil); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("ParseManifest(%d bytes) = %v, want too large", len(big), err)
	}
}

func TestLoadManifestNamesFile(t *testing.T) {
	path := t.TempDir() + "/m.yaml"
	if err := os.WriteFile(path, []byte("version: 1\nallow: {tools: [clik]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadManifest(path, nil)
	want := "manifest " + path + ": line 2: allow.tools[0]: unknown tool \"clik\""
	if err == nil || err.Error() != want {
		t.Errorf("LoadManifest = %v, want %q", err, want)
	}
	if _, err := LoadManifest(path+".missing", nil); err == nil {
		t.Error("LoadManifest(missing) = nil error")
	}
}

func TestExampleManifestLoads(t *testing.T) {
	m, err := LoadManifest("../examples/bounded-manifest.yaml", nil)
	if err != nil {
		t.Fatalf("examples/bounded-manifest.yaml: %v", err)
	}
	if !m.Allows("click") || m.Allows("get_desktop_state") || len(m.Apps) != 1 {
		t.Errorf("example manifest = %+v", m)
	}
}

func TestManifestCheck(t *testing.T) {
	m, err := ParseManifest([]byte(validManifest), nil)
	if err != nil {
		t.Fatal(err)
	}
	inv := DefaultInventory()
	entry := func(name string) *Entry {
		e, ok := inv.Lookup(name)
		if !ok {
			t.Fatalf("no entry %q", name)
		}
		return e
	}
	xterm := Resource{Kind: ResourceWindow, Op: OpInput, PID: 10, Window: 7, Executable: "/usr/bin/xterm"}
	other := Resource{Kind: ResourceWindow, Op: OpInput, PID: 11, Window: 8, Executable: "/usr/bin/firefox"}
	tests := []struct {
		name string
		tool string
		r    Resource
		want Code // "" allows
	}{
		{name: "window in apps", tool: "click", r: xterm},
		{name: "window not in apps", tool: "click", r: other, want: CodeOutsideManifest},
		{name: "unknown executable", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 12}, want: CodeOutsideManifest},
		{name: "tool not allowed", tool: "zoom", r: xterm, want: CodeOutsideManifest},
		{name: "tool denied", tool: "get_desktop_state", r: Resource{Kind: ResourceDisplay, Op: OpObserve}, want: CodeManifestDenied},
		{name: "desktop input granted", tool: "click", r: Resource{Kind: ResourceDisplay, Op: OpInput}},
		{name: "launch listed", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/xterm"}},
		{name: "launch without launch true", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/opt/viewer/bin/viewer"}, want: CodeOutsideManifest},
		{name: "launch unlisted", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/sh"}, want: CodeOutsideManifest},
		{name: "launch without arguments rule, no arguments", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/xterm", Argv: []string{"/usr/bin/xterm"}}},
		{name: "launch without arguments rule, an argument", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/xterm", Argv: []string{"/usr/bin/xterm", "-e", "sh"}}, want: CodeOutsideManifest},
		{name: "launch arguments match", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/evince", Argv: []string{"/usr/bin/evince", "--page-index=3", "/srv/docs/a_1.pdf"}}},
		{name: "launch argument matches only a prefix", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/evince", Argv: []string{"/usr/bin/evince", "/srv/docs/a.pdf.sh"}}, want: CodeOutsideManifest},
		{name: "launch argument matches only a suffix", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/evince", Argv: []string{"/usr/bin/evince", "/etc/x/srv/docs/a.pdf"}}, want: CodeOutsideManifest},
		{name: "launch one bad argument", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/evince", Argv: []string{"/usr/bin/evince", "/srv/docs/a.pdf", "--unsafe"}}, want: CodeOutsideManifest},
		{name: "kill own", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 10, Executable: "/usr/bin/xterm", Owned: true}},
		{name: "kill foreign", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 10, Executable: "/usr/bin/xterm"}, want: CodeForeignProcessTermination},
		{name: "kill unlisted", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 10, Executable: "/usr/bin/sh", Owned: true}, want: CodeOutsideManifest},
		{name: "clipboard write", tool: "clipboard_write", r: Resource{Kind: ResourceClipboard, Op: OpInput}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := m.Check(entry(tt.tool), tt.r)
			switch {
			case tt.want == "" && r != nil:
				t.Errorf("Check(%s, %v) = %v, want allowed", tt.tool, tt.r, r)
			case tt.want != "" && (r == nil || r.Code != tt.want):
				t.Errorf("Check(%s, %v) = %v, want %s", tt.tool, tt.r, r, tt.want)
			}
		})
	}
	deny, _ := ParseManifest([]byte("version: 1\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [kill_app]}\nresources: {apps: [{executable: /bin/a, terminate: deny}, {executable: /bin/b, terminate: any}]}\n"), nil)
	if r := deny.Check(entry("kill_app"), Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 5, Executable: "/bin/a", Owned: true}); r == nil || r.Code != CodeManifestDenied {
		t.Errorf("terminate: deny = %v, want manifest_denied", r)
	}
	if r := deny.Check(entry("kill_app"), Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 5, Executable: "/bin/b"}); r != nil {
		t.Errorf("terminate: any = %v, want allowed", r)
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(validManifest))
	f.Add([]byte(referenceExample))
	for _, tt := range manifestErrorTests {
		f.Add([]byte(tt.yaml))
	}
	for _, tt := range driverErrorTests {
		f.Add([]byte(tt.yaml))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data, nil)
		if err != nil {
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %T is not a *ManifestError: %v", err, err)
			}
			if m != nil {
				t.Fatal("a manifest and an error")
			}
			return
		}
		// An accepted manifest satisfies every documented invariant.
		if m.Version < MinManifestVersion || m.Version > MaxManifestVersion || len(m.AllowTools) == 0 {
			t.Fatalf("accepted %+v", m)
		}
		if m.ExpiresAfter <= 0 || m.ExpiresAfter > MaxManifestLifetime || m.IdleTimeout <= 0 || m.IdleTimeout > m.ExpiresAfter {
			t.Fatalf("accepted lifetimes %v %v", m.ExpiresAfter, m.IdleTimeout)
		}
		for _, tool := range m.DenyTools {
			if m.Allows(tool) {
				t.Fatalf("%s allowed and denied", tool)
			}
		}
		for _, a := range m.Apps {
			if checkExecutable(a.Executable) != nil || a.Terminate < TerminateDeny || a.Terminate > TerminateAny {
				t.Fatalf("accepted app %+v", a)
			}
		}
		for _, tool := range m.AllowTools {
			if e, ok := DefaultInventory().Lookup(tool); !ok || (!e.Exposed() && m.Vocabulary == VocabularyHost) {
				t.Fatalf("accepted unknown tool %q", tool)
			}
		}
		// Each vocabulary keeps to its own keys and version rules.
		switch m.Vocabulary {
		case VocabularyHost:
			if m.Version != 1 || m.Mode != "" || len(m.AskTools) > 0 || len(m.DesktopApplications) > 0 || len(m.DesktopWindows) > 0 || m.DriverSHA256 != "" {
				t.Fatalf("accepted a cua-host manifest with reference fields: %+v", m)
			}
		case VocabularyDriver:
			if (m.Version == 3) != (m.Mode == "") || (m.Version == 3 && len(m.AskTools) > 0) || (m.Version == 1 && len(m.Apps) > 0) || len(m.DriverSHA256) != 64 {
				t.Fatalf("accepted a reference manifest breaking its version rules: %+v", m)
			}
			if m.ClipboardRead != m.Allows("clipboard_read") || m.ClipboardWrite != m.Allows("clipboard_write") || m.DesktopObserve != m.DesktopInput {
				t.Fatalf("reference grants do not follow their keys: %+v", m)
			}
		default:
			t.Fatalf("vocabulary %v", m.Vocabulary)
		}
		for _, tool := range m.AskTools {
			if m.Allows(tool) {
				t.Fatalf("%s allowed and in ask.tools", tool)
			}
		}
		if hasDuplicates(m.DesktopApplications) || hasDuplicates(m.DesktopWindows) || hasDuplicates(m.TerminatePIDs) {
			t.Fatalf("accepted repeated pids: %+v", m)
		}
		for _, g := range append(slices.Clone(m.FilesRead), m.FilesWrite...) {
			if checkGrantPath(g.Path) != nil || checkGrantPath(g.Canonical) != nil {
				t.Fatalf("accepted path grant %+v", g)
			}
		}
	})
}
