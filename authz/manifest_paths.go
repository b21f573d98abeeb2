package authz

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// PathGrant is one resources.files.read or .write entry: one file, or the files of a
// directory (directly in it, or anywhere under it when Recursive).
type PathGrant struct {
	// Path is the path as the manifest writes it: absolute, clean, no "..", not "/".
	Path string `json:"path"`
	// Canonical is Path with the symbolic links of its existing part resolved when the
	// manifest was parsed; calls are matched against it.
	Canonical string `json:"canonical"`
	// Dir is true for a {dir, recursive} entry.
	Dir       bool `json:"dir,omitempty"`
	Recursive bool `json:"recursive,omitempty"`
}

// covers reports whether the grant covers the canonical path p.
func (g PathGrant) covers(p string) bool {
	switch {
	case p == g.Canonical:
		return true
	case !g.Dir:
		return false
	case g.Recursive:
		return strings.HasPrefix(p, g.Canonical+"/")
	}
	return filepath.Dir(p) == g.Canonical
}

// pathAllowed reports whether any grant covers the canonical path p.
func pathAllowed(p string, grants []PathGrant) bool {
	if checkAbsolute(p) != nil {
		return false
	}
	for _, g := range grants {
		if g.covers(p) {
			return true
		}
	}
	return false
}

// checkGrantPath requires an absolute, canonical path that is not a file system root.
func checkGrantPath(s string) error {
	if err := checkAbsolute(s); err != nil {
		return err
	}
	if s == "/" {
		return errors.New("a file system root may not be granted")
	}
	return nil
}

// canonicalGrantPath resolves the symbolic links of the longest existing prefix of the
// absolute clean path p and appends the rest as written, the way a later call's path is
// resolved: a grant of /data/out where /data links to /mnt/data covers /mnt/data/out/x. A
// broken symbolic link on the way, or an existing prefix that is not a directory, is an
// error. notDir reports whether p exists and is not a directory.
func canonicalGrantPath(p string) (canonical string, notDir bool, err error) {
	existing := p
	var rest []string
	for {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", false, err
		}
		rest = append(rest, filepath.Base(existing))
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", false, fmt.Errorf("cannot resolve %s (a broken symbolic link?): %w", existing, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", false, err
	}
	if len(rest) > 0 && !fi.IsDir() {
		return "", false, fmt.Errorf("%s is not a directory", existing)
	}
	for i := len(rest) - 1; i >= 0; i-- {
		real = filepath.Join(real, rest[i])
	}
	return real, len(rest) == 0 && !fi.IsDir(), nil
}
