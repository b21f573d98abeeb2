package host

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/internal/procfs"
)

// BecomeSubreaper marks this process a child subreaper (PR_SET_CHILD_SUBREAPER): a
// descendant whose parent dies (an application the worker launched, when the worker is
// killed) is re-parented here instead of to init, so KillOrphans can end it. Call it once,
// early, in a process that supervises a whole tree (`cua-host run`).
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become subreaper: %w", err)
	}
	return nil
}

// KillOrphans kills (SIGKILL, to the process and its process group) and reaps every child
// of this process, repeatedly, until none is left or timeout passes, and returns how many
// it found. Children re-parented to a subreaper are not known to os/exec, so nothing else
// reaps them.
//
// Preconditions: every child this process started through os/exec has been reaped (the
// host, proxy and display are closed), otherwise KillOrphans would reap it behind its
// exec.Cmd's back.
func KillOrphans(timeout time.Duration, log *slog.Logger) int {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	seen := map[int]bool{}
	deadline := time.Now().Add(timeout)
	for {
		kids := procfs.Children(os.Getpid())
		if len(kids) == 0 {
			return len(seen)
		}
		for _, pid := range kids {
			if !seen[pid] {
				seen[pid] = true
				log.Debug("killing orphaned descendant", "pid", pid, "comm", procfs.Comm(pid))
			}
			_ = unix.Kill(-pid, unix.SIGKILL) // its group, when it leads one
			_ = unix.Kill(pid, unix.SIGKILL)
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
		if time.Now().After(deadline) {
			log.Warn("orphaned descendants survive", "pids", kids)
			return len(seen)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// AncestorPIDs returns the calling process's ancestors, parent first, up to but not
// including pid 1 (at most 64): the program that started cua-host (an MCP client, a shell)
// and the terminal emulator showing it, whose window an agent could otherwise type into —
// to answer a consent prompt on that terminal, or the client's own approval prompts.
func AncestorPIDs() []int {
	var out []int
	pid := os.Getpid()
	for range 64 {
		ppid, ok := parentOf(pid)
		if !ok || ppid <= 1 {
			break
		}
		out = append(out, ppid)
		pid = ppid
	}
	return out
}

// parentOf reads the parent pid from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	st, err := procfs.ReadStat(pid)
	return st.PPID, err == nil
}
