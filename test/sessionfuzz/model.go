package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/test/fuzzkit"
)

// Reply expectations for one request. A call's acceptable outcomes are listed as codes:
// a refusal code (NOT_STARTED), "" (COMPLETED) or "UNKNOWN".
const (
	okCompleted = ""
	okUnknown   = "UNKNOWN"
)

// sexpect is what the model expects for one decoded envelope.
type sexpect struct {
	what string
	id   uint64
	// reply: a reply with this id will come (for a hold: only once it ends).
	reply bool
	list  bool // the reply is a ToolList
	codes []string
	// marker is the marker the call may write ("" when it writes none); it must be
	// written iff the call COMPLETED.
	marker string
	// toolError: a COMPLETED reply may carry is_error (the handler failed).
	toolError bool
	// hold: a long call that stays in flight until cancelled.
	hold bool
	// cancels names the request a Cancel targets (0: none).
	cancels uint64
}

// smodel is the reference model of one session channel as docs/protocol.md describes it:
// framing, strict decoding, the ordered checks and which inputs close the channel.
type smodel struct {
	generation []byte
	version    uint32
	lastID     uint64
	// buf holds sent bytes that do not yet form a complete frame.
	buf []byte
	// closed: a violation closed the channel; nothing after it is read.
	closed bool
	// inflight are the non-quick calls running (request id → hold).
	inflight map[uint64]bool
	// maxInFlight is the documented per-session limit.
	maxInFlight int
	markerPath  string
}

func newSModel(gen []byte, markerPath string) *smodel {
	return &smodel{generation: gen, version: 1, inflight: map[uint64]bool{}, maxInFlight: 32, markerPath: markerPath}
}

// feed appends bytes written to the stream and returns the expectations of every frame
// they complete, in order; closeWhy is non-empty when the stream is now closed by a
// violation (after the returned expectations).
func (m *smodel) feed(b []byte, now time.Time) (out []sexpect, closeWhy string) {
	if m.closed {
		return nil, ""
	}
	m.buf = append(m.buf, b...)
	for {
		if len(m.buf) < 4 {
			return out, ""
		}
		size := binary.BigEndian.Uint32(m.buf)
		if size == 0 {
			m.closed = true
			return out, "zero length"
		}
		if size > wire.MaxSessionFrame {
			m.closed = true
			return out, "oversized length"
		}
		if len(m.buf) < 4+int(size) {
			return out, ""
		}
		payload := m.buf[4 : 4+size]
		m.buf = m.buf[4+size:]
		env, why := decodeEnvelope(payload)
		if why != "" {
			m.closed = true
			return out, why
		}
		e, closeIt := m.envelope(env, now)
		if closeIt != "" {
			m.closed = true
			return out, closeIt
		}
		out = append(out, e)
	}
}

// decodeEnvelope is the model's strict decoding of one envelope.
func decodeEnvelope(b []byte) (*cuav1.Envelope, string) {
	env := &cuav1.Envelope{}
	if err := proto.Unmarshal(b, env); err != nil {
		return nil, "malformed"
	}
	if fuzzkit.HasUnknown(env.ProtoReflect()) {
		return nil, "unknown field"
	}
	if env.GetProtocolVersion() == 0 {
		return nil, "version 0"
	}
	if env.GetBody() == nil {
		return nil, "no body"
	}
	return env, ""
}

func refusal(what string, id uint64, code string) sexpect {
	return sexpect{what: what, id: id, reply: true, codes: []string{code}}
}

// toolKeys are the argument keys of the tools that decode their arguments strictly.
var toolKeys = map[string][]string{
	"marker":             {"path", "marker"},
	"marker_after_sleep": {"path", "marker", "ms"},
	"sleep":              {"ms"},
	"health_report":      {},
}

// quickTools run on the channel's reader and never count as in flight.
var quickTools = map[string]bool{"noop": true, "health_report": true, "get_session": true, "get_config": true}

