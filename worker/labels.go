package worker

import (
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/proto/contract"
)

// Public session labels, as the reference driver's tools take them ("session": "demo" on
// every call). A label lives inside the one session this channel is bound to: it never
// selects, widens or narrows authority (that came with the channel), it only names a run
// of calls so an agent can start, inspect and end it. An ended label is tombstoned: calls
// that carry it are refused with session_ended until start_session revives it.

// Limits on labels: at most MaxLabels active at once, and at most MaxLabelRecords kept in
// all (ended labels stay, tombstoned, so that calls carrying them are refused).
const (
	MaxLabelBytes   = 128
	MaxLabels       = 64
	MaxLabelRecords = 4 * MaxLabels
)

// labelState is one label's record.
type labelState struct {
	started  time.Time
	lastUsed time.Time
	// implicit: the label was first seen on a call, not started by start_session.
	implicit bool
	ended    bool
	// captureScope is what start_session asked for (auto, window, desktop); it changes
	// nothing (capture is decided per call by the host's authority) and is reported back.
	captureScope string
	// escalation is the last escalate_session reason and detail, reported back.
	escalationReason, escalationDetail string
}

// labels is a session's label table.
type labels struct {
	mu sync.Mutex
	m  map[string]*labelState
}

// checkLabel validates a label's form.
func checkLabel(l string) *authz.Refusal {
	switch {
	case l == "":
		return authz.Refuse(authz.CodeInvalidArguments, "session label is empty")
	case len(l) > MaxLabelBytes:
		return authz.Refuse(authz.CodeInvalidArguments, "session label is %d bytes (at most %d)", len(l), MaxLabelBytes)
	case !utf8.ValidString(l) || strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return authz.Refuse(authz.CodeInvalidArguments, "session label must be printable UTF-8")
	}
	return nil
}

// use records a call carrying label l at now: an unknown label starts implicitly; an
// ended one refuses the call.
func (t *labels) use(l string, now time.Time) *authz.Refusal {
	if r := checkLabel(l); r != nil {
		return r
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.m[l]
	switch {
	case st == nil:
		if r := t.roomLocked(); r != nil {
			return r
		}
		if t.m == nil {
			t.m = map[string]*labelState{}
		}
		t.m[l] = &labelState{started: now, lastUsed: now, implicit: true, captureScope: "auto"}
	case st.ended:
		return authz.Refuse(authz.CodeSessionEnded, "session label %q was ended; call start_session to use it again", l)
	default:
		st.lastUsed = now
	}
	return nil
}

// start starts or revives l; revived reports whether it had been ended.
func (t *labels) start(l, captureScope string, now time.Time) (st labelState, revived bool, r *authz.Refusal) {
	if r := checkLabel(l); r != nil {
		return labelState{}, false, r
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.m[l]
	if cur == nil {
		if r := t.roomLocked(); r != nil {
			return labelState{}, false, r
		}
		if t.m == nil {
			t.m = map[string]*labelState{}
		}
		cur = &labelState{started: now}
		t.m[l] = cur
	}
	revived = cur.ended
	if revived {
		*cur = labelState{started: now}
	}
	cur.implicit, cur.lastUsed = false, now
	if captureScope != "" {
		cur.captureScope = captureScope
	} else if cur.captureScope == "" {
		cur.captureScope = "auto"
	}
	return *cur, revived, nil
}

// roomLocked refuses a new label when MaxLabels are active or MaxLabelRecords are kept.
func (t *labels) roomLocked() *authz.Refusal {
	active := 0
	for _, st := range t.m {
		if !st.ended {
			active++
		}
	}
	switch {
	case active >= MaxLabels:
		return authz.Refuse(authz.CodeTooManyRequests, "this session already has %d active labels; end one first", MaxLabels)
	case len(t.m) >= MaxLabelRecords:
		return authz.Refuse(authz.CodeTooManyRequests, "this session has used %d labels; reuse one (start_session revives an ended label)", MaxLabelRecords)
	}
	return nil
}

// end tombstones l; it reports whether l was known and active.
func (t *labels) end(l string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.m[l]
	if st == nil || st.ended {
		return false
	}
	st.ended = true
	return true
}

// escalate records an escalation request on l.
func (t *labels) escalate(l, reason, detail string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.m[l]; st != nil {
		st.escalationReason, st.escalationDetail = reason, detail
	}
}

// get returns l's record.
func (t *labels) get(l string) (labelState, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.m[l]
	if st == nil {
		return labelState{}, false
	}
	return *st, true
}

// active returns the active labels, sorted.
func (t *labels) active() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for l, st := range t.m {
		if !st.ended {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// useLabel records the label a call carries ("session", a string other than the session's
// own label): an ended label refuses the call with session_ended. start_session and
// end_session manage labels themselves; a "session" that is not a string is left to the
// handler's decode to refuse.
func (s *session) useLabel(tool string, args map[string]any) *authz.Refusal {
	l, ok := args["session"].(string)
	if !ok || l == s.label || tool == "start_session" || tool == "end_session" {
		return nil
	}
	return s.labels.use(l, time.Now())
}

// reach is how a session is reached, in the reference contract's words.
type reach struct {
	clientKind contract.ClientKind
	transport  contract.Transport
}

// reachOf validates CreateSession's client_kind and transport; empty means a program
// embedding the host ("direct" over the host's "daemon" channel).
func reachOf(clientKind, transport string) (reach, error) {
	k, err := contract.ParseClientKind(clientKind)
	if err != nil {
		return reach{}, err
	}
	t, err := contract.ParseTransport(transport)
	if err != nil {
		return reach{}, err
	}
	return reach{clientKind: k, transport: t}, nil
}
