package worker

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cua-host/cua-host/authz"
)

// fileArg is one argument of a tool that names a file the call reads or writes.
type fileArg struct {
	name string
	op   authz.Operation
}

// fileArgs lists, per tool, every argument that is a path: each is resolved to a file
// resource and decided like the call's other resources (a grant in standard mode, the
// manifest's resources.files in bounded mode). A tool that gains a path argument must be
// listed here; TestEveryPathArgumentIsResolved checks the registered schemas.
var fileArgs = map[string][]fileArg{
	"get_window_state":  {{"screenshot_out_file", authz.OpWrite}},
	"get_desktop_state": {{"screenshot_out_file", authz.OpWrite}},
	"zoom":              {{"screenshot_out_file", authz.OpWrite}},
	"clipboard_write":   {{"image_path", authz.OpRead}, {"file_path", authz.OpRead}},
}

// withFiles adds to res the files the call names (fileArgs), each as a further resource
// (Target.Also), and writes each file's canonical path into args, so the policy decides
// on it and the handler opens exactly the file that was decided on. A path that cannot be
// resolved leaves the call unresolved (invalid_arguments). res is returned unchanged when
// it is already refused.
func (r *resolver) withFiles(tool string, args map[string]any, res resolution) resolution {
	if res.Unresolved != nil || res.SelfPID != 0 || res.ProtectedUIPID != 0 {
		return res
	}
	for _, fa := range fileArgs[tool] {
		v, ok := args[fa.name]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return unresolved(authz.CodeInvalidArguments, "%s must be a string (an absolute path)", fa.name)
		}
		path, err := canonicalFile(s)
		if err != nil {
			return unresolved(authz.CodeInvalidArguments, "%s %q: %v", fa.name, s, err)
		}
		args[fa.name] = path
		res.Also = append(res.Also, authz.Resource{Kind: authz.ResourceFile, Op: fa.op, Path: path})
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
func canonicalFile(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("is empty")
	case strings.ContainsAny(p, "\x00\n\r"):
		return "", errors.New("contains control characters")
	case !filepath.IsAbs(p):
		return "", errors.New("is not an absolute path")
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "", errors.New(`contains ".."`)
	case strings.HasSuffix(p, "/"):
		return "", errors.New("names a directory, not a file")
	}
	clean := filepath.Clean(p)
	dir, base := filepath.Split(clean)
	if base == "" {
		return "", errors.New("names a directory, not a file")
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", errors.New("its directory does not exist or cannot be resolved")
	}
	if fi, err := os.Stat(realDir); err != nil || !fi.IsDir() {
		return "", errors.New("its directory is not a directory")
	}
	path := filepath.Join(realDir, base)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", errFileSymlink
	case !fi.Mode().IsRegular():
		return "", errors.New("is not a regular file")
	}
	return path, nil
}
