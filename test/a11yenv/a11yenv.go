// Package a11yenv runs accessibility tests against real GTK applications: a private
// D-Bus session bus whose accessibility bus (at-spi-bus-launcher, registryd) is
// activated up front, and zenity dialogs started on it whose stdout the test reads.
//
// Main starts a whole private display (Xvfb, openbox, session bus) for a test binary;
// StartBus starts only a session bus, for binaries whose TestMain already provides the
// display (test/xevlog/harness). When a program is missing the tests skip with the
// reason, unless CI is set, in which case they fail.
package a11yenv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/test/testkit"
)

// Programs the accessibility tests need on PATH.
var Programs = []string{"Xvfb", "openbox", "dbus-daemon", "zenity", "xdotool", "xwininfo", "gdbus", "xterm"}

// Files the accessibility tests need.
var Files = []string{"/usr/libexec/at-spi-bus-launcher", "/usr/libexec/at-spi2-registryd"}

// Missing returns why the tests cannot run here, or "".
func Missing() string {
	var missing []string
	for _, p := range Programs {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	for _, f := range Files {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "missing " + strings.Join(missing, ", ") + " (run scripts/setup.sh)"
}

var (
	skipReason string
	shared     *Bus
)

// Require skips the test (fails it when CI is set) when the environment is incomplete.
func Require(t testing.TB) {
	t.Helper()
	why := skipReason
	if why == "" {
		why = Missing()
	}
	testkit.Require(t, why)
}

// Main starts a private display with a session bus, activates the accessibility bus,
// runs the tests, stops everything and checks for leaked goroutines. Use it as
// func TestMain(m *testing.M) { os.Exit(a11yenv.Main(m)) }.
func Main(m *testing.M) int { return testkit.CheckLeaks(run(m)) }

func run(m *testing.M) int {
	if skipReason = Missing(); skipReason != "" {
		return m.Run()
	}
	d, err := testkit.StartDisplay(display.Options{WindowManager: true, SessionBus: true, Width: 1280, Height: 800})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer d.Close()
	testkit.SetEnv(d)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := &Bus{Addr: os.Getenv("DBUS_SESSION_BUS_ADDRESS")}
	if b.A11yAddr, err = activate(ctx, b.Addr); err != nil {
		fmt.Fprintln(os.Stderr, "activate the accessibility bus:", err)
		return 1
	}
	shared = b
	return m.Run()
}

// Shared returns the bus Main started.
func Shared(t testing.TB) *Bus {
	t.Helper()
	Require(t)
	if shared == nil {
		t.Fatal("a11yenv.Shared needs a11yenv.Main as TestMain")
	}
	return shared
}

// Bus is a D-Bus session bus with its accessibility bus running.
type Bus struct {
	// Addr is the session bus address.
	Addr string
	// A11yAddr is the accessibility bus address org.a11y.Bus.GetAddress returned.
	A11yAddr string
}

// Env returns the environment for an accessible application on this bus.
func (b *Bus) Env() []string {
	env := make([]string, 0, len(os.Environ())+4)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "NO_AT_BRIDGE", "GTK_A11Y", "GTK_MODULES":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DBUS_SESSION_BUS_ADDRESS="+b.Addr, "AT_SPI_BUS_ADDRESS="+b.A11yAddr,
		"NO_AT_BRIDGE=0", "GTK_A11Y=atspi")
}

// StartBus starts a session bus for the display in $DISPLAY and activates its
// accessibility bus; both stop at cleanup.
func StartBus(t testing.TB) *Bus {
	t.Helper()
	Require(t)
	dir, err := os.MkdirTemp("", "a11ybus-") // short: socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=3",
		"--address=unix:path="+filepath.Join(dir, "bus"))
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the activated services join the group
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatalf("start dbus-daemon: %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		stopGroup(cmd)
		os.RemoveAll(dir)
	})
	addrCh := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		addrCh <- strings.TrimSpace(line)
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case <-time.After(20 * time.Second):
		r.Close()
		<-addrCh
		t.Fatal("dbus-daemon did not print its address")
	}
	if addr == "" {
		t.Fatal("dbus-daemon exited before it printed its address")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	a11y, err := activate(ctx, addr)
	if err != nil {
		t.Fatalf("activate the accessibility bus: %v", err)
	}
	return &Bus{Addr: addr, A11yAddr: a11y}
}

// stopGroup ends a process group: SIGTERM, then SIGKILL after a grace period; it reaps
// the leader.
func stopGroup(cmd *exec.Cmd) {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // services the bus activated
}

// activate asks the session bus for the accessibility bus, which starts the launcher.
func activate(ctx context.Context, addr string) (string, error) {
	out, err := exec.CommandContext(ctx, "gdbus", "call", "--address", addr, "--dest", "org.a11y.Bus",
		"--object-path", "/org/a11y/bus", "--method", "org.a11y.Bus.GetAddress").Output()
	if err != nil {
		return "", fmt.Errorf("gdbus GetAddress: %w", err)
	}
	s := strings.TrimSpace(string(out)) // ('unix:path=…',)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "('"), "',)")
	if !strings.HasPrefix(s, "unix:") {
		return "", fmt.Errorf("GetAddress returned %q", out)
	}
	return s, nil
}

