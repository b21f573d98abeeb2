package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// MaxSessionFrame is the largest session envelope, in bytes, either side sends or accepts.
const MaxSessionFrame = 32 << 20

// headerLen is the session frame header: bytes 0–3 hold the payload length, u32 big-endian.
const headerLen = 4

// readChunk is how much a session reader asks the kernel for at once.
const readChunk = 64 << 10

// SessionConn is one end of a session channel. Send may be called from several goroutines;
// Recv must be called from one goroutine at a time.
type SessionConn struct {
	uc *sockConn

	// The fields below are owned by the reader (Recv).
	buf  []byte // buffered bytes; buf[r:w] are unread
	r, w int
	oob  []byte

	// sendMu serialises writers so frames never interleave.
	sendMu sync.Mutex
	wbuf   []byte // guarded by sendMu
}

// NewSessionConn wraps one end of a session socketpair. It takes ownership of f.
func NewSessionConn(f *os.File) (*SessionConn, error) {
	uc, err := newSockConn(f)
	if err != nil {
		return nil, fmt.Errorf("session channel: %w", err)
	}
	if typ := uc.sockType(); typ != unix.SOCK_STREAM {
		uc.close()
		return nil, fmt.Errorf("session channel: socket type %d, want SOCK_STREAM", typ)
	}
	return &SessionConn{
		uc:  uc,
		buf: make([]byte, readChunk),
		oob: make([]byte, unix.CmsgSpace(4*4)),
	}, nil
}

// SendError is returned by Send when the envelope could not be written completely.
// Written tells whether any byte reached the channel: when none did, the peer provably
// never saw the request (outcome NOT_STARTED); otherwise it may have (UNKNOWN).
type SendError struct {
	Written int
	Err     error
}

// Error implements error.
func (e *SendError) Error() string {
	return fmt.Sprintf("send envelope (%d bytes written): %v", e.Written, e.Err)
}

// Unwrap returns the underlying error.
func (e *SendError) Unwrap() error { return e.Err }

// Send encodes env and writes it as one frame. An encoding or size error writes nothing
// and is returned as is; an I/O error is a *SendError.
func (c *SessionConn) Send(env *cuav1.Envelope) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	b := append(c.wbuf[:0], 0, 0, 0, 0)
	b, err := proto.MarshalOptions{}.MarshalAppend(b, env)
	if err != nil {
		return fmt.Errorf("encode envelope: %w", err)
	}
	size := len(b) - headerLen
	if size == 0 {
		return fmt.Errorf("encode envelope: empty envelope")
	}
	if size > MaxSessionFrame {
		return fmt.Errorf("envelope of %d bytes exceeds the %d-byte limit", size, MaxSessionFrame)
	}
	binary.BigEndian.PutUint32(b[:headerLen], uint32(size))
	if cap(b) <= readChunk {
		c.wbuf = b
	}
	n, err := c.uc.write(b)
	if err != nil {
		return &SendError{Written: n, Err: err}
	}
	return nil
}

// SendRaw writes b verbatim. It exists for harnesses that inject malformed frames.
func (c *SessionConn) SendRaw(b []byte) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	n, err := c.uc.write(b)
	if err != nil {
		return &SendError{Written: n, Err: err}
	}
	return nil
}

// Recv reads and decodes one envelope. Errors are ErrClosed (wrapped), a *ViolationError
// (the stream can no longer be trusted and must be closed), or an I/O error.
func (c *SessionConn) Recv() (*cuav1.Envelope, error) {
	if err := c.fill(headerLen); err != nil {
		return nil, err
	}
	size := int(binary.BigEndian.Uint32(c.buf[c.r:]))
	if size == 0 {
		return nil, violation("empty_frame", "session frame with zero length")
	}
	if size > MaxSessionFrame {
		return nil, violation("oversized_frame", "session frame of %d bytes exceeds %d", size, MaxSessionFrame)
	}
	// The frame is consumed only once it is complete, so a Recv interrupted by a read
	// deadline can simply be called again.
	if err := c.fill(headerLen + size); err != nil {
		return nil, err
	}
	payload := c.buf[c.r+headerLen : c.r+headerLen+size]
	c.r += headerLen + size
	env, err := DecodeEnvelope(payload) // copies what it keeps
	if len(c.buf) > readChunk && c.r == c.w {
		// Give back a buffer grown for one large frame.
		c.buf, c.r, c.w = make([]byte, readChunk), 0, 0
	}
	return env, err
}

// fill makes at least n unread bytes available in c.buf[c.r:c.w].
func (c *SessionConn) fill(n int) error {
	if c.w-c.r >= n {
		return nil
	}
	if c.r > 0 { // compact
		copy(c.buf, c.buf[c.r:c.w])
		c.w -= c.r
		c.r = 0
	}
	if n > len(c.buf) {
		grown := make([]byte, n)
		copy(grown, c.buf[:c.w])
		c.buf = grown
	}
	for c.w-c.r < n {
		m, oobn, _, err := c.uc.recv(c.buf[c.w:], c.oob)
		if oobn > 0 {
			fds, _ := parseRights(c.oob[:oobn])
			closeFDs(fds)
			return violation("unexpected_fd", "a session channel never carries descriptors (got %d)", len(fds))
		}
		if err != nil {
			if IsTimeout(err) {
				return err
			}
			if c.w > c.r {
				return fmt.Errorf("%w: truncated frame (%d of %d bytes)", ErrClosed, c.w-c.r, n)
			}
			return err
		}
		if m == 0 {
			return fmt.Errorf("%w: end of file", ErrClosed)
		}
		c.w += m
	}
	return nil
}

// DecodeEnvelope decodes one envelope strictly.
func DecodeEnvelope(b []byte) (*cuav1.Envelope, error) {
	if len(b) == 0 {
		return nil, violation("empty_frame", "empty envelope")
	}
	if len(b) > MaxSessionFrame {
		return nil, violation("oversized_frame", "envelope of %d bytes exceeds %d", len(b), MaxSessionFrame)
	}
	env := &cuav1.Envelope{}
	if err := (proto.UnmarshalOptions{}).Unmarshal(b, env); err != nil {
		return nil, violation("malformed_frame", "decode envelope: %v", err)
	}
	if err := checkEnvelopeStrict(env); err != nil {
		return nil, err
	}
	if env.GetProtocolVersion() == 0 {
		return nil, violation("missing_version", "envelope has no protocol_version")
	}
	if env.GetBody() == nil {
		return nil, violation("unknown_kind", "envelope has no body of a known kind")
	}
	return env, nil
}

// SetReadDeadline sets the deadline for Recv; a Recv that hits it returns an error for which
// IsTimeout is true and leaves the stream intact (call Recv again). Zero clears it.
func (c *SessionConn) SetReadDeadline(t time.Time) error { return c.uc.f.SetReadDeadline(t) }

// IsTimeout reports whether err is a read deadline expiring.
func IsTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// Close closes the channel; the peer sees end-of-file. It is idempotent.
func (c *SessionConn) Close() error { return c.uc.close() }

// CloseRead shuts down the receiving half: a blocked Recv returns ErrClosed.
func (c *SessionConn) CloseRead() error { return c.uc.closeRead() }

// SetWriteDeadline sets the deadline for Send; zero clears it.
func (c *SessionConn) SetWriteDeadline(t time.Time) error { return c.uc.f.SetWriteDeadline(t) }
