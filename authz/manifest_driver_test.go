package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// referenceExample is the reference driver's example version 3 manifest, as its guide to
// writing a bounded manifest shows it.
const referenceExample = `version: 3
expires_after: 8h
idle_timeout: 30m
allow:
  tools: [start_session, end_session, launch_app, get_window_state, click, type_text, press_key, kill_app]
resources:
  apps:
    - executable: /usr/bin/example-editor
      launch: true
      windows: all
      terminate: driver_launched
  files:
    read:
      - dir: /data/input
        recursive: true
    write:
      - dir: /data/output
        recursive: true
  desktop:
    display: false
`

func TestReferenceExampleManifestLoads(t *testing.T) {
	m, err := ParseManifest([]byte(referenceExample), nil)
	if err != nil {
		t.Fatalf("ParseManifest(reference example) = %v", err)
	}
	if m.Version != 3 || m.Vocabulary != VocabularyDriver || m.Mode != "" || m.ExpiresAfter != 8*time.Hour || m.IdleTimeout != 30*time.Minute {
		t.Errorf("manifest = version %d %s mode %q %v %v", m.Version, m.Vocabulary, m.Mode, m.ExpiresAfter, m.IdleTimeout)
	}
	// start_session is a reviewed tool cua-host does not expose: listing it grants nothing.
	if !m.Allows("start_session") || !m.Allows("kill_app") || m.Allows("zoom") {
		t.Errorf("tool lists = %v / %v", m.AllowTools, m.DenyTools)
	}
	if len(m.Apps) != 1 || m.Apps[0].Executable != "/usr/bin/example-editor" || !m.Apps[0].Launch || m.Apps[0].Windows != "all" || m.Apps[0].Terminate != TerminateDriverLaunched {
		t.Errorf("apps = %+v", m.Apps)
	}
	wantRead := []PathGrant{{Path: "/data/input", Canonical: "/data/input", Dir: true, Recursive: true}}
	wantWrite := []PathGrant{{Path: "/data/output", Canonical: "/data/output", Dir: true, Recursive: true}}
	if !slices.Equal(m.FilesRead, wantRead) || !slices.Equal(m.FilesWrite, wantWrite) {
		t.Errorf("files = %+v / %+v", m.FilesRead, m.FilesWrite)
	}
	if m.DesktopObserve || m.DesktopInput || m.ClipboardRead || m.ClipboardWrite {
		t.Errorf("desktop and clipboard = %+v", m)
	}
	// The reference's digest: a domain string naming the version, a NUL, the bytes.
	sum := sha256.Sum256([]byte("cua-driver-capability-manifest-v3\x00" + referenceExample))
	if m.DriverSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("DriverSHA256 = %s, want %x", m.DriverSHA256, sum)
	}
	plain := sha256.Sum256([]byte(referenceExample))
	if m.SHA256 != hex.EncodeToString(plain[:]) {
		t.Errorf("SHA256 = %s, want the bytes' digest", m.SHA256)
	}

	checkManifestDecisions(t, m, []manifestCheckCase{
		{name: "launch the editor", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/example-editor"}},
		{name: "launch another program", tool: "launch_app", r: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/xterm"}, want: CodeOutsideManifest},
		{name: "a window of the editor someone else started", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 40, Window: 9, Executable: "/usr/bin/example-editor"}},
		{name: "a window of another program", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 41, Window: 9, Executable: "/usr/bin/xterm"}, want: CodeOutsideManifest},
		{name: "desktop input", tool: "click", r: Resource{Kind: ResourceDisplay, Op: OpInput}, want: CodeOutsideManifest},
		{name: "kill what the session launched", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 40, Executable: "/usr/bin/example-editor", Owned: true}},
		{name: "kill the person's editor", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 40, Executable: "/usr/bin/example-editor"}, want: CodeForeignProcessTermination},
		{name: "screenshot into the output tree", tool: "get_window_state", r: Resource{Kind: ResourceFile, Op: OpWrite, Path: "/data/output/run/1/shot.png"}},
		{name: "screenshot into the input tree", tool: "get_window_state", r: Resource{Kind: ResourceFile, Op: OpWrite, Path: "/data/input/shot.png"}, want: CodeOutsideManifest},
		{name: "screenshot next to the output tree", tool: "get_window_state", r: Resource{Kind: ResourceFile, Op: OpWrite, Path: "/data/output-old/shot.png"}, want: CodeOutsideManifest},
		{name: "read from the input tree", tool: "get_window_state", r: Resource{Kind: ResourceFile, Op: OpRead, Path: "/data/input/a/b.png"}},
		{name: "read from the output tree", tool: "get_window_state", r: Resource{Kind: ResourceFile, Op: OpRead, Path: "/data/output/b.png"}, want: CodeOutsideManifest},
		{name: "a path that is not canonical", tool: "get_window_state", r: Resource{Kind: ResourceFile, Op: OpWrite, Path: "/data/output/../../etc/x"}, want: CodeOutsideManifest},
	})
}

