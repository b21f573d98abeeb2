package worker

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
)

// fileTree is a temporary directory with an input file, an output directory, a directory
// outside both, and symbolic links that try to lead out of the output directory.
type fileTree struct {
	root, in, out, outside string
	inFile                 string
}

func newFileTree(t *testing.T) fileTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ft := fileTree{root: root, in: filepath.Join(root, "in"), out: filepath.Join(root, "out"), outside: filepath.Join(root, "outside")}
	for _, d := range []string{ft.in, filepath.Join(ft.out, "run"), ft.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ft.inFile = filepath.Join(ft.in, "picture.png")
	for _, f := range []string{ft.inFile, filepath.Join(ft.outside, "secret.png")} {
		if err := os.WriteFile(f, []byte("png"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// out/escape → outside (a directory link) and out/link.png → outside/secret.png.
	if err := os.Symlink(ft.outside, filepath.Join(ft.out, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ft.outside, "secret.png"), filepath.Join(ft.out, "link.png")); err != nil {
		t.Fatal(err)
	}
	return ft
}

// referenceManifest is the reference driver's example version 3 manifest with xterm for
// its editor and the tree's directories for /data/input and /data/output.
func (ft fileTree) referenceManifest(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("testdata/reference-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("/usr/bin/example-editor", "/usr/bin/xterm", "/data/input", ft.in, "/data/output", ft.out).Replace(string(src))
	// The copy may only differ in those paths; the tools are the reference's, plus the
	// recording tools of this worker that take files.
	return strings.Replace(s, "kill_app]", "kill_app, zoom, get_desktop_state, clipboard_write]", 1)
}

// TestReferenceManifestEnforced runs the reference's example manifest (xterm for its
// editor) through the worker pipeline: launching the listed executable is allowed and
// any other refused, and every path argument is decided on the real file it names.
func TestReferenceManifestEnforced(t *testing.T) {
	if _, err := os.Stat("/usr/bin/xterm"); err != nil {
		t.Skip("xterm is not installed")
	}
	ft := newFileTree(t)
	sc := newScene(t, sceneOptions{})
	c := sc.h.mustSession("bounded", authz.Bounded, ft.referenceManifest(t))

	expect(t, call(t, c, "launch_app", map[string]any{"launch_path": "/usr/bin/xterm"}), "")
	expect(t, call(t, c, "launch_app", map[string]any{"launch_path": "/usr/bin/xclock"}), authz.CodeOutsideManifest)
	expect(t, call(t, c, "launch_app", map[string]any{"launch_path": "/usr/bin/xterm", "additional_arguments": []string{"-e", "sh"}}), authz.CodeOutsideManifest)
	if n := sc.rec.ran("bounded", "launch_app"); n != 1 {
		t.Errorf("launch_app ran %d times, want 1", n)
	}
	// The manifest lists xterm only: a window of /usr/bin/sleep is outside it, and so is
	// the whole display (desktop.display: false).
	shot := filepath.Join(ft.out, "run", "a.png")
	expect(t, call(t, c, "zoom", map[string]any{"pid": sc.foreignPID, "window_id": sc.foreignWin, "screenshot_out_file": shot}), authz.CodeOutsideManifest)
	expect(t, call(t, c, "get_desktop_state", map[string]any{"screenshot_out_file": shot}), authz.CodeOutsideManifest)

	// clipboard_write is allowed by the (edited) tool list; its image_path is a read.
	tests := []struct {
		name string
		arg  string
		path string
		want authz.Code
		// pinned is the path the handler must receive ("" when refused).
		pinned string
	}{
		{name: "read from the input tree", arg: "image_path", path: ft.inFile, pinned: ft.inFile},
		{name: "read through a repeated separator", arg: "image_path", path: ft.in + "//picture.png", pinned: ft.inFile},
		{name: "read from outside", arg: "image_path", path: filepath.Join(ft.outside, "secret.png"), want: authz.CodeOutsideManifest},
		{name: "read from the output tree", arg: "file_path", path: filepath.Join(ft.out, "run", "x.txt"), want: authz.CodeOutsideManifest},
		{name: "read through a directory link", arg: "file_path", path: filepath.Join(ft.out, "escape", "secret.png"), want: authz.CodeOutsideManifest},
		{name: "read of a file link", arg: "image_path", path: filepath.Join(ft.out, "link.png"), want: authz.CodeInvalidArguments},
		{name: "read with dot-dot", arg: "image_path", path: ft.in + "/../outside/secret.png", want: authz.CodeInvalidArguments},
		{name: "relative read", arg: "image_path", path: "in/picture.png", want: authz.CodeInvalidArguments},
		{name: "read of a directory", arg: "image_path", path: ft.in, want: authz.CodeInvalidArguments},
		{name: "read in a missing directory", arg: "image_path", path: filepath.Join(ft.in, "nope", "x.png"), want: authz.CodeInvalidArguments},
	}
	ran := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "clipboard_write", map[string]any{"text": "x", tt.arg: tt.path})
			expect(t, res, tt.want)
			if tt.want != "" {
				return
			}
			ran++
			var got map[string]any
			if err := json.Unmarshal(sc.rec.lastArgs("bounded", "clipboard_write"), &got); err != nil || got[tt.arg] != tt.pinned {
				t.Errorf("the handler got %s = %v, want the canonical %s", tt.arg, got[tt.arg], tt.pinned)
			}
		})
	}
	if n := sc.rec.ran("bounded", "clipboard_write"); n != ran {
		t.Errorf("clipboard_write ran %d times, want %d (refused calls must not run)", n, ran)
	}
	if _, err := os.Stat(filepath.Join(ft.outside, "a.png")); err == nil {
		t.Error("a file appeared outside the output tree")
	}
}

