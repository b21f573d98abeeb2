package host

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// spawnFDFloor is the lowest descriptor number a pinned worker binary is duplicated to. It
// must stay above 2 + len(ExtraFiles): os/exec places ExtraFiles at 3, 4, … in the child
// before exec resolves /proc/self/fd/N.
const spawnFDFloor = 64

// process is a started child and its reaper.
type process struct {
	pid    int
	pgid   int
	exited chan struct{} // closed once the child has been reaped
	state  *os.ProcessState
	err    error // Wait's error, valid after exited is closed
}

// spec describes a child to start.
type spec struct {
	path       string
	args       []string
	env        []string
	extraFiles []*os.File
	stdin      io.Reader
	stdout     io.Writer
	stderr     io.Writer
	// pinnedFD, when not nil, is the verified binary to execute via /proc/self/fd/N.
	pinnedFD *os.File
}

// startProcess starts the child from a goroutine that holds its OS thread for the child's
// whole life: Pdeathsig fires when the forking thread exits, so that thread must not exit
// before the child does. The same goroutine reaps the child.
func startProcess(sp spec) (*process, error) {
	type started struct {
		p   *process
		err error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cmd := &exec.Cmd{
			Path:       sp.path,
			Args:       sp.args,
			Env:        sp.env,
			ExtraFiles: sp.extraFiles,
			Stdin:      sp.stdin,
			Stdout:     sp.stdout,
			Stderr:     sp.stderr,
			SysProcAttr: &syscall.SysProcAttr{
				Setpgid:   true,
				Pdeathsig: syscall.SIGKILL,
			},
		}
		if sp.pinnedFD != nil {
			cmd.Path = fmt.Sprintf("/proc/self/fd/%d", sp.pinnedFD.Fd())
		}
		if err := cmd.Start(); err != nil {
			ch <- started{err: err}
			return
		}
		p := &process{pid: cmd.Process.Pid, pgid: cmd.Process.Pid, exited: make(chan struct{})}
		ch <- started{p: p}
		p.err = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	s := <-ch
	return s.p, s.err
}

// killGroup sends SIGKILL to the child's whole process group. Safe to repeat.
func (p *process) killGroup() {
	if p == nil || p.pgid <= 0 {
		return
	}
	_ = unix.Kill(-p.pgid, unix.SIGKILL)
}

// openPinned opens path, hashes the open descriptor and, when the digest matches want,
// returns the descriptor duplicated to a number ≥ spawnFDFloor (close-on-exec). The caller
// executes /proc/self/fd/N of that descriptor, so the bytes that were hashed are the bytes
// that run.
func openPinned(path, want string) (*os.File, error) {
	wantBytes, err := hex.DecodeString(strings.TrimSpace(want))
	if err != nil || len(wantBytes) != sha256.Size {
		return nil, fmt.Errorf("worker SHA-256 pin %q is not 64 hex digits", want)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open worker binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("hash worker binary %s: %w", path, err)
	}
	if got := h.Sum(nil); subtle.ConstantTimeCompare(got, wantBytes) != 1 {
		return nil, fmt.Errorf("worker binary %s has SHA-256 %x, pinned %x", path, got, wantBytes)
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, spawnFDFloor)
	if err != nil {
		return nil, fmt.Errorf("duplicate worker binary descriptor: %w", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
