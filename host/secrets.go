package host

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openSecretsDir opens the credentials directory at path for the worker: an O_PATH
// descriptor of the directory, reached from "/" without following any symbolic link
// (openat2 with RESOLVE_NO_SYMLINKS; a kernel without openat2 fails). The host reads
// nothing in it; the caller owns the file.
func openSecretsDir(path string) (*os.File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("secrets directory: %w", err)
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	for range 16 {
		if fd, err = unix.Openat2(unix.AT_FDCWD, abs, &how); err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
	if err != nil {
		if err == unix.ELOOP {
			err = fmt.Errorf("a symbolic link is in the path (%w)", err)
		}
		return nil, fmt.Errorf("secrets directory: %w", &fs.PathError{Op: "open", Path: abs, Err: err})
	}
	return os.NewFile(uintptr(fd), abs), nil
}
