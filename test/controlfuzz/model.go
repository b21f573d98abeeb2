package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/policy"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/test/fuzzkit"
)

// phase is the worker's control-channel state (docs/protocol.md, "States").
//
//	awaitHello ──Hello ok──▶ serving ──EOF / Shutdown / violation──▶ stopped
//	    └── anything else ─────────────────────────────────────────▶ stopped
type phase int

const (
	awaitHello phase = iota + 1
	serving
	stopped
)

func (p phase) String() string {
	switch p {
	case awaitHello:
		return "AwaitHello"
	case serving:
		return "Serving"
	case stopped:
		return "Stopped"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// replyKind is the kind of control frame the model expects back.
type replyKind int

const (
	replyNone replyKind = iota + 1
	replyReady
	replyCreated
	replyRevoked
	replyError
	replyStatus
)

// expect is the documented reaction to one step.
type expect struct {
	// what names the input as the model understood it, for the reaction table.
	what  string
	reply replyKind
	// code is the Error code (replyError).
	code string
	// label is SessionCreated's label; labels are Revoked's, or the sessions WorkerStatus
	// must list, and maybe those it may list or not (a lifetime too close to call).
	label  string
	labels []string
	maybe  []string
	// bounded: the session created is a bounded one.
	bounded bool
	// teardown: the worker closes the channel and exits with exit.
	teardown bool
	exit     int
	// known, when set, names a known deviation (known.go) and alt is what the worker is
	// known to do instead of this documented reaction.
	known string
	alt   *expect
}

// msess is a session as the model tracks it.
type msess struct {
	label   string
	bounded bool
	revoked bool
	// expiresAt is what SessionCreated announced; idle is the idle TTL.
	expiresAt time.Time
	idle      time.Duration
	// activeLo..activeHi brackets the worker's last recorded activity.
	activeLo, activeHi time.Time
	// ended is the refusal code once a call observed the session ended.
	ended string
}

// model is the reference model of the worker's control channel: the documented state
// machine, independent of the implementation (its strict decoding is reimplemented here
// on top of the protobuf library).
type model struct {
	phase      phase
	version    uint32
	generation []byte
	ceiling    mceiling
	// markerAllowed says whether the policy shipped in Hello lets "marker" run.
	markerAllowed bool
	sessions      map[string]*msess
}

type mceiling struct {
	modes          []cuav1.Mode
	ack            bool
	maxTTL, maxIdl uint32
}

func newModel() *model {
	return &model{phase: awaitHello, sessions: map[string]*msess{}}
}

// decodeStrict is the model's reading of "Strict decoding": it returns the frame or the
// reason it is a violation. "eof" means the datagram reads as end-of-file.
func decodeStrict(b []byte, nfds int) (*cuav1.ControlFrame, string) {
	if len(b) == 0 {
		return nil, "eof"
	}
	if len(b) > wire.MaxControlFrame {
		return nil, "oversized_frame"
	}
	if nfds > 1 {
		return nil, "too_many_fds"
	}
	f := &cuav1.ControlFrame{}
	if err := proto.Unmarshal(b, f); err != nil {
		return nil, "malformed_frame"
	}
	if fuzzkit.HasUnknown(f.ProtoReflect()) {
		return nil, "unknown_field"
	}
	if f.GetProtocolVersion() == 0 {
		return nil, "missing_version"
	}
	if f.GetBody() == nil {
		return nil, "unknown_kind"
	}
	_, isCreate := f.GetBody().(*cuav1.ControlFrame_CreateSession)
	if isCreate && nfds != 1 {
		return nil, "missing_fd"
	}
	if !isCreate && nfds != 0 {
		return nil, "unexpected_fd"
	}
	return f, ""
}

// kindName names a frame's body kind.
func kindName(f *cuav1.ControlFrame) string { return wire.KindOf(f) }

// violation is the documented reaction to a protocol violation in any live phase: an
// Error frame (best effort), teardown, exit status 2.
func (m *model) violation(what string) expect {
	m.stop()
	return expect{what: what, reply: replyError, code: "invalid_request", teardown: true, exit: 2}
}

func (m *model) stop() {
	m.phase = stopped
}

// eof is the reaction to end-of-file on the control channel (the host closed it, or sent
// an empty datagram): revoke all, exit 0 — in any phase.
func (m *model) eof(what string) expect {
	was := m.phase
	m.stop()
	e := expect{what: what, reply: replyNone, teardown: true, exit: 0}
	if was == awaitHello {
		alt := e
		alt.exit = 1
		e.known, e.alt = knownEOFBeforeHello, &alt
	}
	return e
}

// frame predicts the reaction to one datagram with nfds descriptors; fdIsStream says
// whether the one descriptor is a SOCK_STREAM socket (a usable session channel).
func (m *model) frame(b []byte, nfds int, fdIsStream bool, now time.Time) expect {
	f, bad := decodeStrict(b, nfds)
	switch {
	case bad == "eof":
		return m.eof("empty datagram")
	case bad != "":
		return m.violation("violation:" + bad)
	}
	switch m.phase {
	case awaitHello:
		h := f.GetHello()
		if h == nil {
			return m.violation(kindName(f) + " before Hello")
		}
		return m.hello(f.GetProtocolVersion(), h)
	case serving:
		return m.serve(f, fdIsStream, now)
	}
	return expect{what: "after stop", reply: replyNone}
}

func (m *model) hello(frameVersion uint32, h *cuav1.Hello) expect {
	lo, hi := h.GetMinVersion(), h.GetMaxVersion()
	// Version negotiation: the range must be sane, contain the frame's own version, and
	// overlap [1, 1].
	if lo == 0 || lo > hi || frameVersion < lo || frameVersion > hi || lo > 1 {
		m.stop()
		return expect{what: "Hello bad version", reply: replyError, code: "unsupported_protocol_version", teardown: true, exit: 1}
	}
	if len(h.GetGeneration()) != 16 {
		return m.violation("Hello bad generation")
	}
	c := h.GetCeiling()
	if !ceilingValid(c) {
		m.stop()
		return expect{what: "Hello bad ceiling", reply: replyError, code: "invalid_request", teardown: true, exit: 1}
	}
	allowed, ok := policyVerdict(h.GetPolicy())
	if !ok {
		m.stop()
		return expect{what: "Hello bad policy", reply: replyError, code: "invalid_request", teardown: true, exit: 1}
	}
	m.phase = serving
	m.version = 1
	m.generation = append([]byte(nil), h.GetGeneration()...)
	m.ceiling = mceiling{modes: c.GetAllowedModes(), ack: c.GetUnrestrictedAcknowledged(),
		maxTTL: c.GetMaxSessionTtlSeconds(), maxIdl: c.GetMaxIdleTtlSeconds()}
	m.markerAllowed = allowed
	what := "Hello"
	if h.GetPolicy() != nil {
		what = "Hello+policy"
	}
	return expect{what: what, reply: replyReady}
}

func knownMode(m cuav1.Mode) bool {
	return m == cuav1.Mode_MODE_STANDARD || m == cuav1.Mode_MODE_BOUNDED || m == cuav1.Mode_MODE_UNRESTRICTED
}

// ceilingValid: present, at least one mode, every mode known, unrestricted only when
// acknowledged, positive TTLs, idle ≤ session.
func ceilingValid(c *cuav1.Ceiling) bool {
	if c == nil || len(c.GetAllowedModes()) == 0 {
		return false
	}
	for _, md := range c.GetAllowedModes() {
		if !knownMode(md) {
			return false
		}
		if md == cuav1.Mode_MODE_UNRESTRICTED && !c.GetUnrestrictedAcknowledged() {
			return false
		}
	}
	return c.GetMaxSessionTtlSeconds() > 0 && c.GetMaxIdleTtlSeconds() > 0 && c.GetMaxIdleTtlSeconds() <= c.GetMaxSessionTtlSeconds()
}

// policyVerdict checks a policy snapshot as the worker must (every layer parses and
// hashes to what the host said) and reports whether it lets the marker tool run.
func policyVerdict(p *cuav1.PolicySnapshot) (markerAllowed, ok bool) {
	if p == nil {
		return true, true
	}
	var layers []*policy.Layer
	for _, l := range []*cuav1.PolicyLayer{p.GetManaged(), p.GetUser()} {
		if l == nil {
			layers = append(layers, nil)
			continue
		}
		var kind policy.Kind
		switch l.GetKind() {
		case "yaml":
			kind = policy.KindYAML
		case "rego":
			kind = policy.KindRego
		default:
			return false, false
		}
		var files []policy.File
		for _, f := range l.GetFiles() {
			files = append(files, policy.File{Name: f.GetName(), Data: f.GetData()})
		}
		parsed, err := policy.Parse(kind, files)
		if err != nil || !strings.EqualFold(parsed.SHA256(), l.GetSha256()) {
			return false, false
		}
		layers = append(layers, parsed)
	}
	set := policy.NewSet(layers[0], layers[1])
	d := set.Decide(context.Background(), "marker", map[string]any{"path": "/x", "marker": "m"})
	return d.Allow, true
}

func (m *model) serve(f *cuav1.ControlFrame, fdIsStream bool, now time.Time) expect {
	if f.GetProtocolVersion() != m.version {
		return m.violation(kindName(f) + " wrong version")
	}
	switch b := f.GetBody().(type) {
	case *cuav1.ControlFrame_CreateSession:
		return m.create(b.CreateSession, fdIsStream)
	case *cuav1.ControlFrame_RevokeSession:
		return m.revoke(b.RevokeSession)
	case *cuav1.ControlFrame_ConsentDecision:
		return expect{what: "ConsentDecision (unknown call_id)", reply: replyNone}
	case *cuav1.ControlFrame_Error:
		// The host's answer to a ConsentRequest it could put to no one; like a
		// ConsentDecision, one for an unknown call_id is dropped.
		return expect{what: "Error (unknown call_id)", reply: replyNone}
	case *cuav1.ControlFrame_JournalAck:
		// The host's answer to a JournalEntry; one for an unknown call_id is dropped.
		return expect{what: "JournalAck (unknown call_id)", reply: replyNone}
	case *cuav1.ControlFrame_StatusRequest:
		return m.status(now)
	case *cuav1.ControlFrame_PersonActivity:
		// The person took over or left the nested display: acting calls are refused
		// meanwhile; the marker call only writes a file and is not one of them.
		return expect{what: "PersonActivity", reply: replyNone}
	case *cuav1.ControlFrame_Shutdown:
		m.stop()
		return expect{what: "Shutdown", reply: replyNone, teardown: true, exit: 0}
	default:
		return m.violation(kindName(f) + " after Ready")
	}
}

// labelDocumented is the documented label rule (host.SessionSpec: "at most 128 printable
// bytes, no whitespace"): non-empty, ≤ 128 bytes, every rune printable and not a space.
func labelDocumented(l string) bool {
	if l == "" || len(l) > 128 {
		return false
	}
	for _, r := range l {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// labelAccepted is the rule the worker is known to apply (only ASCII controls, space and
// DEL are refused).
func labelAccepted(l string) bool {
	if l == "" || len(l) > 128 {
		return false
	}
	for _, r := range l {
		if r < 0x21 || r == 0x7f {
			return false
		}
	}
	return true
}

func (m *model) create(c *cuav1.CreateSession, fdIsStream bool) expect {
	label := c.GetLabel()
	refuse := func(what, code string) expect {
		return expect{what: "CreateSession " + what, reply: replyError, code: code}
	}
	admit := func() expect {
		if !knownMode(c.GetMode()) {
			return refuse("bad mode", "invalid_request")
		}
		if !slices.Contains(m.ceiling.modes, c.GetMode()) || (c.GetMode() == cuav1.Mode_MODE_UNRESTRICTED && !m.ceiling.ack) {
			return refuse("mode outside ceiling", "permission_denied")
		}
		ttl, idle := c.GetTtlSeconds(), c.GetIdleTtlSeconds()
		if ttl == 0 || idle == 0 || ttl > m.ceiling.maxTTL || idle > m.ceiling.maxIdl || idle > ttl {
			return refuse("ttl outside ceiling", "permission_denied")
		}
		bounded := c.GetMode() == cuav1.Mode_MODE_BOUNDED
		switch {
		case bounded && len(c.GetManifest()) == 0:
			return refuse("bounded without manifest", "invalid_request")
		case !bounded && len(c.GetManifest()) > 0:
			return refuse("manifest on non-bounded", "invalid_request")
		case bounded:
			sum := sha256.Sum256(c.GetManifest())
			if !strings.EqualFold(hex.EncodeToString(sum[:]), c.GetManifestSha256()) {
				return echoes(refuse("manifest hash mismatch", "invalid_request"), c.GetManifestSha256())
			}
		}
		if !fdIsStream {
			return refuse("fd not a stream socket", "invalid_request")
		}
		if s, dup := m.sessions[label]; dup && s != nil {
			return refuse("duplicate label", "invalid_request")
		}
		return expect{what: "CreateSession", reply: replyCreated, label: label, bounded: bounded}
	}
	if !labelAccepted(label) {
		return refuse("bad label", "invalid_request")
	}
	e := admit()
	if !labelDocumented(label) {
		doc := refuse("bad label", "invalid_request")
		if e.reply != doc.reply || e.code != doc.code {
			alt := e
			doc.known, doc.alt = knownUnicodeLabel, &alt
		}
		return doc
	}
	return e
}

func (m *model) revoke(r *cuav1.RevokeSession) expect {
	if r.GetAll() {
		labels := []string{}
		for l, s := range m.sessions {
			if !s.revoked && s.ended == "" {
				labels = append(labels, l)
			}
		}
		return expect{what: "RevokeSession{all}", reply: replyRevoked, labels: labels}
	}
	s, ok := m.sessions[r.GetLabel()]
	if !ok {
		return echoes(expect{what: "RevokeSession unknown label", reply: replyError, code: "invalid_request"}, r.GetLabel())
	}
	if s.revoked || s.ended != "" {
		return expect{what: "RevokeSession revoked label", reply: replyRevoked, labels: []string{}}
	}
	return expect{what: "RevokeSession", reply: replyRevoked, labels: []string{s.label}}
}

// status predicts WorkerStatus for a StatusRequest sent at sent: the live sessions (not
// revoked, not ended, within their lifetime and idle TTL), nothing in flight (the harness
// waits for each call's reply before the next step).
func (m *model) status(sent time.Time) expect {
	const slack = 250 * time.Millisecond
	e := expect{what: "StatusRequest", reply: replyStatus, labels: []string{}}
	for l, s := range m.sessions {
		if s.revoked || s.ended != "" {
			continue
		}
		over := sent.After(s.expiresAt.Add(slack)) || sent.Sub(s.activeHi) > s.idle+slack
		close := sent.After(s.expiresAt.Add(-slack)) || sent.Sub(s.activeLo) > s.idle-slack
		switch {
		case over:
		case close:
			e.maybe = append(e.maybe, l)
		default:
			e.labels = append(e.labels, l)
		}
	}
	return e
}

// callVerdict is what the model expects of a marker call on a session.
type callVerdict struct {
	// reply is false when no reply may come (the channel must read end-of-file).
	reply bool
	// codes are acceptable refusal codes; "" in codes means COMPLETED is acceptable.
	codes []string
}

// call predicts a marker call on the session labelled label (nil session: the channel
// was never bound to a session) sent at sent.
func (m *model) call(s *msess, sent time.Time) callVerdict {
	if s == nil || m.phase != serving {
		return callVerdict{}
	}
	if s.revoked {
		return callVerdict{reply: true, codes: []string{"authorization_revoked"}}
	}
	if s.ended != "" {
		return callVerdict{reply: true, codes: []string{s.ended}}
	}
	const slack = 250 * time.Millisecond
	var codes []string
	// Lifetime: certainly over, certainly not, or too close to call.
	switch {
	case sent.After(s.expiresAt.Add(slack)):
		return callVerdict{reply: true, codes: []string{"session_ended"}}
	case sent.After(s.expiresAt.Add(-slack)):
		codes = append(codes, "session_ended")
	}
	idleOver := sent.Sub(s.activeHi) > s.idle+slack
	idleMaybe := sent.Sub(s.activeLo) > s.idle-slack
	switch {
	case idleOver && len(codes) == 0:
		return callVerdict{reply: true, codes: []string{"authorization_expired"}}
	case idleMaybe || idleOver:
		codes = append(codes, "authorization_expired")
	}
	switch {
	case !m.markerAllowed:
		codes = append(codes, "permission_denied")
	case s.bounded:
		// The manifest lists no test tool.
		codes = append(codes, "bounded_resource_outside_manifest", "unclassified_tool")
	default:
		codes = append(codes, "")
	}
	return callVerdict{reply: true, codes: codes}
}

// callResult applies a verified call result.
func (m *model) callResult(s *msess, code string, sent, got time.Time) {
	switch code {
	case "session_ended", "authorization_expired":
		s.ended = code
	case "authorization_revoked":
	default:
		s.activeLo, s.activeHi = sent, got
	}
}

// echoes marks an Error reply whose message quotes echo: when that cannot fit in one
// control frame the worker is known to drop the reply (knownHugeErrorEcho). Near the
// limit either reaction counts (the message's exact length is the worker's business).
func echoes(e expect, echo string) expect {
	if len(echo) < wire.MaxControlFrame-1024 {
		return e
	}
	alt := e
	alt.reply = replyNone
	e.known, e.alt = knownHugeErrorEcho, &alt
	return e
}