// TestScreenshotOutFileDecisions: in a bounded session whose manifest lists the window's
// executable, screenshot_out_file is decided against files.write only.
func TestScreenshotOutFileDecisions(t *testing.T) {
	ft := newFileTree(t)
	sc := newScene(t, sceneOptions{})
	man := "version: 3\nexpires_after: 1h\nidle_timeout: 5m\nallow: {tools: [zoom, get_desktop_state]}\n" +
		"resources:\n  apps: [{executable: /usr/bin/sleep}]\n  desktop: {display: true}\n" +
		"  files:\n    read: [{dir: " + ft.out + ", recursive: true}]\n    write: [{dir: " + ft.out + ", recursive: true}, " + filepath.Join(ft.root, "single.png") + "]\n"
	c := sc.h.mustSession("bounded", authz.Bounded, man)
	window := func(path string) map[string]any {
		return map[string]any{"pid": sc.foreignPID, "window_id": sc.foreignWin, "x1": 0, "y1": 0, "x2": 5, "y2": 5, "screenshot_out_file": path}
	}
	tests := []struct {
		name   string
		tool   string
		path   string
		want   authz.Code
		pinned string
	}{
		{name: "zoom into the output tree", tool: "zoom", path: filepath.Join(ft.out, "run", "z.png"), pinned: filepath.Join(ft.out, "run", "z.png")},
		{name: "desktop into the output tree", tool: "get_desktop_state", path: filepath.Join(ft.out, "d.png"), pinned: filepath.Join(ft.out, "d.png")},
		{name: "the one listed file", tool: "zoom", path: filepath.Join(ft.root, "single.png"), pinned: filepath.Join(ft.root, "single.png")},
		{name: "beside the listed file", tool: "zoom", path: filepath.Join(ft.root, "other.png"), want: authz.CodeOutsideManifest},
		{name: "into the input tree", tool: "zoom", path: filepath.Join(ft.in, "z.png"), want: authz.CodeOutsideManifest},
		{name: "through a directory link out of the tree", tool: "zoom", path: filepath.Join(ft.out, "escape", "z.png"), want: authz.CodeOutsideManifest},
		{name: "onto a link out of the tree", tool: "get_desktop_state", path: filepath.Join(ft.out, "link.png"), want: authz.CodeInvalidArguments},
		{name: "dot-dot out of the tree", tool: "zoom", path: ft.out + "/run/../../outside/z.png", want: authz.CodeInvalidArguments},
		{name: "not a string", tool: "zoom", path: "", want: authz.CodeInvalidArguments},
		{name: "a directory", tool: "get_desktop_state", path: ft.out + "/", want: authz.CodeInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := window(tt.path)
			if tt.tool == "get_desktop_state" {
				args = map[string]any{"screenshot_out_file": tt.path}
			}
			if tt.path == "" {
				args["screenshot_out_file"] = 7
			}
			before := sc.rec.ran("bounded", tt.tool)
			expect(t, call(t, c, tt.tool, args), tt.want)
			if got := sc.rec.ran("bounded", tt.tool) - before; (got == 1) != (tt.want == "") {
				t.Fatalf("%s ran %d times", tt.tool, got)
			}
			if tt.want == "" {
				var got map[string]any
				json.Unmarshal(sc.rec.lastArgs("bounded", tt.tool), &got)
				if got["screenshot_out_file"] != tt.pinned {
					t.Errorf("handler got %v, want %s", got["screenshot_out_file"], tt.pinned)
				}
			}
		})
	}
}

