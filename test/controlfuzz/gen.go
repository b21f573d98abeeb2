package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/policy"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/test/fuzzkit"
)

// Descriptor kinds a step can attach to a control frame.
const (
	// fdSession is one end of a fresh SOCK_STREAM socketpair: a usable session channel.
	fdSession = "session"
	// fdProbe is the write end of a pipe; the harness closes its copy and watches the read
	// end, which reaches end-of-file once the worker closed its copy.
	fdProbe = "probe"
	// fdSeqpacket is one end of a SOCK_SEQPACKET socketpair (the wrong socket type).
	fdSeqpacket = "seqpacket"
	// fdDevNull is /dev/null (not a socket at all).
	fdDevNull = "devnull"
)

// Step operations.
const (
	opSend = "send" // one datagram with descriptors
	opEOF  = "eof"  // close the control channel
	opCall = "call" // a marker call on a session channel
)

// step is one action of a sequence.
type step struct {
	Op    string      `json:"op"`
	Frame fuzzkit.Hex `json:"frame,omitempty"`
	FDs   []string    `json:"fds,omitempty"`
	// Desc says what the generator meant (the model decides what it is).
	Desc string `json:"desc,omitempty"`
	// Session is, for opCall, the index of the session channel (in the order "session"
	// descriptors were attached).
	Session int `json:"session,omitempty"`
	// NoWait lets the next step go before this one's reply arrived (pipelining).
	NoWait bool `json:"nowait,omitempty"`
}

// sequence is one generated run against one fresh worker.
type sequence struct {
	Seed  uint64 `json:"seed"`
	Index uint64 `json:"index"`
	Steps []step `json:"steps"`
}

// gen builds sequences: structure-aware frames (valid ones in valid and wrong orders, with
// interesting field values), then byte-level mutations on a share of them.
type gen struct {
	r      *rand.Rand
	steps  []step
	callID uint64
	// version is what frames carry after a valid Hello.
	version uint32
	ceiling *cuav1.Ceiling
	labels  []string
	nsess   int
}

var labelPool = []string{"a", "b", "c", "s-1", "agent:42", strings.Repeat("L", 128)}

var badLabels = []string{"", " ", "has space", "tab\tx", "nl\n", "del\x7f", strings.Repeat("x", 129), "\x00"}

// unicodeLabels break the documented label rule without an ASCII control or space.
var unicodeLabels = []string{"nbsp\u00a0x", "nel\u0085x", "ls\u2028x", "zwsp\u200bx", "rlo\u202ex", "ideo\u3000x"}

const validManifest = "version: 1\nexpires_after: 24h\nidle_timeout: 24h\nallow: {tools: [list_windows]}\n"

func generate(seed, index uint64) *sequence {
	g := &gen{r: rand.New(rand.NewPCG(seed, index)), version: 1}
	g.build()
	return &sequence{Seed: seed, Index: index, Steps: g.steps}
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) send(f *cuav1.ControlFrame, desc string, fds ...string) {
	b, err := proto.Marshal(f)
	if err != nil {
		panic(err) // generator bug
	}
	g.raw(b, desc, fds...)
}

func (g *gen) raw(b []byte, desc string, fds ...string) {
	g.steps = append(g.steps, step{Op: opSend, Frame: b, FDs: fds, Desc: desc, NoWait: g.chance(0.3)})
}

func (g *gen) nextCall() uint64 {
	g.callID++
	if g.chance(0.05) {
		return g.r.Uint64() // any value is legal; the reply echoes it
	}
	return g.callID
}

func (g *gen) build() {
	// Before Hello: mostly a Hello, sometimes something else first.
	switch x := g.r.Float64(); {
	case x < 0.03:
		g.steps = append(g.steps, step{Op: opEOF, Desc: "EOF before Hello"})
		return
	case x < 0.10:
		g.wrongFirst()
	case x < 0.20:
		g.badHello()
	default:
		g.validHello()
	}
	n := 1 + g.r.IntN(40)
	for i := 0; i < n; i++ {
		g.serving()
	}
	g.steps = append(g.steps, step{Op: opEOF, Desc: "EOF"})
}

