package desktop

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/safefile"
	"github.com/cua-host/cua-host/worker/tool"
)

// MaxOutFilePath bounds screenshot_out_file.
const MaxOutFilePath = 4096

// outFile is a screenshot_out_file a handler writes. Its directory is held open from the
// start of the call, and the image is created and renamed into place relative to it: it
// lands in the directory the authorizer decided on, whatever that directory's path leads
// to meanwhile.
type outFile struct {
	path string
	dir  *safefile.Dir
}

// openOutFile checks a screenshot_out_file argument, an absolute, clean path whose parent
// directory exists, and opens that directory (openFileDir). It returns nil when the
// argument is absent. The caller closes the result.
func openOutFile(call *tool.Call, p *string) (*outFile, error) {
	if p == nil {
		return nil, nil
	}
	path := *p
	switch {
	case path == "":
		return nil, invalid("screenshot_out_file is empty")
	case len(path) > MaxOutFilePath:
		return nil, invalid("screenshot_out_file is %d bytes (at most %d)", len(path), MaxOutFilePath)
	case !filepath.IsAbs(path):
		return nil, invalid("screenshot_out_file %q is not an absolute path", path)
	case filepath.Clean(path) != path:
		return nil, invalid("screenshot_out_file %q is not clean (write it as %q)", path, filepath.Clean(path))
	}
	dir, err := openFileDir(call, "screenshot_out_file", path, "written")
	if err != nil {
		return nil, err
	}
	return &outFile{path: path, dir: dir}, nil
}

// write writes data as the file, a new file that replaces whatever was there: written to a
// temporary file in the held directory, then renamed over the name, so a reader never
// sees half an image and a symbolic link at the name is replaced, never followed. A
// failed write leaves nothing behind.
func (o *outFile) write(data []byte) error {
	if err := o.dir.WriteFile(filepath.Base(o.path), data, 0o600); err != nil {
		return fmt.Errorf("screenshot_out_file %s: %w", o.path, err)
	}
	return nil
}

// Close releases the held directory. A nil outFile (no argument) holds nothing.
func (o *outFile) Close() {
	if o != nil {
		o.dir.Close()
	}
}

// openFileDir opens the directory of path, the file that argument arg names, from "/"
// without following any symbolic link, and checks that it is the directory the
// authorizer decided on (tool.Call.File): the handler then creates, replaces or reads the
// file relative to the open directory, never through its path again. effect says what
// the call does to the file ("written", "read") for the messages.
//
// A directory swapped for a symbolic link or for another directory since the decision is
// refused with invalid_arguments (the directory changed while the call ran), a kernel
// without openat2 with unsupported; neither reads nor writes anything. A call that went
// through the worker's authorizer (Arguments set) must carry the decision; a handler
// called directly (tests) has none, and the directory is only opened without links.
// The caller closes the directory.
func openFileDir(call *tool.Call, arg, path, effect string) (*safefile.Dir, error) {
	decided := call.File(arg)
	if call.Arguments != nil && (decided == nil || decided.Path != path) {
		return nil, invalid("%s %s is not the file the call was authorized for; nothing was %s", arg, path, effect)
	}
	dir, err := safefile.OpenDir(filepath.Dir(path))
	switch {
	case errors.Is(err, safefile.ErrSymlink):
		return nil, dirChanged(arg, path, effect)
	case errors.Is(err, safefile.ErrUnsupported):
		return nil, authz.Refuse(authz.CodeUnsupported, "%s %s: %v; nothing was %s", arg, path, err, effect)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil, invalid("%s %q: its directory does not exist", arg, path)
	case err != nil:
		return nil, invalid("%s %s: %v", arg, path, err)
	}
	if decided != nil {
		if id, err := dir.ID(); err != nil || id != decided.Dir {
			dir.Close()
			return nil, dirChanged(arg, path, effect)
		}
	}
	return dir, nil
}

// dirChanged is the refusal of a file whose directory is no longer the one decided on.
func dirChanged(arg, path, effect string) error {
	return invalid("%s %s: its directory changed while the call ran (%s is now a symbolic link or another directory than the one authorized); nothing was %s", arg, path, filepath.Dir(path), effect)
}
