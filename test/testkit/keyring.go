package testkit

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// KeyringPrograms are the programs StartKeyring needs.
var KeyringPrograms = []string{"dbus-daemon", "gnome-keyring-daemon", "secret-tool"}

// Keyring is a gnome-keyring-daemon serving the Secret Service (org.freedesktop.secrets)
// on a private session bus, with its home and data directories in a temporary directory:
// the person's own keyring is never touched.
type Keyring struct {
	// Addr is the private session bus's address.
	Addr string
	// env is the environment secret-tool runs with: the bus and the temporary home.
	env []string
}

// StartKeyring starts a private session bus and gnome-keyring-daemon on it, its login
// keyring created and unlocked with a password given on stdin; both stop at cleanup. It
// skips t (fails it when CI is set) when a program is missing.
func StartKeyring(t testing.TB) *Keyring {
	t.Helper()
	NeedPrograms(t, KeyringPrograms...)
	dir, err := os.MkdirTemp("", "keyring-") // short: socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	// Every process here, the bus and whatever it activates included, sees only the
	// temporary home.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "XDG_RUNTIME_DIR=" + run}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=3",
		"--address=unix:path="+filepath.Join(run, "bus"))
	bus.Env = env
	bus.ExtraFiles = []*os.File{w}
	bus.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := bus.Start(); err != nil {
		w.Close()
		t.Fatalf("start dbus-daemon: %v", err)
	}
	w.Close()
	t.Cleanup(func() { stopGroup(bus) })
	line, _ := bufio.NewReader(r).ReadString('\n')
	addr := strings.TrimSpace(line)
	if addr == "" {
		t.Fatal("dbus-daemon exited before it printed its address")
	}
	k := &Keyring{Addr: addr, env: append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)}

	gk := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	gk.Env = k.env
	gk.Stdin = strings.NewReader("keyring-test-password")
	gk.Stdout, gk.Stderr = Writer(t), Writer(t)
	gk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := gk.Start(); err != nil {
		t.Fatalf("start gnome-keyring-daemon: %v", err)
	}
	t.Cleanup(func() { stopGroup(gk) })
	conn := k.Conn(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var owned bool
		if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.secrets").Store(&owned); err != nil {
			t.Fatal(err)
		}
		if owned {
			return k
		}
		if time.Now().After(deadline) {
			t.Fatal("gnome-keyring-daemon did not take org.freedesktop.secrets within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Conn returns a connection to the keyring's bus, closed at cleanup.
func (k *Keyring) Conn(t testing.TB) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(k.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Store stores an item with secret-tool, which reads the secret on stdin: label, the
// secret's exact bytes and attributes given as name, value, name, value….
func (k *Keyring) Store(t testing.TB, label string, secret []byte, attrs ...string) {
	t.Helper()
	cmd := exec.Command("secret-tool", append([]string{"store", "--label=" + label}, attrs...)...)
	cmd.Env = k.env
	cmd.Stdin = strings.NewReader(string(secret))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("secret-tool store %q: %v\n%s", label, err, out)
	}
}

// Lock locks every collection of the keyring with the Service's Lock method, which
// gnome-keyring does without a prompt.
func (k *Keyring) Lock(t testing.TB) {
	t.Helper()
	conn := k.Conn(t)
	svc := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets")
	v, err := svc.GetProperty("org.freedesktop.Secret.Service.Collections")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := v.Value().([]dbus.ObjectPath)
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.CallWithContext(ctx, "org.freedesktop.Secret.Service.Lock", 0, cols).Store(&locked, &prompt); err != nil {
		t.Fatal(err)
	}
	if len(locked) != len(cols) || prompt != "/" {
		t.Fatalf("Lock(%v) = %v, prompt %s: want every collection locked without a prompt", cols, locked, prompt)
	}
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
}

// MonitorBus runs dbus-monitor --binary on the bus at addr, once it is monitoring, until
// stop is called (or cleanup), which returns every byte it captured: the messages as the
// bus carried them.
func MonitorBus(t testing.TB, addr string) (stop func() []byte) {
	t.Helper()
	NeedPrograms(t, "dbus-monitor")
	out := filepath.Join(t.TempDir(), "monitor.bin")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("dbus-monitor", "--address", addr, "--binary")
	cmd.Stdout = f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// dbus-monitor is monitoring once it wrote its first message: the bus's NameLost or
	// NameAcquired for its own connection.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, _ := os.Stat(out); st != nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("dbus-monitor captured nothing within 10 s")
		}
	}
	stopped := false
	stop = func() []byte {
		if !stopped {
			stopped = true
			time.Sleep(200 * time.Millisecond) // the last messages reach the monitor
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
		b, _ := os.ReadFile(out)
		return b
	}
	t.Cleanup(func() { stop() })
	return stop
}