func TestDriverVocabularyLegacyVersions(t *testing.T) {
	m, err := ParseManifest([]byte(`version: 2
mode: autonomous
expires_after: 1h
idle_timeout: 5m
allow: {tools: [click, clipboard_read, kill_app]}
deny: {tools: [zoom]}
ask: {tools: [type_text]}
resources:
  apps: [{executable: /usr/bin/xterm}]
  desktop:
    applications: [4242]
    windows: [{pid: 4243, window_id: 0x600001}]
    display: true
  processes: {terminate: [4244]}
  files: {read: [/srv/in/a.png]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Vocabulary != VocabularyDriver || m.Mode != "autonomous" || !slices.Equal(m.AskTools, []string{"type_text"}) {
		t.Errorf("manifest = %s %q ask %v", m.Vocabulary, m.Mode, m.AskTools)
	}
	if len(m.DriverSHA256) != 64 {
		t.Errorf("DriverSHA256 = %q", m.DriverSHA256)
	}
	// The reference's default terminate is deny; clipboard access follows the tool lists.
	if m.Apps[0].Terminate != TerminateDeny || !m.ClipboardRead || m.ClipboardWrite || !m.DesktopObserve || !m.DesktopInput {
		t.Errorf("defaults = %+v", m)
	}
	checkManifestDecisions(t, m, []manifestCheckCase{
		{name: "ask is deny", tool: "type_text", r: Resource{Kind: ResourceDisplay, Op: OpInput}, want: CodeManifestDenied},
		{name: "deny", tool: "zoom", r: Resource{Kind: ResourceWindow, Op: OpObserve, PID: 4242, Window: 1, Executable: "/usr/bin/xterm"}, want: CodeManifestDenied},
		{name: "any window of an application pid", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 4242, Window: 77, Executable: "/usr/bin/gedit"}},
		{name: "the application as a whole", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 4242, Executable: "/usr/bin/gedit"}},
		{name: "the listed window", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 4243, Window: 0x600001, Executable: "/usr/bin/gedit"}},
		{name: "another window of the listed window's pid", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 4243, Window: 0x600002, Executable: "/usr/bin/gedit"}, want: CodeOutsideManifest},
		{name: "a pid the X server did not observe", tool: "click", r: Resource{Kind: ResourceWindow, Op: OpInput, PID: 4242, Window: 77}, want: CodeOutsideManifest},
		{name: "display input", tool: "click", r: Resource{Kind: ResourceDisplay, Op: OpInput}},
		{name: "clipboard read through the tool list", tool: "clipboard_read", r: Resource{Kind: ResourceClipboard, Op: OpObserve}},
		{name: "terminate a listed pid", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 4244, Executable: "/usr/bin/gedit"}},
		{name: "terminate a listed app (default deny)", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 9, Executable: "/usr/bin/xterm", Owned: true}, want: CodeManifestDenied},
		{name: "terminate another pid", tool: "kill_app", r: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 4242, Executable: "/usr/bin/gedit"}, want: CodeOutsideManifest},
	})
	if r := m.CheckResource(Resource{Kind: ResourceFile, Op: OpRead, Path: "/srv/in/a.png"}); r != nil {
		t.Errorf("read of the listed file = %v", r)
	}
	if r := m.CheckResource(Resource{Kind: ResourceFile, Op: OpRead, Path: "/srv/in/b.png"}); r == nil {
		t.Error("read of an unlisted file allowed")
	}
	if r := m.CheckResource(Resource{Kind: ResourceFile, Op: OpWrite, Path: "/srv/in/a.png"}); r == nil {
		t.Error("a read grant allowed a write")
	}

	v1, err := ParseManifest([]byte("version: 1\nmode: bounded\nexpires_after: 1h\nidle_timeout: 5m\nallow: {tools: [click]}\nresources: {files: {write: [/srv/out/x.png]}}\n"), nil)
	if err != nil || v1.Vocabulary != VocabularyDriver || v1.Mode != "bounded" {
		t.Fatalf("version 1 with mode = %+v, %v", v1, err)
	}
	sum := sha256.Sum256([]byte("cua-driver-session-policy-v1\x00version: 1\nmode: bounded\nexpires_after: 1h\nidle_timeout: 5m\nallow: {tools: [click]}\nresources: {files: {write: [/srv/out/x.png]}}\n"))
	if v1.DriverSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("version 1 DriverSHA256 = %s", v1.DriverSHA256)
	}
}

// driverErrorTests are malformed manifests in the reference's vocabulary, and fields
// cua-host refuses; they also seed FuzzParseManifest.
var driverErrorTests = []manifestErrorCase{
	{name: "v3 with mode", yaml: "version: 3\nmode: bounded\n", wantField: "mode", wantMsg: "must not declare mode"},
	{name: "v3 with mode first", yaml: "mode: bounded\nversion: 3\n", wantField: "mode", wantMsg: "must not declare mode"},
	{name: "v3 with ask", yaml: "version: 3\nask: {tools: [click]}\n", wantField: "ask", wantMsg: "no ask.tools"},
	{name: "v2 without mode", yaml: "version: 2\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [click]}\n", wantField: "mode", wantMsg: "is required"},
	{name: "v2 mode standard", yaml: "version: 2\nmode: standard\n", wantField: "mode", wantMsg: "must be bounded"},
	{name: "v3 without lifetimes", yaml: "version: 3\nallow: {tools: [click]}\n", wantField: "expires_after", wantMsg: "is required (a bounded session needs both lifetimes)"},
	{name: "ask in cua-host format", yaml: "version: 1\nask: {tools: [click]}\n", wantField: "", wantMsg: `unknown key "ask"`},
	{name: "unreviewed tool", yaml: "version: 3\nallow: {tools: [install_ffmpeg]}\n", wantField: "allow.tools[0]", wantMsg: `unknown or unreviewed tool "install_ffmpeg"`},
	{name: "allow and ask", yaml: "version: 2\nmode: bounded\nallow: {tools: [click]}\nask: {tools: [click]}\n", wantField: "ask.tools[0]", wantMsg: "appears in more than one decision set (allow.tools and ask.tools)"},
	{name: "deny and ask", yaml: "version: 2\nmode: bounded\ndeny: {tools: [type_text_chars]}\nask: {tools: [type_text]}\n", wantField: "ask.tools[0]", wantMsg: "appears in more than one decision set (deny.tools and ask.tools)"},
	{name: "v1 apps", yaml: "version: 1\nmode: bounded\nresources: {apps: [{executable: /usr/bin/xterm}]}\n", wantField: "resources.apps", wantMsg: "version 2 or later"},
	{name: "v1 directory root", yaml: "version: 1\nmode: bounded\nresources: {files: {read: [{dir: /srv}]}}\n", wantField: "resources.files.read[0]", wantMsg: "version 2 or later"},
	{name: "browser", yaml: "version: 3\nresources:\n  browser: {origins: [\"https://example.com\"]}\n", wantField: "resources.browser", wantMsg: "is not supported by cua-host"},
	{name: "empty browser", yaml: "version: 3\nresources: {browser: {}}\n", wantField: "resources.browser", wantMsg: "never ignored"},
	{name: "driver configuration", yaml: "version: 3\nresources: {driver_configuration: {changes: []}}\n", wantField: "resources.driver_configuration", wantMsg: "is not supported by cua-host"},
	{name: "computer history", yaml: "version: 3\nresources: {computer_history: {operations: [status]}}\n", wantField: "resources.computer_history", wantMsg: "is not supported by cua-host"},
	{name: "computer history in cua-host format", yaml: "version: 1\nresources: {computer_history: {}}\n", wantField: "resources.computer_history", wantMsg: "is not supported by cua-host"},
	{name: "bundle id", yaml: "version: 3\nresources: {apps: [{bundle_id: com.apple.TextEdit}]}\n", wantField: "resources.apps[0].bundle_id", wantMsg: "is not supported by cua-host"},
	{name: "windows scope", yaml: "version: 3\nresources: {apps: [{executable: /bin/a, windows: launched}]}\n", wantField: "resources.apps[0].windows", wantMsg: `unsupported windows scope "launched"; expected all`},
	{name: "clipboard in reference format", yaml: "version: 3\nresources: {clipboard: {read: true}}\n", wantField: "resources.clipboard", wantMsg: "clipboard_read and clipboard_write in allow.tools"},
	{name: "observe in reference format", yaml: "version: 3\nresources: {desktop: {observe: true}}\n", wantField: "resources.desktop.observe", wantMsg: "write display: true"},
	{name: "application pid zero", yaml: "version: 3\nresources: {desktop: {applications: [0]}}\n", wantField: "resources.desktop.applications[0]", wantMsg: "positive integer"},
	{name: "application pid string", yaml: "version: 3\nresources: {desktop: {applications: [\"12\"]}}\n", wantField: "resources.desktop.applications[0]", wantMsg: "positive integer"},
	{name: "application pid twice", yaml: "version: 3\nresources: {desktop: {applications: [12, 12]}}\n", wantField: "resources.desktop.applications[1]", wantMsg: "listed twice"},
	{name: "window without id", yaml: "version: 3\nresources: {desktop: {windows: [{pid: 12}]}}\n", wantField: "resources.desktop.windows[0]", wantMsg: "needs both pid and window_id"},
	{name: "window id too large", yaml: "version: 3\nresources: {desktop: {windows: [{pid: 12, window_id: 5000000000}]}}\n", wantField: "resources.desktop.windows[0].window_id", wantMsg: "positive integer"},
	{name: "terminate pid negative", yaml: "version: 3\nresources: {processes: {terminate: [-1]}}\n", wantField: "resources.processes.terminate[0]", wantMsg: "positive integer"},
	{name: "relative file", yaml: "version: 3\nresources: {files: {read: [data/in]}}\n", wantField: "resources.files.read[0]", wantMsg: "not an absolute path"},
	{name: "dotdot file", yaml: "version: 3\nresources: {files: {write: [/data/../etc/x]}}\n", wantField: "resources.files.write[0]", wantMsg: `contains ".."`},
	{name: "root directory", yaml: "version: 3\nresources: {files: {write: [{dir: /, recursive: true}]}}\n", wantField: "resources.files.write[0].dir", wantMsg: "file system root"},
	{name: "unclean file", yaml: "version: 3\nresources: {files: {write: [/data//out]}}\n", wantField: "resources.files.write[0]", wantMsg: "not canonical"},
	{name: "trailing separator", yaml: "version: 3\nresources: {files: {write: [{dir: /data/out/}]}}\n", wantField: "resources.files.write[0].dir", wantMsg: "not canonical"},
	{name: "dir missing", yaml: "version: 3\nresources: {files: {write: [{recursive: true}]}}\n", wantField: "resources.files.write[0].dir", wantMsg: "is required"},
	{name: "dir names a file", yaml: "version: 3\nresources: {files: {read: [{dir: /etc/hostname}]}}\n", wantField: "resources.files.read[0].dir", wantMsg: "is not a directory"},
	{name: "under a file", yaml: "version: 3\nresources: {files: {read: [/etc/hostname/x]}}\n", wantField: "resources.files.read[0]", wantMsg: "is not a directory"},
	{name: "file twice", yaml: "version: 3\nresources: {files: {read: [/srv/a, /srv/a]}}\n", wantField: "resources.files.read[1]", wantMsg: "listed twice"},
	{name: "file not a string", yaml: "version: 3\nresources: {files: {read: [1]}}\n", wantField: "resources.files.read[0]", wantMsg: "absolute path or a mapping"},
	{name: "unknown files key", yaml: "version: 3\nresources: {files: {execute: []}}\n", wantField: "resources.files", wantMsg: `unknown key "execute"`},
}

func TestParseManifestDriverErrors(t *testing.T) { checkManifestErrors(t, driverErrorTests, true) }

// TestManifestUnsupportedFieldLine: a refused field is reported at its own line.
func TestManifestUnsupportedFieldLine(t *testing.T) {
	_, err := ParseManifest([]byte("version: 3\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [click]}\nresources:\n  desktop: {display: false}\n  browser:\n    origins: []\n"), nil)
	want := "manifest: line 7: resources.browser: is not supported by cua-host"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ParseManifest = %v, want %q…", err, want)
	}
}

// TestManifestFileGrantsResolveLinks: a grant is matched on the real location of its
// directories, as a call's path is: a grant written through a symbolic link covers the
// files of its target, and a link inside a granted directory does not widen it.
func TestManifestFileGrantsResolveLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	src := "version: 3\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [zoom]}\nresources:\n  files:\n    write:\n      - {dir: " + link + "}\n      - " + link + "/later/x.png\n"
	m, err := ParseManifest([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := m.FilesWrite[0]; g.Path != link || g.Canonical != real || !g.Dir || g.Recursive {
		t.Errorf("grant = %+v, want canonical %s", g, real)
	}
	if g := m.FilesWrite[1]; g.Canonical != filepath.Join(real, "later", "x.png") {
		t.Errorf("grant of a path that does not exist yet = %+v", g)
	}
	for path, want := range map[string]bool{
		filepath.Join(real, "a.png"):                true,
		filepath.Join(real, "sub", "a.png"):         false, // not recursive
		filepath.Join(link, "a.png"):                false, // calls are canonical first
		filepath.Join(real, "later", "x.png"):       true,
		filepath.Join(real, "later", "y.png"):       false,
		filepath.Join(dir, "a.png"):                 false,
		filepath.Join(real+"-other", "a.png"):       false,
		filepath.Join(real, "sub", "..", "..", "x"): false,
	} {
		if got := m.CheckResource(Resource{Kind: ResourceFile, Op: OpWrite, Path: path}) == nil; got != want {
			t.Errorf("write %s allowed = %v, want %v", path, got, want)
		}
	}
	_, err = ParseManifest([]byte("version: 3\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [zoom]}\nresources: {files: {write: ["+dangling+"/x.png]}}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "broken symbolic link") {
		t.Errorf("a grant under a dangling link = %v, want an error", err)
	}
}