// envelope applies docs/protocol.md's checks in order.
func (m *smodel) envelope(env *cuav1.Envelope, now time.Time) (sexpect, string) {
	id := env.GetRequestId()
	switch env.GetBody().(type) {
	case *cuav1.Envelope_ToolList, *cuav1.Envelope_ToolResult:
		return sexpect{}, "reply-kind envelope"
	}
	if id <= m.lastID {
		return refusal("replayed id", id, "replayed_request"), ""
	}
	m.lastID = id
	if env.GetProtocolVersion() != m.version {
		return refusal("wrong version", id, "unsupported_protocol_version"), ""
	}
	if !bytes.Equal(env.GetGeneration(), m.generation) {
		return refusal("wrong generation", id, "generation_mismatch"), ""
	}
	switch b := env.GetBody().(type) {
	case *cuav1.Envelope_Cancel:
		t := b.Cancel.GetRequestId()
		what := "Cancel unknown id"
		if m.inflight[t] {
			what = "Cancel in-flight call"
		}
		return sexpect{what: what, id: id, cancels: t}, ""
	case *cuav1.Envelope_ListTools:
		return sexpect{what: "ListTools", id: id, reply: true, list: true}, ""
	case *cuav1.Envelope_CallTool:
		return m.call(id, env.GetDeadlineUnixMs(), b.CallTool, now), ""
	}
	return sexpect{}, "unknown body"
}

// callArgs are the arguments the harness's tools take.
type callArgs struct {
	Path   string `json:"path"`
	Marker string `json:"marker"`
	MS     int    `json:"ms"`
}

func (m *smodel) call(id uint64, deadlineMS int64, c *cuav1.CallTool, now time.Time) sexpect {
	name := c.GetName()
	what := "CallTool " + name
	if _, known := toolKeys[name]; !known && !quickTools[name] && name != "panic" {
		what = "CallTool (unknown name)"
	}
	const nearSlack = 50 * time.Millisecond
	var nearDeadline bool
	if deadlineMS != 0 {
		d := time.UnixMilli(deadlineMS)
		switch {
		case d.Before(now.Add(-nearSlack)):
			return refusal(what+" past deadline", id, "deadline_exceeded")
		case d.Before(now.Add(nearSlack)):
			nearDeadline = true
		}
	}
	quick := quickTools[name]
	if !quick && len(m.inflight) >= m.maxInFlight {
		return refusal(what+" over in-flight limit", id, "too_many_requests")
	}
	raw := bytes.TrimSpace(c.GetArguments())
	var args map[string]any
	if len(raw) == 0 || string(raw) == "null" {
		args = map[string]any{}
	} else if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		e := refusal(what+" bad arguments", id, "invalid_arguments")
		return e
	}
	for k := range args {
		if strings.HasPrefix(k, "_") {
			delete(args, k)
		}
	}
	e := sexpect{what: what, id: id, reply: true}
	allowed, decodes := toolKeys[name]
	if _, known := quickTools[name]; !known && !decodes && name != "panic" {
		return refusal(what+" unknown tool", id, "unclassified_tool").withAlt("", "unknown_tool", "unsupported")
	}
	if decodes {
		// Handlers decode strictly: an unknown key is refused before anything runs.
		for k := range args {
			// encoding/json matches keys case-insensitively.
			if !slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, k) }) {
				return refusal(what+" unknown argument", id, "invalid_arguments")
			}
		}
	}
	switch name {
	case "panic":
		e.codes = []string{okUnknown}
	case "marker", "marker_after_sleep":
		var a callArgs
		b, _ := json.Marshal(args)
		switch err := json.Unmarshal(b, &a); {
		case err != nil:
			return refusal(what+" bad arguments", id, "invalid_arguments")
		case a.Path != m.markerPath:
			// No path, or one a mutation damaged: the handler fails after it started (a
			// tool-level error) or writes elsewhere; the marker file sees nothing.
			e.what += " other path"
			e.codes, e.toolError = []string{okCompleted}, true
		default:
			e.marker = a.Marker
			e.codes = []string{okCompleted}
		}
	default:
		e.codes = []string{okCompleted}
	}
	if !quick {
		hold := name == "marker_after_sleep" || name == "sleep"
		if hold {
			var a callArgs
			b, _ := json.Marshal(args)
			_ = json.Unmarshal(b, &a)
			hold = a.MS >= 1000
		}
		e.hold = hold
		m.inflight[id] = hold
	}
	if nearDeadline {
		// The deadline may pass before, during or after dispatch.
		e.codes = append(e.codes, "deadline_exceeded", okUnknown)
	}
	return e
}

// withAlt lets the listed codes count as well (refusal codes the documentation leaves
// open, not deviations).
func (e sexpect) withAlt(_ string, codes ...string) sexpect {
	e.codes = append(e.codes, codes...)
	return e
}

// ended records that a call's reply arrived (it is no longer in flight).
func (m *smodel) ended(id uint64) { delete(m.inflight, id) }
