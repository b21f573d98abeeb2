package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/test/fuzzkit"
)

// sstep is one generated action on the victim channel. Envelopes are described, not
// encoded: the executor renders them with the worker's generation and the current clock,
// so a reproducer replays against any worker.
type sstep struct {
	Op string `json:"op"` // env, raw, split, flood, cancel-holds, close
	// Envelope fields (Op env, split).
	ID       string `json:"id,omitempty"` // next, same, back, zero, max
	Version  uint32 `json:"version,omitempty"`
	Gen      string `json:"gen,omitempty"`      // ok, wrong, empty, short
	Deadline string `json:"deadline,omitempty"` // none, past, negative, near, far, max
	Body     string `json:"body,omitempty"`     // call, list, cancel, toollist, toolresult
	Tool     string `json:"tool,omitempty"`
	Args     string `json:"args,omitempty"` // ok, reserved, huge, invalid, array, trailing, empty, null
	// ArgsPad is the padding of huge arguments, in bytes.
	ArgsPad int `json:"args_pad,omitempty"`
	// HoldMS makes a sleeping call that stays in flight.
	HoldMS int `json:"hold_ms,omitempty"`
	// CancelOf: hold, unknown, zero.
	CancelOf string `json:"cancel_of,omitempty"`
	// Mutate damages the encoded envelope: truncate, bitflip, unknown-field, version0,
	// nobody, header0, header-huge, short-frame.
	Mutate string `json:"mutate,omitempty"`
	// Seed drives the mutation's randomness.
	Seed uint64 `json:"seed,omitempty"`
	// Raw is sent as is (Op raw).
	Raw fuzzkit.Hex `json:"raw,omitempty"`
	// Count is the number of holds a flood sends.
	Count int `json:"count,omitempty"`
}

// victimSeq is the steps of one victim channel.
type victimSeq struct {
	Seed  uint64  `json:"seed"`
	Index uint64  `json:"index"`
	Steps []sstep `json:"steps"`
}

func generate(seed, index uint64, allowHuge bool) *victimSeq {
	r := rand.New(rand.NewPCG(seed, index))
	n := 1 + r.IntN(60)
	v := &victimSeq{Seed: seed, Index: index}
	for range n {
		v.Steps = append(v.Steps, genStep(r, allowHuge))
	}
	return v
}

func pick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

func genStep(r *rand.Rand, allowHuge bool) sstep {
	st := sstep{Op: "env", ID: "next", Version: 1, Gen: "ok", Deadline: "none", Body: "call", Tool: "marker", Args: "ok", Seed: r.Uint64()}
	x := r.Float64()
	switch {
	case x < 0.30: // a plain call, sometimes with odd arguments or deadline
		st.Tool = pick(r, "marker", "marker", "marker", "noop", "health_report", "sleep", "marker_after_sleep", "no_such_tool", "panic")
		if r.Float64() < 0.3 {
			st.Args = pick(r, "reserved", "invalid", "array", "trailing", "empty", "null", "string", "unknown-key")
		}
		if r.Float64() < 0.25 {
			st.Deadline = pick(r, "past", "negative", "near", "far", "max")
		}
	case x < 0.38:
		st.ID = pick(r, "same", "back", "zero")
	case x < 0.44:
		st.Gen = pick(r, "wrong", "empty", "short")
	case x < 0.48:
		st.Version = uint32(pick2(r, 2, 7, math.MaxUint32))
	case x < 0.53:
		st.Body = "list"
	case x < 0.63:
		st.Body, st.CancelOf = "cancel", pick(r, "hold", "hold", "unknown", "zero")
	case x < 0.71:
		st.Tool, st.HoldMS = pick(r, "marker_after_sleep", "sleep"), 1000*(60+r.IntN(40))
	case x < 0.73:
		st.Op, st.Count = "flood", 30+r.IntN(6)
	case x < 0.75:
		st.Op = "cancel-holds"
	case x < 0.79:
		st.Op = "split"
	case x < 0.81:
		if allowHuge {
			st.Args, st.ArgsPad = "huge", pick2(r, 1<<20, 4<<20, 16<<20, wire.MaxSessionFrame-4096, wire.MaxSessionFrame+1024)
		}
	case x < 0.83:
		st.Body = pick(r, "toollist", "toolresult")
	case x < 0.93:
		st.Mutate = pick(r, "truncate", "bitflip", "bitflip", "unknown-field", "version0", "nobody", "header0", "header-huge", "short-frame", "doubled")
	case x < 0.96:
		st.Op = "raw"
		b := make([]byte, 1+r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		st.Raw = b
	default:
		st.Op = "close"
	}
	return st
}

func pick2(r *rand.Rand, xs ...int) int { return xs[r.IntN(len(xs))] }

// renderCtx is what rendering needs from the executor.
type renderCtx struct {
	gen        []byte
	lastID     uint64 // the last id the harness sent
	holds      []uint64
	markerPath string
	marker     string
	now        time.Time
}

// envelope builds the step's envelope and returns it with its id.
func (st sstep) envelope(rc renderCtx) (*cuav1.Envelope, uint64) {
	var id uint64
	switch st.ID {
	case "same":
		id = rc.lastID
	case "back":
		id = rc.lastID / 2
	case "zero":
		id = 0
	case "max":
		id = math.MaxUint64
	default:
		id = rc.lastID + 1
	}
	env := &cuav1.Envelope{ProtocolVersion: st.Version, RequestId: id}
	switch st.Gen {
	case "ok":
		env.Generation = rc.gen
	case "wrong":
		env.Generation = make([]byte, 16)
		copy(env.Generation, rc.gen)
		env.Generation[15] ^= 1
	case "short":
		env.Generation = rc.gen[:15]
	}
	switch st.Deadline {
	case "past":
		env.DeadlineUnixMs = rc.now.Add(-time.Second).UnixMilli()
	case "negative":
		env.DeadlineUnixMs = -1
	case "near":
		env.DeadlineUnixMs = rc.now.Add(20 * time.Millisecond).UnixMilli()
	case "far":
		env.DeadlineUnixMs = rc.now.Add(time.Hour).UnixMilli()
	case "max":
		env.DeadlineUnixMs = math.MaxInt64
	}
	switch st.Body {
	case "list":
		env.Body = &cuav1.Envelope_ListTools{ListTools: &cuav1.ListTools{}}
	case "cancel":
		var target uint64
		switch st.CancelOf {
		case "hold":
			if len(rc.holds) > 0 {
				target = rc.holds[int(st.Seed%uint64(len(rc.holds)))]
			} else {
				target = rc.lastID + 1000
			}
		case "unknown":
			target = rc.lastID + 1000
		}
		env.Body = &cuav1.Envelope_Cancel{Cancel: &cuav1.Cancel{RequestId: target}}
	case "toollist":
		env.Body = &cuav1.Envelope_ToolList{ToolList: &cuav1.ToolList{Tools: []*cuav1.ToolInfo{{Name: "marker"}}}}
	case "toolresult":
		env.Body = &cuav1.Envelope_ToolResult{ToolResult: &cuav1.ToolResult{Outcome: cuav1.Outcome_OUTCOME_COMPLETED}}
	default:
		env.Body = &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: st.Tool, Arguments: st.args(rc)}}
	}
	return env, id
}

