package procfs

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want Stat
		ok   bool
	}{
		{name: "odd comm", line: "1234 (we ird) (name)) S 77 1200 1234 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10", want: Stat{PID: 1234, State: 'S', PPID: 77, PGID: 1200, StartTime: 987654}, ok: true},
		{name: "zombie", line: "1 (x) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", want: Stat{PID: 1, State: 'Z', PGID: 1, StartTime: 5}, ok: true},
		{name: "empty", line: ""},
		{name: "no fields", line: "1234 (x)"},
		{name: "short", line: "1234 (x) Z 1 2 3"},
		{name: "shorter", line: "1234 (x) S 1 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tc.line))
			if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
				t.Errorf("ParseStat(%q) = %+v, %v, want %+v", tc.line, got, err, tc.want)
			}
		})
	}
}

func TestSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil || st.PID != os.Getpid() || st.PPID != os.Getppid() || !st.Alive() || st.StartTime == 0 {
		t.Errorf("ReadStat(self) = %+v, %v", st, err)
	}
	if exe, err := Exe(os.Getpid()); err != nil || exe == "" {
		t.Errorf("Exe(self) = %q, %v", exe, err)
	}
	if Comm(os.Getpid()) == "" {
		t.Error("Comm(self) is empty")
	}
	if _, err := ReadStat(0); !os.IsNotExist(err) {
		t.Errorf("ReadStat(0) = %v, want not exist", err)
	}
}

// TestImageLive: a process's pagemap reads as live while it runs the image it had when the
// pagemap was opened, and not once it exits; a child shares nothing with this process.
func TestImageLive(t *testing.T) {
	cmd := exec.Command("/usr/bin/sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	dirfd, err := OpenDir(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	// Wait for the child's own execve, so the pagemap is bound to sleep's image.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if exe, _ := ExeAt(dirfd); exe == "/usr/bin/sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never ran /usr/bin/sleep")
		}
	}
	fd, err := OpenImageAt(dirfd)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if !ImageLive(fd) {
		t.Fatal("a running process's image reads as not live")
	}
	if shared, err := SharesImage(pid, os.Getpid()); err != nil || shared {
		t.Errorf("SharesImage(child, self) = %v, %v; want false", shared, err)
	}
	if shared, err := SharesImage(os.Getpid(), os.Getpid()); err != nil || !shared {
		t.Errorf("SharesImage(self, self) = %v, %v; want true", shared, err)
	}
	if _, err := SharesImage(0, pid); err == nil {
		t.Error("SharesImage(0, …) did not fail")
	}
	cmd.Process.Kill()
	cmd.Process.Wait()
	if ImageLive(fd) {
		t.Error("the image of a reaped process reads as live")
	}
}

func TestKernelAtLeast(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    bool
	}{
		{"6.18.44-fc-v669", true}, {"4.2.0", true}, {"4.19", true}, {"5.0-rc1", true},
		{"4.1.52", false}, {"3.10.0-1160.el7.x86_64", false}, {"", false}, {"x.y", false}, {"4", false}, {"4.", false},
	} {
		if got := kernelAtLeast(tc.release, 4, 2); got != tc.want {
			t.Errorf("kernelAtLeast(%q, 4, 2) = %v, want %v", tc.release, got, tc.want)
		}
	}
}