func (g *gen) hello(minV, maxV, frameV uint32, genLen int, c *cuav1.Ceiling, p *cuav1.PolicySnapshot) *cuav1.ControlFrame {
	gen := make([]byte, genLen)
	for i := range gen {
		gen[i] = byte(g.r.IntN(256))
	}
	h := &cuav1.Hello{MinVersion: minV, MaxVersion: maxV, Generation: gen, Ceiling: c, Policy: p,
		Display: &cuav1.DisplayFacts{Name: ":" + fmt.Sprint(g.r.IntN(100)), Private: g.chance(0.5), ServerPid: int32(g.r.IntN(1 << 16))}}
	for range g.r.IntN(3) {
		h.ProtectedPids = append(h.ProtectedPids, int32(g.r.IntN(1<<20)))
	}
	return &cuav1.ControlFrame{ProtocolVersion: frameV, Body: &cuav1.ControlFrame_Hello{Hello: h}}
}

func (g *gen) validCeiling() *cuav1.Ceiling {
	switch g.r.IntN(4) {
	case 0:
		return &cuav1.Ceiling{AllowedModes: []cuav1.Mode{cuav1.Mode_MODE_STANDARD}, MaxSessionTtlSeconds: 3600, MaxIdleTtlSeconds: 600}
	case 1:
		return &cuav1.Ceiling{AllowedModes: []cuav1.Mode{cuav1.Mode_MODE_STANDARD, cuav1.Mode_MODE_BOUNDED, cuav1.Mode_MODE_UNRESTRICTED},
			UnrestrictedAcknowledged: true, MaxSessionTtlSeconds: 86400, MaxIdleTtlSeconds: 3600}
	default:
		return &cuav1.Ceiling{AllowedModes: []cuav1.Mode{cuav1.Mode_MODE_STANDARD, cuav1.Mode_MODE_BOUNDED}, MaxSessionTtlSeconds: 86400, MaxIdleTtlSeconds: 3600}
	}
}

// policyLayer builds a layer from one file, with its true hash unless badHash.
func policyLayer(kind, name, src string, badHash bool) *cuav1.PolicyLayer {
	l := &cuav1.PolicyLayer{Kind: kind, Files: []*cuav1.PolicyFile{{Name: name, Data: []byte(src)}}}
	k := policy.KindYAML
	if kind == "rego" {
		k = policy.KindRego
	}
	if parsed, err := policy.Parse(k, []policy.File{{Name: name, Data: []byte(src)}}); err == nil {
		l.Sha256 = parsed.SHA256()
	} else {
		sum := sha256.Sum256([]byte(src))
		l.Sha256 = hex.EncodeToString(sum[:])
	}
	if badHash {
		l.Sha256 = strings.Repeat("0", 64)
	}
	return l
}

func (g *gen) validPolicy() *cuav1.PolicySnapshot {
	switch x := g.r.Float64(); {
	case x < 0.80:
		return nil
	case x < 0.88:
		return &cuav1.PolicySnapshot{User: policyLayer("yaml", "user.yaml", "allow: [marker, noop]\n", false)}
	case x < 0.94:
		return &cuav1.PolicySnapshot{Managed: policyLayer("yaml", "managed.yaml", "allow: [noop]\n", false)}
	case x < 0.97:
		return &cuav1.PolicySnapshot{
			Managed: policyLayer("yaml", "managed.yaml", "deny: [marker]\nallow: [marker, noop]\n", false),
			User:    policyLayer("yaml", "user.yaml", "allow: [marker]\n", false)}
	default:
		return &cuav1.PolicySnapshot{User: policyLayer("rego", "p.rego", "package cua.policy\n\ndefault allow := false\n\nallow if input.tool == \"marker\"\n", false)}
	}
}

