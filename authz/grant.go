package authz

import (
	"sync"
	"time"
)

// Grants holds one session's consent grants. A grant covers exactly one GrantKey (one
// resource, one operation class) until it expires; Revoke drops every grant for good when
// the session ends. The zero value is ready to use; it is safe for concurrent use.
type Grants struct {
	// mu guards the fields below.
	mu sync.Mutex
	// until maps a scope to the end of its grant.
	until map[GrantKey]time.Time
	// revoked is set once the session ended: no grant is kept or honoured afterwards.
	revoked bool
}

// Covers reports whether a grant for exactly k is live at now. An expired grant is
// forgotten, so the next call asks again.
func (g *Grants) Covers(k GrantKey, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.revoked {
		return false
	}
	until, ok := g.until[k]
	if !ok {
		return false
	}
	if !now.Before(until) {
		delete(g.until, k)
		return false
	}
	return true
}

// Add records a grant for exactly k until the given time. It does nothing after Revoke or
// when until is not after now.
func (g *Grants) Add(k GrantKey, now, until time.Time) {
	if !now.Before(until) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.revoked {
		return
	}
	if g.until == nil {
		g.until = map[GrantKey]time.Time{}
	}
	if cur, ok := g.until[k]; !ok || cur.Before(until) {
		g.until[k] = until
	}
}

// Revoke drops every grant; later Add calls are ignored.
func (g *Grants) Revoke() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.revoked = true
	g.until = nil
}

// Len returns the number of grants held (live or not yet noticed to be expired).
func (g *Grants) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.until)
}
