package authz

import (
	"fmt"
	"time"
)

// Ceiling bounds every session a host may create on a worker. The host fixes it before the
// worker is Ready; it never changes afterwards.
type Ceiling struct {
	// AllowedModes is a set, not an order.
	AllowedModes []Mode
	// UnrestrictedAcknowledged must be true for Unrestricted to be allowed at all.
	UnrestrictedAcknowledged bool
	// MaxSessionTTL and MaxIdleTTL bound every session's lifetimes.
	MaxSessionTTL time.Duration
	MaxIdleTTL    time.Duration
}

// DefaultCeiling allows standard and bounded sessions of up to 24 hours, idle for at most
// one hour.
func DefaultCeiling() Ceiling {
	return Ceiling{AllowedModes: []Mode{Standard, Bounded}, MaxSessionTTL: 24 * time.Hour, MaxIdleTTL: time.Hour}
}

// Validate reports whether the ceiling itself is coherent.
func (c Ceiling) Validate() error {
	if len(c.AllowedModes) == 0 {
		return fmt.Errorf("ceiling allows no mode")
	}
	for _, m := range c.AllowedModes {
		if m < Standard || m > Unrestricted {
			return fmt.Errorf("ceiling names invalid mode %d", int(m))
		}
		if m == Unrestricted && !c.UnrestrictedAcknowledged {
			return fmt.Errorf("ceiling allows unrestricted sessions without acknowledging them")
		}
	}
	if c.MaxSessionTTL <= 0 || c.MaxIdleTTL <= 0 {
		return fmt.Errorf("ceiling TTLs must be positive (session %v, idle %v)", c.MaxSessionTTL, c.MaxIdleTTL)
	}
	if c.MaxIdleTTL > c.MaxSessionTTL {
		return fmt.Errorf("ceiling idle TTL %v exceeds session TTL %v", c.MaxIdleTTL, c.MaxSessionTTL)
	}
	return nil
}

// Admit reports whether a session with the given mode and lifetimes fits under the ceiling.
func (c Ceiling) Admit(mode Mode, ttl, idle time.Duration) error {
	allowed := false
	for _, m := range c.AllowedModes {
		if m == mode {
			allowed = true
		}
	}
	if !allowed {
		return fmt.Errorf("mode %s is outside the host's ceiling", mode)
	}
	if mode == Unrestricted && !c.UnrestrictedAcknowledged {
		return fmt.Errorf("unrestricted sessions were not acknowledged by the host")
	}
	if ttl <= 0 || idle <= 0 {
		return fmt.Errorf("session TTL and idle TTL must be positive (got %v, %v)", ttl, idle)
	}
	if ttl > c.MaxSessionTTL {
		return fmt.Errorf("session TTL %v exceeds the ceiling's %v", ttl, c.MaxSessionTTL)
	}
	if idle > c.MaxIdleTTL {
		return fmt.Errorf("idle TTL %v exceeds the ceiling's %v", idle, c.MaxIdleTTL)
	}
	if idle > ttl {
		return fmt.Errorf("idle TTL %v exceeds session TTL %v", idle, ttl)
	}
	return nil
}
