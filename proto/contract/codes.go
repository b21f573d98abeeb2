package contract

// Protocol-level refusal codes: the ones a session-channel caller synthesizes on its own
// side (docs/protocol.md, "Outcome") and the ones the worker answers for an envelope that
// breaks the channel's rules before any authorization runs. They are untyped so that
// authz can declare them as its own Code values and callers can use them as plain strings.
// The codes of the authorization pipeline itself belong to authz.
const (
	// CodeWorkerUnavailable: the worker is gone; the request was not written (NOT_STARTED).
	CodeWorkerUnavailable = "worker_unavailable"
	// CodeDeadlineExceeded: the call's deadline passed before dispatch (NOT_STARTED).
	CodeDeadlineExceeded = "deadline_exceeded"
	// CodeCanceled: the call was cancelled before dispatch (NOT_STARTED).
	CodeCanceled = "canceled"
	// CodeInvalidRequest: the request could not be encoded or is not a valid envelope.
	CodeInvalidRequest = "invalid_request"
	// CodeReplayedRequest: the envelope's request id is not above the last one seen on
	// its channel.
	CodeReplayedRequest = "replayed_request"
	// CodeGenerationMismatch: the envelope names another worker generation.
	CodeGenerationMismatch = "generation_mismatch"
	// CodeUnsupportedProtocolVersion: the frame's protocol version is not the negotiated one.
	CodeUnsupportedProtocolVersion = "unsupported_protocol_version"
)
