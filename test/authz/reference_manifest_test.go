package authze2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// TestReferenceManifest runs the reference driver's example version 3 manifest, with
// xterm for its editor and temporary directories for /data/input and /data/output,
// through a real host and worker: xterm launches and its window is real, another program
// is refused, kill_app stops only what the session launched, and screenshot_out_file is
// decided on the file it names (files.write), whatever links lie on the way.
func TestReferenceManifest(t *testing.T) {
	requireDesktop(t)
	paths := needPrograms(t, "xterm", "xwininfo")
	xterm, err := filepath.EvalSymlinks(paths["xterm"])
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, out, outside := filepath.Join(root, "in"), filepath.Join(root, "out"), filepath.Join(root, "outside")
	for _, d := range []string{in, out, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(out, "escape")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../worker/testdata/reference-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.NewReplacer("/usr/bin/example-editor", xterm, "/data/input", in, "/data/output", out).Replace(string(src))

	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "reference", Mode: authz.Bounded, Manifest: []byte(manifest)})

	res := call(t, s, "launch_app", map[string]any{"launch_path": xterm})
	if !check(t, "launch the listed executable", res, "") {
		t.FailNow()
	}
	l := launchResult(t, res)
	t.Cleanup(func() { exec.Command("kill", "-9", itoa(l.PID)).Run() })
	if exe, err := os.Readlink("/proc/" + itoa(l.PID) + "/exe"); err != nil || exe != xterm {
		t.Errorf("the launched process runs %q (%v), want %s", exe, err, xterm)
	}
	if len(l.WindowIDs) == 0 {
		t.Fatalf("launch_app returned no window: %+v", l)
	}
	win := l.WindowIDs[0]
	if outp, err := exec.Command("xwininfo", "-display", disp.Name(), "-id", itoa(int(win))).CombinedOutput(); err != nil {
		t.Errorf("xwininfo -id %d: %v %s", win, err, outp)
	}

	check(t, "launch another program", call(t, s, "launch_app", map[string]any{"launch_path": appA}), authz.CodeOutsideManifest)
	check(t, "launch the listed program with arguments", call(t, s, "launch_app", map[string]any{"launch_path": xterm, "additional_arguments": []string{"-e", "sh"}}), authz.CodeOutsideManifest)
	check(t, "a tool outside allow.tools", call(t, s, "get_screen_size", nil), authz.CodeOutsideManifest)

	// screenshot_out_file: a write, decided on the real file against files.write. The
	// handler's side of the argument is not asserted here: only that the authorization
	// lets the call through inside /data/output and refuses it elsewhere, and that a
	// refused call writes nothing.
	state := func(path string) host.Result {
		return call(t, s, "get_window_state", map[string]any{"pid": l.PID, "window_id": win, "include_screenshot": false, "max_elements": 5, "screenshot_out_file": path})
	}
	inside := state(filepath.Join(out, "shot.png"))
	t.Logf("inside: %s %s", inside.Outcome, inside.Text())
	if inside.Refusal != nil && (inside.Refusal.Code == string(authz.CodeOutsideManifest) || inside.Refusal.Code == string(authz.CodeManifestDenied)) {
		t.Errorf("screenshot_out_file inside files.write refused by the manifest: %s", inside.Text())
	}
	for name, path := range map[string]string{
		"into files.read":           filepath.Join(in, "shot.png"),
		"beside the output tree":    filepath.Join(root, "shot.png"),
		"through a link out of out": filepath.Join(out, "escape", "shot.png"),
	} {
		check(t, "screenshot_out_file "+name, state(path), authz.CodeOutsideManifest)
	}
	check(t, "screenshot_out_file with dot-dot", state(out+"/../outside/shot.png"), authz.CodeInvalidArguments)
	for _, f := range []string{filepath.Join(in, "shot.png"), filepath.Join(root, "shot.png"), filepath.Join(outside, "shot.png")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written by a refused call", f)
		}
	}

	// terminate: driver_launched. The person's own xterm is refused; the session's stops.
	person := exec.Command(xterm)
	person.Env = append(os.Environ(), disp.Env()...)
	if err := person.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { person.Process.Kill(); person.Wait() })
	check(t, "kill the person's xterm", call(t, s, "kill_app", map[string]any{"pid": person.Process.Pid}), authz.CodeForeignProcessTermination)
	if !processAlive(person.Process.Pid) {
		t.Error("a refused kill_app killed the person's xterm")
	}
	check(t, "kill the session's xterm", call(t, s, "kill_app", map[string]any{"pid": l.PID, "grace_ms": 200}), "")
	if !waitExit(t, l.PID, 5*time.Second) {
		t.Error("the session's xterm is still running after kill_app")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