// App is a running application.
type App struct {
	// PID is its process id.
	PID int
	// Window is its first visible top-level window.
	Window uint32

	cmd  *exec.Cmd
	done chan struct{}

	// mu guards out and errOut.
	mu     sync.Mutex
	out    bytes.Buffer
	errOut bytes.Buffer
}

// lockedWriter appends to one of the app's buffers.
type lockedWriter struct {
	a   *App
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.a.mu.Lock()
	defer w.a.mu.Unlock()
	return w.buf.Write(p)
}

// Start runs name with args on bus b (stdin from stdin when non-nil) and waits until it
// shows a window. It is killed at cleanup.
func Start(t testing.TB, b *Bus, stdin []byte, name string, args ...string) *App {
	t.Helper()
	Require(t)
	cmd := exec.Command(name, args...)
	cmd.Env = b.Env()
	a := &App{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout = lockedWriter{a, &a.out}
	cmd.Stderr = lockedWriter{a, &a.errOut}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	a.PID = cmd.Process.Pid
	go func() { _ = cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-a.PID, syscall.SIGCONT)
		_ = syscall.Kill(-a.PID, syscall.SIGKILL)
		<-a.done
	})
	a.Window = findWindow(t, a, name)
	return a
}

// findWindow polls xdotool until the application shows a window. (xdotool's own --sync
// fails when another client's window vanishes during the search.)
func findWindow(t testing.TB, a *App, name string) uint32 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := exec.Command("xdotool", "search", "--onlyvisible", "--pid", strconv.Itoa(a.PID)).Output()
		if f := strings.Fields(string(out)); err == nil && len(f) > 0 {
			id, err := strconv.ParseUint(f[0], 10, 32)
			if err != nil {
				t.Fatalf("xdotool search: %q: %v", out, err)
			}
			return uint32(id)
		}
		select {
		case <-a.done:
			t.Fatalf("%s exited before it showed a window", name)
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s showed no window within 20s", name)
		}
	}
}

// StartHeadless runs name with args on bus b and waits until it prints a line ready on
// stdout; for applications without a window (test/fakeatspi). It is killed at cleanup.
func StartHeadless(t testing.TB, b *Bus, ready, name string, args ...string) *App {
	t.Helper()
	Require(t)
	cmd := exec.Command(name, args...)
	cmd.Env = b.Env()
	a := &App{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout = lockedWriter{a, &a.out}
	cmd.Stderr = lockedWriter{a, &a.errOut}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	a.PID = cmd.Process.Pid
	go func() { _ = cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-a.PID, syscall.SIGCONT)
		_ = syscall.Kill(-a.PID, syscall.SIGKILL)
		<-a.done
	})
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(a.Stdout(), ready+"\n") {
		select {
		case <-a.done:
			t.Fatalf("%s exited before it was ready: %s", name, a.Stderr())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within 20s: %s", name, a.Stderr())
		}
	}
	return a
}

// Build compiles a main package of this module into dir and returns the binary's path.
func Build(t testing.TB, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Zenity starts zenity with args on bus b.
func Zenity(t testing.TB, b *Bus, args ...string) *App {
	t.Helper()
	return Start(t, b, nil, "zenity", args...)
}

// Stdout returns what the application printed so far.
func (a *App) Stdout() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.String()
}

// Stderr returns what the application wrote to its standard error so far.
func (a *App) Stderr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.errOut.String()
}

// WaitExit waits up to timeout for the application to exit and reports whether it did.
func (a *App) WaitExit(timeout time.Duration) bool {
	select {
	case <-a.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Stop sends SIGSTOP; Continue sends SIGCONT.
func (a *App) Stop() { _ = syscall.Kill(a.PID, syscall.SIGSTOP) }

// Continue resumes a stopped application.
func (a *App) Continue() { _ = syscall.Kill(a.PID, syscall.SIGCONT) }

// Geometry returns a window's client area in root coordinates, as xwininfo reports it.
func Geometry(t testing.TB, window uint32) (x, y, w, h int) {
	t.Helper()
	out, err := exec.Command("xwininfo", "-id", strconv.FormatUint(uint64(window), 10)).Output()
	if err != nil {
		t.Fatalf("xwininfo -id %d: %v", window, err)
	}
	vals := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			vals[k] = n
		}
	}
	return vals["Absolute upper-left X"], vals["Absolute upper-left Y"], vals["Width"], vals["Height"]
}

// Pointer returns the pointer position and the active window, as xdotool reports them.
func Pointer(t testing.TB) (x, y int, active string) {
	t.Helper()
	out, err := exec.Command("xdotool", "getmouselocation", "--shell").Output()
	if err != nil {
		t.Fatalf("xdotool getmouselocation: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		n, _ := strconv.Atoi(v)
		switch k {
		case "X":
			x = n
		case "Y":
			y = n
		}
	}
	act, err := exec.Command("xdotool", "getactivewindow").Output()
	if err != nil {
		return x, y, ""
	}
	return x, y, strings.TrimSpace(string(act))
}
