package harness

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// StopWindowManager stops the private display's window manager (openbox) with SIGSTOP,
// so that it handles nothing until the returned function (also run at cleanup) resumes it.
func StopWindowManager(t testing.TB) (resume func()) {
	t.Helper()
	Require(t)
	wm := 0
	for _, pid := range disp.PIDs() {
		if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil && strings.TrimSpace(string(comm)) == "openbox" {
			wm = pid
		}
	}
	if wm == 0 {
		t.Fatal("the private display runs no openbox")
	}
	if err := syscall.Kill(wm, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	resume = func() {
		if stopped {
			_ = syscall.Kill(wm, syscall.SIGCONT)
			stopped = false
		}
	}
	t.Cleanup(resume)
	return resume
}

// ChangeKeymap gives an unused keycode (100 or above, without keysyms in xmodmap -pke) a
// keysym: a keyboard mapping change the server announces to every client with
// MappingNotify. The keycode is emptied again at cleanup.
func ChangeKeymap(t testing.TB) {
	t.Helper()
	for _, line := range strings.Split(Command(t, "xmodmap", "-pke"), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "keycode" && f[2] == "=" {
			if n, err := strconv.Atoi(f[1]); err == nil && n >= 100 {
				Command(t, "xmodmap", "-e", "keycode "+f[1]+" = F33")
				t.Cleanup(func() { Command(t, "xmodmap", "-e", "keycode "+f[1]+" =") })
				return
			}
		}
	}
	t.Fatal("no unused keycode")
}
