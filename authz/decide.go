package authz

import (
	"context"
	"time"

	"github.com/cua-host/cua-host/policy"
)

// Pipeline decides calls: stages 4–7 of docs/security.md (hard invariants, policy, risk
// classification, mode). The worker runs stages 1–3 (decode and authority, sanitize, session
// state) and resolves the call's Target before it calls Decide, and invokes the tool after.
// A Pipeline is immutable and safe for concurrent use.
type Pipeline struct {
	policy    *policy.Set
	inventory *Inventory
}

// NewPipeline returns the pipeline of a worker: its policy snapshot (nil: no layer) and its
// inventory (nil: the shipped one).
func NewPipeline(set *policy.Set, inv *Inventory) *Pipeline {
	if inv == nil {
		inv = DefaultInventory()
	}
	return &Pipeline{policy: set, inventory: inv}
}

// Policy returns the pipeline's policy snapshot (nil: no layer configured).
func (p *Pipeline) Policy() *policy.Set { return p.policy }

// Inventory returns the pipeline's inventory.
func (p *Pipeline) Inventory() *Inventory { return p.inventory }

// Decision is the pipeline's answer for one call.
type Decision struct {
	// Entry is the tool's classification once stage 6 passed.
	Entry *Entry
	// Refusal, when set, refuses the call; nothing runs.
	Refusal *Refusal
	// NeedsConsent is set when the call may run only after the host's consent provider
	// grants Resource (standard mode, a resource the session does not own, no live grant).
	NeedsConsent bool
	// Resource is the resource decided on (copied from the target).
	Resource Resource
	// AlsoConsent lists the target's further resources (Target.Also) that need a grant
	// too, in order; each is asked for like Resource.
	AlsoConsent []Resource
}

// Decide runs the hard invariants, the policy, the risk classification and the mode for a
// sanitized call of tool with args by the session c, whose resolved target is t. grants are
// the session's consent grants (nil: none). The decision depends only on these values: never
// on another session.
//
// Preconditions: tool and args are what Sanitize returned for the call; the policy decides
// on them as they are.
func (p *Pipeline) Decide(ctx context.Context, c *Authority, tool string, args map[string]any, t *Target, grants *Grants, now time.Time) Decision {
	// 4. Hard invariants, in every mode.
	if t.SelfPID != 0 {
		return refused(Refuse(CodeSelfTargetDenied, "process %d belongs to cua-host or its display and is never a target", t.SelfPID))
	}
	if t.ProtectedUIPID != 0 {
		return refused(Refuse(CodeProtectedUIDenied, "the input would land on a window of protected process %d", t.ProtectedUIPID))
	}
	// 5. Policy: managed, then user; both must allow. They see the resolved target too.
	var pt *policy.Target
	if target, ok := policyTarget(t); ok {
		pt = &target // stays on the stack: the policy does not keep it
	}
	if d := p.policy.DecideSanitized(ctx, tool, args, pt); !d.Allow {
		return refused(Refuse(CodePermissionDenied, "%s", d.Reason))
	}
	// 6. Risk classification.
	e, r := p.inventory.Classify(tool)
	if r != nil {
		return refused(r)
	}
	if t.Unresolved != nil {
		return Decision{Entry: e, Refusal: t.Unresolved}
	}
	// 7. Mode.
	d := Decision{Entry: e, Resource: t.Resource}
	consent, r := CheckMode(c.Mode, c.Manifest, e, t.Resource)
	switch {
	case r != nil:
		d.Refusal = r
		return d
	case consent && !c.owns(t.Resource):
		d.NeedsConsent = grants == nil || !grants.Covers(t.Resource.Key(), now)
	}
	for _, also := range t.Also {
		consent, r := checkResource(c.Mode, c.Manifest, e, also)
		switch {
		case r != nil:
			d.Refusal, d.NeedsConsent, d.AlsoConsent = r, false, nil
			return d
		case consent && !c.owns(also) && (grants == nil || !grants.Covers(also.Key(), now)):
			d.AlsoConsent = append(d.AlsoConsent, also)
		}
	}
	return d
}

// checkResource is stage 7 for a further resource of a call whose tool already passed
// CheckMode: the tool's own allowance is not asked again, only the resource's.
func checkResource(mode Mode, m *Manifest, e *Entry, r Resource) (needsConsent bool, refusal *Refusal) {
	return checkMode(mode, m, e, r, (*Manifest).CheckResource)
}

