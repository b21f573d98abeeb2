package host

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SealInheritedFDs marks every descriptor ≥ 3 of this process close-on-exec, so no
// descriptor this process inherited (or any library opened without O_CLOEXEC) can leak
// into a child: children receive descriptors only through exec.Cmd.ExtraFiles. Descriptors
// passed through ExtraFiles are unaffected (os/exec duplicates them into place). It is
// idempotent and cheap; Start calls it too.
func SealInheritedFDs() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	// Kernels before 5.11: walk /proc/self/fd.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("seal inherited descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		unix.CloseOnExec(fd)
	}
	return nil
}
