package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Context is a session's immutable authorization context. The worker binds it to the
// session's channel at CreateSession from the trusted host's frame; every request arriving
// on that channel is decided under it, and nothing a request carries (arguments, labels,
// metadata) is ever read into it.
type Context struct {
	// Generation is the worker generation (hex) the session belongs to.
	Generation string
	// Label is the public label: it names the session, it grants nothing.
	Label string
	// Mode is fixed for the session's life.
	Mode Mode
	// Manifest is the bounded session's parsed manifest (nil otherwise), and
	// ManifestSHA256 the hash of its bytes.
	Manifest       *Manifest
	ManifestSHA256 string
	// Created and Expires bound the session's life; IdleTTL ends it after inactivity.
	Created time.Time
	Expires time.Time
	IdleTTL time.Duration
	// ManagedPolicySHA256 and UserPolicySHA256 identify the policy snapshot ("" when a
	// layer is not configured).
	ManagedPolicySHA256 string
	UserPolicySHA256    string
	// OwnsDisplay is true when the host created the worker's display for it (a private
	// display): the whole display is the session's own, so observing it and input at
	// desktop coordinates need no consent in standard mode. Windows of processes the
	// session did not launch stay foreign, and the hard invariants still hold.
	OwnsDisplay bool
}

// SessionRequest is a CreateSession as the worker received it from the host.
type SessionRequest struct {
	Label    string
	Mode     Mode
	Manifest []byte
	// ManifestSHA256 is the hash the host computed over Manifest.
	ManifestSHA256 string
	TTL            time.Duration
	IdleTTL        time.Duration
	// OwnsDisplay: see Context.OwnsDisplay; the worker sets it from the host's display
	// facts, never from a request.
	OwnsDisplay bool
}

// NewContext admits a session request under the ceiling and returns its context: the mode
// and lifetimes must fit the ceiling; a bounded session needs a manifest (and only a bounded
// one takes one), whose bytes must hash to the host's hash and parse strictly against inv.
// The manifest's expires_after and idle_timeout shorten the session's lifetimes.
func NewContext(ceiling Ceiling, req SessionRequest, inv *Inventory, now time.Time) (*Context, error) {
	if err := ceiling.Admit(req.Mode, req.TTL, req.IdleTTL); err != nil {
		return nil, err
	}
	c := &Context{Label: req.Label, Mode: req.Mode, Created: now, IdleTTL: req.IdleTTL, OwnsDisplay: req.OwnsDisplay}
	ttl := req.TTL
	switch {
	case req.Mode == Bounded && len(req.Manifest) == 0:
		return nil, fmt.Errorf("a bounded session needs a manifest")
	case req.Mode != Bounded && len(req.Manifest) > 0:
		return nil, fmt.Errorf("only bounded sessions take a manifest (mode %s)", req.Mode)
	case req.Mode == Bounded:
		sum := sha256.Sum256(req.Manifest)
		if got := hex.EncodeToString(sum[:]); !equalFoldHex(got, req.ManifestSHA256) {
			return nil, fmt.Errorf("manifest hash mismatch: frame says %q, bytes hash to %s", req.ManifestSHA256, got)
		}
		m, err := ParseManifest(req.Manifest, inv)
		if err != nil {
			return nil, err
		}
		c.Manifest, c.ManifestSHA256 = m, m.SHA256
		ttl = min(ttl, m.ExpiresAfter)
		c.IdleTTL = min(c.IdleTTL, m.IdleTimeout)
	}
	c.Expires = now.Add(ttl)
	return c, nil
}

func equalFoldHex(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'F' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'F' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
