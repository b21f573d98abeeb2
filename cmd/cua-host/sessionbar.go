package main

import (
	"sync"

	"github.com/cua-host/cua-host/host/personui"
)

// sessionBar is what `run`'s session indicator shows: its one session, with who has control
// of a nested display, until Stop (or a covered bar) revoked it. The indicator may appear
// after the first report of the person's activity; each change is shown once it is there.
// Its methods are safe for concurrent use and never block on the display.
type sessionBar struct {
	mu      sync.Mutex
	ind     *personui.Indicator // nil until shown
	session personui.Session
	ended   bool
}

// newSessionBar returns the bar of session label in mode, not yet shown.
func newSessionBar(label, mode string) *sessionBar {
	return &sessionBar{session: personui.Session{Label: label, Mode: mode}}
}

// show puts the bar on ind.
func (b *sessionBar) show(ind *personui.Indicator) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ind = ind
	b.applyLocked()
}

// person records whether the person has taken over the nested display (host.Options.OnPerson).
func (b *sessionBar) person(active bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.session.PersonInControl = active
	b.applyLocked()
}

// end empties the bar for good: the session was revoked.
func (b *sessionBar) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	b.applyLocked()
}

func (b *sessionBar) applyLocked() {
	switch {
	case b.ind == nil:
	case b.ended:
		b.ind.Set(nil)
	default:
		b.ind.Set([]personui.Session{b.session})
	}
}