func (g *gen) validHello() {
	c := g.validCeiling()
	minV, maxV, frameV := uint32(1), uint32(1), uint32(1)
	if g.chance(0.1) { // a wider range that overlaps [1, 1]
		maxV = 1 + uint32(g.r.IntN(5))
		frameV = 1 + uint32(g.r.IntN(int(maxV)))
	}
	f := g.hello(minV, maxV, frameV, 16, c, g.validPolicy())
	g.ceiling = c
	var fds []string
	if g.chance(0.02) {
		fds = []string{g.pick([]string{fdProbe, fdSession})}
	}
	g.maybeMutate(f, "Hello", fds)
}

func (g *gen) badHello() {
	c := g.validCeiling()
	var f *cuav1.ControlFrame
	desc := "Hello "
	switch g.r.IntN(12) {
	case 0:
		f, desc = g.hello(2, 3, 2, 16, c, nil), desc+"no common version"
	case 1:
		f, desc = g.hello(0, 1, 1, 16, c, nil), desc+"min 0"
	case 2:
		f, desc = g.hello(1, 0, 1, 16, c, nil), desc+"min > max"
	case 3:
		f, desc = g.hello(1, 1, 2, 16, c, nil), desc+"frame version outside range"
	case 4:
		f, desc = g.hello(1, 1, 1, g.pick2(0, 15, 17, 32), c, nil), desc+"bad generation"
	case 5:
		f, desc = g.hello(1, 1, 1, 16, nil, nil), desc+"no ceiling"
	case 6:
		f, desc = g.hello(1, 1, 1, 16, &cuav1.Ceiling{MaxSessionTtlSeconds: 60, MaxIdleTtlSeconds: 60}, nil), desc+"ceiling without modes"
	case 7:
		f, desc = g.hello(1, 1, 1, 16, &cuav1.Ceiling{AllowedModes: []cuav1.Mode{cuav1.Mode(g.pick2(0, 7, -1))}, MaxSessionTtlSeconds: 60, MaxIdleTtlSeconds: 60}, nil), desc+"ceiling bad mode"
	case 8:
		f, desc = g.hello(1, 1, 1, 16, &cuav1.Ceiling{AllowedModes: []cuav1.Mode{cuav1.Mode_MODE_UNRESTRICTED}, MaxSessionTtlSeconds: 60, MaxIdleTtlSeconds: 60}, nil), desc+"unrestricted unacknowledged"
	case 9:
		f, desc = g.hello(1, 1, 1, 16, &cuav1.Ceiling{AllowedModes: []cuav1.Mode{cuav1.Mode_MODE_STANDARD}, MaxSessionTtlSeconds: 60, MaxIdleTtlSeconds: uint32(g.pick2(0, 61))}, nil), desc+"ceiling bad ttl"
	case 10:
		p := &cuav1.PolicySnapshot{User: policyLayer("yaml", "user.yaml", "allow: [marker]\n", true)}
		f, desc = g.hello(1, 1, 1, 16, c, p), desc+"policy hash mismatch"
	default:
		var p *cuav1.PolicySnapshot
		switch g.r.IntN(3) {
		case 0:
			p = &cuav1.PolicySnapshot{Managed: policyLayer("toml", "m.toml", "allow = []\n", false)}
		case 1:
			p = &cuav1.PolicySnapshot{Managed: policyLayer("yaml", "m.yaml", "allow: [a\n", false)}
		default:
			p = &cuav1.PolicySnapshot{User: policyLayer("rego", "p.rego", "package cua.policy\nallow if http.send({})\n", false)}
		}
		f, desc = g.hello(1, 1, 1, 16, c, p), desc+"unparsable policy"
	}
	g.send(f, desc)
}

func (g *gen) pick2(xs ...int) int { return xs[g.r.IntN(len(xs))] }

// wrongFirst sends something other than a Hello first.
func (g *gen) wrongFirst() {
	switch g.r.IntN(4) {
	case 0:
		g.createValid()
	case 1:
		g.send(&cuav1.ControlFrame{ProtocolVersion: 1, CallId: g.nextCall(), Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{All: true}}}, "Revoke before Hello")
	case 2:
		g.send(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Shutdown{Shutdown: &cuav1.Shutdown{}}}, "Shutdown before Hello")
	default:
		g.garbage()
	}
}

