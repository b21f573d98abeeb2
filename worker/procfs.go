package worker

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/cua-host/cua-host/internal/procfs"
)

// procInfo is what the authorizer reads about one process from /proc.
type procInfo struct {
	// alive is false when the process does not exist (or is a zombie).
	alive bool
	// exe is /proc/PID/exe resolved ("" when unreadable, e.g. another user's process).
	exe string
	// dev and ino identify the executable's file (0 when unreadable).
	dev, ino uint64
	// ppid is the parent's pid; start is the start time in clock ticks after boot.
	ppid  int
	start uint64
}

// procCache remembers the path of each process's executable, by pid, start time and the
// executable file's identity: a reused pid has another start time, and a process that
// called execve runs another file, so a hit is always the same process running the same
// file. /proc/PID/stat and the executable's stat are read on every call; only the
// readlink is saved. It is safe for concurrent use.
type procCache struct {
	// mu guards m.
	mu sync.Mutex
	m  map[int]procInfo
}

// maxProcCache bounds the cache; it is emptied when full.
const maxProcCache = 4096

// read returns pid's facts. It never fails: what cannot be read stays zero.
func (c *procCache) read(pid int) procInfo {
	info, ok := readStat(pid)
	if !ok {
		return procInfo{}
	}
	info.dev, info.ino = procfs.ExeID(pid)
	c.mu.Lock()
	cached, hit := c.m[pid]
	c.mu.Unlock()
	if hit && cached.start == info.start && cached.dev == info.dev && cached.ino == info.ino && info.ino != 0 {
		info.exe = cached.exe
		return info
	}
	if exe, err := procfs.Exe(pid); err == nil {
		info.exe = exe
	}
	// Cache only what a second read confirms belongs to the same process.
	if again, ok := readStat(pid); ok && again.start == info.start && info.ino != 0 {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxProcCache {
			c.m = make(map[int]procInfo)
		}
		c.m[pid] = info
		c.mu.Unlock()
	}
	return info
}

// readStat reads state, ppid and start time from /proc/PID/stat; a zombie is not ok.
func readStat(pid int) (procInfo, bool) {
	st, err := procfs.ReadStat(pid)
	return statInfo(st, err)
}

// parseStat parses the state, ppid and start time out of a /proc/PID/stat line; a zombie
// is not ok.
func parseStat(stat []byte) (procInfo, bool) {
	st, err := procfs.ParseStat(stat)
	return statInfo(st, err)
}

func statInfo(st procfs.Stat, err error) (procInfo, bool) {
	if err != nil || !st.Alive() {
		return procInfo{}, false
	}
	return procInfo{alive: true, ppid: st.PPID, start: st.StartTime}, true
}

// protector decides the hard invariant "never target cua-host itself": the host, the
// worker, the proxy, the display server, a consent UI, and the desktop the display runs on
// (its X server, window manager, compositor and desktop shell, found from the server
// itself so that a display cua-host did not start is covered too). It is safe for
// concurrent use.
type protector struct {
	// pids are Hello.protected_pids, the worker's own pid and its parent (the host);
	// fixed after the handshake.
	pids map[int]bool
	// selfDev and selfIno identify the worker's executable: any process running the same
	// file is cua-host (a host, a worker, an MCP proxy re-executed from it).
	selfDev, selfIno uint64
	// infra, when set before the worker is ready, finds the display's infrastructure
	// processes. It is asked at most once per infraRefresh; every pid it ever returned
	// stays protected for the worker's life (a window manager replaced meanwhile, or a pid
	// reused, is refused rather than allowed).
	infra func(ctx context.Context) ([]int, error)

	// mu guards the fields below.
	mu        sync.Mutex
	found     map[int]bool
	refreshed time.Time
}

// infraRefresh bounds how stale the infrastructure set may be.
const infraRefresh = 250 * time.Millisecond

func newProtector(helloPIDs []int32) *protector {
	p := &protector{pids: map[int]bool{os.Getpid(): true, os.Getppid(): true}, found: map[int]bool{}}
	for _, pid := range helloPIDs {
		if pid > 0 {
			p.pids[int(pid)] = true
		}
	}
	p.selfDev, p.selfIno = procfs.ExeID(os.Getpid())
	return p
}

// protected reports whether pid (whose facts are info) must never be a target.
func (p *protector) protected(pid int, info procInfo) bool {
	if pid <= 0 {
		return false
	}
	if p.pids[pid] {
		return true
	}
	if info.ino != 0 && info.dev == p.selfDev && info.ino == p.selfIno {
		return true
	}
	return p.infrastructure(pid)
}

// infrastructure reports whether pid is one of the display's infrastructure processes,
// refreshing the set when it is older than infraRefresh.
func (p *protector) infrastructure(pid int) bool {
	if p.infra == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.refreshed) >= infraRefresh {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		pids, _ := p.infra(ctx) // what it found before an error still counts
		cancel()
		for _, q := range pids {
			p.found[q] = true
		}
		p.refreshed = now
	}
	return p.found[pid]
}
