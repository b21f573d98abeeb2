package host

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host/personui"
)

// DialogConsentOptions configure ConsentDialog.
type DialogConsentOptions struct {
	// Display and XAuthority name the display to ask on and its cookie: the display the
	// worker drives, where the person is.
	Display    string
	XAuthority string
	// Mode names the sessions' mode for the dialog ("standard"); empty leaves it out.
	Mode string
	// GrantTTL is how long "Allow for …" is reused for the same resource and operation;
	// zero means 15 minutes.
	GrantTTL time.Duration
	// Timeout bounds one question; no answer in time denies. Zero means 2 minutes.
	Timeout time.Duration
	// OnShown, when set, is told where each dialog and its buttons are (tests, benchmarks).
	OnShown func(personui.Shown)
	// Logger receives the dialogs' debug logs; nil discards them.
	Logger *slog.Logger
}

// ConsentDialog returns a consent provider that asks the person with a dialog window that
// the host draws itself on the display (package personui): "Deny", "Allow once" (this call)
// or "Allow for …" (GrantTTL). The window belongs to the host's process, which every
// worker protects, so no session can click, type into, capture or stop it; the dialog
// itself takes answers only from the person's input devices (on a display without any,
// from any XTEST client but the sessions' own devices: personui.ProbeInput says which).
// No answer within Timeout, or another window keeping itself over the dialog, denies; a
// dialog that cannot be shown reports Unavailable, and the call is refused with
// authorization_required. It never grants on error.
func ConsentDialog(opts DialogConsentOptions) ConsentFunc {
	if opts.GrantTTL == 0 {
		opts.GrantTTL = 15 * time.Minute
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	return func(ctx context.Context, req ConsentRequest) ConsentDecision {
		qctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
		ans, err := personui.Ask(qctx, personui.Options{Display: opts.Display, XAuthority: opts.XAuthority, OnShown: opts.OnShown, Logger: opts.Logger},
			dialogRequest(req, opts.Mode, opts.GrantTTL))
		switch {
		case errors.Is(err, personui.ErrDisplay):
			return ConsentDecision{Unavailable: true}
		case errors.Is(err, personui.ErrCovered):
			// Another window kept itself over the dialog: what the person saw, or where
			// they clicked, cannot be trusted. The question is denied.
			if opts.Logger != nil {
				opts.Logger.Warn("the consent dialog stayed covered by another window: denied", "session", req.Session, "tool", req.Tool, "err", err)
			}
			return ConsentDecision{}
		case err != nil:
			return ConsentDecision{}
		case ans == personui.AllowOnce:
			return ConsentDecision{Granted: true}
		case ans == personui.AllowForSession:
			return ConsentDecision{Granted: true, TTL: opts.GrantTTL}
		}
		return ConsentDecision{}
	}
}

// dialogRequest lays a consent request out for the dialog. The request's kind and
// operation are ones the host decoded (consentRequestFromProto); a kind the dialog cannot
// lay out is shown as the command line or description it carries.
func dialogRequest(req ConsentRequest, mode string, ttl time.Duration) personui.Request {
	out := personui.Request{Session: req.Session, Mode: mode, Tool: req.Tool, SessionGrant: ttl}
	switch req.Op {
	case authz.OpObserve:
		out.Operation = personui.Observe
	case authz.OpTerminate:
		out.Operation = personui.Terminate
	case authz.OpLaunch:
		out.Operation = personui.Launch
	case authz.OpRead:
		out.Operation = personui.Read
	case authz.OpWrite:
		out.Operation = personui.Write
	default:
		out.Operation = personui.Input
	}
	r := personui.Resource{Title: req.Title, Executable: req.Executable, PID: req.PID, Command: req.Command}
	if r.Executable != "" {
		r.App = r.Executable[strings.LastIndexByte(r.Executable, '/')+1:]
	}
	switch req.Kind {
	case authz.ResourceWindow:
		r.Kind = personui.ResourceWindow
	case authz.ResourceProcess:
		r.Kind = personui.ResourceProcess
	case authz.ResourceDisplay:
		r.Kind = personui.ResourceDisplay
	case authz.ResourceClipboard:
		r.Kind = personui.ResourceClipboard
	case authz.ResourceFile:
		r.Kind = personui.ResourceFile
		r.Path = req.Path
	default:
		r.Kind = personui.ResourceCommand
		if r.Command == "" {
			r.Command = req.Description
		}
	}
	out.Resource = r
	return out
}
