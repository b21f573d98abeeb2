package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

// ErrClosed reports that the peer closed the channel or the channel was closed locally.
// Every close-like condition (EOF, EPIPE, ECONNRESET, use of a closed connection) is
// reported as ErrClosed at this one boundary.
var ErrClosed = errors.New("wire: channel closed")

// ViolationError is a protocol violation: a frame the receiver must not interpret. The
// receiver reacts by tearing the channel down; it never guesses.
type ViolationError struct {
	// Reason is a short stable token, for example "oversized_frame" or "unexpected_fd".
	Reason string
	// Detail is a human-readable explanation.
	Detail string
}

// Error implements error.
func (e *ViolationError) Error() string {
	return fmt.Sprintf("wire: protocol violation (%s): %s", e.Reason, e.Detail)
}

func violation(reason, format string, args ...any) *ViolationError {
	return &ViolationError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// IsViolation reports whether err is (or wraps) a *ViolationError and returns it.
func IsViolation(err error) (*ViolationError, bool) {
	var v *ViolationError
	ok := errors.As(err, &v)
	return v, ok
}

// closeLike maps the many spellings of "the other end is gone" to ErrClosed.
func closeLike(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, os.ErrClosed),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ENOTCONN):
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return err
}