func (g *gen) serving() {
	switch x := g.r.Float64(); {
	case x < 0.22:
		g.createValid()
	case x < 0.32:
		g.createInvalid()
	case x < 0.43:
		g.revoke()
	case x < 0.45:
		g.send(&cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_StatusRequest{StatusRequest: &cuav1.StatusRequest{}}}, "StatusRequest")
	case x < 0.46:
		g.send(g.personActivity(), "PersonActivity")
	case x < 0.66:
		if g.nsess > 0 {
			g.steps = append(g.steps, step{Op: opCall, Session: g.r.IntN(g.nsess), Desc: "marker call"})
		}
	case x < 0.70:
		g.send(&cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.r.Uint64N(1000), Body: &cuav1.ControlFrame_ConsentDecision{ConsentDecision: &cuav1.ConsentDecision{Granted: g.chance(0.5), TtlSeconds: uint32(g.r.IntN(100))}}}, "ConsentDecision")
	case x < 0.73:
		g.wrongKind()
	case x < 0.80:
		g.fdAnomaly()
	case x < 0.90:
		g.mutated()
	case x < 0.92:
		f := &cuav1.ControlFrame{ProtocolVersion: uint32(g.pick2(2, 3, 1<<31)), CallId: g.nextCall(), Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{All: true}}}
		g.send(f, "wrong version")
	case x < 0.93:
		g.big()
	case x < 0.95:
		g.steps = append(g.steps, step{Op: opEOF, Desc: "EOF mid-sequence"})
	case x < 0.97:
		g.send(&cuav1.ControlFrame{ProtocolVersion: g.version, Body: &cuav1.ControlFrame_Shutdown{Shutdown: &cuav1.Shutdown{}}}, "Shutdown")
	case x < 0.98:
		g.raw(nil, "empty datagram")
	default:
		g.garbage()
	}
}

func (g *gen) label() string {
	if len(g.labels) > 0 && g.chance(0.25) {
		return g.pick(g.labels) // a duplicate, most likely
	}
	l := g.pick(labelPool)
	if g.chance(0.3) {
		l = fmt.Sprintf("%s%d", l[:min(len(l), 100)], g.r.IntN(1000))
	}
	return l
}

func (g *gen) ttls() (ttl, idle uint32) {
	maxTTL, maxIdle := uint32(3600), uint32(600)
	if g.ceiling != nil {
		maxTTL, maxIdle = g.ceiling.GetMaxSessionTtlSeconds(), g.ceiling.GetMaxIdleTtlSeconds()
	}
	if g.chance(0.03) { // ends (or idles out) while the sequence runs
		return uint32(1 + g.r.IntN(2)), 1
	}
	ttl = 60 + g.r.Uint32N(maxTTL-59)
	idle = min(ttl, 60+g.r.Uint32N(maxIdle-59))
	return ttl, idle
}

func (g *gen) createFrame(label string, mode cuav1.Mode, ttl, idle uint32, manifest []byte, hash string) *cuav1.ControlFrame {
	return &cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_CreateSession{CreateSession: &cuav1.CreateSession{
		Label: label, Mode: mode, TtlSeconds: ttl, IdleTtlSeconds: idle, Manifest: manifest, ManifestSha256: hash,
	}}}
}

func manifestHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (g *gen) createValid() {
	label := g.label()
	if g.chance(0.04) {
		label = g.pick(unicodeLabels)
	}
	g.labels = append(g.labels, label)
	ttl, idle := g.ttls()
	mode := cuav1.Mode_MODE_STANDARD
	var manifest []byte
	var hash string
	switch x := g.r.Float64(); {
	case x < 0.15:
		mode, manifest = cuav1.Mode_MODE_BOUNDED, []byte(validManifest)
		hash = manifestHash(manifest)
		if g.chance(0.5) {
			hash = strings.ToUpper(hash)
		}
	case x < 0.22:
		mode = cuav1.Mode_MODE_UNRESTRICTED
	}
	g.nsess++
	g.send(g.createFrame(label, mode, ttl, idle, manifest, hash), "CreateSession", fdSession)
}

