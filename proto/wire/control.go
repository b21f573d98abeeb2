package wire

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// MaxControlFrame is the largest control frame, in bytes, either side sends or accepts.
const MaxControlFrame = 1 << 20

// maxControlFDs is how many descriptors one control frame may carry before the kernel
// truncates the ancillary data (and the frame is refused). Only CreateSession carries one.
const maxControlFDs = 4

// ControlConn is one end of a control channel. Send may be called from several goroutines;
// Recv must be called from one goroutine at a time (the connection's reader).
type ControlConn struct {
	uc *sockConn

	// rbuf and oob are owned by the reader (Recv).
	rbuf []byte
	oob  []byte

	// sendMu serialises writers.
	sendMu sync.Mutex
	// maxSend is the largest datagram the kernel accepted buffer space for.
	maxSend int
}

// NewControlConn wraps one end of a control socketpair. It takes ownership of f.
// It raises the socket's send buffer so a frame of MaxControlFrame bytes fits in one
// datagram when the kernel allows it; when it does not, Send refuses frames above what
// the kernel granted with a clear error instead of failing with EMSGSIZE.
func NewControlConn(f *os.File) (*ControlConn, error) {
	uc, err := newSockConn(f)
	if err != nil {
		return nil, fmt.Errorf("control channel: %w", err)
	}
	if typ := uc.sockType(); typ != unix.SOCK_SEQPACKET {
		uc.close()
		return nil, fmt.Errorf("control channel: socket type %d, want SOCK_SEQPACKET", typ)
	}
	c := &ControlConn{
		uc:   uc,
		rbuf: make([]byte, MaxControlFrame+1),
		oob:  make([]byte, unix.CmsgSpace(maxControlFDs*4)),
	}
	c.maxSend = c.uc.raiseSendBuffer(MaxControlFrame + 64<<10)
	return c, nil
}

// MaxSend reports the largest control frame this end can send in one datagram.
func (c *ControlConn) MaxSend() int { return c.maxSend }

