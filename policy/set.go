package policy

import (
	"context"
	"errors"
)

// Decision is the outcome of one policy check.
type Decision struct {
	// Allow is true when every configured layer allows the call.
	Allow bool
	// Tool is the canonical tool name that was decided.
	Tool string
	// Layer is the layer that denied the call ("managed" or "user"), or ""
	// when the call is allowed.
	Layer string
	// Reason explains the decision. A denial reads "Permission denied: user
	// policy: tool 'x' is not allowed by the YAML policy"; an evaluation
	// failure reads "Policy evaluation error: managed policy: …".
	Reason string
	// Err is non-nil when the denying layer failed to evaluate (it matches
	// ErrEvaluation); such a call is denied, never allowed.
	Err error
}

// Reasons given with decisions.
const (
	reasonNoPolicy   = "no policy configured"
	reasonManaged    = "allowed by the managed policy"
	reasonUser       = "allowed by the user policy"
	reasonBothLayers = "allowed by the managed and user policies"
	deniedManaged    = "Permission denied: " + LayerManaged + " policy: "
	deniedUser       = "Permission denied: " + LayerUser + " policy: "
)

// Set is the policy snapshot of a process: an optional managed layer and an
// optional user layer. It is immutable and safe for concurrent use. A nil
// *Set, like a Set without layers, allows every call.
type Set struct {
	managed *Layer // evaluated first; nil when not configured
	user    *Layer // evaluated second; nil when not configured
	allowed string // the Reason of an allowing decision
}

// NewSet returns the snapshot of a managed and a user layer; either may be
// nil (not configured). Layers come from Parse, Load or LoadLayers; NewSet
// panics on a Layer value made any other way (a programmer error).
func NewSet(managed, user *Layer) *Set {
	for _, l := range [...]*Layer{managed, user} {
		if l != nil && l.yaml == nil && l.rego == nil {
			panic("policy: NewSet: the Layer was not built by Parse or Load")
		}
	}
	s := &Set{managed: managed, user: user}
	switch {
	case managed != nil && user != nil:
		s.allowed = reasonBothLayers
	case managed != nil:
		s.allowed = reasonManaged
	case user != nil:
		s.allowed = reasonUser
	default:
		s.allowed = reasonNoPolicy
	}
	return s
}

// Managed returns the managed layer, or nil when none is configured.
func (s *Set) Managed() *Layer {
	if s == nil {
		return nil
	}
	return s.managed
}

// User returns the user layer, or nil when none is configured.
func (s *Set) User() *Layer {
	if s == nil {
		return nil
	}
	return s.user
}

// Decide checks one tool call against the managed layer, then the user
// layer; both must allow. The tool name is canonicalized and reserved
// (underscore-prefixed) arguments are ignored, so the decision depends only
// on what the pipeline's sanitize stage keeps (authz.Sanitize). args may be nil (no arguments) and is never
// modified. A Rego layer evaluates under ctx; one that fails to evaluate
// (a runtime error, a done ctx) denies, with Decision.Err set. YAML layers
// never block and do not look at ctx. It decides with no resolved target: a layer that
// looks at the target (input.target, target.* constraints) sees none.
func (s *Set) Decide(ctx context.Context, tool string, args map[string]any) Decision {
	return s.DecideTarget(ctx, tool, args, nil)
}

// DecideTarget is Decide with the resource the call touches as the authorization pipeline
// resolved it (nil: none). Rego layers see it as input.target, YAML constraints as
// target.kind, target.pid, target.window_id, target.executable and target.owner.
func (s *Set) DecideTarget(ctx context.Context, tool string, args map[string]any, target *Target) Decision {
	return s.DecideSanitized(ctx, CanonicalTool(tool), args, target)
}

// DecideSanitized is DecideTarget for a call the authorization pipeline already sanitized.
//
// Preconditions: tool is canonical (CanonicalTool(tool) == tool). Reserved arguments are
// still ignored.
func (s *Set) DecideSanitized(ctx context.Context, tool string, args map[string]any, target *Target) Decision {
	if s == nil {
		return Decision{Allow: true, Tool: tool, Reason: reasonNoPolicy}
	}
	in := input{args: args}
	if target != nil {
		in.target, in.hasTarget = *target, true
	}
	for _, l := range [...]struct {
		name   string
		layer  *Layer
		denied string
	}{
		{LayerManaged, s.managed, deniedManaged},
		{LayerUser, s.user, deniedUser},
	} {
		if l.layer == nil {
			continue
		}
		ok, reason, err := l.layer.eval().decide(ctx, tool, in, l.denied)
		if err != nil {
			if !errors.Is(err, ErrEvaluation) {
				err = &problem{msg: err.Error(), kind: ErrEvaluation, cause: err}
			}
			return Decision{
				Tool:   tool,
				Layer:  l.name,
				Reason: "Policy evaluation error: " + l.name + " policy: " + err.Error(),
				Err:    err,
			}
		}
		if !ok {
			return Decision{Tool: tool, Layer: l.name, Reason: reason}
		}
	}
	reason := s.allowed
	if reason == "" { // a Set not made by NewSet
		reason = reasonNoPolicy
	}
	return Decision{Allow: true, Tool: tool, Reason: reason}
}

// Listed reports whether tools/list should offer the tool: no configured
// layer rules it out when called with no arguments. A YAML layer lists a
// tool that it does not deny and that appears in allow.tools or in an
// allow rule; a Rego layer lists a tool for which allow holds with
// "arguments": {}. With no layer every tool is listed.
func (s *Set) Listed(ctx context.Context, tool string) bool {
	if s == nil {
		return true
	}
	tool = CanonicalTool(tool)
	for _, l := range [...]*Layer{s.managed, s.user} {
		if l != nil && !l.eval().listed(ctx, tool) {
			return false
		}
	}
	return true
}