func (g *gen) createInvalid() {
	label := g.label()
	ttl, idle := g.ttls()
	mode := cuav1.Mode_MODE_STANDARD
	var manifest []byte
	var hash string
	fd := fdSession
	desc := "CreateSession "
	switch g.r.IntN(9) {
	case 0:
		label, desc = g.pick(badLabels), desc+"bad label"
	case 1:
		mode, desc = cuav1.Mode(g.pick2(0, 4, 99)), desc+"bad mode"
	case 2:
		ttl, desc = uint32(g.pick2(0, 1<<31, 86401)), desc+"bad ttl"
	case 3:
		idle, desc = uint32(g.pick2(0, int(ttl)+1, 1<<30)), desc+"bad idle"
	case 4:
		mode, desc = cuav1.Mode_MODE_BOUNDED, desc+"bounded without manifest"
	case 5:
		manifest, hash, desc = []byte(validManifest), manifestHash([]byte(validManifest)), desc+"manifest on standard"
	case 6:
		mode, manifest, hash, desc = cuav1.Mode_MODE_BOUNDED, []byte(validManifest), manifestHash([]byte("other")), desc+"bad manifest hash"
	case 7:
		mode, desc = cuav1.Mode_MODE_UNRESTRICTED, desc+"unrestricted"
	default:
		fd, desc = g.pick([]string{fdProbe, fdSeqpacket, fdDevNull}), desc+"wrong fd type"
	}
	if fd == fdSession {
		g.nsess++
	}
	g.send(g.createFrame(label, mode, ttl, idle, manifest, hash), desc, fd)
}

func (g *gen) revoke() {
	r := &cuav1.RevokeSession{}
	desc := "Revoke"
	switch x := g.r.Float64(); {
	case x < 0.5 && len(g.labels) > 0:
		r.Label = g.pick(g.labels)
	case x < 0.65:
		r.All, desc = true, "Revoke all"
		if g.chance(0.2) {
			r.Label = g.label()
		}
	case x < 0.75:
		desc = "Revoke empty"
	default:
		r.Label, desc = g.label()+"-unknown", "Revoke unknown"
	}
	g.send(&cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: r}}, desc)
}

func (g *gen) wrongKind() {
	v := g.version
	bodies := []*cuav1.ControlFrame{
		g.hello(1, 1, 1, 16, g.validCeiling(), nil),
		{ProtocolVersion: v, Body: &cuav1.ControlFrame_Ready{Ready: &cuav1.Ready{Version: 1, Pid: 1}}},
		{ProtocolVersion: v, CallId: 1, Body: &cuav1.ControlFrame_SessionCreated{SessionCreated: &cuav1.SessionCreated{Label: "a"}}},
		{ProtocolVersion: v, CallId: 1, Body: &cuav1.ControlFrame_Revoked{Revoked: &cuav1.Revoked{Labels: []string{"a"}}}},
		{ProtocolVersion: v, CallId: 1, Body: &cuav1.ControlFrame_ConsentRequest{ConsentRequest: &cuav1.ConsentRequest{Label: "a", Tool: "click"}}},
		{ProtocolVersion: v, CallId: 1, Body: &cuav1.ControlFrame_Error{Error: &cuav1.ControlError{Code: "x"}}},
		{ProtocolVersion: v, CallId: 1, Body: &cuav1.ControlFrame_WorkerStatus{WorkerStatus: &cuav1.WorkerStatus{
			Sessions: []*cuav1.SessionStatus{{Label: "a", InFlightCalls: 1, Calls: []*cuav1.InFlightCall{{Tool: "click"}}}}, InFlightCalls: 1}}},
	}
	f := bodies[g.r.IntN(len(bodies))]
	g.send(f, "wrong kind "+wire.KindOf(f))
}

