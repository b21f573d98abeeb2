package authz

import (
	"fmt"

	"github.com/cua-host/cua-host/proto/contract"
)

// Code is a stable refusal code. Callers and scripts may match on it; the message that
// travels with it is for people and may change.
type Code string

// Stable refusal codes. Where the reference system has a string for the same situation we
// use it. The protocol-level ones (deadline, cancellation, replay, generation, version,
// invalid request, worker gone) are declared by package contract, which the callers on the
// other side of the session channel share.
const (
	CodePermissionDenied           Code = "permission_denied"
	CodeUnclassifiedTool           Code = "unclassified_tool"
	CodeOutsideManifest            Code = "bounded_resource_outside_manifest"
	CodeManifestDenied             Code = "manifest_denied"
	CodeAuthorizationRequired      Code = "authorization_required"
	CodeAuthorizationDeclined      Code = "authorization_declined"
	CodeAuthorizationExpired       Code = "authorization_expired"
	CodeAuthorizationRevoked       Code = "authorization_revoked"
	CodeSessionEnded               Code = "session_ended"
	CodeSelfTargetDenied           Code = "self_target_denied"
	CodeProtectedUIDenied          Code = "protected_ui_denied"
	CodeForeignProcessTermination  Code = "foreign_process_termination_denied"
	CodeInvalidArguments           Code = "invalid_arguments"
	CodeStaleElement               Code = "stale_element_token"
	CodeWindowNotFound             Code = "window_target_not_found"
	CodeDeadlineExceeded           Code = contract.CodeDeadlineExceeded
	CodeUnsupported                Code = "unsupported"
	CodeUnknownTool                Code = "unknown_tool"
	CodeCanceled                   Code = contract.CodeCanceled
	CodeTooManyRequests            Code = "too_many_requests"
	CodeReplayedRequest            Code = contract.CodeReplayedRequest
	CodeGenerationMismatch         Code = contract.CodeGenerationMismatch
	CodeUnsupportedProtocolVersion Code = contract.CodeUnsupportedProtocolVersion
	CodeInvalidRequest             Code = contract.CodeInvalidRequest
	CodeWorkerUnavailable          Code = contract.CodeWorkerUnavailable
	// CodeInputBusy: another client holds a keyboard grab, so keys would not reach the
	// target (the reference's code), or the window manager has not yet handled a keyboard
	// mapping change and would hold a pointer press.
	CodeInputBusy Code = "input_busy"
	// CodeTargetCovered: at a point the pointer input would touch, a window the session
	// may not act on is on top of the target.
	CodeTargetCovered Code = "target_covered"
	// CodeActivationFailed: the target window did not get the keyboard focus, so keys
	// would go elsewhere.
	CodeActivationFailed Code = "activation_failed"
	// CodeBackgroundUnavailable: the call asked for (or defaulted to) background delivery
	// and no background route reaches the target; nothing was sent, and foreground delivery
	// would take the person's pointer or keyboard focus (the reference's code).
	CodeBackgroundUnavailable Code = "background_unavailable"
	// CodeDesktopCoordinateScopeRequired: pointer input at x/y without a window and
	// without scope "desktop" (or a desktop target): the coordinates would be desktop
	// coordinates, which the caller must say it means (the reference's code).
	CodeDesktopCoordinateScopeRequired Code = "desktop_coordinate_scope_required"
	// CodeAmbiguousWindowTarget: a call names a process but not which of its windows, and
	// the process has several (the reference's code).
	CodeAmbiguousWindowTarget Code = "ambiguous_window_target"
	// CodeForegroundRequired: foreground delivery on a display shared with a person was
	// asked for without a background attempt on the same window having failed first; it
	// would take the person's pointer or focus (the reference's code).
	CodeForegroundRequired Code = "foreground_required"
	// CodeMenuPathNotFound: invoke_menu's path does not match the application's menus as
	// they are (an entry missing, ambiguous, or a submenu where an item belongs); nothing
	// further was invoked.
	CodeMenuPathNotFound Code = "menu_path_not_found"
	// CodeJournalUnavailable: the host keeps a journal and could not record the call (a
	// full disk, an unwritable directory), so the call did not run.
	CodeJournalUnavailable Code = "journal_unavailable"
	// CodePersonActive: the person is using the session's nested display (their pointer
	// is inside its window on their display, or the window has their keyboard focus), so
	// the agent does not act on it; observing goes on, and acting resumes once they leave.
	CodePersonActive Code = "person_active"
	// CodeWindowMinimized: the target window is minimized (iconic), so input would reach
	// nothing visible and a capture would show nothing; nothing was sent (the reference's
	// code). Restoring it (bring_to_front) is the caller's choice.
	CodeWindowMinimized Code = "window_minimized"
	// CodeElementNotVisible: the element a token names is not on screen (it has no extents,
	// or they lie outside its window or the display), so a point inside it cannot be
	// computed; nothing was sent (the reference's code).
	CodeElementNotVisible Code = "element_not_visible"
	// CodeClipboardUnavailable: the clipboard could not be read or written (no owner
	// answered in time, or the selection could not be taken) (the reference's code).
	CodeClipboardUnavailable Code = "clipboard_unavailable"
	// CodeTypeTextIncomplete: typing stopped part-way (the target went away, or the
	// keyboard could not produce a character); the structured result says how many
	// characters were delivered (the reference's code). As an error it has outcome
	// completed: something was typed.
	CodeTypeTextIncomplete Code = "type_text_incomplete"
	// CodeCredentialNotFound: type_secret named a credential handle the session's secret
	// store does not hold (or no longer holds); nothing was typed.
	CodeCredentialNotFound Code = "credential_not_found"
	// CodeRecordingInactive: stop_recording was called while no recording was running in
	// the session.
	CodeRecordingInactive Code = "recording_inactive"
	// CodeRecordingActive: start_recording was called while a recording was running in the
	// session (stop it first).
	CodeRecordingActive Code = "recording_active"
)

// Refusal is a refused call: a stable code and a message. A refusal always means the call
// had no effect (outcome NOT_STARTED). It implements error so a tool handler can return it
// before it has touched anything.
type Refusal struct {
	Code    Code
	Message string
}

// Refuse returns a refusal with a formatted message.
func Refuse(code Code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error implements error.
func (r *Refusal) Error() string { return string(r.Code) + ": " + r.Message }