// Send encodes frame and sends it as one datagram, with fd attached by SCM_RIGHTS when fd
// is not nil. The caller keeps ownership of fd (the kernel duplicates it into the message).
func (c *ControlConn) Send(frame *cuav1.ControlFrame, fd *os.File) error {
	b, err := proto.Marshal(frame)
	if err != nil {
		return fmt.Errorf("encode control frame: %w", err)
	}
	if len(b) == 0 {
		return fmt.Errorf("encode control frame: empty frame")
	}
	if len(b) > MaxControlFrame {
		return fmt.Errorf("control frame of %d bytes exceeds the %d-byte limit", len(b), MaxControlFrame)
	}
	if len(b) > c.maxSend {
		return fmt.Errorf("control frame of %d bytes exceeds the channel's %d-byte send buffer (net.core.wmem_max)", len(b), c.maxSend)
	}
	var oob []byte
	if fd != nil {
		n, err := rawFD(fd)
		if err != nil {
			return fmt.Errorf("attach descriptor: %w", err)
		}
		oob = unix.UnixRights(n)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.uc.sendDatagram(b, oob)
}

// SendRaw sends b as one datagram with the given descriptors attached, bypassing encoding
// and size checks. It exists for harnesses that inject malformed frames.
func (c *ControlConn) SendRaw(b []byte, fds ...int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.uc.sendDatagram(b, oob)
}

// Recv receives and decodes one frame. It returns the frame and, for CreateSession, the one
// attached descriptor as an *os.File the caller then owns. On any error every descriptor that
// arrived with the datagram has been closed. Errors are ErrClosed (wrapped), a
// *ViolationError, or an I/O error.
func (c *ControlConn) Recv() (*cuav1.ControlFrame, *os.File, error) {
	n, oobn, flags, err := c.uc.recv(c.rbuf, c.oob)
	if err != nil {
		return nil, nil, err
	}
	fds, ferr := parseRights(c.oob[:oobn])
	fail := func(err error) (*cuav1.ControlFrame, *os.File, error) {
		closeFDs(fds)
		return nil, nil, err
	}
	if ferr != nil {
		return fail(ferr)
	}
	if flags&unix.MSG_CTRUNC != 0 {
		return fail(violation("truncated_control_message", "ancillary data truncated (more than %d descriptors)", maxControlFDs))
	}
	if flags&unix.MSG_TRUNC != 0 {
		return fail(violation("oversized_frame", "control frame exceeds %d bytes", MaxControlFrame))
	}
	if n == 0 {
		// A zero-length datagram and end-of-file look alike on SOCK_SEQPACKET; both end
		// the channel.
		return fail(fmt.Errorf("%w: end of file", ErrClosed))
	}
	frame, err := DecodeControl(c.rbuf[:n], len(fds))
	if err != nil {
		return fail(err)
	}
	if len(fds) == 1 {
		f, err := FileFromFD(fds[0], "session-channel")
		if err != nil {
			return fail(err)
		}
		return frame, f, nil
	}
	return frame, nil, nil
}

// DecodeControl decodes one control datagram strictly and checks that the number of
// descriptors that came with it suits its kind: exactly one on CreateSession, none elsewhere.
func DecodeControl(b []byte, nfds int) (*cuav1.ControlFrame, error) {
	if len(b) == 0 {
		return nil, violation("empty_frame", "empty control frame")
	}
	if len(b) > MaxControlFrame {
		return nil, violation("oversized_frame", "control frame of %d bytes exceeds %d", len(b), MaxControlFrame)
	}
	frame := &cuav1.ControlFrame{}
	if err := (proto.UnmarshalOptions{}).Unmarshal(b, frame); err != nil {
		return nil, violation("malformed_frame", "decode control frame: %v", err)
	}
	if err := checkStrict(frame.ProtoReflect(), 0); err != nil {
		return nil, err
	}
	if frame.GetProtocolVersion() == 0 {
		return nil, violation("missing_version", "control frame has no protocol_version")
	}
	if frame.GetBody() == nil {
		return nil, violation("unknown_kind", "control frame has no body of a known kind")
	}
	_, isCreate := frame.GetBody().(*cuav1.ControlFrame_CreateSession)
	switch {
	case isCreate && nfds != 1:
		return nil, violation("missing_fd", "CreateSession must carry exactly one descriptor, got %d", nfds)
	case !isCreate && nfds != 0:
		return nil, violation("unexpected_fd", "%s must not carry descriptors, got %d", KindOf(frame), nfds)
	}
	return frame, nil
}

// KindOf names a control frame's kind for logs and errors.
func KindOf(frame *cuav1.ControlFrame) string {
	switch frame.GetBody().(type) {
	case *cuav1.ControlFrame_Hello:
		return "Hello"
	case *cuav1.ControlFrame_Ready:
		return "Ready"
	case *cuav1.ControlFrame_CreateSession:
		return "CreateSession"
	case *cuav1.ControlFrame_SessionCreated:
		return "SessionCreated"
	case *cuav1.ControlFrame_RevokeSession:
		return "RevokeSession"
	case *cuav1.ControlFrame_Revoked:
		return "Revoked"
	case *cuav1.ControlFrame_ConsentRequest:
		return "ConsentRequest"
	case *cuav1.ControlFrame_ConsentDecision:
		return "ConsentDecision"
	case *cuav1.ControlFrame_Shutdown:
		return "Shutdown"
	case *cuav1.ControlFrame_Error:
		return "Error"
	case *cuav1.ControlFrame_JournalEntry:
		return "JournalEntry"
	case *cuav1.ControlFrame_JournalAck:
		return "JournalAck"
	case *cuav1.ControlFrame_StatusRequest:
		return "StatusRequest"
	case *cuav1.ControlFrame_WorkerStatus:
		return "WorkerStatus"
	case *cuav1.ControlFrame_PersonActivity:
		return "PersonActivity"
	default:
		return "unknown"
	}
}

// Close closes the channel; the peer sees end-of-file. It is idempotent.
func (c *ControlConn) Close() error { return c.uc.close() }

// CloseWrite shuts down the sending half: the peer sees end-of-file while this end can
// still receive what the peer sends before it closes.
func (c *ControlConn) CloseWrite() error { return c.uc.closeWrite() }

// CloseRead shuts down the receiving half: a blocked Recv returns ErrClosed.
func (c *ControlConn) CloseRead() error { return c.uc.closeRead() }

// SetDeadline sets the read and write deadlines of the channel (harnesses bound every
// exchange with it); a Recv or Send past it fails with an error for which IsTimeout holds.
// A Recv that timed out leaves the channel usable. Zero clears the deadlines.
func (c *ControlConn) SetDeadline(t time.Time) error { return c.uc.f.SetDeadline(t) }

// SetReadDeadline sets the deadline for Recv; zero clears it.
func (c *ControlConn) SetReadDeadline(t time.Time) error { return c.uc.f.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline for Send; zero clears it.
func (c *ControlConn) SetWriteDeadline(t time.Time) error { return c.uc.f.SetWriteDeadline(t) }