func (g *gen) fdAnomaly() {
	label := g.label()
	ttl, idle := g.ttls()
	create := g.createFrame(label, cuav1.Mode_MODE_STANDARD, ttl, idle, nil, "")
	revoke := &cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{All: true}}}
	switch g.r.IntN(8) {
	case 7:
		g.send(g.personActivity(), "PersonActivity with fd", fdProbe)
	case 6:
		g.send(&cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_StatusRequest{StatusRequest: &cuav1.StatusRequest{}}}, "StatusRequest with fd", fdProbe)
	case 0:
		g.send(create, "CreateSession without fd")
	case 1:
		g.nsess++
		g.send(create, "CreateSession with two fds", fdSession, fdProbe)
	case 2:
		g.send(create, "CreateSession with many fds", fdProbe, fdProbe, fdProbe, fdProbe, fdProbe, fdProbe)
	case 3:
		g.send(revoke, "Revoke with fd", g.pick([]string{fdProbe, fdSession}))
	case 4:
		g.send(&cuav1.ControlFrame{ProtocolVersion: g.version, Body: &cuav1.ControlFrame_ConsentDecision{ConsentDecision: &cuav1.ConsentDecision{}}}, "ConsentDecision with fd", fdProbe)
	default:
		g.send(&cuav1.ControlFrame{ProtocolVersion: g.version, Body: &cuav1.ControlFrame_Shutdown{Shutdown: &cuav1.Shutdown{}}}, "Shutdown with fd", fdProbe)
	}
}

// mutated takes a structured frame and damages its bytes.
func (g *gen) mutated() {
	label := g.label()
	ttl, idle := g.ttls()
	var f *cuav1.ControlFrame
	fds := []string{}
	switch g.r.IntN(5) {
	case 4:
		f = g.personActivity()
	case 0:
		f = g.createFrame(label, cuav1.Mode_MODE_STANDARD, ttl, idle, nil, "")
		fds = []string{fdSession}
		g.nsess++
	case 3:
		f = &cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_StatusRequest{StatusRequest: &cuav1.StatusRequest{}}}
	case 1:
		f = &cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{Label: label}}}
	default:
		f = &cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_ConsentDecision{ConsentDecision: &cuav1.ConsentDecision{Granted: true}}}
	}
	g.mutate(f, wire.KindOf(f), fds, true)
}

func (g *gen) maybeMutate(f *cuav1.ControlFrame, desc string, fds []string) {
	g.mutate(f, desc, fds, g.chance(0.1))
}

