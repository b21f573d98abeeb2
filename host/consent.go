package host

import (
	"time"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// serveConsent answers one ConsentRequest from the worker on a goroutine of its own (the
// provider may take as long as a person does): a ConsentDecision from the provider, or a
// ControlError authorization_required when there is no provider or it could ask no one.
// The worker never grants on anything else.
func (h *Host) serveConsent(callID uint64, req *cuav1.ConsentRequest) {
	h.consentWG.Add(1)
	go func() {
		defer h.consentWG.Done()
		reply := &cuav1.ControlFrame{ProtocolVersion: h.version, CallId: callID}
		r, decodeErr := consentRequestFromProto(req)
		switch {
		case decodeErr != nil:
			// Nobody is asked about what the host cannot describe: the call is denied.
			h.log.Warn("consent request refused", "session", req.GetLabel(), "tool", req.GetTool(), "err", decodeErr)
			reply.Body = &cuav1.ControlFrame_Error{Error: &cuav1.ControlError{
				Code: string(authz.CodeAuthorizationDeclined), Message: "the host cannot describe this request to anyone: " + decodeErr.Error()}}
		case h.opts.Consent == nil:
			reply.Body = consentUnavailable("the host has no consent provider (start with --consent tty, or use a bounded manifest)")
		default:
			d := h.opts.Consent(h.consentCtx, r)
			switch {
			case d.Unavailable:
				reply.Body = consentUnavailable("the host's consent provider could ask no one")
			default:
				if d.TTL < 0 || !d.Granted {
					d.TTL = 0
				}
				reply.Body = &cuav1.ControlFrame_ConsentDecision{ConsentDecision: &cuav1.ConsentDecision{
					Granted: d.Granted, TtlSeconds: uint32(min(d.TTL, maxConsentTTL) / time.Second),
				}}
			}
		}
		h.log.Info("consent", "session", req.GetLabel(), "tool", req.GetTool(), "resource", req.GetResource(),
			"operation", req.GetOperation(), "granted", reply.GetConsentDecision().GetGranted())
		if err := h.ctrl.Send(reply, nil); err != nil {
			h.log.Debug("send consent decision", "err", err)
		}
	}()
}

// consentRequestFromProto decodes a worker's ConsentRequest. A kind or operation this
// build does not know (or an unspecified one) is an error: the request is refused, never
// shown as something else.
func consentRequestFromProto(req *cuav1.ConsentRequest) (ConsentRequest, error) {
	kind, err := authz.ConsentKindFromProto(req.GetKind())
	if err != nil {
		return ConsentRequest{}, err
	}
	op, err := authz.ConsentOpFromProto(req.GetOp())
	if err != nil {
		return ConsentRequest{}, err
	}
	return ConsentRequest{
		Session: req.GetLabel(), Tool: req.GetTool(), Resource: req.GetResource(),
		Operation: op.String(), Description: req.GetDescription(), Kind: kind, Op: op,
		Title: req.GetTitle(), Executable: req.GetExecutable(), PID: int(req.GetPid()),
		Command: req.GetCommand(), Path: req.GetPath(),
	}, nil
}

// maxConsentTTL bounds one grant; the session's end revokes it earlier.
const maxConsentTTL = 24 * time.Hour

func consentUnavailable(msg string) *cuav1.ControlFrame_Error {
	return &cuav1.ControlFrame_Error{Error: &cuav1.ControlError{Code: string(authz.CodeAuthorizationRequired), Message: msg}}
}
