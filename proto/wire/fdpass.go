package wire

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ControlPair returns the two ends of a new control channel: an AF_UNIX SOCK_SEQPACKET
// socketpair, both ends close-on-exec. The caller owns both files.
func ControlPair() (a, b *os.File, err error) {
	return socketPair(unix.SOCK_SEQPACKET, "control")
}

// SessionPair returns the two ends of a new session channel: an AF_UNIX SOCK_STREAM
// socketpair, both ends close-on-exec. The caller owns both files.
func SessionPair() (a, b *os.File, err error) {
	return socketPair(unix.SOCK_STREAM, "session")
}

func socketPair(typ int, name string) (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair %s: %w", name, err)
	}
	// Non-blocking descriptors make pollable files.
	return os.NewFile(uintptr(fds[0]), name+"-a"), os.NewFile(uintptr(fds[1]), name+"-b"), nil
}

// rawFD returns f's descriptor number without switching it to blocking mode (as f.Fd
// would).
func rawFD(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if err := rc.Control(func(x uintptr) { fd = int(x) }); err != nil {
		return -1, err
	}
	return fd, nil
}

// parseRights extracts every descriptor carried in oob. Descriptors are returned even when
// a later control message fails to parse, so the caller can close all of them.
func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, violation("bad_control_message", "parse ancillary data: %v", err)
	}
	var fds []int
	var perr error
	for i := range msgs {
		if msgs[i].Header.Level != unix.SOL_SOCKET || msgs[i].Header.Type != unix.SCM_RIGHTS {
			perr = violation("bad_control_message", "unexpected ancillary message level=%d type=%d", msgs[i].Header.Level, msgs[i].Header.Type)
			continue
		}
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			perr = violation("bad_control_message", "parse SCM_RIGHTS: %v", err)
			continue
		}
		fds = append(fds, got...)
	}
	return fds, perr
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
