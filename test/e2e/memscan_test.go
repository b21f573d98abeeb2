package e2e

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// memoryHolds reports whether any readable page of process pid's memory holds needle.
// It reads the process's memory directly (/proc/PID/mem), page run by page run, and
// only the pages the kernel says are present or swapped (/proc/PID/pagemap): a Go
// process reserves gigabytes it never touches, and a core dump of them (gcore) took
// tens of seconds and as much memory to search. The process is stopped while it is
// read, as gcore stops it, so nothing moves under the scan.
func memoryHolds(t *testing.T, pid int, needle []byte) bool {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop %d: %v", pid, err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatalf("memory of %d: %v", pid, err)
	}
	defer maps.Close()
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatalf("memory of %d: %v", pid, err)
	}
	defer mem.Close()
	pagemap, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		t.Fatalf("memory of %d: %v", pid, err)
	}
	defer pagemap.Close()
	page := uint64(os.Getpagesize())
	scanned := 0
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[1][0] != 'r' || (len(f) >= 6 && f[5] == "[vvar]") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("memory of %d: bad maps line %q", pid, sc.Text())
		}
		entries := make([]byte, (end-start)/page*8)
		if _, err := pagemap.ReadAt(entries, int64(start/page*8)); err != nil {
			t.Fatalf("pagemap of %d at %#x: %v", pid, start, err)
		}
		// Read each run of present pages whole, so a needle across two pages is found.
		for i := uint64(0); i < (end-start)/page; {
			if binary.LittleEndian.Uint64(entries[i*8:])>>62 == 0 {
				i++
				continue
			}
			j := i
			for j < (end-start)/page && binary.LittleEndian.Uint64(entries[j*8:])>>62 != 0 {
				j++
			}
			run := make([]byte, (j-i)*page)
			n, _ := mem.ReadAt(run, int64(start+i*page))
			scanned += n
			if bytes.Contains(run[:n], needle) {
				return true
			}
			i = j
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("maps of %d: %v", pid, err)
	}
	if scanned == 0 {
		t.Fatalf("memory of %d: no page could be read, so the search proves nothing", pid)
	}
	return false
}