// TestFilesNeedConsentInStandardMode: standard sessions ask the host for every file a call
// reads or writes, scoped to that file and operation; unrestricted sessions do not ask.
func TestFilesNeedConsentInStandardMode(t *testing.T) {
	ft := newFileTree(t)
	var mu sync.Mutex
	var asked []*cuav1.ConsentRequest
	sc := newScene(t, sceneOptions{consent: func(req *cuav1.ConsentRequest) (bool, uint32, bool) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req)
		return strings.HasPrefix(req.GetLabel(), "grant"), 60, false
	}})
	shot := filepath.Join(ft.out, "a.png")
	decline := sc.h.mustSession("decline", authz.Standard, "")
	// clipboard_write needs no consent itself; the file it reads does.
	expect(t, call(t, decline, "clipboard_write", map[string]any{"text": "x"}), "")
	expect(t, call(t, decline, "clipboard_write", map[string]any{"image_path": ft.inFile}), authz.CodeAuthorizationDeclined)
	if n := sc.rec.ran("decline", "clipboard_write"); n != 1 {
		t.Errorf("clipboard_write ran %d times, want 1", n)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].GetResource() != "file:"+ft.inFile || asked[0].GetOperation() != "read" || !strings.Contains(asked[0].GetDescription(), "read the file "+ft.inFile) {
		t.Errorf("consent requests = %v", asked)
	}
	asked = nil
	mu.Unlock()

	grant := sc.h.mustSession("grant", authz.Standard, "")
	expect(t, call(t, grant, "get_desktop_state", map[string]any{"screenshot_out_file": shot}), "")
	expect(t, call(t, grant, "get_desktop_state", map[string]any{"screenshot_out_file": shot}), "")
	expect(t, call(t, grant, "get_desktop_state", map[string]any{"screenshot_out_file": filepath.Join(ft.out, "b.png")}), "")
	mu.Lock()
	var files []string
	for _, r := range asked {
		if strings.HasPrefix(r.GetResource(), "file:") {
			files = append(files, r.GetOperation()+" "+strings.TrimPrefix(r.GetResource(), "file:"))
		}
	}
	mu.Unlock()
	if want := []string{"write " + shot, "write " + filepath.Join(ft.out, "b.png")}; !slices.Equal(files, want) {
		t.Errorf("file consent requests = %q, want %q (one per file, the grant reused)", files, want)
	}

	unrestricted := sc.h.mustSession("unrestricted", authz.Unrestricted, "")
	mu.Lock()
	n := len(asked)
	mu.Unlock()
	expect(t, call(t, unrestricted, "clipboard_write", map[string]any{"image_path": filepath.Join(ft.outside, "secret.png")}), "")
	expect(t, call(t, unrestricted, "clipboard_write", map[string]any{"image_path": filepath.Join(ft.out, "link.png")}), authz.CodeInvalidArguments)
	mu.Lock()
	if len(asked) != n {
		t.Errorf("an unrestricted session asked for consent")
	}
	mu.Unlock()
}

