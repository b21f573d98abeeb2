package display

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func requirePrograms(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set and %s is missing (run scripts/setup.sh)", n)
			}
			t.Skipf("%s not installed (run scripts/setup.sh)", n)
		}
	}
}

func TestStartCloseLeavesNothing(t *testing.T) {
	requirePrograms(t, "Xvfb", "openbox", "dbus-daemon", "touch")
	d, err := Start(t.Context(), Options{WindowManager: true, SessionBus: true, Width: 800, Height: 600})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pids := d.PIDs()
	if len(pids) != 3 || d.ServerPID() != pids[0] {
		t.Errorf("PIDs() = %v, ServerPID() = %d", pids, d.ServerPID())
	}
	env := strings.Join(d.Env(), "\n")
	for _, k := range []string{"DISPLAY=:", "XAUTHORITY=", "DBUS_SESSION_BUS_ADDRESS=unix:path="} {
		if !strings.Contains(env, k) {
			t.Errorf("Env() = %q, missing %s", env, k)
		}
	}
	st, err := os.Stat(d.dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("private dir %s: %v %v, want mode 0700", d.dir, st.Mode(), err)
	}
	if st, err := os.Stat(d.XAuthority()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("Xauthority: %v %v, want mode 0600", st.Mode(), err)
	}
	// xdpyinfo with our env sees the screen; the cookie is required.
	if _, err := exec.LookPath("xdpyinfo"); err == nil {
		cmd := exec.Command("xdpyinfo")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, d.Env()...)
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "800x600 pixels") {
			t.Errorf("xdpyinfo with the cookie: %v: %s", err, out)
		}
	}
	if _, err := dialX(t.Context(), d.Number(), nil); !errors.Is(err, ErrAuthRefused) {
		t.Errorf("connection without a cookie: %v, want ErrAuthRefused", err)
	}
	wrong := make([]byte, 16)
	if _, err := dialX(t.Context(), d.Number(), wrong); !errors.Is(err, ErrAuthRefused) {
		t.Errorf("connection with a wrong cookie: %v, want ErrAuthRefused", err)
	}
	dir := d.dir
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists after Close (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("private dir %s still exists: %v", dir, err)
	}
	checkSocketGone(t, d.Number(), pids[0])
}

// checkSocketGone fails unless the X socket of display num is gone — or belongs to another
// server now: tests of other packages, run at the same time, start displays too, and may
// take the number as soon as it is free (the lock file names the server that holds it).
func checkSocketGone(t *testing.T, num, serverPID int) {
	t.Helper()
	sock := "/tmp/.X11-unix/X" + strconv.Itoa(num)
	var lock []byte
	// Another test's server may be starting or stopping on the freed number (its socket
	// and lock file come and go one after the other): give it a moment to settle.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); os.IsNotExist(err) {
			return
		}
		var err error
		lock, err = os.ReadFile("/tmp/.X" + strconv.Itoa(num) + "-lock")
		if holder, _ := strconv.Atoi(strings.TrimSpace(string(lock))); err == nil && holder != 0 && holder != serverPID {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	// No lock file and nobody listening: a socket some other server left when it died
	// (the lock, written first, names whoever holds the number; the closed server's pid
	// would be in it). The closed server's own process is checked gone by the caller.
	if len(lock) == 0 {
		if c, err := net.Dial("unix", sock); err != nil && errors.Is(err, syscall.ECONNREFUSED) {
			t.Logf("X socket %s is left without a lock file or a listener: another server's, left when it died", sock)
			return
		} else if err == nil {
			c.Close()
		}
	}
	t.Errorf("X socket %s still exists, held by pid %q (the closed server was %d)", sock, strings.TrimSpace(string(lock)), serverPID)
}

func TestStartMissingProgram(t *testing.T) {
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "cua-display-*"))
	_, err := Start(t.Context(), Options{Path: t.TempDir()})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Start with an empty PATH: %v, want ErrNotFound", err)
	}
	if after, _ := filepath.Glob(filepath.Join(os.TempDir(), "cua-display-*")); len(after) > len(before) {
		t.Errorf("failed Start left %v behind", after)
	}
}

func TestXauthorityFormat(t *testing.T) {
	path := t.TempDir() + "/xa"
	cookie := []byte("0123456789abcdef")
	if err := writeXauthority(path, cookie, 42); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("xauth"); err != nil {
		t.Skip("xauth not installed")
	}
	out, err := exec.Command("xauth", "-f", path, "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), ":42  MIT-MAGIC-COOKIE-1  30313233343536373839616263646566") {
		t.Errorf("xauth list = %q", out)
	}
}
