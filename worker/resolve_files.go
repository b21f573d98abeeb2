package worker

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/safefile"
	"github.com/cua-host/cua-host/worker/tool"
)

// withFiles adds to res the files the call names (fileArgs, what its tool declares in
// tool.Touches.Files: each is decided like the call's other resources, a grant in standard
// mode, the manifest's resources.files in bounded mode), each as a further resource
// (Target.Also), and writes each file's canonical path into args and into the call's
// decoded struct (c), so the policy decides on it and the handler opens exactly the file
// that was decided on. res.files records each
// file with the identity of the directory the decision saw (tool.Call.Files): the handler
// reads or writes the file only in that directory. A path that cannot be resolved leaves
// the call unresolved (invalid_arguments). res is returned unchanged when it is already
// refused.
func (r *resolver) withFiles(fileArgs []tool.FileArg, args map[string]any, c *callArgs, res resolution) resolution {
	if res.Unresolved != nil || res.SelfPID != 0 || res.ProtectedUIPID != 0 {
		return res
	}
	for _, fa := range fileArgs {
		v, ok := args[fa.Arg]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return unresolved(authz.CodeInvalidArguments, "%s must be a string (an absolute path)", fa.Arg)
		}
		path, dir, err := canonicalFile(s)
		if err != nil {
			code := authz.CodeInvalidArguments
			if errors.Is(err, safefile.ErrUnsupported) {
				code = authz.CodeUnsupported
			}
			return unresolved(code, "%s %q: %v", fa.Arg, s, err)
		}
		args[fa.Arg] = path
		if c.err == nil {
			tool.SetArgument(c.typed, fa.Arg, path)
		}
		res.Also = append(res.Also, authz.Resource{Kind: authz.ResourceFile, Op: fa.Op, Path: path})
		res.files = append(res.files, tool.File{Arg: fa.Arg, Path: path, Dir: dir})
	}
	return res
}

// errFileSymlink refuses a path whose last component is a symbolic link.
var errFileSymlink = errors.New("is a symbolic link; name the file it points to")

// canonicalFile resolves a path a call names to the one file it would read or write: the
// path must be absolute and may not contain "..", its directory must exist and is resolved
// through its symbolic links, and the file itself may not be a symbolic link (a link
// would send the write, or the read, somewhere the decision did not look) nor anything
// but a regular file when it exists. Repeated and trailing "/" and "." components are
// cleaned away.
//
// The resolved directory is then opened from "/" without following any link, and the file
// examined in it, so that what is decided on is the directory found at the canonical path
// (dir identifies it) and not whatever a link swapped in meanwhile leads to.
func canonicalFile(p string) (path string, dir safefile.ID, err error) {
	switch {
	case p == "":
		return "", dir, errors.New("is empty")
	case strings.ContainsAny(p, "\x00\n\r"):
		return "", dir, errors.New("contains control characters")
	case !filepath.IsAbs(p):
		return "", dir, errors.New("is not an absolute path")
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "", dir, errors.New(`contains ".."`)
	case strings.HasSuffix(p, "/"):
		return "", dir, errors.New("names a directory, not a file")
	}
	clean := filepath.Clean(p)
	parent, base := filepath.Split(clean)
	if base == "" {
		return "", dir, errors.New("names a directory, not a file")
	}
	realDir, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return "", dir, errors.New("its directory does not exist or cannot be resolved")
	}
	d, err := safefile.OpenDir(realDir)
	switch {
	case errors.Is(err, safefile.ErrUnsupported):
		return "", dir, err
	case errors.Is(err, safefile.ErrSymlink):
		return "", dir, errors.New("its directory changed while it was resolved (a symbolic link now stands in its path)")
	case errors.Is(err, syscall.ENOTDIR):
		return "", dir, errors.New("its directory is not a directory")
	case err != nil:
		return "", dir, errors.New("its directory does not exist or cannot be resolved")
	}
	defer d.Close()
	if dir, err = d.ID(); err != nil {
		return "", dir, err
	}
	path = filepath.Join(realDir, base)
	mode, err := d.Mode(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, dir, nil
	case err != nil:
		return "", dir, err
	case mode&fs.ModeSymlink != 0:
		return "", dir, errFileSymlink
	case !mode.IsRegular():
		return "", dir, errors.New("is not a regular file")
	}
	return path, dir, nil
}
