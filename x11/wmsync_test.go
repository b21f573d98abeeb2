package x11_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// windowManagerPID returns the pid of the harness display's window manager (openbox).
func windowManagerPID(t *testing.T) int {
	t.Helper()
	for _, pid := range harness.Display().PIDs() {
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == "openbox" {
			return pid
		}
	}
	t.Fatal("the harness display runs no openbox")
	return 0
}

// TestWindowManagerCaughtUp: the window manager answers the question in the order of its
// events. Running, openbox answers; stopped (SIGSTOP, the oracle: it cannot have
// answered), the question times out, and the answer comes once it runs again. After a
// keyboard mapping change (xmodmap), WindowManagerCaughtUpWithKeymap asks again, and
// waits while openbox is stopped; with no change since openbox answered, it does not ask.
func TestWindowManagerCaughtUp(t *testing.T) {
	b := open(t)
	wm := windowManagerPID(t)
	stopped := false
	stop := func() {
		if err := syscall.Kill(wm, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped = true
	}
	resume := func() {
		if stopped {
			_ = syscall.Kill(wm, syscall.SIGCONT)
			stopped = false
		}
	}
	t.Cleanup(resume)

	if err := b.WindowManagerCaughtUp(t.Context(), 5*time.Second); err != nil {
		t.Fatalf("openbox running: %v", err)
	}
	stop()
	if err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 300*time.Millisecond); err != nil {
		t.Errorf("no keymap change since openbox answered, yet WindowManagerCaughtUpWithKeymap = %v", err)
	}
	if err := b.WindowManagerCaughtUp(t.Context(), 300*time.Millisecond); !errors.Is(err, x11.ErrTimeout) {
		t.Errorf("openbox stopped: WindowManagerCaughtUp = %v, want ErrTimeout", err)
	}
	resume()
	if err := b.WindowManagerCaughtUp(t.Context(), 5*time.Second); err != nil {
		t.Fatalf("openbox running again: %v", err)
	}

	// A keyboard mapping change: an unused keycode gets a keysym, and back.
	kc := unusedKeycode(t)
	harness.Command(t, "xmodmap", "-e", "keycode "+strconv.Itoa(kc)+" = F33")
	t.Cleanup(func() { harness.Command(t, "xmodmap", "-e", "keycode "+strconv.Itoa(kc)+" =") })
	stop()
	// The MappingNotify reaches the backend's event loop asynchronously: until it has,
	// the call may still count the mapping as settled.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 200*time.Millisecond)
		if errors.Is(err, x11.ErrTimeout) {
			break
		}
		if err != nil {
			t.Fatalf("openbox stopped after a mapping change: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("openbox stopped after a mapping change, yet WindowManagerCaughtUpWithKeymap kept returning nil")
		}
		time.Sleep(20 * time.Millisecond)
	}
	resume()
	if err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 5*time.Second); err != nil {
		t.Errorf("openbox running again after the mapping change: %v", err)
	}
}

// unusedKeycode returns a keycode without keysyms, from xmodmap -pke.
func unusedKeycode(t *testing.T) int {
	t.Helper()
	for _, line := range strings.Split(harness.Command(t, "xmodmap", "-pke"), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "keycode" && f[2] == "=" {
			if n, err := strconv.Atoi(f[1]); err == nil && n >= 100 {
				return n
			}
		}
	}
	t.Fatal("no unused keycode")
	return 0
}
