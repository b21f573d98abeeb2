package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/proto/contract"
	"golang.org/x/sys/unix"
)

// dirPrefix starts the name of every endpoint directory.
const dirPrefix = "cua-host-serve-"

// minLabelRoom is how long a label the endpoint directory must leave room for in a
// socket path (108 bytes at most); longer labels are refused when their path does not fit.
const minLabelRoom = 16

// PIDFile is the file in the endpoint directory holding the serve process's pid.
const PIDFile = "serve.pid"

// endpointDir is the 0700 directory, owned by the host's user, that holds the sessions'
// unix sockets. A janitor process, when started, removes it after the host is gone.
type endpointDir struct {
	path string
	log  *slog.Logger
	// janitor is the write end of the janitor's pipe; closing it lets the janitor clean up
	// and exit. Nil without a janitor.
	janitor     *os.File
	janitorDone chan struct{}
	closeOnce   sync.Once
}

// newEndpointDir creates the directory under parent ("" → $XDG_RUNTIME_DIR or the
// temporary directory) and, with janitorArgs, starts the janitor.
func newEndpointDir(parent string, janitorArgs []string, log *slog.Logger) (_ *endpointDir, err error) {
	if parent == "" {
		parent = os.Getenv("XDG_RUNTIME_DIR")
		if st, err := os.Stat(parent); parent == "" || err != nil || !st.IsDir() {
			parent = os.TempDir()
		}
	}
	path, err := os.MkdirTemp(parent, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("endpoint directory: %w", err)
	}
	d := &endpointDir{path: path, log: log}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if err := os.Chmod(path, 0o700); err != nil { // MkdirTemp uses 0700; say it anyway
		return nil, fmt.Errorf("endpoint directory: %w", err)
	}
	if len(d.socketPath(strings.Repeat("x", minLabelRoom))) >= len(unix.RawSockaddrUnix{}.Path) {
		return nil, fmt.Errorf("endpoint directory %s: too long for a unix socket path; set the runtime directory to a shorter one", path)
	}
	if err := os.WriteFile(filepath.Join(path, PIDFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("endpoint directory: %w", err)
	}
	if janitorArgs != nil {
		if err := d.startJanitor(janitorArgs); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// socketPath is the endpoint of the session labelled label.
func (d *endpointDir) socketPath(label string) string {
	return filepath.Join(d.path, label+".sock")
}

// listen creates the endpoint socket of label (mode 0600 inside the 0700 directory) and
// returns its listening descriptor, which the caller owns. The socket file stays until
// remove.
func (d *endpointDir) listen(label string) (*os.File, string, error) {
	path := d.socketPath(label)
	if len(path) >= len(unix.RawSockaddrUnix{}.Path) {
		return nil, "", errorf(CodeInvalidParams, "invalid params: \"label\" %q makes the endpoint path %d bytes; a unix socket path has at most %d", label, len(path), len(unix.RawSockaddrUnix{}.Path)-1)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, "", fmt.Errorf("endpoint: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	defer ln.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		os.Remove(path)
		return nil, "", fmt.Errorf("endpoint: %w", err)
	}
	f, err := ln.File() // a close-on-exec duplicate
	if err != nil {
		os.Remove(path)
		return nil, "", fmt.Errorf("endpoint: %w", err)
	}
	return f, path, nil
}

// listenHTTP creates a loopback TCP listener on a free port and a bearer token for it.
func listenHTTP() (*os.File, string, string, error) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, "", "", fmt.Errorf("HTTP endpoint: %w", err)
	}
	defer ln.Close()
	f, err := ln.File()
	if err != nil {
		return nil, "", "", fmt.Errorf("HTTP endpoint: %w", err)
	}
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		f.Close()
		return nil, "", "", fmt.Errorf("HTTP endpoint token: %w", err)
	}
	return f, "http://" + ln.Addr().String() + "/mcp", hex.EncodeToString(tok), nil
}

// startJanitor starts this program again with args and the read end of a pipe at
// contract.JanitorPipeFD,
// in a session of its own and without a parent-death signal, so that it outlives the host
// whatever ends it; it removes the directory when the pipe reaches end-of-file.
func (d *endpointDir) startJanitor(args []string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("janitor: %w", err)
	}
	defer r.Close()
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        append(append([]string{"cua-host-janitor"}, args...), "--dir", d.path),
		Env:         []string{"PATH=/usr/bin:/bin"},
		ExtraFiles:  []*os.File{r}, // at 3: contract.JanitorPipeFD
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("janitor: %w", err)
	}
	d.log.Debug("started the endpoint janitor", "pid", cmd.Process.Pid, "dir", d.path, "fds", fmt.Sprintf("%d=%s", contract.JanitorPipe.FD, contract.JanitorPipe.Name))
	d.janitor = w
	d.janitorDone = make(chan struct{})
	go func() {
		defer close(d.janitorDone)
		_ = cmd.Wait()
	}()
	return nil
}

// remove removes one endpoint socket.
func (d *endpointDir) remove(path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.log.Warn("remove endpoint", "path", path, "err", err)
	}
}

// Close removes the directory and releases the janitor. It is idempotent.
func (d *endpointDir) Close() error {
	d.closeOnce.Do(func() {
		if err := os.RemoveAll(d.path); err != nil {
			d.log.Warn("remove endpoint directory", "dir", d.path, "err", err)
		}
		if d.janitor != nil {
			d.janitor.Close()
			select {
			case <-d.janitorDone:
			case <-time.After(time.Second):
				d.log.Warn("the endpoint janitor did not exit")
			}
		}
	})
	return nil
}

// RunJanitor is the janitor's entry point (`cua-host __serve-janitor --dir DIR`): it waits
// for end-of-file on contract.JanitorPipeFD (the host closed it, or is gone), then removes DIR — only when
// DIR is an endpoint directory: a real directory (not a link) named cua-host-serve-…,
// owned by this user, mode 0700. It returns the exit code.
func RunJanitor(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(contract.JanitorSubcommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the endpoint directory to remove")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := checkEndpointDir(*dir); err != nil {
		fmt.Fprintln(stderr, "cua-host janitor:", err)
		return 2
	}
	if err := contract.JanitorPipe.Check(); err != nil {
		fmt.Fprintln(stderr, "cua-host janitor:", err)
		return 2
	}
	pipe := os.NewFile(uintptr(contract.JanitorPipe.FD), contract.JanitorPipe.Name)
	_, _ = io.Copy(io.Discard, pipe)
	if err := checkEndpointDir(*dir); err != nil {
		return 0 // removed already (or replaced: leave it alone)
	}
	if err := os.RemoveAll(*dir); err != nil {
		fmt.Fprintln(stderr, "cua-host janitor:", err)
		return 1
	}
	return 0
}

// checkEndpointDir reports whether dir is an endpoint directory this user owns.
func checkEndpointDir(dir string) error {
	if !filepath.IsAbs(dir) || !strings.HasPrefix(filepath.Base(dir), dirPrefix) {
		return fmt.Errorf("%q is not an endpoint directory", dir)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o777 != 0o700 || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%q is not a 0700 directory of this user", dir)
	}
	return nil
}