// Permits reports whether session c, calling the tool of entry e, may touch r without
// asking anyone: the mode and manifest allow it outright, or grants cover it.
func Permits(c *Authority, e *Entry, r Resource, grants *Grants, now time.Time) bool {
	if e == nil {
		return false
	}
	consent, refusal := checkResource(c.Mode, c.Manifest, e, r)
	return refusal == nil && (!consent || c.owns(r) || (grants != nil && grants.Covers(r.Key(), now)))
}

// owns reports whether a resource that would need consent is the session's own through its
// context rather than through a launch: the whole display, when the host created it for
// the session.
func (c *Authority) owns(r Resource) bool {
	return r.Kind == ResourceDisplay && c.OwnsDisplay
}

// policyTarget is the resolved target as the policy sees it (false when it names nothing).
func policyTarget(t *Target) (policy.Target, bool) {
	if t == nil || t.Unresolved != nil {
		return policy.Target{}, false
	}
	r := t.Resource
	switch r.Kind {
	case ResourceWindow, ResourceProcess, ResourceDisplay, ResourceClipboard, ResourceApplication:
	default:
		return policy.Target{}, false
	}
	pt := policy.Target{Kind: r.Kind.String(), PID: r.PID, WindowID: r.Window, Executable: r.Executable}
	if r.PID > 0 {
		pt.Owner = policy.OwnerForeign
		if r.Owned {
			pt.Owner = policy.OwnerSession
		}
	}
	return pt, true
}

func refused(r *Refusal) Decision { return Decision{Refusal: r} }

// CheckMode is stage 7 for a classified call: bounded sessions check the manifest,
// standard sessions need consent for resources they do not own, unrestricted sessions pass.
// It returns needsConsent when a grant (held or still to be asked) is required.
func CheckMode(mode Mode, m *Manifest, e *Entry, r Resource) (needsConsent bool, refusal *Refusal) {
	return checkMode(mode, m, e, r, func(m *Manifest, r Resource) *Refusal { return m.Check(e, r) })
}

// checkMode applies the tool's behaviour in mode to r; a bounded session's manifest is asked
// through inManifest.
func checkMode(mode Mode, m *Manifest, e *Entry, r Resource, inManifest func(*Manifest, Resource) *Refusal) (needsConsent bool, refusal *Refusal) {
	switch resourceBehavior(mode, e, r) {
	case Allow:
		return false, nil
	case RequireGrant:
		return needsGrant(r), nil
	case ManifestScoped:
		if m == nil {
			return false, Refuse(CodeOutsideManifest, "a bounded session has no manifest")
		}
		return false, inManifest(m, r)
	}
	return false, Refuse(CodePermissionDenied, "tool %q is denied in %s mode", e.Tool, mode)
}

// resourceBehavior is what mode does with a call of e's tool touching r: the tool's own
// behaviour, except for a file, which is the same whatever the tool: a grant in standard
// mode (a clipboard_write that may run freely must not read any file it names), the
// manifest's files in bounded mode, nothing more in unrestricted mode.
func resourceBehavior(mode Mode, e *Entry, r Resource) Behavior {
	if r.Kind != ResourceFile || !e.Exposed() {
		return e.Behavior(mode)
	}
	switch mode {
	case Standard:
		return RequireGrant
	case Bounded:
		return ManifestScoped
	case Unrestricted:
		return Allow
	}
	return Deny
}

// needsGrant reports whether a standard session needs consent for r: windows and processes
// it did not launch, the whole display, reading the clipboard, reading or writing any file,
// and launching anything but a desktop application the system declares (see
// Resource.Declared).
func needsGrant(r Resource) bool {
	switch r.Kind {
	case ResourceApplication:
		return !r.Declared
	case ResourceWindow, ResourceProcess:
		return !r.Owned
	case ResourceDisplay:
		return true
	case ResourceClipboard:
		return r.Op == OpObserve
	case ResourceFile:
		return true
	}
	return false
}

// Listed reports whether tools/list should offer tool to session c: the tool is classified
// and exposed, the policy lists it, and a bounded session's manifest allows it.
func (p *Pipeline) Listed(ctx context.Context, c *Authority, tool string) (*Entry, bool) {
	e, r := p.inventory.Classify(tool)
	if r != nil {
		return nil, false
	}
	if c.Mode == Bounded && (c.Manifest == nil || !c.Manifest.Allows(tool)) {
		return nil, false
	}
	return e, p.policy.Listed(ctx, tool)
}
