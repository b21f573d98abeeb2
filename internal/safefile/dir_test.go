package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tree is a temporary directory (symbolic links resolved) with a directory "dir" holding
// a file "f", a directory "victim" holding "secret", and links to both directories.
type tree struct {
	root, dir, victim string
}

func newTree(t *testing.T) tree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := tree{root: root, dir: filepath.Join(root, "dir"), victim: filepath.Join(root, "victim")}
	for _, d := range []string{tr.dir, tr.victim} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(tr.dir, "f"), "dir's file")
	write(t, filepath.Join(tr.victim, "secret"), "victim's file")
	if err := os.Symlink(tr.victim, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dir", filepath.Join(root, "rel")); err != nil {
		t.Fatal(err)
	}
	return tr
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// names lists a directory's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestOpenDir(t *testing.T) {
	tr := newTree(t)
	tests := []struct {
		name string
		path string
		want error // nil: opens
	}{
		{name: "a directory", path: tr.dir},
		{name: "the root", path: "/"},
		{name: "a link as the last component", path: filepath.Join(tr.root, "link"), want: ErrSymlink},
		{name: "a relative link as the last component", path: filepath.Join(tr.root, "rel"), want: ErrSymlink},
		{name: "a link in the middle", path: filepath.Join(tr.root, "link", "."), want: ErrSymlink},
		{name: "a magic link", path: "/proc/self/root" + tr.dir, want: ErrSymlink},
		{name: "missing", path: filepath.Join(tr.root, "nope"), want: fs.ErrNotExist},
		{name: "a file", path: filepath.Join(tr.dir, "f"), want: syscall.ENOTDIR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := OpenDir(tt.path)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("OpenDir(%s) = %v, want it open", tt.path, err)
				}
				if d.Path() != tt.path {
					t.Errorf("Path() = %s, want %s", d.Path(), tt.path)
				}
				d.Close()
				return
			}
			if !errors.Is(err, tt.want) {
				d.Close()
				t.Fatalf("OpenDir(%s) = %v, want %v", tt.path, err, tt.want)
			}
		})
	}
	if _, err := OpenDir("dir"); err == nil {
		t.Error("OpenDir of a relative path succeeded")
	}
}

// TestOpenDirWithoutOpenat2: a kernel without openat2 fails closed, naming why.
func TestOpenDirWithoutOpenat2(t *testing.T) {
	tr := newTree(t)
	orig := openat2
	openat2 = func(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }
	t.Cleanup(func() { openat2 = orig })
	d, err := OpenDir(tr.dir)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "openat2 (Linux 5.6 or later)") {
		d.Close()
		t.Fatalf("OpenDir without openat2 = %v, want ErrUnsupported", err)
	}
}

