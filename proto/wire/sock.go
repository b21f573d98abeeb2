package wire

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// sockConn is the small part of *net.UnixConn both channel kinds use, with every error
// passed through closeLike.
type sockConn struct {
	uc        *net.UnixConn
	closeOnce sync.Once
	closeErr  error
}

func newSockConn(f *os.File) (*sockConn, error) {
	uc, err := unixConn(f)
	if err != nil {
		return nil, err
	}
	return &sockConn{uc: uc}, nil
}

// raiseSendBuffer asks for want bytes of send buffer and returns the largest datagram the
// granted buffer is expected to hold, capped at MaxControlFrame.
func (s *sockConn) raiseSendBuffer(want int) int {
	_ = s.uc.SetWriteBuffer(want) // the kernel caps it at net.core.wmem_max; we read back below
	granted := 0
	if rc, err := s.uc.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			granted, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
		})
	}
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
	n, oobn, err := s.uc.WriteMsgUnix(b, oob, nil)
	if err != nil {
		if errors.Is(err, unix.EMSGSIZE) {
			return fmt.Errorf("send %d-byte frame: %w", len(b), err)
		}
		return closeLike(err)
	}
	if n != len(b) || oobn != len(oob) {
		return fmt.Errorf("short datagram write: %d/%d bytes, %d/%d ancillary", n, len(b), oobn, len(oob))
	}
	return nil
}

func (s *sockConn) recv(b, oob []byte) (n, oobn, flags int, err error) {
	n, oobn, flags, _, err = s.uc.ReadMsgUnix(b, oob)
	if err != nil {
		// Descriptors that arrived with a failed read are still ours to close.
		if oobn > 0 {
			if fds, _ := parseRights(oob[:oobn]); len(fds) > 0 {
				closeFDs(fds)
			}
		}
		return 0, 0, 0, closeLike(err)
	}
	return n, oobn, flags, nil
}

func (s *sockConn) write(b []byte) (int, error) {
	n, err := s.uc.Write(b)
	return n, closeLike(err)
}

func (s *sockConn) close() error {
	s.closeOnce.Do(func() { s.closeErr = s.uc.Close() })
	return s.closeErr
}

func (s *sockConn) closeRead() error { return closeLike(s.uc.CloseRead()) }
