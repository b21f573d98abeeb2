package x11

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/internal/procfs"
)

// procTable tracks the processes this backend launched, each reaped by its own goroutine.
type procTable struct {
	// mu guards m.
	mu sync.Mutex
	m  map[int]*proc
	wg sync.WaitGroup
}

type proc struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when reaped
	started time.Time
	// settled is set once input was first sent to one of its windows (settleFocusLocked);
	// guarded by procTable.mu.
	settled bool
}

func (t *procTable) init() { t.m = map[int]*proc{} }

func (t *procTable) get(pid int) *proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[pid]
}

// stopAll terminates every launched process group still running and waits for the reapers.
func (t *procTable) stopAll(log *slog.Logger) {
	t.mu.Lock()
	ps := make([]*proc, 0, len(t.m))
	for _, p := range t.m {
		ps = append(ps, p)
	}
	t.mu.Unlock()
	for _, p := range ps {
		_, _ = terminate(context.Background(), p.cmd.Process.Pid, p, 500*time.Millisecond)
		log.Debug("x11 stopped launched process", "pid", p.cmd.Process.Pid)
	}
	t.wg.Wait()
}

// LaunchOptions describe an application to start.
type LaunchOptions struct {
	// Name is a program on PATH or an absolute path.
	Name string
	// Args are its arguments.
	Args []string
	// Env is added to the backend's environment (DISPLAY is always set to this display).
	Env []string
	// WindowTimeout bounds the wait for its first window (default 10 s; negative: no wait).
	WindowTimeout time.Duration
}

// Launched is a started application.
type Launched struct {
	PID        int      `json:"pid"`
	Executable string   `json:"executable"`
	Windows    []Window `json:"windows"`
	// WindowTimedOut is true when no window appeared within WindowTimeout.
	WindowTimedOut bool `json:"window_timed_out"`
	// Exited is true when the process ended before it showed a window.
	Exited bool `json:"exited"`
	// ExitCode is its exit status when Exited (-1: killed by a signal).
	ExitCode *int `json:"exit_code,omitempty"`
	// Untrusted is true when it was given an untrusted X authorization (see
	// Options.UntrustedLaunches).
	Untrusted bool `json:"untrusted"`
	// Sandboxed is true when it runs inside the backend's launch wrapper (a sandbox):
	// PID is then the program's process inside it (0 when it ended before it could be
	// seen), SandboxPID the sandbox's outermost process, the backend's child, and the
	// windows are those of the sandbox's descendants.
	Sandboxed  bool `json:"sandboxed"`
	SandboxPID int  `json:"sandbox_pid,omitempty"`
}

// ResolveExecutable finds name on PATH (or checks an absolute path); ErrNotFound if absent.
func ResolveExecutable(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%w: empty name", ErrNotFound)
	}
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		return "", fmt.Errorf("%w: %q is neither a name on PATH nor an absolute path", ErrNotFound, name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return p, nil
}

