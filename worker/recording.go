package worker

import (
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
)

// A recording is a named span of a session's calls in the host's journal: the calls after
// start_recording until stop_recording, a budget running out, or the session's end. The
// journal records every call whether or not a recording runs, and the host alone decides
// whether there is a journal and what it keeps: a recording only marks the calls of its
// span (the "recording" object of their journal result facts) and numbers its turns, the
// actions that ran (docs/journal.md#recordings).

// Bounds of start_recording's arguments.
const (
	maxRecordingTurns      = 100_000
	maxRecordingDurationMS = 24 * 60 * 60 * 1000
)

// recordingNamePattern is what a recording's name may be: it goes into the journal and on
// the command line of `cua-host journal show --recording`.
var recordingNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// The recording tools are the span's markers, never inside it.
var recordingTools = map[string]bool{"start_recording": true, "stop_recording": true, "get_recording_state": true}

// stopReason is why a recording stopped.
type stopReason int

const (
	// stopStopped: stop_recording.
	stopStopped stopReason = iota + 1
	// stopMaxTurns: its max_turns-th turn began.
	stopMaxTurns
	// stopMaxDuration: max_duration_ms passed since it started.
	stopMaxDuration
	// stopSessionEnded: its session ended (end_session, revocation, lifetime or idle
	// timeout, the channel closed).
	stopSessionEnded
)

var stopReasonNames = [...]string{stopStopped: "stopped", stopMaxTurns: "max_turns", stopMaxDuration: "max_duration", stopSessionEnded: "session_ended"}

func (r stopReason) String() string {
	if r > 0 && int(r) < len(stopReasonNames) {
		return stopReasonNames[r]
	}
	return fmt.Sprintf("stopReason(%d)", int(r))
}

// recordingSpan is one recording of a session.
type recordingSpan struct {
	name    string
	started time.Time
	// maxTurns and maxDuration are its budgets; 0: none.
	maxTurns    int
	maxDuration time.Duration
	// turns counts the actions that began inside it.
	turns int
	// stopped and reason are set once it stopped (reason 0 while it runs).
	stopped time.Time
	reason  stopReason
}

// recordingTag marks a journaled call inside a span: the recording's name and, for an
// action, its turn (1, 2, …). The last turn a budget allows carries that budget as
// stop_reason.
type recordingTag struct {
	Name       string `json:"name"`
	Turn       int    `json:"turn,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
}

// recordingState is a session's recording state. Its zero value has never recorded.
//
// States: idle (no recording yet) → running (start) → stopped (stop, a budget, the
// session's end) → running (start again) …; a stopped span is kept until the next start
// so that get_recording_state can say why it stopped.
type recordingState struct {
	// mu guards the fields below.
	mu sync.Mutex
	// started counts the recordings started in the session (names default to
	// recording-N).
	started int
	// span is the running or last recording; nil before the first.
	span *recordingSpan
	// ended is set once the session ended: no recording starts after it.
	ended bool
}

// runningLocked reports whether a span runs at now, stopping it first when its duration is spent.
func (r *recordingState) runningLocked(now time.Time) bool {
	sp := r.span
	if sp == nil || sp.reason != 0 {
		return false
	}
	if sp.maxDuration > 0 && !now.Before(sp.started.Add(sp.maxDuration)) {
		sp.stopped, sp.reason = sp.started.Add(sp.maxDuration), stopMaxDuration
		return false
	}
	return true
}

// start begins a span named name ("" for recording-N) with the budgets given (0: none).
// It is refused recording_active while one runs.
func (r *recordingState) start(name string, maxTurns int, maxDuration time.Duration, now time.Time) (recordingSpan, *authz.Refusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return recordingSpan{}, authz.Refuse(authz.CodeSessionEnded, "the session ended")
	}
	if r.runningLocked(now) {
		return recordingSpan{}, authz.Refuse(authz.CodeRecordingActive, "recording %q is already running (%d turns so far); stop_recording ends it", r.span.name, r.span.turns)
	}
	r.started++
	if name == "" {
		name = fmt.Sprintf("recording-%d", r.started)
	}
	r.span = &recordingSpan{name: name, started: now, maxTurns: maxTurns, maxDuration: maxDuration}
	return *r.span, nil
}

// stop ends the running span. It is refused recording_inactive when none runs, naming
// why the last one stopped.
func (r *recordingState) stop(now time.Time) (recordingSpan, *authz.Refusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.runningLocked(now) {
		if sp := r.span; sp != nil {
			return recordingSpan{}, authz.Refuse(authz.CodeRecordingInactive, "no recording is running: %q already stopped (%s) after %d turns", sp.name, sp.reason, sp.turns)
		}
		return recordingSpan{}, authz.Refuse(authz.CodeRecordingInactive, "no recording is running; start_recording starts one")
	}
	r.span.stopped, r.span.reason = now, stopStopped
	return *r.span, nil
}

// enter places a call of the tool named name in the running span, if any, and returns its
// tag (nil outside a span). A turn is an action that is about to run; it is numbered, and
// the span stops when it was the last its max_turns allows. The recording tools are
// never inside a span.
func (r *recordingState) enter(name string, turn bool, now time.Time) *recordingTag {
	if recordingTools[name] {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.runningLocked(now) {
		return nil
	}
	sp := r.span
	tag := &recordingTag{Name: sp.name}
	if turn {
		sp.turns++
		tag.Turn = sp.turns
		if sp.maxTurns > 0 && sp.turns >= sp.maxTurns {
			sp.stopped, sp.reason = now, stopMaxTurns
			tag.StopReason = stopMaxTurns.String()
		}
	}
	return tag
}

// sessionEnded stops the running span, if any, and refuses every later start.
func (r *recordingState) sessionEnded(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	if r.runningLocked(now) {
		r.span.stopped, r.span.reason = now, stopSessionEnded
	}
}

// snapshot returns the running or last span (ok false before the first) and whether it
// runs at now.
func (r *recordingState) snapshot(now time.Time) (sp recordingSpan, running, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	running = r.runningLocked(now)
	if r.span == nil {
		return recordingSpan{}, false, false
	}
	return *r.span, running, true
}
