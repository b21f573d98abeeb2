package desktop

import (
	"fmt"
	"os"
	"path/filepath"
)

// MaxOutFilePath bounds screenshot_out_file.
const MaxOutFilePath = 4096

// outFilePath checks a screenshot_out_file argument: an absolute, clean path whose parent
// directory exists. The authorizer decided on the same path (a file write); the handler
// only refuses what it cannot write.
func outFilePath(p *string) (string, error) {
	if p == nil {
		return "", nil
	}
	path := *p
	switch {
	case path == "":
		return "", invalid("screenshot_out_file is empty")
	case len(path) > MaxOutFilePath:
		return "", invalid("screenshot_out_file is %d bytes (at most %d)", len(path), MaxOutFilePath)
	case !filepath.IsAbs(path):
		return "", invalid("screenshot_out_file %q is not an absolute path", path)
	case filepath.Clean(path) != path:
		return "", invalid("screenshot_out_file %q is not clean (write it as %q)", path, filepath.Clean(path))
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return "", invalid("screenshot_out_file %q: its directory does not exist", path)
	}
	return path, nil
}

// writeOutFile writes data to path as a new file that replaces whatever was there: written
// to a temporary file in the same directory, then renamed over path, so a reader never
// sees half an image and a symbolic link at path is replaced, never followed.
func writeOutFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".cua-host-capture-*")
	if err != nil {
		return fmt.Errorf("screenshot_out_file: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("screenshot_out_file %s: %w", path, werr)
	}
	return nil
}
