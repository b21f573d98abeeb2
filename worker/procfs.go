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
}

// procCache keeps, for each process the authorizer asked about, a descriptor of its /proc
// directory and what was read through it: start time, parent, and the executable's path and
// identity. A /proc/PID descriptor names one process, not a number: once that process is
// reaped nothing can be read through it, and a reused pid is opened afresh.
//
// A hit must still be the same live process running the same program. The entry also keeps
// the process's pagemap, which the kernel binds to the address space the process had when
// it was opened: every execve (of any file, the same one included) replaces the address
// space and exiting releases it, so one pread through it (procfs.ImageLive) says whether
// the process still runs what was read. The address space outlives an execve only while
// another process shares it — a child created with CLONE_VM and no CLONE_THREAD: vfork,
// posix_spawn before its exec. A process that shares its address space with its parent
// when the entry is made (kcmp), or whose pagemap cannot be opened, is checked the older
// way instead: one statx of its executable, which follows an execve of another file. A
// process that itself creates a CLONE_VM child after the entry was made and then calls
// execve would keep its entry; that needs code of its own choosing running in the process
// already, which is all its entry grants (ADR 0012). Anything but a live, unchanged image
// drops the entry and reads everything again. So a hit costs one system call.
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

// procEntry is one cached process: its /proc directory and, when usable, its pagemap
// (both owned by the cache; image is -1 without one), and its facts.
type procEntry struct {
	dirfd, image int
	info         procInfo
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
	if hit && e.unchanged() {
		c.mu.RUnlock()
		return e.info
	}
	c.mu.RUnlock()
	if hit {
		c.drop(pid, e.dirfd)
	}
	return c.load(pid)
}

// unchanged reports whether e's process is alive and runs what was read when e was made.
func (e procEntry) unchanged() bool {
	if e.image >= 0 {
		return procfs.ImageLive(e.image)
	}
	dev, ino, err := procfs.ExeIDAt(e.dirfd)
	return err == nil && dev == e.info.dev && ino == e.info.ino
}

// openImage opens pid's pagemap through dirfd, or returns -1 when the process shares its
// address space with its parent (or that cannot be told), or the pagemap cannot be opened.
// The comparison comes first: a process that shares nothing then cannot share later (a
// shared address space is only ever made by clone), so what is opened after is its own.
func openImage(dirfd, pid, ppid int) int {
	if shared, err := procfs.SharesImage(pid, ppid); err != nil || shared {
		return -1
	}
	fd, err := procfs.OpenImageAt(dirfd)
	if err != nil {
		return -1
	}
	if !procfs.ImageLive(fd) {
		unix.Close(fd)
		return -1
	}
	return fd
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
	image := openImage(dirfd, pid, info.ppid)
	// An execve between the two reads of the executable would pair the new file's path
	// with the old file's identity: cache only what a second look confirms; otherwise
	// return the newest identity without a path. The second look comes after the pagemap
	// was opened, so an execve of another file before that is seen here, and one after it
	// leaves the pagemap on a released address space.
	dev2, ino2, err := procfs.ExeIDAt(dirfd)
	if err != nil || dev2 != dev || ino2 != ino || info.exe == "" {
		e := procEntry{dirfd: dirfd, image: image}
		e.closeFDs()
		if err != nil || dev2 != dev || ino2 != ino {
			info.dev, info.ino, info.exe = dev2, ino2, ""
		}
		return info
	}
	c.mu.Lock()
	if old, ok := c.m[pid]; ok {
		old.closeFDs()
	}
	if c.m == nil || len(c.m) >= maxProcCache {
		c.closeLocked()
		c.m = make(map[int]procEntry)
	}
	c.m[pid] = procEntry{dirfd: dirfd, image: image, info: info}
	c.mu.Unlock()
	return info
}

// closeFDs closes e's descriptors.
func (e procEntry) closeFDs() {
	unix.Close(e.dirfd)
	if e.image >= 0 {
		unix.Close(e.image)
	}
}

// drop removes pid's entry if it still holds dirfd, and closes it.
func (c *procCache) drop(pid, dirfd int) {
	c.mu.Lock()
	if e, ok := c.m[pid]; ok && e.dirfd == dirfd {
		delete(c.m, pid)
		e.closeFDs()
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
		e.closeFDs()
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
