package main

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/proto/wire"
)

// FuzzDecodeEnvelopeDifferential compares the reference model's strict envelope decoding
// with wire.DecodeEnvelope: both accept or both refuse every payload, and accept the
// same envelope. It is seeded with rendered harness steps.
func FuzzDecodeEnvelopeDifferential(f *testing.F) {
	gen := make([]byte, 16)
	for i := range uint64(30) {
		for _, st := range generate(1, i, false).Steps {
			if st.Op != "env" {
				continue
			}
			env, _ := st.envelope(renderCtx{gen: gen, lastID: 3, markerPath: "/tmp/m", marker: "m", now: time.Unix(1e9, 0)})
			if b := st.frame(env); len(b) > 4 && len(b) < 4096 {
				f.Add(b[4:])
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		want, why := decodeEnvelope(b)
		got, err := wire.DecodeEnvelope(b)
		switch {
		case (why == "") != (err == nil):
			t.Fatalf("model says %q, wire.DecodeEnvelope says %v, for % x", why, err, b)
		case err == nil && !proto.Equal(want, got):
			t.Fatalf("model decoded %v, wire %v", want, got)
		}
	})
}
