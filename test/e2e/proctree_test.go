package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/internal/procfs"
)

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid, pgid int
	state           byte
	start           uint64 // start time in clock ticks: tells a reused pid apart
	comm            string
	cmdline         string
}

func (p proc) String() string {
	return fmt.Sprintf("%d(ppid %d, pgid %d, %c) %s", p.pid, p.ppid, p.pgid, p.state, p.cmdline)
}

// readProc reads /proc/PID/stat, comm and cmdline.
func readProc(pid int) (proc, bool) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return proc{}, false
	}
	p := proc{pid: pid, ppid: st.PPID, pgid: st.PGID, state: st.State, start: st.StartTime, comm: procfs.Comm(pid)}
	cl, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
	return p, true
}

// table reads the whole process table.
func table() []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// descendants returns every live process below root (root excluded).
func descendants(root int) []proc {
	all := table()
	kids := map[int][]proc{}
	for _, p := range all {
		kids[p.ppid] = append(kids[p.ppid], p)
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			out = append(out, k)
			queue = append(queue, k.pid)
		}
	}
	return out
}

// find returns the first process whose cmdline contains s.
func find(ps []proc, s string) (proc, bool) {
	for _, p := range ps {
		if strings.Contains(p.cmdline, s) || p.comm == s {
			return p, true
		}
	}
	return proc{}, false
}

// stillThere reports whether p still runs (same pid and start time, not a zombie).
func stillThere(p proc) bool {
	q, ok := readProc(p.pid)
	return ok && q.start == p.start && q.state != 'Z' && q.state != 'X'
}

// reapOrphans reaps zombies re-parented to this (subreaper) test process, except the
// ones in keep (processes an exec.Cmd will wait for).
func reapOrphans(keep map[int]bool) {
	self := os.Getpid()
	for _, p := range table() {
		if p.ppid == self && p.state == 'Z' && !keep[p.pid] {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// assertAllGone waits up to limit for every process in tree, and every process in one of
// their process groups, to be gone, and fails the test naming the survivors.
func assertAllGone(t *testing.T, tree []proc, keep map[int]bool, limit time.Duration) {
	t.Helper()
	pgids := map[int]bool{}
	for _, p := range tree {
		if p.pgid != unix.Getpgrp() { // the test's own group holds the test itself
			pgids[p.pgid] = true
		}
	}
	var left []proc
	start := time.Now()
	ok := waitFor(limit, func() bool {
		reapOrphans(keep)
		left = left[:0]
		for _, p := range tree {
			if stillThere(p) {
				left = append(left, p)
			}
		}
		for _, p := range table() {
			if pgids[p.pgid] && p.state != 'Z' && !containsPID(left, p.pid) && !keep[p.pid] {
				left = append(left, p)
			}
		}
		return len(left) == 0
	})
	if ok {
		t.Logf("all %d processes (and their process groups) gone %v after the end", len(tree), time.Since(start).Round(time.Millisecond))
	} else {
		t.Errorf("%d processes of ours survive after %v:", len(left), limit)
		for _, p := range left {
			t.Errorf("  %v", p)
		}
	}
}

func containsPID(ps []proc, pid int) bool {
	for _, p := range ps {
		if p.pid == pid {
			return true
		}
	}
	return false
}
