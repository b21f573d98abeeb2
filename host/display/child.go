package display

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// child is one process this display started.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once reaped
	// stderr keeps the tail of the child's stderr for error messages.
	stderr *tailBuffer
}

// spawn starts bin in its own process group with stdin from /dev/null, the given
// environment only, Pdeathsig SIGKILL and the extra files as fds 3, 4, …
func (d *Display) spawn(name, bin string, args, env []string, extra []*os.File) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = d.dir
	tb := &tailBuffer{max: 4096}
	cmd.Stdout = nil
	cmd.Stderr = tb
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("display: start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{}), stderr: tb}
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	d.mu.Lock()
	d.procs = append(d.procs, c)
	d.mu.Unlock()
	d.log.Debug("spawned", "name", name, "pid", cmd.Process.Pid, "path", bin, "args", args, "extra_fds", len(extra))
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) stderrTail() string {
	select {
	case <-c.done:
	case <-time.After(time.Second):
	}
	return c.stderr.String()
}

// stop signals the process group and reaps the child; safe to repeat.
func (c *child) stop(grace time.Duration) {
	pgid := -c.pid()
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-c.done
	}
	// Anything left in the group (e.g. a forked helper) goes too.
	_ = syscall.Kill(pgid, syscall.SIGKILL)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex // mu guards buf
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if t.buf.Len() > t.max {
		b := t.buf.Bytes()
		keep := append([]byte(nil), b[len(b)-t.max:]...)
		t.buf.Reset()
		t.buf.Write(keep)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
