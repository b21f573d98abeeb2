package worker

import (
	"github.com/cua-host/cua-host/authz"
)

// Taking over (docs/adr/0013-person-takes-over-a-nested-display.md): on a nested display —
// the session's own desktop, shown as a window on the person's — the person may step in at
// any time by moving their pointer into the window or giving it their keyboard focus. Only
// the host sees the person's display; it tells the worker with PersonActivity frames, and
// while the person is active every call that would act on the display is refused at once
// with person_active (NOT_STARTED). Observing goes on, and acting resumes on the next call
// after the person left: nothing waits, so a refusal never holds a call past its deadline
// and the agent decides what to do meanwhile.

// setPersonActive records the host's latest PersonActivity. It is called by the control
// channel's reader; calls read it with personRefusal.
func (w *worker) setPersonActive(active bool) {
	if w.personActive.Swap(active) != active {
		if active {
			w.log.Info("the person is using the nested display: acting calls are refused person_active")
		} else {
			w.log.Info("the person left the nested display: acting calls run again")
		}
	}
}

// personRefusal returns the person_active refusal for a call of entry e while the person
// uses the display, nil otherwise. Input (pointer, keyboard, elements, window management,
// clipboard writes), launches and terminations change what the person is working with; the
// rest only reads.
func (w *worker) personRefusal(e *authz.Entry) *authz.Refusal {
	if e == nil || !w.personActive.Load() {
		return nil
	}
	switch e.Operation {
	case authz.OpInput, authz.OpLaunch, authz.OpTerminate:
		return authz.Refuse(authz.CodePersonActive, "the person is using the session's display (their pointer is in its window, or the window has their keyboard focus): %s and every other acting call is refused until they leave it; observing works meanwhile", e.Tool)
	}
	return nil
}
