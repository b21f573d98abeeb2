package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// swapper exchanges two names of a directory atomically (renameat2 RENAME_EXCHANGE), as
// fast as it can, until stop is called; stop returns how many swaps it made.
func swapper(t *testing.T, a, b string) (stop func() int64) {
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

// TestSwapRace: a directory and a symbolic link to another directory swap names
// thousands of times while files are written and read through the directory's name.
// Every open either fails on the link or acts on the directory: nothing is ever written
// in the link's target, nothing of it is read, and no temporary file is left anywhere.
func TestSwapRace(t *testing.T) {
	root := t.TempDir()
	// On /dev/shm when there is one (a tmpfs): a write takes microseconds there, not a
	// disk's milliseconds, so the race runs thousands of writes in a second or two.
	if dir, err := os.MkdirTemp("/dev/shm", "safefile-race-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		root = dir
	}
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	shots, spare, victim := filepath.Join(root, "shots"), filepath.Join(root, "spare"), filepath.Join(root, "victim")
	for _, d := range []string{shots, victim} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(shots, "in"), "shots")
	write(t, filepath.Join(victim, "in"), "victim")
	if err := os.Symlink(victim, spare); err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	stop := swapper(t, shots, spare)
	start := time.Now()
	// At least minRounds opens, and on until minWrites of them got the directory or the
	// time is up: a refused open is quicker than a write, so most rounds are refused ones.
	const minRounds, minWrites, limit = 5000, 2000, 3 * time.Second
	var rounds, writes, reads, refused, escapes int
	for ; rounds < minRounds || (writes < minWrites && time.Since(start) < limit); rounds++ {
		d, err := OpenDir(shots)
		if errors.Is(err, ErrSymlink) {
			refused++
			continue
		}
		if err != nil {
			t.Fatalf("OpenDir: %v", err)
		}
		if err := d.WriteFile("out.png", []byte("image"), 0o600); err != nil {
			t.Errorf("WriteFile: %v", err)
		} else {
			writes++
		}
		if f, err := d.Open("in"); err != nil {
			t.Errorf("Open: %v", err)
		} else {
			b, _ := io.ReadAll(f)
			f.Close()
			reads++
			if string(b) != "shots" {
				escapes++
			}
		}
		d.Close()
	}
	swaps := stop()
	t.Logf("%d swaps in %v; %d rounds: %d writes, %d reads, %d opens refused on the link, %d reads of the victim", swaps, time.Since(start).Round(time.Millisecond), rounds, writes, reads, refused, escapes)
	if got := names(t, victim); !slices.Equal(got, []string{"in"}) {
		t.Errorf("the victim directory holds %v, want only its own file", got)
	}
	if escapes > 0 {
		t.Errorf("%d reads returned the victim's file", escapes)
	}
	for _, dir := range []string{root, victim, shots, spare} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // the link's name when the directory is not behind it
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), tempPrefix) {
				t.Errorf("a temporary file was left in %s: %s", dir, e.Name())
			}
		}
	}
	if swaps < 1000 || writes == 0 || refused == 0 {
		t.Errorf("the race was not run: %d swaps, %d writes, %d refused", swaps, writes, refused)
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before, %d after", before, after)
	}
}
