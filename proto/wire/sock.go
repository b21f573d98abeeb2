package wire

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sockConn is a socket end driven through the runtime poller by raw sendmsg/recvmsg. It
// keeps the descriptor number it was given (no duplicate), so a worker's inherited channel
// stays at the descriptor it was inherited at.
type sockConn struct {
	f  *os.File
	rc syscall.RawConn

	closeOnce sync.Once
	closeErr  error
}

// FileFromFD turns an inherited or received raw descriptor into a pollable *os.File that
// owns it (the descriptor is set non-blocking and close-on-exec).
func FileFromFD(fd int, name string) (*os.File, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("descriptor %d: %w", fd, err)
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name), nil
}

// newSockConn takes ownership of f. A file that the runtime cannot poll (blocking mode) is
// first duplicated into a pollable one.
func newSockConn(f *os.File) (*sockConn, error) {
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		rc, err := f.SyscallConn()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		var nfd int
		var derr error
		_ = rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) })
		name := f.Name()
		f.Close()
		if derr != nil {
			return nil, fmt.Errorf("%s: duplicate: %w", name, derr)
		}
		if f, err = FileFromFD(nfd, name); err != nil {
			unix.Close(nfd)
			return nil, err
		}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	var typ int
	var serr error
	_ = rc.Control(func(fd uintptr) { typ, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TYPE) })
	if serr != nil {
		f.Close()
		return nil, fmt.Errorf("%s is not a socket: %w", f.Name(), serr)
	}
	_ = typ
	return &sockConn{f: f, rc: rc}, nil
}

// sockType returns the socket's SO_TYPE.
func (s *sockConn) sockType() int {
	var typ int
	_ = s.rc.Control(func(fd uintptr) { typ, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TYPE) })
	return typ
}

// raiseSendBuffer asks for want bytes of send buffer and returns the largest datagram the
// granted buffer is expected to hold, capped at MaxControlFrame.
func (s *sockConn) raiseSendBuffer(want int) int {
	granted := 0
	_ = s.rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, want) // capped by net.core.wmem_max
		granted, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	// The kernel charges per-datagram overhead against the buffer; keep a margin.
	limit := granted - 8<<10
	if limit > MaxControlFrame {
		limit = MaxControlFrame
	}
	if limit < 64<<10 {
		limit = 64 << 10
	}
	return limit
}

func (s *sockConn) sendDatagram(b, oob []byte) error {
	var n int
	var serr error
	err := s.rc.Write(func(fd uintptr) bool {
		n, serr = unix.SendmsgN(int(fd), b, oob, nil, unix.MSG_NOSIGNAL)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		if errors.Is(err, unix.EMSGSIZE) {
			return fmt.Errorf("send %d-byte frame: %w", len(b), err)
		}
		return closeLike(err)
	}
	if n != len(b) {
		return fmt.Errorf("short datagram write: %d of %d bytes", n, len(b))
	}
	return nil
}

// write writes all of b to a stream socket and returns how many bytes were written.
func (s *sockConn) write(b []byte) (int, error) {
	written := 0
	var werr error
	err := s.rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			m, err := unix.SendmsgN(int(fd), b[written:], nil, nil, unix.MSG_NOSIGNAL)
			if m > 0 {
				written += m
			}
			if err == unix.EAGAIN {
				return false
			}
			if err != nil {
				werr = err
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return written, closeLike(err)
}

// recv receives once into b and oob. Descriptors that arrive with a failed read are closed.
func (s *sockConn) recv(b, oob []byte) (n, oobn, flags int, err error) {
	var rerr error
	err = s.rc.Read(func(fd uintptr) bool {
		n, oobn, flags, _, rerr = unix.Recvmsg(int(fd), b, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		if oobn > 0 {
			if fds, _ := parseRights(oob[:oobn]); len(fds) > 0 {
				closeFDs(fds)
			}
		}
		return 0, 0, 0, closeLike(err)
	}
	return n, oobn, flags, nil
}

func (s *sockConn) close() error {
	s.closeOnce.Do(func() { s.closeErr = s.f.Close() })
	return s.closeErr
}

// closeRead shuts the receiving half down: a blocked recv returns end-of-file.
func (s *sockConn) closeRead() error {
	var serr error
	err := s.rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_RD) })
	if err == nil {
		err = serr
	}
	return closeLike(err)
}
