// Package procfs reads the few facts cua-host needs about a process from Linux's /proc:
// its parent, state and start time (/proc/PID/stat), its executable (/proc/PID/exe) and
// its command name (/proc/PID/comm). It is not a general /proc library.
package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrMalformed is returned for a /proc/PID/stat line that does not parse.
var ErrMalformed = errors.New("procfs: malformed stat line")

// Stat is what /proc/PID/stat says about a process.
type Stat struct {
	PID int
	// State is the one-letter state: R, S, D, Z (zombie), X (dead), …
	State byte
	// PPID and PGID are the parent's pid and the process group.
	PPID, PGID int
	// StartTime is the start time in clock ticks after boot: with the pid, the process's
	// identity (a reused pid has another start time).
	StartTime uint64
}

// Alive reports whether the process runs: it is neither a zombie nor dead.
func (s Stat) Alive() bool { return s.State != 'Z' && s.State != 'X' }

// dir returns /proc/PID.
func dir(pid int) string { return "/proc/" + strconv.Itoa(pid) }

// ReadStat reads /proc/PID/stat. A pid that is not positive reads as not existing.
func ReadStat(pid int) (Stat, error) {
	if pid <= 0 {
		return Stat{}, os.ErrNotExist
	}
	// One read into a stack buffer, without os.File: the authorizer calls this per call.
	fd, err := syscall.Open(dir(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, &os.PathError{Op: "open", Path: dir(pid) + "/stat", Err: err}
	}
	var buf [1024]byte
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil {
		return Stat{}, &os.PathError{Op: "read", Path: dir(pid) + "/stat", Err: err}
	}
	if n <= 0 {
		return Stat{}, ErrMalformed
	}
	st, err := ParseStat(buf[:n])
	st.PID = pid
	return st, err
}

// OpenDir opens /proc/PID as a directory (close-on-exec) and returns the descriptor; the
// caller owns it. The descriptor names the process, not the number: once that process is
// reaped, everything read through it fails, even after the pid is reused. A pid that is
// not positive reads as not existing.
func OpenDir(pid int) (int, error) {
	if pid <= 0 {
		return -1, os.ErrNotExist
	}
	fd, err := unix.Open(dir(pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir(pid), Err: err}
	}
	return fd, nil
}

// ReadStatAt reads the stat file of the process whose /proc directory is dirfd (OpenDir).
func ReadStatAt(dirfd int) (Stat, error) {
	fd, err := unix.Openat(dirfd, "stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, &os.PathError{Op: "openat", Path: "stat", Err: err}
	}
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil {
		return Stat{}, &os.PathError{Op: "read", Path: "stat", Err: err}
	}
	if n <= 0 {
		return Stat{}, ErrMalformed
	}
	return ParseStat(buf[:n])
}

// ExeIDAt returns the device and inode of the file the process whose /proc directory is
// dirfd runs, with one statx. It fails when the process is gone or is a zombie (it has no
// memory map left), and for another user's process.
func ExeIDAt(dirfd int) (dev, ino uint64, err error) {
	var st unix.Statx_t
	_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(unsafe.StringData(exeName))),
		unix.AT_STATX_DONT_SYNC, unix.STATX_INO, uintptr(unsafe.Pointer(&st)), 0)
	if errno != 0 {
		return 0, 0, errno
	}
	return unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino, nil
}

// exeName is "exe" as the kernel reads a path, NUL-terminated: the authorizer reads it on
// every call that targets a window, and a constant needs no conversion (nor allocation).
const exeName = "exe\x00"

// ExeAt is Exe for the process whose /proc directory is dirfd.
func ExeAt(dirfd int) (string, error) {
	var buf [unix.PathMax]byte
	n, err := unix.Readlinkat(dirfd, "exe", buf[:])
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(buf[:n]), " (deleted)"), nil
}

// ParseStat parses a /proc/PID/stat line up to the start time (field 22).
func ParseStat(line []byte) (Stat, error) {
	var st Stat
	// The command name may contain spaces and parentheses: fields start after the last ')'.
	i := bytes.LastIndexByte(line, ')')
	if i < 0 || i+2 >= len(line) {
		return st, ErrMalformed
	}
	st.PID = atoi(bytes.TrimSpace(line[:bytes.IndexByte(line, '(')+1]))
	field := 3
	for rest := line[i+2:]; len(rest) > 0 && field <= 22; field++ {
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		f := rest[:j]
		switch field {
		case 3:
			if len(f) != 1 {
				return st, ErrMalformed
			}
			st.State = f[0]
		case 4:
			st.PPID = atoi(f)
		case 5:
			st.PGID = atoi(f)
		case 22:
			st.StartTime = uint64(atoi(f))
		}
		if j == len(rest) {
			rest = nil
		} else {
			rest = rest[j+1:]
		}
	}
	if field <= 22 {
		return st, ErrMalformed
	}
	return st, nil
}

// atoi parses the leading decimal digits of b.
func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return n
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Alive reports whether a process with pid exists and is neither a zombie nor dead.
func Alive(pid int) bool {
	st, err := ReadStat(pid)
	return err == nil && st.Alive()
}

// Exe returns /proc/PID/exe resolved, without the " (deleted)" the kernel appends when
// the file was removed. Another user's process gives a permission error.
func Exe(pid int) (string, error) {
	exe, err := os.Readlink(dir(pid) + "/exe")
	return strings.TrimSuffix(exe, " (deleted)"), err
}

// ExeID returns the device and inode of the file pid runs (0, 0 when unreadable): a
// process that called execve runs another file.
func ExeID(pid int) (dev, ino uint64) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir(pid)+"/exe", unix.AT_STATX_DONT_SYNC, unix.STATX_INO, &st); err != nil {
		return 0, 0
	}
	return unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino
}

// Comm returns /proc/PID/comm, the command name, or "" when unreadable.
func Comm(pid int) string {
	b, _ := os.ReadFile(dir(pid) + "/comm")
	return string(bytes.TrimSpace(b))
}

// Children lists the processes whose parent is ppid, zombies included.
func Children(ppid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadStat(pid); err == nil && st.PPID == ppid {
			out = append(out, pid)
		}
	}
	return out
}

// MapsLibrary reports whether process pid has a file mapped whose base name starts with
// prefix ("libQt5Gui.so"): a library it loaded. It is false when the maps cannot be read.
func MapsLibrary(pid int, prefix string) bool {
	f, err := os.Open(dir(pid) + "/maps")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		slash := bytes.LastIndexByte(line, '/')
		if slash >= 0 && bytes.HasPrefix(line[slash+1:], []byte(prefix)) {
			return true
		}
	}
	return false
}
