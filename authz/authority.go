package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Authority is what one session may do: its mode, manifest, lifetimes and the policy
// snapshot it is decided under. NewAuthority builds it once, at CreateSession, from the
// trusted host's frame, and nothing assigns to it afterwards: the worker binds it to the
// session's channel, every request arriving on that channel is decided under it, and
// nothing a request carries (arguments, labels, metadata) is ever read into it. An
// Authority is safe to share between goroutines.
type Authority struct {
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
	// OwnsDisplay: see Authority.OwnsDisplay; the worker sets it from the host's display
	// facts, never from a request.
	OwnsDisplay bool
	// Generation is the worker generation (hex) the session is created in.
	Generation string
	// ManagedPolicySHA256 and UserPolicySHA256 identify the worker's policy snapshot ("" when
	// a layer is not configured).
	ManagedPolicySHA256 string
	UserPolicySHA256    string
}

// NewAuthority admits a session request under the ceiling and returns its authority: the mode
// and lifetimes must fit the ceiling; a bounded session needs a manifest (and only a bounded
// one takes one), whose bytes must hash to the host's hash and parse strictly against inv.
// The manifest's expires_after and idle_timeout shorten the session's lifetimes.
func NewAuthority(ceiling Ceiling, req SessionRequest, inv *Inventory, now time.Time) (*Authority, error) {
	if err := ceiling.Admit(req.Mode, req.TTL, req.IdleTTL); err != nil {
		return nil, err
	}
	ttl, idle := req.TTL, req.IdleTTL
	var manifest *Manifest
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
		manifest = m
		ttl = min(ttl, m.ExpiresAfter)
		idle = min(idle, m.IdleTimeout)
	}
	a := &Authority{
		Generation: req.Generation, Label: req.Label, Mode: req.Mode,
		Created: now, Expires: now.Add(ttl), IdleTTL: idle,
		ManagedPolicySHA256: req.ManagedPolicySHA256, UserPolicySHA256: req.UserPolicySHA256,
		OwnsDisplay: req.OwnsDisplay,
	}
	if manifest != nil {
		a.Manifest, a.ManifestSHA256 = manifest, manifest.SHA256
	}
	return a, nil
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
