package procfs

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkExeIDAt is the kernel's share of authorizing a call that targets a window: the
// one statx that says the target process still runs the file whose facts were cached.
func BenchmarkExeIDAt(b *testing.B) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	dirfd, err := OpenDir(cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Close(dirfd) })
	for b.Loop() {
		if _, _, err := ExeIDAt(dirfd); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNullSyscall is the cost of entering and leaving the kernel on this machine
// (getppid), the floor under every system call.
func BenchmarkNullSyscall(b *testing.B) {
	for b.Loop() {
		unix.Getppid()
	}
}
