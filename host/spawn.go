package host

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/proto/contract"
)

// spawnFDFloor is the lowest descriptor number a pinned worker binary is duplicated to. It
// must stay above every contract descriptor number: os/exec places ExtraFiles at 3, 4, …
// in the child before exec resolves /proc/self/fd/N.
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

// stream is one of a child's standard streams: a descriptor the caller keeps (nil means
// /dev/null) and its name in the spawn log.
type stream struct {
	name string
	f    *os.File
}

// inherited is a descriptor handed to a child through ExtraFiles at the number the
// contract gives it (at.FD), named in the spawn log by at.Name.
type inherited struct {
	at contract.Descriptor
	f  *os.File
}

// placeDescriptors lays files out as exec.Cmd.ExtraFiles, which gives entry i descriptor
// 3+i in the child: each file at its own number, a number nobody takes closed in the
// child. It refuses numbers below 3 and a number taken twice. The log names each
// "N=name".
func placeDescriptors(files []inherited) (extra []*os.File, log []string, err error) {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b inherited) int { return a.at.FD - b.at.FD })
	for i, in := range sorted {
		switch {
		case in.at.FD < 3:
			return nil, nil, fmt.Errorf("descriptor %s at %d: below 3, the standard streams' numbers", in.at.Name, in.at.FD)
		case i > 0 && sorted[i-1].at.FD == in.at.FD:
			return nil, nil, fmt.Errorf("descriptors %s and %s both at %d", sorted[i-1].at.Name, in.at.Name, in.at.FD)
		}
		for len(extra) < in.at.FD-3 {
			extra = append(extra, nil) // closed in the child
		}
		extra = append(extra, in.f)
		log = append(log, fmt.Sprintf("%d=%s", in.at.FD, in.at.Name))
	}
	return extra, log, nil
}

// child describes one of the host's children (a worker, a raw worker, an MCP proxy) for
// spawn.
type child struct {
	// role names the child in the spawn log ("worker", "raw worker", "MCP proxy").
	role string
	// path and args are what to execute; args[0] is the child's name.
	path string
	args []string
	// pinned, when not nil, is the verified binary (openPinned), executed through
	// /proc/self/fd/N instead of path. spawn closes it.
	pinned *os.File
	// envOverrides are added to the allowlisted part of this process's environment
	// (childEnv); each must be allowlisted itself.
	envOverrides []string
	// noDesktop drops the variables that lead to the desktop (DISPLAY, XAUTHORITY, the
	// session bus, XDG_RUNTIME_DIR) from the child's environment.
	noDesktop bool
	// files are inherited each at its contract descriptor number. spawn takes ownership:
	// the host's copies are closed before spawn returns, whatever happens.
	files []inherited
	// stdin, stdout and stderr are inherited as they are; the caller keeps ownership.
	stdin, stdout, stderr stream
	// captureStderr makes spawn connect the child's stderr to a pipe whose read end it
	// returns (stderr is then ignored).
	captureStderr bool
}

// spawn is the one way the host starts a child. It seals this process's descriptors
// (SealInheritedFDs), builds the cleared environment, starts the child in its own process
// group with Pdeathsig SIGKILL from a thread held for the child's life (startProcess) with
// stdin from /dev/null unless given and descriptors only through ExtraFiles, closes the
// host's copies of the inherited descriptors right after the start, and logs the child
// and what it inherited at debug level. When c.captureStderr is set it returns the read
// end of the child's stderr, which the caller then owns. On error nothing is running and
// every descriptor spawn took over is closed.
func spawn(log *slog.Logger, c child) (proc *process, stderr *os.File, err error) {
	defer func() {
		for _, in := range c.files {
			in.f.Close() // the child holds its own copy once started (or never will)
		}
		if c.pinned != nil {
			c.pinned.Close()
		}
	}()
	if err := SealInheritedFDs(); err != nil {
		return nil, nil, err
	}
	env, err := childEnv(os.Environ(), c.envOverrides)
	if err != nil {
		return nil, nil, err
	}
	if c.noDesktop {
		env = withoutDesktop(env)
	}
	sp := spec{path: c.path, args: c.args, env: env, pinnedFD: c.pinned}
	fds := make([]string, 0, 3+len(c.files))
	for i, s := range []stream{c.stdin, c.stdout, c.stderr} {
		if s.f == nil || (i == 2 && c.captureStderr) {
			continue // nil streams stay nil: os/exec connects them to /dev/null
		}
		switch i {
		case 0:
			sp.stdin = s.f
		case 1:
			sp.stdout = s.f
		case 2:
			sp.stderr = s.f
		}
		fds = append(fds, fmt.Sprintf("%d=%s", i, s.name))
	}
	extra, placed, err := placeDescriptors(c.files)
	if err != nil {
		return nil, nil, fmt.Errorf("spawn %s: %w", c.role, err)
	}
	sp.extraFiles = extra
	fds = append(fds, placed...)
	var stderrW *os.File
	if c.captureStderr {
		if stderr, stderrW, err = os.Pipe(); err != nil {
			return nil, nil, fmt.Errorf("stderr pipe: %w", err)
		}
		sp.stderr = stderrW
		fds = append(fds, "2=logs")
	}
	proc, err = startProcess(sp)
	if stderrW != nil {
		stderrW.Close() // the child has its own copy, or there is no child
	}
	if err != nil {
		if stderr != nil {
			stderr.Close()
		}
		return nil, nil, err
	}
	log.Debug("spawned "+c.role, "pid", proc.pid, "path", c.path, "args", c.args,
		"inherited_fds", strings.Join(fds, " "), "env", envNames(env))
	return proc, stderr, nil
}

// withoutDesktop drops from env what leads to the desktop: a child that never touches it
// (the MCP proxy) does not get it.
func withoutDesktop(env []string) []string {
	out := env[:0]
	for _, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR":
			continue
		}
		out = append(out, kv)
	}
	return out
}
