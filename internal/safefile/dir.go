package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

var (
	// ErrSymlink is returned when a component of a directory's path, or the file named in
	// it, is a symbolic link (or became one while it was opened).
	ErrSymlink = errors.New("a symbolic link is in the path")
	// ErrUnsupported is returned when the kernel has no openat2 (Linux before 5.6, or a
	// seccomp filter that answers ENOSYS): a directory cannot be opened without following
	// links there, and nothing is opened instead.
	ErrUnsupported = errors.New("opening a directory without following symbolic links needs openat2 (Linux 5.6 or later), which this kernel does not provide")
	// ErrNotRegular is returned by Open for a file that is not a regular file.
	ErrNotRegular = errors.New("not a regular file")
)

// ID identifies a directory: its device and inode numbers, and its birth time where the
// filesystem records one (an inode number freed by a removal may be given to the next
// directory made). Two IDs are equal when they name the same directory, whatever path led
// to it; a directory removed and made again within the filesystem's timestamp granularity
// (a few milliseconds) on the same inode number may have the same ID.
type ID struct {
	Dev, Ino uint64
	// Birth is the birth time in nanoseconds since the epoch, 0 where the filesystem
	// does not record it.
	Birth int64
}

// Dir is a directory opened by OpenDir: an O_PATH descriptor that every operation uses
// as its starting point. It owns the descriptor until Close.
type Dir struct {
	f    *os.File
	path string
}

// openat2 is the system call; tests replace it to play a kernel without it.
var openat2 = unix.Openat2

// maxRetries bounds the retries of a system call interrupted (EINTR) or raced by a
// concurrent rename (EAGAIN).
const maxRetries = 16

// OpenDir opens the directory at path, an absolute path, walking it from "/" without
// following any symbolic link (RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS). A component
// that is a symbolic link, or is swapped for one while the walk runs, fails with
// ErrSymlink; a kernel without openat2 fails with ErrUnsupported. The descriptor is
// close-on-exec; the caller owns the Dir and closes it.
func OpenDir(path string) (*Dir, error) {
	if !filepath.IsAbs(path) {
		return nil, &fs.PathError{Op: "open directory", Path: path, Err: errors.New("not an absolute path")}
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	err := retry(func() (err error) {
		fd, err = openat2(unix.AT_FDCWD, path, &how)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open directory", Path: path, Err: mapErr(err)}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

// FromFile makes a Dir of f, a descriptor of a directory that was opened elsewhere (a
// host opened it with OpenDir and a child inherited it), with path naming it in errors.
// It marks the descriptor close-on-exec and takes ownership of f, closing it on error.
func FromFile(f *os.File, path string) (*Dir, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		f.Close()
		return nil, &fs.PathError{Op: "open directory", Path: path, Err: errors.New("not a directory")}
	}
	unix.CloseOnExec(int(f.Fd()))
	return &Dir{f: f, path: path}, nil
}

// Names returns the names of the directory's entries, unsorted, without "." and "..".
func (d *Dir) Names() ([]string, error) {
	var fd int
	err := d.control(func(dfd int) error {
		return retry(func() (err error) {
			fd, err = unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			return err
		})
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: mapErr(err)}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// Path returns the path the directory was opened at. It names where the directory was
// then; the Dir keeps acting on the same directory wherever it moves.
func (d *Dir) Path() string { return d.path }

// Close releases the descriptor. It may be called more than once, and from any goroutine;
// later operations fail.
func (d *Dir) Close() error {
	if err := d.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

// ID returns the open directory's identity.
func (d *Dir) ID() (ID, error) {
	var st unix.Statx_t
	err := d.control(func(fd int) error {
		return retry(func() error {
			return unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, unix.STATX_INO|unix.STATX_BTIME, &st)
		})
	})
	if err != nil {
		return ID{}, &fs.PathError{Op: "statx", Path: d.path, Err: err}
	}
	id := ID{Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.Birth = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	return id, nil
}

// Mode returns the type bits (fs.ModeType) of the entry name in the directory without
// following it when it is a symbolic link: fs.ModeSymlink for a link, 0 for a regular
// file. A missing entry is an error that matches fs.ErrNotExist.
func (d *Dir) Mode(name string) (fs.FileMode, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	var st unix.Stat_t
	err := d.control(func(fd int) error {
		return retry(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	})
	if err != nil {
		return 0, &fs.PathError{Op: "stat", Path: d.join(name), Err: err}
	}
	return fileMode(st.Mode), nil
}

// Open opens the regular file name in the directory for reading. It does not follow a
// symbolic link at name (ErrSymlink), does not block on a FIFO, and refuses anything but
// a regular file (ErrNotRegular). The caller owns the returned file.
func (d *Dir) Open(name string) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var fd int
	err := d.control(func(dfd int) error {
		return retry(func() (err error) {
			fd, err = unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			return err
		})
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: mapErr(err)}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		if err == nil {
			err = ErrNotRegular
		}
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

// tempPrefix starts the name of the temporary file WriteFile writes before it renames it.
const tempPrefix = ".cua-host-tmp-"

// WriteFile writes data to name in the directory as a new file that replaces whatever
// entry was there: the data goes to a temporary file created in the directory (O_EXCL,
// O_NOFOLLOW, mode perm), which is then renamed over name. A reader never sees half the
// data, and a symbolic link at name is replaced, never followed. On any error the
// temporary file is removed and name is left as it was.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := checkName(name); err != nil {
		return err
	}
	return d.control(func(dfd int) error {
		tmp, f, err := createTemp(dfd, perm)
		if err != nil {
			return &fs.PathError{Op: "create", Path: d.join(tempPrefix + "*"), Err: mapErr(err)}
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = retry(func() error { return unix.Renameat(dfd, tmp, dfd, name) })
			if werr != nil {
				werr = &fs.PathError{Op: "rename", Path: d.join(name), Err: werr}
			}
		}
		if werr != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return werr
		}
		return nil
	})
}

// createTemp creates a new file with a random name in the directory dfd.
func createTemp(dfd int, perm fs.FileMode) (string, *os.File, error) {
	for range 100 {
		name := tempPrefix + strconv.FormatUint(rand.Uint64(), 36)
		var fd int
		err := retry(func() (err error) {
			fd, err = unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, uint32(perm.Perm()))
			return err
		})
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return name, os.NewFile(uintptr(fd), name), nil
	}
	return "", nil, unix.EEXIST
}

// control runs f with the directory's descriptor, which stays open (a concurrent Close
// waits) until f returns.
func (d *Dir) control(f func(fd int) error) error {
	rc, err := d.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// checkName refuses a name that is not one entry of the directory.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return &fs.PathError{Op: "open", Path: name, Err: errors.New("not a file name in the directory")}
	}
	return nil
}

// retry runs a system call again while it is interrupted (EINTR) or raced by a rename
// during the walk (EAGAIN), a bounded number of times.
func retry(call func() error) error {
	var err error
	for range maxRetries {
		if err = call(); !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			return err
		}
	}
	return err
}

// mapErr names the errors of an open that callers act on.
func mapErr(err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%w (%w)", ErrSymlink, err)
	case errors.Is(err, unix.ENOSYS):
		return ErrUnsupported
	}
	return err
}

// fileMode converts a stat mode's type bits.
func fileMode(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
