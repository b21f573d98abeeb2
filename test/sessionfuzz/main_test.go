package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"testing"
	"time"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/test/fuzzkit"
)

func TestMain(m *testing.M) { os.Exit(fuzzkit.RunTests(m)) }

func frame(t *testing.T, env *cuav1.Envelope) []byte {
	t.Helper()
	b := fuzzkit.Marshal(t, env)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// TestModel checks the reference model against docs/protocol.md's session-channel rules.
func TestModel(t *testing.T) {
	gen := bytes.Repeat([]byte{9}, 16)
	call := func(id uint64, v uint32, g []byte, name, args string) *cuav1.Envelope {
		return &cuav1.Envelope{ProtocolVersion: v, RequestId: id, Generation: g,
			Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: name, Arguments: []byte(args)}}}
	}
	path := "/tmp/m"
	ok := `{"path":"/tmp/m","marker":"x"}`
	tests := []struct {
		name      string
		in        [][]byte
		wantCodes []string // per returned expectation, its first code ("-" for no reply)
		wantClose string
	}{
		{name: "valid call", in: [][]byte{frame(t, call(1, 1, gen, "marker", ok))}, wantCodes: []string{""}},
		{name: "replay", in: [][]byte{frame(t, call(2, 1, gen, "noop", "")), frame(t, call(2, 1, gen, "noop", ""))}, wantCodes: []string{"", "replayed_request"}},
		{name: "refused id still counts", in: [][]byte{frame(t, call(5, 2, gen, "noop", "")), frame(t, call(5, 1, gen, "noop", ""))}, wantCodes: []string{"unsupported_protocol_version", "replayed_request"}},
		{name: "wrong generation", in: [][]byte{frame(t, call(1, 1, gen[:15], "noop", ""))}, wantCodes: []string{"generation_mismatch"}},
		{name: "version 0 closes", in: [][]byte{frame(t, call(1, 0, gen, "noop", ""))}, wantClose: "version 0"},
		{name: "zero length closes", in: [][]byte{{0, 0, 0, 0}}, wantClose: "zero length"},
		{name: "oversized length closes", in: [][]byte{{0xff, 0, 0, 0}}, wantClose: "oversized length"},
		{name: "reply kind closes before the replay check", in: [][]byte{frame(t, &cuav1.Envelope{ProtocolVersion: 1, Body: &cuav1.Envelope_ToolList{ToolList: &cuav1.ToolList{}}})}, wantClose: "reply-kind envelope"},
		{name: "split frame", in: func() [][]byte { b := frame(t, call(1, 1, gen, "noop", "")); return [][]byte{b[:2], b[2:5], b[5:]} }(), wantCodes: []string{""}},
		{name: "bad arguments", in: [][]byte{frame(t, call(1, 1, gen, "marker", `{"path":`))}, wantCodes: []string{"invalid_arguments"}},
		{name: "unknown argument", in: [][]byte{frame(t, call(1, 1, gen, "marker", `{"path":"/tmp/m","marker":"x","colour":1}`))}, wantCodes: []string{"invalid_arguments"}},
		{name: "reserved argument dropped", in: [][]byte{frame(t, call(1, 1, gen, "marker", `{"path":"/tmp/m","marker":"x","_colour":1}`))}, wantCodes: []string{""}},
		{name: "unknown tool", in: [][]byte{frame(t, call(1, 1, gen, "nope", ""))}, wantCodes: []string{"unclassified_tool"}},
		{name: "cancel has no reply", in: [][]byte{frame(t, &cuav1.Envelope{ProtocolVersion: 1, RequestId: 1, Generation: gen, Body: &cuav1.Envelope_Cancel{Cancel: &cuav1.Cancel{RequestId: 9}}})}, wantCodes: []string{"-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSModel(gen, path)
			var codes []string
			why := ""
			for _, b := range tt.in {
				exps, w := m.feed(b, time.Now())
				for _, e := range exps {
					c := "-"
					if e.reply {
						c = e.codes[0]
					}
					codes = append(codes, c)
				}
				if w != "" {
					why = w
				}
			}
			if why != tt.wantClose {
				t.Errorf("feed closed with %q, want %q", why, tt.wantClose)
			}
			if len(codes) != len(tt.wantCodes) {
				t.Fatalf("feed = %q, want %q", codes, tt.wantCodes)
			}
			for i := range codes {
				if codes[i] != tt.wantCodes[i] {
					t.Errorf("feed = %q, want %q", codes, tt.wantCodes)
				}
			}
		})
	}
}

// TestHarnessSmoke runs the harness briefly (CI budget); long runs use the program.
func TestHarnessSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	tmp := t.TempDir()
	var n uint64
	next := func() uint64 { n++; return n - 1 }
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	res := runRound(ctx, 1, next, 40, false, tmp, nil)
	if res.envelopes == 0 || res.bystander == 0 {
		t.Errorf("harness ran %d envelopes and %d bystander calls", res.envelopes, res.bystander)
	}
	for _, v := range res.violations {
		t.Errorf("violation: %s", v)
	}
}
