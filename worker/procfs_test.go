package worker

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/internal/procfs"
	"github.com/cua-host/cua-host/test/testkit"
)

func TestParseStat(t *testing.T) {
	line := "1234 (we ird) (name)) S 77 1234 1234 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	info, ok := parseStat([]byte(line))
	if !ok || info.ppid != 77 || info.start != 987654 || !info.alive {
		t.Errorf("parseStat = %+v %v", info, ok)
	}
	for _, bad := range []string{"", "1234 (x)", "1234 (x) Z 1 2 3", "1234 (x) S 1 2"} {
		if _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("parseStat(%q) ok", bad)
		}
	}
	if info, ok := parseStat([]byte("1 (x) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0")); ok || info.alive {
		t.Error("a zombie is alive")
	}
}

// TestProcCacheFollowsExec: a process that calls execve runs another file under the same
// pid and start time; the cache must not keep the old executable.
func TestProcCacheFollowsExec(t *testing.T) {
	cmd, w, _ := startPiped(t, "/bin/sh", "-c", "read x; exec /usr/bin/sleep 30")
	var c procCache
	before := c.read(cmd.Process.Pid)
	if !before.alive || before.ppid != os.Getpid() || before.exe == "" || before.exe == "/usr/bin/sleep" {
		t.Fatalf("before exec: %+v", before)
	}
	w.Write([]byte("go\n"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		after := c.read(cmd.Process.Pid)
		if after.exe == "/usr/bin/sleep" {
			if after.start != before.start {
				t.Errorf("start time changed across exec: %d → %d", before.start, after.start)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after exec the cache still says %q", after.exe)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if gone := c.read(cmd.Process.Pid); gone.alive {
		t.Errorf("a reaped process reads as alive: %+v", gone)
	}
}

// TestProcCacheZombie: a cached process that exits reads as not alive while it is a zombie
// and after it is reaped, and its cached descriptor is released.
func TestProcCacheZombie(t *testing.T) {
	cmd := exec.Command("/usr/bin/sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var c procCache
	t.Cleanup(c.close)
	if info := c.read(pid); !info.alive || info.exe != "/usr/bin/sleep" {
		t.Fatalf("read(%d) = %+v, want alive running /usr/bin/sleep", pid, info)
	}
	if info := c.read(pid); !info.alive || info.exe != "/usr/bin/sleep" {
		t.Fatalf("cached read(%d) = %+v, want alive running /usr/bin/sleep", pid, info)
	}
	cmd.Process.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := readStatState(pid)
		if err == nil && st == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become a zombie (state %c, %v)", pid, st, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if info := c.read(pid); info.alive {
		t.Errorf("a zombie reads as alive: %+v", info)
	}
	cmd.Wait()
	if info := c.read(pid); info.alive {
		t.Errorf("a reaped process reads as alive: %+v", info)
	}
	c.mu.RLock()
	n := len(c.m)
	c.mu.RUnlock()
	if n != 0 {
		t.Errorf("cache holds %d entries after the process is gone, want 0", n)
	}
}

// startPiped starts argv with pipes to its standard input and from its standard output;
// it is killed and reaped when t ends unless the test did so first.
func startPiped(t *testing.T, argv ...string) (*exec.Cmd, io.Writer, io.Reader) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, w, r
}

func readStatState(pid int) (byte, error) {
	st, err := procfs.ReadStat(pid)
	return st.State, err
}

// TestProcCacheConcurrent: readers of several processes racing with each other and with
// the cache being emptied each get their own process's executable; a descriptor is never
// read after it was closed (a reused descriptor number would name another process).
func TestProcCacheConcurrent(t *testing.T) {
	want := map[int]string{}
	for _, argv := range [][]string{{"/usr/bin/sleep", "30"}, {"/usr/bin/tail", "-f", "/dev/null"}, {"/usr/bin/sleep", "31"}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		want[cmd.Process.Pid] = argv[0]
	}
	var c procCache
	t.Cleanup(c.close)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				c.close()
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	var readers sync.WaitGroup
	for range 6 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := range 300 {
				for pid, exe := range want {
					if info := c.read(pid); !info.alive || info.exe != exe {
						t.Errorf("read %d of pid %d = %+v, want alive running %s", i, pid, info, exe)
						return
					}
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	wg.Wait()
}

// TestProcCacheSharedImage: a child that shares its parent's address space (clone with
// CLONE_VM, as vfork does) keeps that address space alive after its own execve; the cache
// must follow the execve all the same.
func TestProcCacheSharedImage(t *testing.T) {
	helper := buildHelper(t, "clonevm")
	cmd, w, out := startPiped(t, helper, "/usr/bin/sleep", "30")
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatalf("child pid: %v", err)
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	var c procCache
	t.Cleanup(c.close)
	if before := c.read(child); !before.alive || before.exe != helper {
		t.Fatalf("child before exec: %+v, want alive running %s", before, helper)
	}
	if parent := c.read(cmd.Process.Pid); !parent.alive || parent.exe != helper {
		t.Fatalf("parent: %+v", parent)
	}
	w.Write([]byte("x"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		after := c.read(child)
		if after.exe == "/usr/bin/sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the child's execve the cache still says %+v", after)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestProcCacheThreadExit: a thread's id opens as /proc/TID like a pid. Once that thread
// has exited, while the rest of its process runs on, its entry must not read as alive
// (the id may be reused by any process next).
func TestProcCacheThreadExit(t *testing.T) {
	cmd, w, out := startPiped(t, buildHelper(t, "threadexit"))
	var tid int
	if _, err := fmt.Fscan(out, &tid); err != nil {
		t.Fatalf("thread id: %v", err)
	}
	var c procCache
	t.Cleanup(c.close)
	if info := c.read(tid); !info.alive {
		t.Fatalf("thread %d of %d before it exits: %+v", tid, cmd.Process.Pid, info)
	}
	w.Write([]byte("x"))
	var done string
	if _, err := fmt.Fscan(out, &done); err != nil || done != "exited" {
		t.Fatalf("the thread did not exit: %q %v", done, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.read(tid).alive {
		if time.Now().After(deadline) {
			t.Fatalf("thread %d exited, its process runs on, and the cache still reads it as alive", tid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if parent := c.read(cmd.Process.Pid); !parent.alive {
		t.Errorf("the process itself reads as gone: %+v", parent)
	}
}

// buildHelper compiles testdata/NAME.c into the test's temporary directory.
func buildHelper(t *testing.T, name string) string {
	t.Helper()
	testkit.NeedPrograms(t, "gcc")
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", bin, "testdata/"+name+".c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}
