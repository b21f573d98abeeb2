package main

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/proto/wire"
)

// FuzzDecodeControlDifferential compares the reference model's strict decoding with
// wire.DecodeControl: both accept or both refuse every datagram, and accept the same
// frame. It is seeded with the harness's own generated frames.
func FuzzDecodeControlDifferential(f *testing.F) {
	for i := range uint64(40) {
		for _, st := range generate(1, i).Steps {
			if st.Op == opSend && len(st.Frame) < 4096 {
				f.Add([]byte(st.Frame), uint8(len(st.FDs)))
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, nfds uint8) {
		n := int(nfds % 4)
		if len(b) == 0 {
			return // end-of-file, not a frame
		}
		want, why := decodeStrict(b, n)
		got, err := wire.DecodeControl(b, n)
		switch {
		case (why == "") != (err == nil):
			t.Fatalf("model says %q, wire.DecodeControl says %v, for % x with %d fds", why, err, b, n)
		case err == nil && !proto.Equal(want, got):
			t.Fatalf("model decoded %v, wire %v", want, got)
		case err != nil:
			if _, ok := wire.IsViolation(err); !ok {
				t.Fatalf("wire.DecodeControl error %v is not a violation", err)
			}
		}
	})
}
