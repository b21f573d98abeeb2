package wire

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockConn is a socket end driven through the runtime poller by raw sendmsg/recvmsg. It
// keeps the descriptor number it was given (no duplicate), so a worker's inherited channel
// stays at the descriptor it was inherited at. Its scratch state lets the hot path run
// without allocating: the recv fields belong to the connection's one reader, the send
// fields to whoever holds the owner's send mutex.
type sockConn struct {
	f  *os.File
	rc syscall.RawConn

	closeOnce sync.Once
	closeErr  error

	// Reader scratch.
	rmsg   unix.Msghdr
	riov   unix.Iovec
	rn     int
	rerr   error
	readFn func(uintptr) bool

	// Writer scratch.
	wmsg    unix.Msghdr
	wiov    unix.Iovec
	wbuf    []byte
	wdone   int
	wstream bool
	werr    error
	writeFn func(uintptr) bool
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
	c := &sockConn{f: f, rc: rc}
	c.readFn = c.doRecv
	c.writeFn = c.doSend
	return c, nil
}

// doRecv is one recvmsg attempt for rc.Read; it reports false to wait for readability.
func (s *sockConn) doRecv(fd uintptr) bool {
	r, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&s.rmsg)), unix.MSG_CMSG_CLOEXEC)
	if e == unix.EAGAIN {
		return false
	}
	s.rn, s.rerr = int(r), nil
	if e != 0 {
		s.rn, s.rerr = 0, e
	}
	return true
}

// doSend writes s.wbuf[s.wdone:] (with the ancillary data in s.wmsg on the first attempt)
// for rc.Write; on a stream it keeps writing until everything is out or the socket is
// full.
func (s *sockConn) doSend(fd uintptr) bool {
	for s.wdone < len(s.wbuf) {
		rest := s.wbuf[s.wdone:]
		s.wiov.Base = &rest[0]
		s.wiov.SetLen(len(rest))
		r, _, e := unix.Syscall(unix.SYS_SENDMSG, fd, uintptr(unsafe.Pointer(&s.wmsg)), unix.MSG_NOSIGNAL)
		if e == unix.EAGAIN {
			return false
		}
		if e != 0 {
			s.werr = e
			return true
		}
		s.wdone += int(r)
		// Ancillary data goes with the first byte only.
		s.wmsg.Control = nil
		s.wmsg.SetControllen(0)
		if !s.wstream {
			return true
		}
	}
	return true
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

// send writes b with oob attached. The caller holds the owner's send mutex.
func (s *sockConn) send(b, oob []byte, stream bool) (int, error) {
	if len(b) == 0 {
		// A zero-length datagram, possibly with descriptors (harnesses send both).
		msg := &unix.Msghdr{}
		if len(oob) > 0 {
			msg.Control = &oob[0]
			msg.SetControllen(len(oob))
		}
		_, _, e := unix.Syscall(unix.SYS_SENDMSG, s.fd(), uintptr(unsafe.Pointer(msg)), unix.MSG_NOSIGNAL)
		if e != 0 {
			return 0, closeLike(e)
		}
		return 0, nil
	}
	s.wbuf, s.wdone, s.wstream, s.werr = b, 0, stream, nil
	s.wmsg = unix.Msghdr{Iov: &s.wiov, Iovlen: 1}
	if len(oob) > 0 {
		s.wmsg.Control = &oob[0]
		s.wmsg.SetControllen(len(oob))
	}
	err := s.rc.Write(s.writeFn)
	if err == nil {
		err = s.werr
	}
	n := s.wdone
	s.wbuf = nil
	s.wmsg = unix.Msghdr{}
	s.wiov = unix.Iovec{}
	return n, err
}

func (s *sockConn) fd() uintptr {
	var fd uintptr
	_ = s.rc.Control(func(x uintptr) { fd = x })
	return fd
}

func (s *sockConn) sendDatagram(b, oob []byte) error {
	n, err := s.send(b, oob, false)
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
	n, err := s.send(b, nil, true)
	return n, closeLike(err)
}

// recv receives once into b and oob. Descriptors that arrive with a failed read are
// closed. Only the connection's reader calls it.
func (s *sockConn) recv(b, oob []byte) (n, oobn, flags int, err error) {
	s.rmsg = unix.Msghdr{Iov: &s.riov, Iovlen: 1}
	if len(b) > 0 {
		s.riov.Base = &b[0]
	}
	s.riov.SetLen(len(b))
	if len(oob) > 0 {
		s.rmsg.Control = &oob[0]
		s.rmsg.SetControllen(len(oob))
	}
	err = s.rc.Read(s.readFn)
	if err == nil {
		err = s.rerr
	}
	n, oobn, flags = s.rn, int(s.rmsg.Controllen), int(s.rmsg.Flags)
	s.rmsg = unix.Msghdr{}
	s.riov = unix.Iovec{}
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

func (s *sockConn) closeWrite() error {
	var serr error
	err := s.rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) })
	if err == nil {
		err = serr
	}
	return closeLike(err)
}
