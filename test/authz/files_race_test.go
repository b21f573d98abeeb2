package authze2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// TestFilesRaceSwap: a bounded session may read and write files in shots only. Another
// process of the same user (this test, beside the worker) swaps shots with a symbolic
// link to victim as fast as it can (renameat2 RENAME_EXCHANGE) while the session writes
// screenshots into shots (get_desktop_state with screenshot_out_file) and reads an image
// from it (clipboard_write with image_path). Each call either runs on shots or is refused:
// victim stays as it was, every file in shots is a whole PNG, and no image of victim's
// reaches the clipboard.
func TestFilesRaceSwap(t *testing.T) {
	requireDesktop(t)
	root := t.TempDir()
	if dir, err := os.MkdirTemp("/dev/shm", "cua-files-race-"); err == nil { // a tmpfs: quick writes, a tight race
		t.Cleanup(func() { os.RemoveAll(dir) })
		root = dir
	}
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	shots, victim, spare := filepath.Join(root, "shots"), filepath.Join(root, "victim"), filepath.Join(root, "spare")
	for _, d := range []string{shots, victim} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Two PNGs told apart by their size: the one in shots may be read, victim's never.
	mine, theirs := pngOf(t, 2, 2), pngOf(t, 40, 40)
	if err := os.WriteFile(filepath.Join(shots, "in.png"), mine, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "in.png"), theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, spare); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf("version: 3\nexpires_after: 1h\nidle_timeout: 30m\n"+
		"allow: {tools: [get_desktop_state, clipboard_write]}\n"+
		"resources:\n  desktop: {display: true}\n  files:\n    read: [{dir: %s}]\n    write: [{dir: %s}]\n", shots, shots)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "files-race", Mode: authz.Bounded, Manifest: []byte(manifest)})

	shoot := func(name string) host.Result {
		return call(t, s, "get_desktop_state", map[string]any{"max_dimension": 64, "include_windows": false, "screenshot_out_file": filepath.Join(shots, name)})
	}
	clip := func() host.Result {
		return call(t, s, "clipboard_write", map[string]any{"image_path": filepath.Join(shots, "in.png")})
	}
	// Before the race: shots is writable and readable, victim is neither.
	check(t, "a screenshot into shots", shoot("first.png"), "")
	check(t, "an image from shots", clip(), "")
	check(t, "a screenshot into victim", call(t, s, "get_desktop_state", map[string]any{"max_dimension": 64, "screenshot_out_file": filepath.Join(victim, "x.png")}), authz.CodeOutsideManifest)

	var (
		done  atomic.Bool
		swaps int64
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for !done.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, shots, unix.AT_FDCWD, spare, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2 exchange: %v", err)
				return
			}
			swaps++
		}
	})
	const minCalls, budget = 100, 6 * time.Second
	start := time.Now()
	var calls, written, read, outside, changed, handler, victimReads int
	for ; calls < minCalls || time.Since(start) < budget/2; calls++ {
		if time.Since(start) > budget {
			break
		}
		var res host.Result
		if calls%2 == 0 {
			res = shoot(fmt.Sprintf("shot-%d.png", calls))
		} else {
			res = clip()
		}
		switch {
		case res.Outcome == host.Completed && !res.IsError:
			if calls%2 == 0 {
				written++
				continue
			}
			read++
			var d struct {
				Bytes int `json:"bytes"`
			}
			if err := json.Unmarshal(res.Details, &d); err != nil || d.Bytes != len(mine) {
				victimReads++
				t.Errorf("clipboard_write read %d bytes (%v), want shots' %d (victim's has %d)", d.Bytes, err, len(mine), len(theirs))
			}
		case res.Refusal != nil && res.Refusal.Code == string(authz.CodeOutsideManifest):
			outside++ // the decision saw the link: victim is outside the manifest
		case res.Refusal != nil && res.Refusal.Code == string(authz.CodeInvalidArguments) &&
			(strings.Contains(res.Refusal.Message, "changed while") || strings.Contains(res.Refusal.Message, "cannot be resolved")):
			// The directory changed while the path was resolved (a link read as a
			// directory, or the reverse), or between the decision and the handler.
			if strings.Contains(res.Refusal.Message, "while the call ran") {
				handler++
			}
			changed++
		default:
			t.Errorf("call %d: %s %s", calls, res.Outcome, res.Text())
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d swaps in %v; %d calls: %d screenshots written, %d images read, %d refused outside the manifest, %d refused because the directory changed (%d of them by the handler), %d reads of victim's image",
		swaps, time.Since(start).Round(time.Millisecond), calls, written, read, outside, changed, handler, victimReads)

	ents, err := os.ReadDir(victim)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "in.png" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("victim holds %v, want only its own in.png", names)
	}
	dir := shots
	if fi, err := os.Lstat(shots); err != nil || !fi.IsDir() {
		dir = spare // the swapper stopped with the directory under the link's name
	}
	ents, err = os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pngs := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if _, derr := png.Decode(bytes.NewReader(b)); err != nil || derr != nil || !strings.HasSuffix(e.Name(), ".png") {
			t.Errorf("shots holds %s, which is not a whole PNG (%v, %v)", e.Name(), err, derr)
			continue
		}
		pngs++
	}
	if pngs != written+2 { // first.png and in.png besides the screenshots of the race
		t.Errorf("shots holds %d PNGs, want %d: the %d screenshots written, first.png and in.png", pngs, written+2, written)
	}
	if swaps < 1000 || written == 0 || outside+changed == 0 {
		t.Errorf("the race did not run: %d swaps, %d written, %d refused", swaps, written, outside+changed)
	}
}

// pngOf encodes a blank w×h image.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