// Launch starts an application in its own process group on this display, with stdin from
// /dev/null, SIGKILL as its parent-death signal and, when the backend was opened with
// UntrustedLaunches, an untrusted X authorization of its own (XAUTHORITY) and the X
// resources that keep xterm alive as an untrusted client (XENVIRONMENT,
// untrustedXtResources), and waits
// until it maps its first top-level window (matched by pid) or WindowTimeout passes. The process is reaped when it exits; Close stops it if it still runs.
func (b *Backend) Launch(ctx context.Context, opts LaunchOptions) (*Launched, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	path, err := ResolveExecutable(opts.Name)
	if err != nil {
		return nil, err
	}
	env := slices.DeleteFunc(os.Environ(), func(s string) bool {
		return strings.HasPrefix(s, "DISPLAY=") ||
			b.untrustedLaunch && (strings.HasPrefix(s, "XAUTHORITY=") || strings.HasPrefix(s, "XENVIRONMENT="))
	})
	env = append(env, opts.Env...)
	env = append(env, "DISPLAY="+b.display)
	if b.untrustedLaunch {
		if b.untrusted == nil {
			return nil, fmt.Errorf("%w: launched programs cannot be made untrusted X clients: %v", ErrUnsupported, b.untrustedErr)
		}
		xauth, err := b.untrusted.issue()
		if err != nil {
			return nil, fmt.Errorf("x11: untrusted authorization: %w", err)
		}
		env = append(env, "XAUTHORITY="+xauth, "XENVIRONMENT="+b.untrusted.xtResources)
	}
	argv := append([]string{path}, opts.Args...)
	if b.wrap != nil {
		if argv, err = b.wrap(argv, env); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	// Its own process group (Kill and Close stop the whole group), and SIGKILL when the
	// thread that forked it ends: the reaper below holds that thread for the child's whole
	// life, so the signal comes when this process dies (pitfalls.md, "Pdeathsig belongs to
	// a thread").
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &proc{cmd: cmd, done: make(chan struct{}), started: time.Now()}
	started := make(chan error, 1)
	b.procs.wg.Add(1)
	go func() {
		defer b.procs.wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.procs.mu.Lock()
		err := cmd.Start()
		if err == nil {
			b.procs.m[cmd.Process.Pid] = p
		}
		b.procs.mu.Unlock()
		started <- err
		if err != nil {
			return
		}
		_ = cmd.Wait()
		b.procs.mu.Lock()
		delete(b.procs.m, cmd.Process.Pid)
		b.procs.mu.Unlock()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("x11: launch %s: %w", path, err)
	}
	pid := cmd.Process.Pid
	b.log.Debug("x11 launched", "pid", pid, "path", path, "args", opts.Args, "untrusted", b.untrustedLaunch, "sandboxed", b.wrap != nil)

	out := &Launched{PID: pid, Executable: path, Untrusted: b.untrustedLaunch}
	if b.wrap != nil {
		out.Sandboxed, out.SandboxPID = true, pid
		if out.PID = sandboxedProgram(pid, p.done); out.PID == 0 {
			out.PID = pid
		}
	}
	exited := func() {
		out.Exited = true
		if st := cmd.ProcessState; st != nil {
			code := st.ExitCode()
			out.ExitCode = &code
		}
	}
	timeout := opts.WindowTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if timeout < 0 {
		return out, nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		changed := b.notify.wait()
		wins, err := b.Windows(wctx)
		if err == nil {
			for _, w := range wins {
				if w.Mapped && (w.PID == pid || DescendantOf(w.PID, pid)) {
					out.Windows = append(out.Windows, w)
				}
			}
			if len(out.Windows) > 0 {
				return out, nil
			}
		}
		select {
		case <-p.done:
			exited()
			return out, nil
		case <-wctx.Done():
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			out.WindowTimedOut = true
			return out, nil
		case <-changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Launched reports whether pid is a running process this backend started.
func (b *Backend) Launched(pid int) bool { return b.procs.get(pid) != nil }

// sandboxedProgram returns the pid of the program a sandbox started by this backend runs:
// the child of the sandbox's init, itself the only child of the sandbox's outermost
// process (outer). It waits for it up to a second, and returns 0 when the sandbox ended
// (done) or the program did not appear.
func sandboxedProgram(outer int, done <-chan struct{}) int {
	deadline := time.Now().Add(time.Second)
	for {
		if inits := procfs.Children(outer); len(inits) == 1 {
			if progs := procfs.Children(inits[0]); len(progs) > 0 {
				return progs[0]
			}
		}
		if time.Now().After(deadline) {
			return 0
		}
		select {
		case <-done:
			return 0
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// sandboxOf returns the running sandbox this backend launched that process pid runs in,
// or 0.
func (b *Backend) sandboxOf(pid int) int {
	b.procs.mu.Lock()
	roots := make([]int, 0, len(b.procs.m))
	for root := range b.procs.m {
		roots = append(roots, root)
	}
	b.procs.mu.Unlock()
	for _, root := range roots {
		if DescendantOf(pid, root) {
			return root
		}
	}
	return 0
}

// maxLaunchDepth bounds how many parents DescendantOf follows: a sandbox puts two processes
// between its launcher and the program, and apps add a few more (a launcher script, a
// browser's helpers).
const maxLaunchDepth = 16

// DescendantOf reports whether process pid descends from process root: root is one of
// its ancestors, each of which started no later than its child (so a reused pid on the
// way breaks the chain rather than joining another).
func DescendantOf(pid, root int) bool {
	if pid <= 1 || root <= 1 || pid == root {
		return false
	}
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return false
	}
	for range maxLaunchDepth {
		if st.PPID == root {
			return true
		}
		if st.PPID <= 1 {
			return false
		}
		parent, err := procfs.ReadStat(st.PPID)
		if err != nil || parent.StartTime > st.StartTime {
			return false
		}
		st = parent
	}
	return false
}

// Kill stops process pid: SIGTERM (to its process group when this backend launched it),
// then SIGKILL after grace, and reaps it when it is our child. It returns ErrNoProcess when
// no such process exists. forced reports whether SIGKILL was needed.
func (b *Backend) Kill(ctx context.Context, pid int, grace time.Duration) (forced bool, err error) {
	if pid <= 1 || !ProcessAlive(pid) {
		return false, fmt.Errorf("%w: pid %d", ErrNoProcess, pid)
	}
	if grace <= 0 {
		grace = 2 * time.Second
	}
	p := b.procs.get(pid)
	if p == nil && b.wrap != nil {
		// A program inside a sandbox this backend launched: the sandbox's way below.
		if root := b.sandboxOf(pid); root != 0 {
			pid, p = root, b.procs.get(root)
		}
	}
	if p != nil && b.wrap != nil {
		// A sandbox: SIGTERM goes to the program's process group inside it (the sandbox's
		// own init ignores it), so the program ends as it would outside; the sandbox
		// follows when it does. SIGKILL, if it comes to that, takes the sandbox's group,
		// and its end takes everything inside.
		if inner := procfs.Children(pid); len(inner) == 1 {
			return terminateVia(ctx, pid, -inner[0], p, grace)
		}
	}
	return terminate(ctx, pid, p, grace)
}

// terminate sends SIGTERM, waits up to grace, then SIGKILL, and waits for the end.
func terminate(ctx context.Context, pid int, p *proc, grace time.Duration) (forced bool, err error) {
	target := pid
	if p != nil {
		target = -pid // the whole process group we created
	}
	return terminateVia(ctx, pid, target, p, grace)
}

// terminateVia is terminate with SIGTERM sent to termTarget (a pid, or a process group as
// a negative number); SIGKILL goes to pid's group when this backend launched it.
func terminateVia(ctx context.Context, pid, termTarget int, p *proc, grace time.Duration) (forced bool, err error) {
	target := pid
	if p != nil {
		target = -pid
	}
	gone := func() <-chan struct{} {
		if p != nil {
			return p.done
		}
		ch := make(chan struct{})
		go func() {
			defer close(ch)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			deadline := time.After(grace + 2*time.Second)
			for ProcessAlive(pid) {
				select {
				case <-t.C:
				case <-deadline:
					return
				}
			}
		}()
		return ch
	}
	if err := syscall.Kill(termTarget, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("x11: kill %d: %w", pid, err)
	}
	done := gone()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return false, nil
	case <-t.C:
	case <-ctx.Done():
	}
	_ = syscall.Kill(target, syscall.SIGKILL)
	if p != nil {
		<-p.done
		return true, nil
	}
	<-done
	if ProcessAlive(pid) {
		return true, fmt.Errorf("x11: pid %d survived SIGKILL", pid)
	}
	return true, nil
}

// LaunchesUntrusted reports whether Launch starts programs as untrusted X clients
// (Options.UntrustedLaunches).
func (b *Backend) LaunchesUntrusted() bool { return b.untrustedLaunch }