func TestIDAndMode(t *testing.T) {
	tr := newTree(t)
	d, err := OpenDir(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id, err := d.ID()
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(tr.dir, &st); err != nil {
		t.Fatal(err)
	}
	if id.Dev != st.Dev || id.Ino != st.Ino {
		t.Errorf("ID() = %+v, want device %d and inode %d", id, st.Dev, st.Ino)
	}
	// A directory made where another was removed is another directory, even when it
	// gets the same inode number: its birth time differs once the filesystem's clock
	// (coarse: a few milliseconds on ext4) has moved on.
	again := func() ID {
		time.Sleep(25 * time.Millisecond)
		if err := os.Remove(tr.victim + "/secret"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err := os.Remove(tr.victim); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(tr.victim, 0o700); err != nil {
			t.Fatal(err)
		}
		d, err := OpenDir(tr.victim)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		id, err := d.ID()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if first, second := again(), again(); first.Birth != 0 && first == second {
		t.Errorf("a directory made again has the identity of the one removed: %+v", first)
	}
	if err := os.Symlink(tr.victim, filepath.Join(tr.dir, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tr.dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"f": 0, "l": fs.ModeSymlink, "sub": fs.ModeDir} {
		if got, err := d.Mode(name); err != nil || got != want {
			t.Errorf("Mode(%s) = %v, %v, want %v", name, got, err, want)
		}
	}
	if _, err := d.Mode("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Mode(nope) = %v, want not exist", err)
	}
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := d.Mode(bad); err == nil {
			t.Errorf("Mode(%q) succeeded", bad)
		}
	}
}

func TestWriteFile(t *testing.T) {
	tr := newTree(t)
	d, err := OpenDir(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Symlink(filepath.Join(tr.victim, "secret"), filepath.Join(tr.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tr.dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		file  string
		fails bool
	}{
		{name: "a new file", file: "new"},
		{name: "over a file", file: "f"},
		{name: "over a link, which is replaced", file: "link"},
		{name: "over a directory", file: "sub", fails: true},
		{name: "a path", file: "sub/x", fails: true},
		{name: "dot-dot", file: "..", fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.WriteFile(tt.file, []byte("written"), 0o600)
			if tt.fails {
				if err == nil {
					t.Fatalf("WriteFile(%s) succeeded", tt.file)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteFile(%s) = %v", tt.file, err)
			}
			fi, err := os.Lstat(filepath.Join(tr.dir, tt.file))
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Fatalf("after WriteFile(%s): %v %v, want a regular file of mode 0600", tt.file, fi, err)
			}
			if b, _ := os.ReadFile(filepath.Join(tr.dir, tt.file)); string(b) != "written" {
				t.Errorf("%s holds %q", tt.file, b)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(tr.victim, "secret")); string(b) != "victim's file" {
		t.Errorf("the link's target was written: %q", b)
	}
	for _, n := range names(t, tr.dir) {
		if strings.HasPrefix(n, tempPrefix) {
			t.Errorf("a temporary file was left behind: %s", n)
		}
	}
}

func TestOpen(t *testing.T) {
	tr := newTree(t)
	d, err := OpenDir(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Symlink(filepath.Join(tr.victim, "secret"), filepath.Join(tr.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(tr.dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tr.dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := d.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "dir's file" {
		t.Errorf("Open(f) read %q, %v", b, err)
	}
	for name, want := range map[string]error{"link": ErrSymlink, "fifo": ErrNotRegular, "sub": ErrNotRegular, "nope": fs.ErrNotExist} {
		if f, err := d.Open(name); !errors.Is(err, want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%s) = %v, want %v", name, err, want)
		}
	}
}

// TestDirIsTheDirectoryNotThePath: once open, a Dir acts on the directory it opened, even
// after it moved and a link to another directory took its place.
func TestDirIsTheDirectoryNotThePath(t *testing.T) {
	tr := newTree(t)
	d, err := OpenDir(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	moved := filepath.Join(tr.root, "moved")
	if err := os.Rename(tr.dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tr.victim, tr.dir); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("out", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(moved, "out")); err != nil {
		t.Errorf("the file is not in the directory that was opened: %v", err)
	}
	if got := names(t, tr.victim); len(got) != 1 {
		t.Errorf("victim holds %v, want only its secret", got)
	}
	if _, err := OpenDir(tr.dir); !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenDir through the link = %v, want ErrSymlink", err)
	}
}

// TestNoDescriptorLeak: every operation, failed ones included, releases what it opened;
// Close may be repeated.
func TestNoDescriptorLeak(t *testing.T) {
	tr := newTree(t)
	if err := os.Mkdir(filepath.Join(tr.dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	for range 200 {
		if d, err := OpenDir(filepath.Join(tr.root, "link")); err == nil {
			d.Close()
			t.Fatal("OpenDir through a link succeeded")
		}
		d, err := OpenDir(tr.dir)
		if err != nil {
			t.Fatal(err)
		}
		d.ID()
		d.Mode("f")
		d.WriteFile("w", []byte("x"), 0o600)
		d.WriteFile("sub", []byte("x"), 0o600) // fails: a directory
		if f, err := d.Open("f"); err == nil {
			f.Close()
		}
		d.Open("sub") // fails: not a regular file
		d.Close()
		d.Close()
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before, %d after", before, after)
	}
}

func ExampleDir_WriteFile() {
	root, _ := os.MkdirTemp("", "safefile-example-")
	defer os.RemoveAll(root)
	root, _ = filepath.EvalSymlinks(root)
	d, err := OpenDir(root)
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if err := d.WriteFile("shot.png", []byte("image"), 0o600); err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "shot.png"))
	fmt.Println(string(b))
	// Output: image
}
