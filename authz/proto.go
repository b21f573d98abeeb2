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
