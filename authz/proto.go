package authz

import (
	"fmt"
	"time"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// CeilingFromProto converts a wire ceiling.
func CeilingFromProto(c *cuav1.Ceiling) (Ceiling, error) {
	if c == nil {
		return Ceiling{}, fmt.Errorf("hello carries no ceiling")
	}
	out := Ceiling{
		UnrestrictedAcknowledged: c.GetUnrestrictedAcknowledged(),
		MaxSessionTTL:            time.Duration(c.GetMaxSessionTtlSeconds()) * time.Second,
		MaxIdleTTL:               time.Duration(c.GetMaxIdleTtlSeconds()) * time.Second,
	}
	for _, m := range c.GetAllowedModes() {
		mode, err := ModeFromProto(m)
		if err != nil {
			return Ceiling{}, err
		}
		out.AllowedModes = append(out.AllowedModes, mode)
	}
	return out, nil
}

// ModeFromProto converts a wire mode; MODE_UNSPECIFIED and unknown values are errors.
func ModeFromProto(m cuav1.Mode) (Mode, error) {
	switch m {
	case cuav1.Mode_MODE_STANDARD:
		return Standard, nil
	case cuav1.Mode_MODE_BOUNDED:
		return Bounded, nil
	case cuav1.Mode_MODE_UNRESTRICTED:
		return Unrestricted, nil
	}
	return 0, fmt.Errorf("invalid mode %v", m)
}

// ModeToProto converts a mode to its wire form.
func ModeToProto(m Mode) cuav1.Mode {
	switch m {
	case Standard:
		return cuav1.Mode_MODE_STANDARD
	case Bounded:
		return cuav1.Mode_MODE_BOUNDED
	case Unrestricted:
		return cuav1.Mode_MODE_UNRESTRICTED
	}
	return cuav1.Mode_MODE_UNSPECIFIED
}

// CeilingToProto converts a ceiling to its wire form.
func CeilingToProto(c Ceiling) *cuav1.Ceiling {
	out := &cuav1.Ceiling{
		UnrestrictedAcknowledged: c.UnrestrictedAcknowledged,
		MaxSessionTtlSeconds:     uint32(c.MaxSessionTTL / time.Second),
		MaxIdleTtlSeconds:        uint32(c.MaxIdleTTL / time.Second),
	}
	for _, m := range c.AllowedModes {
		out.AllowedModes = append(out.AllowedModes, ModeToProto(m))
	}
	return out
}

// consentKinds pairs each resource kind a consent request can ask about with its wire
// form; the other kinds are never asked about.
var consentKinds = map[ResourceKind]cuav1.ConsentResourceKind{
	ResourceWindow:      cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_WINDOW,
	ResourceProcess:     cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_PROCESS,
	ResourceDisplay:     cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_DISPLAY,
	ResourceClipboard:   cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_CLIPBOARD,
	ResourceApplication: cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_APPLICATION,
	ResourceFile:        cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_FILE,
}

// consentOps pairs each operation class a consent request can ask for with its wire form.
var consentOps = map[Operation]cuav1.ConsentOperation{
	OpObserve:   cuav1.ConsentOperation_CONSENT_OPERATION_OBSERVE,
	OpInput:     cuav1.ConsentOperation_CONSENT_OPERATION_INPUT,
	OpTerminate: cuav1.ConsentOperation_CONSENT_OPERATION_TERMINATE,
	OpLaunch:    cuav1.ConsentOperation_CONSENT_OPERATION_LAUNCH,
	OpRead:      cuav1.ConsentOperation_CONSENT_OPERATION_READ,
	OpWrite:     cuav1.ConsentOperation_CONSENT_OPERATION_WRITE,
}

// ConsentKindToProto converts the kind of a resource consent is asked for to its wire
// form; a kind no consent request names is CONSENT_RESOURCE_KIND_UNSPECIFIED, which the
// host refuses.
func ConsentKindToProto(k ResourceKind) cuav1.ConsentResourceKind {
	return consentKinds[k] // the zero value is UNSPECIFIED
}

// ConsentKindFromProto converts a consent request's wire kind; UNSPECIFIED and values
// this build does not know are errors.
func ConsentKindFromProto(k cuav1.ConsentResourceKind) (ResourceKind, error) {
	for kind, wire := range consentKinds {
		if wire == k && k != cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_UNSPECIFIED {
			return kind, nil
		}
	}
	return 0, fmt.Errorf("consent request for an unknown kind of resource (%d)", int32(k))
}

// ConsentOpToProto converts an operation class consent is asked for to its wire form; an
// operation no consent request names is CONSENT_OPERATION_UNSPECIFIED, which the host
// refuses.
func ConsentOpToProto(o Operation) cuav1.ConsentOperation {
	return consentOps[o]
}

// ConsentOpFromProto converts a consent request's wire operation; UNSPECIFIED and values
// this build does not know are errors.
func ConsentOpFromProto(o cuav1.ConsentOperation) (Operation, error) {
	for op, wire := range consentOps {
		if wire == o && o != cuav1.ConsentOperation_CONSENT_OPERATION_UNSPECIFIED {
			return op, nil
		}
	}
	return 0, fmt.Errorf("consent request for an unknown operation (%d)", int32(o))
}