// pathArgument matches schema property names that hold a file path.
var pathArgument = regexp.MustCompile(`(^|_)(file|path|dir|directory)$`)

// TestEveryPathArgumentIsResolved: every argument of a shipped tool that names a file is
// declared in its tool.Touches.Files, so no path reaches a handler undecided. launch_path names a program, which
// the launch resolution decides on; invoke_menu's path is a menu path, not a file.
func TestEveryPathArgumentIsResolved(t *testing.T) {
	exempt := map[string]bool{"launch_app/launch_path": true, "invoke_menu/path": true}
	for _, tl := range Catalog() {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
			t.Fatalf("%s schema: %v", tl.Name, err)
		}
		for prop := range schema.Properties {
			if !pathArgument.MatchString(prop) || exempt[tl.Name+"/"+prop] {
				continue
			}
			if !slices.ContainsFunc(tl.Touches.Files, func(fa tool.FileArg) bool { return fa.Arg == prop }) {
				t.Errorf("%s takes the path argument %q, which fileArgs does not resolve", tl.Name, prop)
			}
		}
	}
	// A name that only folds to a path argument (encoding/json matches fields that way)
	// never gets past the pipeline's first stage to a handler.
	for _, tl := range Catalog() {
		for _, fa := range tl.Touches.Files {
			for _, alias := range []string{strings.ToUpper(fa.Arg), strings.ToUpper(fa.Arg[:1]) + fa.Arg[1:]} {
				req := newRequest(tl.Name, mustArgs(map[string]any{alias: "/tmp/x"}))
				if req.refusal == nil || req.refusal.Code != authz.CodeInvalidArguments {
					t.Errorf("%s with %s: %v, want invalid_arguments", tl.Name, alias, req.refusal)
				}
			}
		}
	}
}

// TestFilesCarryTheDecidedDirectory: each path argument's decision records the canonical
// path and the identity of the directory the resolver opened without links, which the
// handler checks before it reads or writes (tool.Call.Files).
func TestFilesCarryTheDecidedDirectory(t *testing.T) {
	ft := newFileTree(t)
	if err := os.Symlink(ft.out, filepath.Join(ft.root, "out-link")); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"screenshot_out_file": filepath.Join(ft.root, "out-link", "run", "a.png")}
	res := (&resolver{}).withFiles(touchesOf("get_desktop_state").Files, args, &callArgs{}, resolution{})
	if res.Unresolved != nil || len(res.files) != 1 {
		t.Fatalf("withFiles = %v, files %v", res.Unresolved, res.files)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(ft.out, "run"), &st); err != nil {
		t.Fatal(err)
	}
	f := res.files[0]
	want := filepath.Join(ft.out, "run", "a.png")
	if f.Arg != "screenshot_out_file" || f.Path != want || args["screenshot_out_file"] != want || f.Dir.Dev != st.Dev || f.Dir.Ino != st.Ino {
		t.Errorf("withFiles recorded %+v (argument %v), want %s in the directory of device %d, inode %d", f, args["screenshot_out_file"], want, st.Dev, st.Ino)
	}
	// No path argument, no files: tools without one do no file work.
	if res := (&resolver{}).withFiles(touchesOf("click").Files, map[string]any{"x": 1.0}, &callArgs{}, resolution{}); res.files != nil {
		t.Errorf("a call without path arguments carries files %v", res.files)
	}
}
