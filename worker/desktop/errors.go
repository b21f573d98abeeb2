package desktop

import (
	"context"
	"errors"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// refusal maps an x11 error met before any side effect to a refusal; the message keeps
// the x11 error's text. Errors it does not know become unsupported.
func refusal(err error) error {
	var r *authz.Refusal
	switch {
	case errors.As(err, &r):
		return r
	case errors.Is(err, x11.ErrWindowNotFound):
		return authz.Refuse(authz.CodeWindowNotFound, "%v; refresh list_windows", err)
	case errors.Is(err, x11.ErrUnknownKey), errors.Is(err, x11.ErrOutOfBounds),
		errors.Is(err, x11.ErrInvalidArgument), errors.Is(err, x11.ErrNotFound),
		errors.Is(err, x11.ErrNoProcess), errors.Is(err, x11.ErrWindowNotViewable),
		errors.Is(err, x11.ErrNoKeycode):
		return authz.Refuse(authz.CodeInvalidArguments, "%v", err)
	case errors.Is(err, atspi.ErrStale), errors.Is(err, atspi.ErrUnknownSnapshot):
		return authz.Refuse(authz.CodeStaleElement, "%v; call get_window_state again", err)
	case errors.Is(err, atspi.ErrInvalidToken), errors.Is(err, atspi.ErrNoSuchElement), errors.Is(err, atspi.ErrOutOfRange):
		return authz.Refuse(authz.CodeInvalidArguments, "%v", err)
	case errors.Is(err, atspi.ErrNotResponding):
		return authz.Refuse(authz.CodeDeadlineExceeded, "%v", err)
	case errors.Is(err, atspi.ErrUnsupported), errors.Is(err, atspi.ErrNoBus), errors.Is(err, atspi.ErrClosed),
		errors.Is(err, atspi.ErrNotAccessible), errors.Is(err, atspi.ErrWindowNotMatched):
		return authz.Refuse(authz.CodeUnsupported, "%v", err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return authz.Refuse(authz.CodeDeadlineExceeded, "%v", err)
	case errors.Is(err, x11.ErrUnsupported), errors.Is(err, x11.ErrNoDisplay), errors.Is(err, x11.ErrClosed):
		return authz.Refuse(authz.CodeUnsupported, "%v", err)
	}
	return authz.Refuse(authz.CodeUnsupported, "desktop backend: %v", err)
}

func invalid(format string, args ...any) error {
	return authz.Refuse(authz.CodeInvalidArguments, format, args...)
}
