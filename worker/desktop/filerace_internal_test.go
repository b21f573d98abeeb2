package desktop

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/safefile"
	"github.com/cua-host/cua-host/worker/tool"
)

// pngMagic starts every PNG file.
const pngMagic = "\x89PNG\r\n\x1a\n"

// raceTree is a directory the session may use ("shots"), a directory it may not
// ("victim"), each with a file "in.png" of its own, and a symbolic link to the victim
// ("spare") for a swapper to exchange with shots.
type raceTree struct {
	root, shots, victim, spare string
}

func newRaceTree(t *testing.T) raceTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(memDir(t))
	if err != nil {
		t.Fatal(err)
	}
	rt := raceTree{root: root, shots: filepath.Join(root, "shots"), victim: filepath.Join(root, "victim"), spare: filepath.Join(root, "spare")}
	for _, d := range []string{rt.shots, rt.victim} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for dir, body := range map[string]string{rt.shots: pngMagic + "shots", rt.victim: pngMagic + "victim"} {
		if err := os.WriteFile(filepath.Join(dir, "in.png"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(rt.victim, rt.spare); err != nil {
		t.Fatal(err)
	}
	return rt
}

// decide does what the worker's authorizer does for one path argument of a session
// that may use shots only: resolve the directory through its links, refuse anything
// outside shots, and record the identity of the directory it opened without links. It
// returns the call the handler gets, or nil when the call is refused.
func (rt raceTree) decide(arg, path string) *tool.Call {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil || dir != rt.shots {
		return nil // outside the manifest
	}
	d, err := safefile.OpenDir(dir)
	if err != nil {
		return nil // the directory changed while it was resolved
	}
	defer d.Close()
	id, err := d.ID()
	if err != nil {
		return nil
	}
	canonical := filepath.Join(dir, filepath.Base(path))
	return &tool.Call{Arguments: map[string]any{arg: canonical}, Files: []tool.File{{Arg: arg, Path: canonical, Dir: id}}}
}

// memDir returns a new temporary directory on /dev/shm when there is one (a tmpfs: a
// write takes microseconds there, not a disk's milliseconds, so a race runs thousands of
// writes in a second or two), else in the test's temporary directory.
func memDir(t *testing.T) string {
	t.Helper()
	if dir, err := os.MkdirTemp("/dev/shm", "cua-filerace-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return t.TempDir()
}

// swap exchanges two names atomically (renameat2 RENAME_EXCHANGE) as fast as it can
// until the returned stop is called; stop returns the number of swaps.
func swap(t *testing.T, a, b string) (stop func() int64) {
	t.Helper()
	var (
		done  atomic.Bool
		swaps int64
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for !done.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2 exchange: %v", err)
				return
			}
			swaps++
		}
	})
	return func() int64 {
		done.Store(true)
		wg.Wait()
		return swaps
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// entries lists a directory, or nil when it is not one (the link's name).
func entries(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// isDirChanged reports whether err is the refusal of a directory swapped since the decision.
func isDirChanged(err error) bool {
	var r *authz.Refusal
	return errors.As(err, &r) && r.Code == authz.CodeInvalidArguments && strings.Contains(r.Message, "changed while the call ran")
}

// TestFileArgumentsSwapRace: the directory a session may write and read and a symbolic
// link to another directory swap names thousands of times while the handlers' file path
// (screenshot_out_file's open and write, clipboard_write's image_path read) runs thousands
// of times on calls decided as the authorizer decides them. Nothing is ever written in the
// other directory, nothing of it is read, no temporary file is left, no descriptor leaks.
func TestFileArgumentsSwapRace(t *testing.T) {
	rt := newRaceTree(t)
	image := []byte(pngMagic + "captured")
	before := openFDs(t)
	stop := swap(t, rt.shots, rt.spare)
	start := time.Now()
	const minRounds, minDone, limit = 5000, 2000, 4 * time.Second
	var rounds, outside, changed, writes, reads, escapes int
	for ; rounds < minRounds || (writes < minDone && time.Since(start) < limit); rounds++ {
		arg, path := "screenshot_out_file", filepath.Join(rt.shots, "out.png")
		if rounds%2 == 1 {
			arg, path = "image_path", filepath.Join(rt.shots, "in.png")
		}
		call := rt.decide(arg, path)
		if call == nil {
			outside++
			continue
		}
		path = call.Arguments[arg].(string)
		if arg == "screenshot_out_file" {
			out, err := openOutFile(call, &path)
			if err == nil {
				err = out.write(image)
				out.Close()
			}
			switch {
			case err == nil:
				writes++
			case isDirChanged(err):
				changed++
			default:
				t.Errorf("screenshot_out_file: %v", err)
			}
			continue
		}
		data, err := readClipboardFile(call, arg, path, 1024)
		switch {
		case err == nil:
			reads++
			if !bytes.Equal(data, []byte(pngMagic+"shots")) {
				escapes++
			}
		case isDirChanged(err):
			changed++
		default:
			t.Errorf("image_path: %v", err)
		}
	}
	swaps := stop()
	t.Logf("%d swaps in %v; %d calls: %d refused by the decision, %d refused because the directory changed, %d writes, %d reads, %d reads of the victim's file",
		swaps, time.Since(start).Round(time.Millisecond), rounds, outside, changed, writes, reads, escapes)
	if got := entries(rt.victim); !slices.Equal(got, []string{"in.png"}) {
		t.Errorf("the victim directory holds %v, want only its own in.png", got)
	}
	if escapes > 0 {
		t.Errorf("%d reads returned the victim's file", escapes)
	}
	for _, dir := range []string{rt.root, rt.shots, rt.spare, rt.victim} {
		for _, name := range entries(dir) {
			if name != "in.png" && name != "out.png" && name != "shots" && name != "spare" && name != "victim" {
				t.Errorf("%s holds %s (a temporary file left behind?)", dir, name)
			}
		}
	}
	real := rt.shots
	if fi, err := os.Lstat(real); err != nil || !fi.IsDir() {
		real = rt.spare // the swapper stopped with the directory under the link's name
	}
	if b, err := os.ReadFile(filepath.Join(real, "out.png")); writes > 0 && (err != nil || !bytes.Equal(b, image)) {
		t.Errorf("shots/out.png = %q, %v, want the image", b, err)
	}
	if swaps < 1000 || writes == 0 || reads == 0 || outside+changed == 0 {
		t.Errorf("the race did not run: %d swaps, %d writes, %d reads, %d refused", swaps, writes, reads, outside+changed)
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before, %d after", before, after)
	}
}

// TestFileArgumentDirectoryChanged: a call decided on a directory is refused, and touches
// nothing, when another directory or a link has taken that directory's name since; a
// call that went through the authorizer without a decision for its path is refused too.
func TestFileArgumentDirectoryChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, rt raceTree)
		// birth: the new directory may reuse the old one's inode number, and only its
		// birth time tells them apart.
		birth bool
	}{
		{name: "swapped for a link", change: func(t *testing.T, rt raceTree) {
			if err := unix.Renameat2(unix.AT_FDCWD, rt.shots, unix.AT_FDCWD, rt.spare, unix.RENAME_EXCHANGE); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "swapped for another directory", change: func(t *testing.T, rt raceTree) {
			if err := unix.Renameat2(unix.AT_FDCWD, rt.shots, unix.AT_FDCWD, rt.victim, unix.RENAME_EXCHANGE); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "removed and made again", change: func(t *testing.T, rt raceTree) {
			if err := os.RemoveAll(rt.shots); err != nil {
				t.Fatal(err)
			}
			time.Sleep(25 * time.Millisecond) // past the filesystem clock's granularity
			if err := os.Mkdir(rt.shots, 0o700); err != nil {
				t.Fatal(err)
			}
		}, birth: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRaceTree(t)
			out := filepath.Join(rt.shots, "out.png")
			in := filepath.Join(rt.shots, "in.png")
			write, read := rt.decide("screenshot_out_file", out), rt.decide("image_path", in)
			if write == nil || read == nil {
				t.Fatal("the decision refused a path in shots")
			}
			if tt.birth && write.Files[0].Dir.Birth == 0 {
				t.Skip("the filesystem of the test's temporary directory records no birth time")
			}
			before := openFDs(t)
			tt.change(t, rt)
			if o, err := openOutFile(write, &out); !isDirChanged(err) {
				o.Close()
				t.Errorf("screenshot_out_file after the change: %v, want invalid_arguments saying the directory changed", err)
			}
			if _, err := readClipboardFile(read, "image_path", in, 1024); !isDirChanged(err) {
				t.Errorf("image_path after the change: %v, want invalid_arguments saying the directory changed", err)
			}
			for _, dir := range []string{rt.shots, rt.victim} {
				if got := entries(dir); len(got) > 1 || (len(got) == 1 && got[0] != "in.png") {
					t.Errorf("%s holds %v after a refused call", dir, got)
				}
			}
			if after := openFDs(t); after != before {
				t.Errorf("open descriptors: %d before, %d after", before, after)
			}
		})
	}
	rt := newRaceTree(t)
	out := filepath.Join(rt.shots, "out.png")
	undecided := &tool.Call{Arguments: map[string]any{"screenshot_out_file": out}}
	if o, err := openOutFile(undecided, &out); err == nil {
		o.Close()
		t.Error("screenshot_out_file without a decision for it was opened")
	}
}

// TestFileArgumentHandlersReleaseTheDirectory: a handler holds the decided directory open
// for the call only: it is closed when the call ends, whether it wrote the file, was
// refused after the directory was opened, or panicked.
func TestFileArgumentHandlersReleaseTheDirectory(t *testing.T) {
	rt := newRaceTree(t)
	path := filepath.Join(rt.shots, "out.png")
	d := &desk{} // no backend: a capture panics
	before := openFDs(t)
	for range 50 {
		// Refused after the directory was opened: max_elements is checked later.
		call := rt.decide("screenshot_out_file", path)
		call.Arguments["pid"], call.Arguments["window_id"], call.Arguments["max_elements"] = 1.0, 1.0, 0.0
		if _, err := d.windowState(true)(t.Context(), call); err == nil || !strings.Contains(err.Error(), "max_elements") {
			t.Fatalf("get_window_state with max_elements 0 = %v, want its refusal", err)
		}
		// A panic after the directory was opened.
		call = rt.decide("screenshot_out_file", path)
		func() {
			defer func() { recover() }()
			d.desktopState(t.Context(), call)
			t.Fatal("get_desktop_state without a backend did not panic")
		}()
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before, %d after", before, after)
	}
	if got := entries(rt.shots); !slices.Equal(got, []string{"in.png"}) {
		t.Errorf("shots holds %v after calls that wrote nothing", got)
	}
}
