package desktopentry

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Bounds on a directory scan.
const (
	// MaxScanFiles bounds the .desktop files read in one scan, over all directories.
	MaxScanFiles = 8192
	// MaxScanDepth bounds the subdirectory depth below an applications directory.
	MaxScanDepth = 8
)

// Dirs returns the applications directories in precedence order:
// $XDG_DATA_HOME/applications (default ~/.local/share), then each of $XDG_DATA_DIRS
// (default /usr/local/share:/usr/share) with /applications appended. Relative paths are
// ignored, as the specification requires. getenv is os.Getenv in production.
func Dirs(getenv func(string) string) []string {
	var out []string
	add := func(d string) {
		if filepath.IsAbs(d) {
			d = filepath.Join(filepath.Clean(d), "applications")
			for _, o := range out {
				if o == d {
					return
				}
			}
			out = append(out, d)
		}
	}
	home := getenv("XDG_DATA_HOME")
	if home == "" {
		if h := getenv("HOME"); h != "" {
			home = filepath.Join(h, ".local", "share")
		}
	}
	add(home)
	dirs := getenv("XDG_DATA_DIRS")
	if dirs == "" {
		dirs = "/usr/local/share:/usr/share"
	}
	for _, d := range strings.Split(dirs, ":") {
		add(d)
	}
	return out
}

// Catalog is the result of one scan: every desktop id found, resolved by precedence.
type Catalog struct {
	// byID holds the entry each id resolves to: the one in the earliest directory. An
	// entry that failed to parse is kept (as an error) so it still hides later ones.
	byID map[string]*Entry
	bad  map[string]error
	ids  []string
}

// Scan reads every *.desktop file under dirs (in precedence order, see Dirs). A desktop
// id is the file's path below its applications directory with "/" replaced by "-". The
// first directory that holds an id wins; a file that cannot be read or parsed still
// claims its id (and is reported by Lookup), so a broken override never silently falls
// through to another entry. Missing directories are skipped; symbolic links to
// directories are not followed.
func Scan(dirs []string) *Catalog {
	c := &Catalog{byID: map[string]*Entry{}, bad: map[string]error{}}
	files := 0
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == dir {
					return fs.SkipDir
				}
				return nil
			}
			rel, rerr := filepath.Rel(dir, path)
			if rerr != nil {
				return nil
			}
			if d.IsDir() {
				if rel != "." && strings.Count(rel, string(filepath.Separator)) >= MaxScanDepth {
					return fs.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(d.Name(), ".desktop") {
				return nil
			}
			if files >= MaxScanFiles {
				return fs.SkipAll
			}
			files++
			id := strings.ReplaceAll(rel, string(filepath.Separator), "-")
			if _, taken := c.byID[id]; taken {
				return nil
			}
			if _, taken := c.bad[id]; taken {
				return nil
			}
			e, err := readFile(path)
			if err != nil {
				c.bad[id] = err
				c.ids = append(c.ids, id)
				return nil
			}
			e.ID, e.File = id, path
			c.byID[id] = e
			c.ids = append(c.ids, id)
			return nil
		})
	}
	sort.Strings(c.ids)
	return c
}

func readFile(path string) (*Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	e, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// ErrNoEntry reports that no usable entry has the desktop id.
var ErrNoEntry = errors.New("no such desktop entry")

// Lookup returns the usable application entry with desktop id id ("foo.desktop"). It is
// an error when the id resolves to a file that does not parse, to a Hidden entry, to an
// entry whose Type is not Application or which has no Exec, or to one whose TryExec
// program is not installed.
func (c *Catalog) Lookup(id string) (*Entry, error) {
	if err, ok := c.bad[id]; ok {
		return nil, fmt.Errorf("desktop entry %s: %w", id, err)
	}
	e, ok := c.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoEntry, id)
	}
	if err := e.Usable(); err != nil {
		return nil, err
	}
	return e, nil
}

// Usable reports why the entry cannot be launched, or nil.
func (e *Entry) Usable() error {
	switch {
	case e.Hidden:
		return fmt.Errorf("desktop entry %s is Hidden (deleted)", e.ID)
	case e.Type != "Application":
		return fmt.Errorf("desktop entry %s is of Type %s, not Application", e.ID, e.Type)
	case len(e.args) == 0:
		return fmt.Errorf("desktop entry %s has no Exec line", e.ID)
	}
	if e.TryExec != "" && !installed(e.TryExec) {
		return fmt.Errorf("desktop entry %s: TryExec %s is not installed", e.ID, e.TryExec)
	}
	return nil
}

func installed(prog string) bool {
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
		return false
	}
	_, err := exec.LookPath(prog)
	return err == nil
}

// Entries returns the usable application entries that menus show (not NoDisplay), in id
// order.
func (c *Catalog) Entries() []*Entry {
	var out []*Entry
	for _, id := range c.ids {
		e, ok := c.byID[id]
		if ok && !e.NoDisplay && e.Usable() == nil {
			out = append(out, e)
		}
	}
	return out
}
