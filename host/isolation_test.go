package host

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fdTargets maps each open descriptor of pid to what it points at.
func fdTargets(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	out := map[int]string{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		out[n] = target
	}
	return out
}

// TestWorkerInheritsOnlyItsChannel: the worker's descriptors are 0, 1, 2 and the inherited
// control channel (plus files the Go runtime opens itself), and its environment holds only
// allowlisted variables — while the host has extra descriptors open (one of them not
// close-on-exec, as if inherited) and extra variables set.
func TestWorkerInheritsOnlyItsChannel(t *testing.T) {
	// A descriptor without O_CLOEXEC, as a parent shell would leave us.
	leakFD, err := syscall.Open("/etc/hostname", syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer syscall.Close(leakFD)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	t.Setenv("CUA_TEST_SECRET", "do-not-leak")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "do-not-leak")
	t.Setenv("LC_TIME", "C")

	h := startHost(t, Options{})
	hostFDs := fdTargets(t, os.Getpid())
	if len(hostFDs) <= 4 {
		t.Fatalf("host has only %d descriptors; the test needs extra ones open", len(hostFDs))
	}

	workerFDs := fdTargets(t, h.PID())
	if got := workerFDs[0]; got != "/dev/null" {
		t.Errorf("worker fd 0 = %q, want /dev/null", got)
	}
	if got := workerFDs[3]; !strings.HasPrefix(got, "socket:[") {
		t.Errorf("worker fd 3 = %q, want the control socket", got)
	}
	for fd, target := range workerFDs {
		// kcmp tells whether two descriptors share one open file description: the only
		// sure test that the worker holds nothing of the host's.
		for hfd := range hostFDs {
			if same, err := sameFile(os.Getpid(), hfd, h.PID(), fd); err != nil {
				t.Fatalf("kcmp: %v", err)
			} else if same {
				t.Errorf("worker fd %d (%s) is the host's fd %d", fd, target, hfd)
			}
		}
		if fd <= 3 {
			continue
		}
		if strings.HasPrefix(target, "socket:") || strings.HasPrefix(target, "pipe:") || target == "/etc/hostname" {
			t.Errorf("worker fd %d points at %s; only the runtime's own files may appear beyond fd 3", fd, target)
		}
	}

	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", h.PID()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kv := range bytes.Split(env, []byte{0}) {
		if len(kv) == 0 {
			continue
		}
		name, _, _ := strings.Cut(string(kv), "=")
		names = append(names, name)
		if !EnvAllowed(name) {
			t.Errorf("worker environment holds %s, which is not allowlisted", name)
		}
	}
	if !contains(names, "LC_TIME") {
		t.Errorf("worker environment %v lacks the allowlisted LC_TIME", names)
	}
	if len(os.Environ()) <= len(names) {
		t.Errorf("host has %d variables, worker %d; the host should have more", len(os.Environ()), len(names))
	}
}

// sameFile reports whether fd1 of pid1 and fd2 of pid2 are the same open file description.
func sameFile(pid1, fd1, pid2, fd2 int) (bool, error) {
	const kcmpFile = 0
	r, _, errno := syscall.Syscall6(unix.SYS_KCMP, uintptr(pid1), uintptr(pid2), kcmpFile, uintptr(fd1), uintptr(fd2), 0)
	if errno == syscall.EBADF {
		return false, nil // closed meanwhile
	}
	if errno != 0 {
		return false, errno
	}
	return r == 0, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestChildEnv(t *testing.T) {
	tests := []struct {
		name      string
		base      []string
		overrides []string
		want      []string
		wantErr   bool
	}{
		{name: "filters", base: []string{"PATH=/bin", "SECRET=x", "LC_ALL=C", "DISPLAY=:1"}, want: []string{"PATH=/bin", "LC_ALL=C", "DISPLAY=:1"}},
		{name: "override wins", base: []string{"DISPLAY=:1"}, overrides: []string{"DISPLAY=:9"}, want: []string{"DISPLAY=:9"}},
		{name: "override outside allowlist", overrides: []string{"LD_PRELOAD=/x.so"}, wantErr: true},
		{name: "malformed override", overrides: []string{"DISPLAY"}, wantErr: true},
		{name: "malformed base ignored", base: []string{"=x", "junk"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := childEnv(tt.base, tt.overrides)
			if (err != nil) != tt.wantErr {
				t.Fatalf("childEnv() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("childEnv() = %v, want %v", got, tt.want)
			}
		})
	}
}
