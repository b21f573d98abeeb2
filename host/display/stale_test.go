package display

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cua-host/cua-host/internal/procfs"
)

// TestRemoveAbandoned: a display directory whose owner exited, or whose owner's pid now
// names a process started at another time, is removed; one whose owner runs, one without
// an owner yet, and a link that looks like one are kept.
func TestRemoveAbandoned(t *testing.T) {
	tmp := t.TempDir()
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	self, err := procfs.ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		dir := filepath.Join(tmp, dirPrefix+name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "Xauthority"), []byte("cookie"), 0o600); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	gone := mk("gone", fmt.Sprintf("%d 12345\n", exited.Process.Pid))
	reused := mk("reused", fmt.Sprintf("%d %d\n", os.Getpid(), self.StartTime+1))
	live := mk("live", fmt.Sprintf("%d %d\n", os.Getpid(), self.StartTime))
	unowned := mk("unowned", "")
	garbled := mk("garbled", "not a pid\n")
	// A link named like a display directory, to a directory whose owner is gone.
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, ownerFile), []byte(fmt.Sprintf("%d 1\n", exited.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, dirPrefix+"link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	removed := removeAbandoned(tmp)
	slices.Sort(removed)
	if want := []string{gone, reused}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, dir := range []string{gone, reused} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", dir, err)
		}
	}
	for _, dir := range []string{live, unowned, garbled, link, target} {
		if _, err := os.Lstat(dir); err != nil {
			t.Errorf("%s was removed: %v", dir, err)
		}
	}
}