func (st sstep) args(rc renderCtx) []byte {
	base := map[string]any{}
	switch st.Tool {
	case "marker":
		base["path"], base["marker"] = rc.markerPath, rc.marker
	case "marker_after_sleep":
		base["path"], base["marker"], base["ms"] = rc.markerPath, rc.marker, 5
	case "sleep":
		base["ms"] = 5
	}
	if st.HoldMS > 0 {
		base["ms"] = st.HoldMS
	}
	switch st.Args {
	case "reserved":
		// Reserved keys are dropped before the tool sees the call: the marker written is
		// the plain one, never "_marker".
		base["_marker"] = "RESERVED-" + rc.marker
		base["_session"] = "someone-else"
	case "huge":
		base["_pad"] = strings.Repeat("p", st.ArgsPad)
	case "invalid":
		return []byte(`{"path": "` + rc.markerPath + `", "marker": `)
	case "array":
		return []byte(`["marker"]`)
	case "string":
		return []byte(`"marker"`)
	case "trailing":
		b, _ := json.Marshal(base)
		return append(b, []byte(` {"x":1}`)...)
	case "unknown-key":
		base["colour"] = "blue"
	case "empty":
		return nil
	case "null":
		return []byte("null")
	}
	if len(base) == 0 {
		return nil
	}
	b, _ := json.Marshal(base)
	return b
}

// frame encodes env as one session frame, damaged as st.Mutate says.
func (st sstep) frame(env *cuav1.Envelope) []byte {
	r := rand.New(rand.NewPCG(st.Seed, 1))
	switch st.Mutate {
	case "version0":
		env.ProtocolVersion = 0
	case "nobody":
		env.Body = nil
	case "unknown-field":
		var unk []byte
		unk = protowire.AppendTag(unk, protowire.Number(30+r.IntN(60)), protowire.VarintType)
		unk = protowire.AppendVarint(unk, 7)
		if r.IntN(2) == 0 {
			env.ProtoReflect().SetUnknown(unk)
		} else if c := env.GetCallTool(); c != nil {
			c.ProtoReflect().SetUnknown(unk)
		} else {
			env.ProtoReflect().SetUnknown(unk)
		}
	}
	payload, _ := proto.Marshal(env)
	if len(payload) == 0 {
		payload = []byte{0x10, 0x01}
	}
	switch st.Mutate {
	case "truncate":
		payload = payload[:r.IntN(len(payload))]
		if len(payload) == 0 {
			payload = []byte{0xff}
		}
	case "bitflip":
		// The flips spare the arguments: a damaged marker path could make the marker
		// tool write anywhere on the machine.
		payload = append([]byte(nil), payload...)
		lo, hi := len(payload), len(payload)
		if a := env.GetCallTool().GetArguments(); len(a) > 0 {
			if k := bytes.Index(payload, a); k >= 0 {
				lo, hi = k, k+len(a)
			}
		}
		for range 1 + r.IntN(3) {
			i := r.IntN(len(payload))
			if i >= lo && i < hi {
				i = r.IntN(max(lo, 1))
			}
			payload[i] ^= 1 << r.IntN(8)
		}
	case "doubled":
		payload = append(append([]byte(nil), payload...), payload...)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	switch st.Mutate {
	case "header0":
		binary.BigEndian.PutUint32(out, 0)
	case "header-huge":
		binary.BigEndian.PutUint32(out, uint32(wire.MaxSessionFrame+1+r.IntN(1<<30)))
		return out
	case "short-frame":
		// The header promises more than follows: the next frame's bytes complete it.
		binary.BigEndian.PutUint32(out, uint32(len(payload)+1+r.IntN(8)))
	}
	return append(out, payload...)
}

func (st sstep) String() string {
	b, _ := json.Marshal(st)
	return string(b)
}
