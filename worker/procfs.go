package worker

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/cua-host/cua-host/internal/procfs"
	"golang.org/x/sys/unix"
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
	// launchRoot is the process on pid's line of ancestors (pid included) whose parent was
	// the worker when the facts were read, with its start time; 0 when the line reaches
	// no child of the worker. A program launched in a sandbox is a grandchild or further.
	launchRoot      int
	launchRootStart uint64
}

// workerPID is this process's pid, a snapshot for the process's life.
var workerPID = os.Getpid()

// maxLaunchDepth bounds how many parents findLaunchRoot follows.
const maxLaunchDepth = 16

// findLaunchRoot fills info.launchRoot for process pid: it follows parents until one is the
// worker, each parent having started no later than its child (a reused pid on the way
// breaks the line instead of joining another).
func findLaunchRoot(pid int, info *procInfo) {
	child, ppid, start := pid, info.ppid, info.start
	for range maxLaunchDepth {
		if ppid == workerPID {
			info.launchRoot, info.launchRootStart = child, start
			return
		}
		if ppid <= 1 {
			return
		}
		parent, ok := readStat(ppid)
		if !ok || parent.start > start {
			return
		}
		child, ppid, start = ppid, parent.ppid, parent.start
	}
}

// procCache keeps, for each process the authorizer asked about, a descriptor of its /proc
// directory and what was read through it: start time, parent, and the executable's path and
// identity. A /proc/PID descriptor names one process, not a number: once that process is
// reaped nothing can be read through it, and a reused pid is opened afresh. A process that
// called execve runs another file: the executable's identity is read again on every call
// (one statx through the descriptor, which also fails once the process is a zombie or gone),
// and anything but the cached identity drops the entry and reads everything again. So a hit
// costs one system call and is always the same live process running the same file.
//
// The parent is the one read when the entry was made. It is only ever compared with the
// worker's own pid: a live child of the worker stays its child (a parent changes only when
// the parent exits), and a stale answer for any other process can only say "not the
// worker's child", which grants nothing.
//
// It is safe for concurrent use.
type procCache struct {
	// mu guards m and the descriptors in it: a descriptor is used with mu held for reading
	// and closed with mu held for writing, so no call reads through a closed (or reused)
	// descriptor number.
	mu sync.RWMutex
	m  map[int]procEntry
}

// procEntry is one cached process: its /proc directory (owned by the cache) and its facts.
type procEntry struct {
	dirfd int
	info  procInfo
}

// maxProcCache bounds the cache (each entry holds a descriptor); it is emptied when full.
const maxProcCache = 256

// read returns pid's facts. It never fails: what cannot be read stays zero.
func (c *procCache) read(pid int) procInfo {
	if pid <= 0 {
		return procInfo{}
	}
	c.mu.RLock()
	e, hit := c.m[pid]
	if hit {
		dev, ino, err := procfs.ExeIDAt(e.dirfd)
		if err == nil && dev == e.info.dev && ino == e.info.ino {
			c.mu.RUnlock()
			return e.info
		}
	}
	c.mu.RUnlock()
	if hit {
		c.drop(pid, e.dirfd)
	}
	return c.load(pid)
}

// load reads pid's facts through a fresh descriptor of its /proc directory and caches them
// when the executable was readable and did not change while it was read.
func (c *procCache) load(pid int) procInfo {
	dirfd, err := procfs.OpenDir(pid)
	if err != nil {
		return procInfo{}
	}
	info, ok := statInfo(procfs.ReadStatAt(dirfd))
	if !ok {
		unix.Close(dirfd)
		return procInfo{}
	}
	findLaunchRoot(pid, &info)
	dev, ino, err := procfs.ExeIDAt(dirfd)
	if err != nil {
		// Another user's process, or one exiting: its facts without an executable, and
		// nothing cached.
		unix.Close(dirfd)
		return info
	}
	info.dev, info.ino = dev, ino
	if exe, err := procfs.ExeAt(dirfd); err == nil {
		info.exe = exe
	}
	// An execve between the two reads of the executable would pair the new file's path
	// with the old file's identity: cache only what a second look confirms; otherwise
	// return the newest identity without a path.
	dev2, ino2, err := procfs.ExeIDAt(dirfd)
	if err != nil || dev2 != dev || ino2 != ino || info.exe == "" {
		unix.Close(dirfd)
		if err != nil || dev2 != dev || ino2 != ino {
			info.dev, info.ino, info.exe = dev2, ino2, ""
		}
		return info
	}
	c.mu.Lock()
	if old, ok := c.m[pid]; ok {
		unix.Close(old.dirfd)
	}
	if c.m == nil || len(c.m) >= maxProcCache {
		c.closeLocked()
		c.m = make(map[int]procEntry)
	}
	c.m[pid] = procEntry{dirfd: dirfd, info: info}
	c.mu.Unlock()
	return info
}

// launchRootOf returns the worker's live child that process pid, whose facts are info, is
// or descends from, or 0 (see procInfo.launchRoot). A direct child costs nothing more; a
// descendant costs one more read of the cache, which checks that the child is the same
// process it was when pid's line was followed.
func (c *procCache) launchRootOf(pid int, info procInfo) int {
	switch {
	case !info.alive || info.launchRoot == 0:
		return 0
	case info.launchRoot == pid:
		return pid
	}
	root := c.read(info.launchRoot)
	if root.alive && root.ppid == workerPID && root.start == info.launchRootStart {
		return info.launchRoot
	}
	return 0
}

// drop removes pid's entry if it still holds dirfd, and closes it.
func (c *procCache) drop(pid, dirfd int) {
	c.mu.Lock()
	if e, ok := c.m[pid]; ok && e.dirfd == dirfd {
		delete(c.m, pid)
		unix.Close(dirfd)
	}
	c.mu.Unlock()
}

// close closes every cached descriptor and empties the cache; it may be used again after.
func (c *procCache) close() {
	c.mu.Lock()
	c.closeLocked()
	c.m = nil
	c.mu.Unlock()
}

func (c *procCache) closeLocked() {
	for _, e := range c.m {
		unix.Close(e.dirfd)
	}
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