func (g *gen) mutate(f *cuav1.ControlFrame, desc string, fds []string, do bool) {
	if !do {
		g.send(f, desc, fds...)
		return
	}
	b, _ := proto.Marshal(f)
	switch g.r.IntN(9) {
	case 0: // truncated (never to nothing: that is end-of-file)
		b, desc = b[:1+g.r.IntN(len(b)-1)], desc+" truncated"
	case 1: // bit flips
		b = append([]byte(nil), b...)
		for range 1 + g.r.IntN(3) {
			i := g.r.IntN(len(b))
			b[i] ^= 1 << g.r.IntN(8)
		}
		desc += " bit-flipped"
	case 2: // inserted bytes
		i := g.r.IntN(len(b) + 1)
		ins := make([]byte, 1+g.r.IntN(4))
		for j := range ins {
			ins[j] = byte(g.r.IntN(256))
		}
		b = append(append(append([]byte(nil), b[:i]...), ins...), b[i:]...)
		desc += " bytes inserted"
	case 3: // unknown top-level field
		b = protowire.AppendTag(b, protowire.Number(20+g.r.IntN(80)), protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
		desc += " unknown field"
	case 4: // unknown field inside the body
		f2 := proto.Clone(f).(*cuav1.ControlFrame)
		var unk []byte
		unk = protowire.AppendTag(unk, 99, protowire.BytesType)
		unk = protowire.AppendBytes(unk, []byte("x"))
		bodyMsg(f2).ProtoReflect().SetUnknown(unk)
		b, _ = proto.Marshal(f2)
		desc += " unknown nested field"
	case 5: // no protocol version, or no body
		f2 := proto.Clone(f).(*cuav1.ControlFrame)
		if g.chance(0.5) {
			f2.ProtocolVersion, desc = 0, desc+" version 0"
		} else {
			f2.Body, desc = nil, desc+" no body"
		}
		b, _ = proto.Marshal(f2)
		if len(b) == 0 {
			b = []byte{0x10, 0x01} // call_id 1 alone
		}
	case 6: // a second body: the last one wins
		b = protowire.AppendTag(b, protowire.Number(10+g.r.IntN(10)), protowire.BytesType)
		b = protowire.AppendBytes(b, nil)
		desc += " second body"
	case 7: // an unknown body kind
		b = protowire.AppendTag(b[:0:0], 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(g.version))
		b = protowire.AppendTag(b, protowire.Number(20+g.r.IntN(100)), protowire.BytesType)
		b = protowire.AppendBytes(b, nil)
		desc = "unknown kind"
	default: // duplicated frame bytes (fields repeat; the body merges)
		b = append(append([]byte(nil), b...), b...)
		desc += " doubled"
	}
	g.raw(b, desc, fds...)
}

func bodyMsg(f *cuav1.ControlFrame) proto.Message {
	switch b := f.GetBody().(type) {
	case *cuav1.ControlFrame_Hello:
		return b.Hello
	case *cuav1.ControlFrame_CreateSession:
		return b.CreateSession
	case *cuav1.ControlFrame_RevokeSession:
		return b.RevokeSession
	case *cuav1.ControlFrame_ConsentDecision:
		return b.ConsentDecision
	case *cuav1.ControlFrame_Shutdown:
		return b.Shutdown
	case *cuav1.ControlFrame_StatusRequest:
		return b.StatusRequest
	case *cuav1.ControlFrame_PersonActivity:
		return b.PersonActivity
	}
	return f
}

// personActivity is the host's PersonActivity, active or not; it never has a call_id.
func (g *gen) personActivity() *cuav1.ControlFrame {
	return &cuav1.ControlFrame{ProtocolVersion: g.version, Body: &cuav1.ControlFrame_PersonActivity{PersonActivity: &cuav1.PersonActivity{Active: g.chance(0.5)}}}
}

func (g *gen) garbage() {
	b := make([]byte, 1+g.r.IntN(64))
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	g.raw(b, "garbage")
}

// big sends a frame at, just under or just over the size limit.
func (g *gen) big() {
	switch g.r.IntN(4) {
	case 0: // exactly the limit: a RevokeSession of an unknown (huge) label
		f := &cuav1.ControlFrame{ProtocolVersion: g.version, CallId: g.nextCall(), Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{}}}
		n := wire.MaxControlFrame - 16
		for {
			f.GetRevokeSession().Label = strings.Repeat("z", n)
			size := proto.Size(f)
			if size == wire.MaxControlFrame {
				break
			}
			n += wire.MaxControlFrame - size
		}
		g.send(f, "frame of exactly the limit")
	case 1: // over the limit
		b := make([]byte, wire.MaxControlFrame+1+g.r.IntN(1000))
		for i := range b {
			b[i] = byte(i)
		}
		g.raw(b, "oversized frame")
	case 3: // a bounded CreateSession whose manifest hash field fills the frame
		label := fmt.Sprintf("h%d", g.r.IntN(10))
		g.labels = append(g.labels, label)
		f := g.createFrame(label, cuav1.Mode_MODE_BOUNDED, 60, 60, []byte(validManifest), strings.Repeat("f", wire.MaxControlFrame-140-g.r.IntN(400)))
		g.nsess++
		g.send(f, "huge manifest hash", fdSession)
	default: // large and valid, well under the limit
		f := g.createFrame(g.label(), cuav1.Mode_MODE_STANDARD, 60, 60, make([]byte, 200<<10), "x")
		g.nsess++
		g.send(f, "large CreateSession", fdSession)
	}
}
