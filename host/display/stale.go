package display

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cua-host/cua-host/internal/procfs"
)

// A display's directory holds its cookie (Xauthority), its bus socket and its programs'
// configuration. Close removes it; a process that is killed, or that exits without
// Close, leaves it behind with a cookie that still opens any X server started with it.
// So the directory names its owner in ownerFile, and every Start removes the
// directories whose owner is gone: the process no longer exists, or its pid now belongs
// to a process started at another time.

// dirPrefix is how the directories of displays are named in the temporary directory.
const dirPrefix = "cua-display-"

// ownerFile, in a display's directory, holds "PID STARTTIME" of the process that made it.
const ownerFile = "owner"

// writeOwner records this process as the owner of display directory dir.
func writeOwner(dir string) error {
	st, err := procfs.ReadStat(os.Getpid())
	if err != nil {
		return fmt.Errorf("display: read own process state: %w", err)
	}
	line := fmt.Sprintf("%d %d\n", st.PID, st.StartTime)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(line), 0o600); err != nil {
		return fmt.Errorf("display: %w", err)
	}
	return nil
}

// ownerGone reports whether the owner recorded in display directory dir is gone. A
// directory without a readable owner (one that is being made, or one an older version
// made) is never taken for abandoned.
func ownerGone(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return false
	}
	pid, err1 := strconv.Atoi(fields[0])
	start, err2 := strconv.ParseUint(fields[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return false
	}
	st, err := procfs.ReadStat(pid)
	if err != nil {
		// ENOENT: no such process; ESRCH: it exited while /proc was read.
		return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
	}
	return !st.Alive() || st.StartTime != start
}

// removeAbandoned removes the display directories in tmp that belong to this user and
// whose owner is gone, and returns their paths. Entries that are not plain directories
// of this user (a link, another user's directory) are left alone.
func removeAbandoned(tmp string) []string {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil
	}
	uid := os.Getuid()
	var removed []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), dirPrefix) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		if !ownerGone(dir) {
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}
